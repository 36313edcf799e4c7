"""What the web pages show about an event, read from its database and its replays.

``EventData`` opens one event database read-only in spirit (the store's readers never write)
and answers the pages' questions: the leaderboard, the crosstable of partnerships, failures
and statistics per bot, the game list with its filters, the timeline of one play. Figures
that need the replays (bombs, wishes, think times) are computed once per replay and kept, so
a running event's page costs only the plays recorded since the last look.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import math
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.referee.replay import ReplayError, load
from arena.rules import InvalidActionError, parse_play
from arena.tournament.leaderboard import bot_failures, build_leaderboard
from arena.tournament.leaderboard_render import to_json
from arena.tournament.live import live_dir
from arena.tournament.store import EventStore, FailureRow, StoredHand, resolve_stored
from arena.web.timeline import Timeline, load_timeline

__all__ = ["BotStats", "EventData", "GameFilter", "NotFound"]

TIMELINES_KEPT = 32


class NotFound(LookupError):
    """What a page asks for is not in the database (a play, a season, a league)."""


@dataclass
class BotStats:
    """One bot's counts over the recorded hands (and their replays)."""

    hands: int = 0
    tichu_calls: int = 0
    tichu_made: int = 0
    grand_calls: int = 0
    grand_made: int = 0
    double_victories: int = 0
    bombs: int = 0
    wishes: int = 0
    think_ms: list[float] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)

    def to_json(self, bot: str) -> dict[str, Any]:
        """The row of the statistics table, rates as fractions."""
        think = sorted(self.think_ms)
        return {
            "bot": bot,
            "hands": self.hands,
            "tichu_calls": self.tichu_calls,
            "tichu_rate": _rate(self.tichu_calls, self.hands),
            "tichu_success": _rate(self.tichu_made, self.tichu_calls),
            "grand_calls": self.grand_calls,
            "grand_rate": _rate(self.grand_calls, self.hands),
            "grand_success": _rate(self.grand_made, self.grand_calls),
            "double_victories": self.double_victories,
            "bombs": self.bombs,
            "wishes": self.wishes,
            "decisions": len(think),
            "think_mean_ms": round(sum(think) / len(think), 2) if think else None,
            "think_p99_ms": round(_quantile(think, 0.99), 2) if think else None,
            "failures": dict(sorted(self.failures.items())),
        }


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _quantile(ordered: list[float], q: float) -> float:
    """The nearest-rank quantile of sorted values."""
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


@dataclass(frozen=True)
class GameFilter:
    """The game list's filters; empty fields match everything."""

    bot: str = ""
    round: int | None = None
    board: int | None = None
    result: str = ""  # "A", "B", "tie", "double"
    failures: str = ""  # "yes", "no"

    def accepts(self, h: StoredHand, round_of: dict[int, int]) -> bool:
        """Whether a hand passes every filter."""
        row = h.row
        if self.bot and self.bot not in h.seats:
            return False
        if self.round is not None and round_of.get(h.play_id) != self.round:
            return False
        if self.board is not None and h.board != self.board:
            return False
        if self.result:
            won = "A" if row.score_a > row.score_b else "B" if row.score_b > row.score_a else "tie"
            if self.result == "double" and row.double_victory is None:
                return False
            if self.result in ("A", "B", "tie") and won != self.result:
                return False
        public = public_failures(row.failures)
        if self.failures == "yes" and not public:
            return False
        return not (self.failures == "no" and public)


def public_failures(failures: Iterable[FailureRow]) -> list[dict[str, Any]]:
    """A hand's failures as every visitor may see them: public ones, seat and kind alone.

    A failure's detail may quote its seat's cards, and a private failure (a bomb window's)
    says the seat held a bomb; the replay's seat and all-cards views show them.
    """
    return [{"seat": f.seat, "kind": f.kind} for f in failures if not f.private]


class EventData:
    """One event database, as the web app reads it (one instance per file, thread-safe)."""

    def __init__(self, path: Path, *, public: bool = False) -> None:
        """``public``: served to strangers (the league service): no bot's log lines in any
        view (a bot's stderr is its owner's), and a league's pages count finished rounds
        only."""
        self.path = path
        self.public = public
        self.logs = path.parent / f"{path.name}.logs"
        self._lock = threading.Lock()
        self._replay_stats: dict[str, tuple[list[int], list[int], list[tuple[int, float]]]] = {}
        self._unreadable: set[str] = set()  # stored replay paths that could not be read
        self._timelines: OrderedDict[str, Timeline] = OrderedDict()
        self._pages: dict[str, tuple[int, dict[str, Any]]] = {}
        with EventStore(path, create=False):
            pass  # refuses a file that is not an event database, with a clear message

    def store(self) -> EventStore:
        """A fresh connection: SQLite connections stay in the thread that opened them."""
        return EventStore(self.path, create=False)

    def is_league(self) -> bool:
        """Whether the file is also a league database (``arena league``'s tables beside)."""
        with sqlite3.connect(f"file:{self.path}?mode=ro", uri=True) as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'league_schema_version'")
            return row.fetchone() is not None

    def league(self, season: int | None) -> dict[str, Any]:
        """The league's season table, rating-over-rounds series and versions.

        Read with the league package (``arena.tournament.league``), imported only here.

        Raises:
            NotFound: Not a league database, no such season, or no league support here.
        """
        if not self.is_league():
            raise NotFound(f"{self.path}: not a league database")
        try:
            render = importlib.import_module("arena.tournament.league.render")
            stores = importlib.import_module("arena.tournament.league.store")
        except ImportError:
            raise NotFound("this build of the arena has no league support") from None
        with stores.LeagueStore(self.path) as store:
            try:
                board: dict[str, Any] = render.league_board(
                    store, season, finished_only=self.public
                )
            except KeyError:
                raise NotFound(f"{self.path}: no season {season}") from None
        return board

    def names(self) -> list[str]:
        """The names of the file's events, oldest first."""
        with self.store() as store:
            return [info.name for info in store.events()]

    def has_event(self, name: str) -> bool:
        """Whether the file holds this event (an uploaded replay's is listed nowhere)."""
        return name in self.names()

    def events(self) -> list[dict[str, Any]]:
        """Every event of the file with its progress."""
        with self.store() as store:
            out = []
            for info in store.events():
                s = store.event_summary(info.id)
                out.append(
                    {
                        "name": info.name,
                        "status": info.status.value,
                        "created": info.created,
                        "plays_done": s.plays_done,
                        "plays_total": s.plays_total,
                        "hands": s.hands,
                        "bots": list(s.bots),
                    }
                )
            return out

    def progress(self, event: str) -> dict[str, Any]:
        """How far the event is: what the live event page polls."""
        with self.store() as store:
            s = store.event_summary(event)
            return {
                "status": s.info.status.value,
                "plays_done": s.plays_done,
                "plays_total": s.plays_total,
                "hands": s.hands,
            }

    def event_page(self, event: str) -> dict[str, Any]:
        """The event page: leaderboard, crosstable, failures and statistics per bot.

        Kept until the next play is recorded: every viewer of a running event shares one
        computation per play.
        """
        with self.store() as store:
            plays = store.plays(event)
        done = sum(p.done for p in plays)
        with self._lock:
            kept = self._pages.get(event)
        if kept is None or kept[0] != done:
            kept = (done, self._figures(event))
            with self._lock:
                self._pages[event] = kept
        running = self._running(event, {p.play.ordinal for p in plays if not p.done})
        return {**kept[1], "running": running}

    def _figures(self, event: str) -> dict[str, Any]:
        """The page's figures. Failures and statistics (asked decisions, think times) count
        finished boards only: while a board is in play its other tables hold the same cards,
        and a count that changed with each play would tell what the spectator view hides
        (which answers were asked, that a seat failed in a private bomb window)."""
        with self.store() as store:
            board = build_leaderboard(store, event)
            hands = store.hands(event)
            fillers = set(store.fillers(event))
            in_play = {p.play.board for p in store.plays(event) if not p.done}
        finished = [h for h in hands if h.board not in in_play]
        board = dataclasses.replace(
            board, failures=tuple(r for r in bot_failures(finished) if r.bot not in fillers)
        )
        stats = self._bot_stats(finished)
        replays = {h.replay_path for h in finished if h.replay_path is not None}
        with self._lock:
            unreadable = len(replays & self._unreadable)
        return {
            "leaderboard": to_json(board),
            "boards_in_play": len(in_play),
            "crosstable": _crosstable(hands),
            "stats": [stats[b].to_json(b) for b in sorted(stats) if b not in fillers],
            # Bombs, wishes and think times come from the replays: say when some are missing
            # rather than show their counts as zeros.
            "replays_unreadable": unreadable,
        }

    def _running(self, event: str, pending: set[int]) -> list[int]:
        """Plays with a live feed whose play is not recorded yet."""
        folder = live_dir(self.path) / event
        if not folder.is_dir():
            return []
        found = (int(p.stem) for p in folder.glob("*.jsonl") if p.stem.isdigit())
        return sorted(o for o in found if o in pending)

    def _bot_stats(self, hands: Iterable[StoredHand]) -> dict[str, BotStats]:
        stats: dict[str, BotStats] = {}
        seen: set[str] = set()
        for h in hands:
            row = h.row
            for s, bot in enumerate(h.seats):
                b = stats.setdefault(bot, BotStats())
                b.hands += 1
                call = row.calls[s]
                made = row.first_out == s
                if call == "T":
                    b.tichu_calls += 1
                    b.tichu_made += made
                elif call == "G":
                    b.grand_calls += 1
                    b.grand_made += made
                if row.double_victory == "AB"[s & 1]:
                    b.double_victories += 1
            for f in row.failures:
                fails = stats[h.seats[f.seat]].failures
                fails[f.kind] = fails.get(f.kind, 0) + 1
            if h.replay_path is not None and h.replay_path not in seen:
                seen.add(h.replay_path)
                bombs, wishes, think = self._replay_counts(h.replay_path)
                for s, bot in enumerate(h.seats):
                    stats[bot].bombs += bombs[s]
                    stats[bot].wishes += wishes[s]
                for s, ms in think:
                    stats[h.seats[s]].think_ms.append(ms)
        return stats

    def _replay_counts(self, stored: str) -> tuple[list[int], list[int], list[tuple[int, float]]]:
        """Bombs and wishes per seat and every think time of one replay (kept once read)."""
        with self._lock:
            hit = self._replay_stats.get(stored)
        if hit is not None:
            return hit
        bombs, wishes = [0, 0, 0, 0], [0, 0, 0, 0]
        think: list[tuple[int, float]] = []
        try:
            replay = load(self._resolve(stored))
        except ReplayError:
            replay = None
            with self._lock:
                self._unreadable.add(stored)
        if replay is not None:
            for entry in replay.recorded or []:
                seat = entry.get("seat")
                if not isinstance(seat, int) or not 0 <= seat < 4:
                    continue
                if isinstance(entry.get("play"), str) and entry["play"] != "pass":
                    with contextlib.suppress(InvalidActionError):
                        bombs[seat] += parse_play(entry["play"]).is_bomb
                elif entry.get("wish") is not None:
                    wishes[seat] += 1
            think = [(int(t[1]), float(t[2])) for t in replay.meta.get("think", [])]
        result = (bombs, wishes, think)
        with self._lock:
            self._replay_stats[stored] = result
        return result

    def _resolve(self, stored: str) -> Path:
        return resolve_stored(self.path, stored)

    def games(
        self, event: str, flt: GameFilter, offset: int = 0, limit: int = 1000
    ) -> dict[str, Any]:
        """The game list: one row per hand, filtered, in running order."""
        with self.store() as store:
            hands = store.hands(event)
            plays = store.plays(event)
        round_of = {p.id: p.play.round for p in plays}
        table_of = {p.id: p.play.table for p in plays}
        if self.public:  # a board in play shows none of its hands (its tables share them)
            in_play = {p.play.board for p in plays if not p.done}
            hands = tuple(h for h in hands if h.board not in in_play)
        rows = [h for h in hands if flt.accepts(h, round_of)]
        page = rows[offset : offset + limit]
        return {
            "total": len(rows),
            "offset": offset,
            "bots": sorted({b for h in hands for b in h.seats}),
            "rounds": sorted(set(round_of.values())),
            "rows": [
                {
                    "play": h.ordinal,
                    "hand": h.row.hand + 1,
                    "round": round_of.get(h.play_id),
                    "table": table_of.get(h.play_id),
                    "board": h.board_label,
                    "rotation": h.rotation,
                    "seats": list(h.seats),
                    "score": [h.row.score_a, h.row.score_b],
                    "calls": h.row.calls,
                    "double_victory": h.row.double_victory,
                    "out": list(h.row.out),
                    "failures": public_failures(h.row.failures),
                    "replay": h.replay_path is not None,
                }
                for h in page
            ],
        }

    def timeline(self, event: str, ordinal: int) -> Timeline:
        """The re-played timeline of one recorded play (the last few are kept).

        Raises:
            NotFound: No recorded play with this number.
            ReplayError: Its replay cannot be read or re-played.
        """
        key = f"{event}/{ordinal}"
        with self._lock:
            hit = self._timelines.get(key)
            if hit is not None:
                self._timelines.move_to_end(key)
                return hit
        with self.store() as store:
            play = next((p for p in store.plays(event) if p.play.ordinal == ordinal), None)
        if play is None or play.replay_path is None:
            raise NotFound(f"event {event!r} has no recorded play {ordinal}")
        league_logs = self.logs / event  # a league keeps each round's logs in its own folder
        logs = league_logs if league_logs.is_dir() else self.logs
        timeline = load_timeline(self._resolve(play.replay_path), None if self.public else logs)
        with self._lock:
            self._timelines[key] = timeline
            while len(self._timelines) > TIMELINES_KEPT:
                self._timelines.popitem(last=False)
        return timeline

    def replay_file(self, event: str, ordinal: int) -> Path:
        """The replay file of one recorded play (what the viewer's download link sends).

        Raises:
            NotFound: No recorded play with this number.
        """
        with self.store() as store:
            play = next((p for p in store.plays(event) if p.play.ordinal == ordinal), None)
        if play is None or play.replay_path is None:
            raise NotFound(f"event {event!r} has no recorded play {ordinal}")
        return self._resolve(play.replay_path)

    def board_in_play(self, event: str, ordinal: int) -> bool:
        """Whether a play of the same board as play ``ordinal`` is not recorded yet: its
        other rotations deal the same cards, so no hand of the board may be shown."""
        with self.store() as store:
            plays = store.plays(event)
        mine = next((p for p in plays if p.play.ordinal == ordinal), None)
        if mine is None:
            return False  # no such play: what asks for it says so
        return any(p.play.board == mine.play.board and not p.done for p in plays)

    def board_plays(self, event: str, ordinal: int) -> list[dict[str, Any]]:
        """The recorded plays of the same board as play ``ordinal`` (itself first)."""
        with self.store() as store:
            plays = store.plays(event)
        mine = next((p for p in plays if p.play.ordinal == ordinal), None)
        if mine is None:
            raise NotFound(f"event {event!r} has no play {ordinal}")
        same = [p for p in plays if p.play.board == mine.play.board and p.done]
        same.sort(key=lambda p: (p.play.ordinal != ordinal, p.play.ordinal))
        return [
            {
                "play": p.play.ordinal,
                "round": p.play.round,
                "table": p.play.table,
                "rotation": p.play.rotation,
                "seats": list(p.play.seats),
            }
            for p in same
        ]

    def compare(self, event: str, ordinal: int) -> dict[str, Any]:
        """The same board's plays side by side, public actions only, and where they diverge.

        Every play of a board deals the same hands; rotation ``r`` seats dealt hand
        ``(seat + r) mod 4`` at ``seat``. Two tables agree while their actions, dealt hand by
        dealt hand, are the same; the first difference is the divergence.
        """
        tables = []
        for p in self.board_plays(event, ordinal):
            actions = self.timeline(event, p["play"]).public_actions()
            for a in actions:
                a["dealt"] = (a["seat"] + p["rotation"]) % 4
            tables.append({**p, "actions": actions})
        base = _comparable(tables[0]["actions"]) if tables else []
        for t in tables:
            mine = _comparable(t["actions"])
            n = min(len(base), len(mine))
            first = next((i for i in range(n) if base[i][1] != mine[i][1]), None)
            if first is None and len(base) != len(mine):
                first = n  # one table went on where the other stopped
            t["diverges"] = None if first is None or first >= len(mine) else mine[first][0]
        return {"tables": tables}


def _comparable(actions: list[dict[str, Any]]) -> list[tuple[int, tuple[int, str]]]:
    """A table's public actions as (step, (dealt hand, action)), in an order both tables share.

    Answers asked of all four at once are put in dealt-hand order, and the Grand Tichu and
    exchange answers themselves left out (a spectator sees nothing of them); a Tichu call
    made with them stays.
    """
    out: list[tuple[int, tuple[int, str]]] = []
    run: list[tuple[int, tuple[int, str]]] = []
    for a in actions:
        item = (a["step"], (a["dealt"], a["key"]))
        if a["together"]:
            if a["key"] not in ("grand", "exchange"):
                run.append(item)
            continue
        out += sorted(run, key=lambda x: x[1])
        run = []
        out.append(item)
    return out + sorted(run, key=lambda x: x[1])


def _crosstable(hands: Iterable[StoredHand]) -> dict[str, Any]:
    """Bot against bot: mean points margin per hand of the row bot's team, with hands.

    ``partner[i][j]``: when bot i and bot j play together; ``against[i][j]``: when bot j is
    one of the opponents. Margins are the row team's points minus the other team's.
    """
    partner: dict[tuple[str, str], list[int]] = {}
    against: dict[tuple[str, str], list[int]] = {}
    for h in hands:
        margin = h.row.score_a - h.row.score_b
        for s, bot in enumerate(h.seats):
            mine = margin if s % 2 == 0 else -margin
            partner.setdefault((bot, h.seats[(s + 2) % 4]), []).append(mine)
            for opponent in (h.seats[(s + 1) % 4], h.seats[(s + 3) % 4]):
                against.setdefault((bot, opponent), []).append(mine)
    bots = sorted({k[0] for k in partner})

    def matrix(cells: dict[tuple[str, str], list[int]]) -> list[list[dict[str, Any] | None]]:
        return [
            [
                {"hands": len(v), "margin": round(sum(v) / len(v), 2)}
                if (v := cells.get((row, col)))
                else None
                for col in bots
            ]
            for row in bots
        ]

    return {"bots": bots, "partner": matrix(partner), "against": matrix(against)}
