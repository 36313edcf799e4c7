"""A replay as a timeline of steps, and what each perspective may see at each step.

Step ``k`` is the table after the replay's first ``k`` actions. ``Timeline.view(k, who)``
builds the table from the rules core's state at that step for one perspective:

* ``"spectator"``: public information only: card counts, the trick, the won piles, the calls
  once revealed, the wish, the scores. No hand, no exchanged card, no legal list and no bot log
  (both would tell a hand), so nothing in the JSON names a hidden card.
* ``"0"``..``"3"``: that seat's view, from ``arena.rules.observe``: its own hand, the cards it
  passed and received, and its own decisions in full.
* ``"all"``: every hand and every decision.

The decision panel of step ``k`` describes the decision answered by action ``k - 1``: the
legal answers, the one chosen, the think time and the lines the bot wrote to its log meanwhile
(the replay's ``meta.think``, where the referee recorded them).

Failures follow the referee's own rule (``failures_for``): a failure's detail, which may quote
its seat's cards, and a private failure (a bomb window's) are shown in the failing seat's view
and the all-cards view alone; the others see a public failure's seat, kind and outcome.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.referee.replay import Replay, ReplayError, load
from arena.rules import (
    DOG_BIT,
    PASS,
    Action,
    CallTichu,
    Event,
    EventKind,
    Exchange,
    Gift,
    GrandTichu,
    Match,
    Phase,
    Play,
    Wish,
    card_name,
    cards_of,
    observe,
    team_of,
)
from arena.rules.combos import rank_name
from arena.rules.notation import action_from_json, action_to_json
from arena.rules.observe import TrickEntry
from arena.web.labels import (
    dog_note,
    fulfilled_note,
    gift_note,
    out_note,
    play_label,
    play_note,
    rank_word,
    tichu_note,
    trick_note,
    wish_note,
)

__all__ = ["PERSPECTIVES", "Timeline", "action_text", "load_timeline", "plain_name", "replay_logs"]

PERSPECTIVES = ("spectator", "0", "1", "2", "3", "all")
_PUBLIC_FAILURE = ("seat", "kind", "outcome", "hand", "decision", "request_id", "strikes")
"""What every perspective may see of a public failure (never its detail)."""
MAX_LOG_LINES = 200
MAX_LOG_BYTES = 16_384


def _cards(mask: int) -> list[str]:
    return [card_name(c) for c in cards_of(mask)]


def action_text(seat_name: str, action: Action, public: bool, names: Sequence[str] = ()) -> str:
    """Describes an action; ``public`` hides what only its seat knows (the passed cards)."""
    if isinstance(action, Play):
        return f"{seat_name}: {_legal_text(action)}" if action.cards else f"{seat_name}: pass"
    if isinstance(action, CallTichu):
        return f"{seat_name} calls Tichu"
    if isinstance(action, GrandTichu):
        if public:
            return f"{seat_name} decides on Grand Tichu"
        return f"{seat_name}: {'Grand Tichu' if action.call else 'no Grand Tichu'}"
    if isinstance(action, Exchange):
        if public:
            return f"{seat_name} passes three cards"
        return f"{seat_name} passes {action}"
    if isinstance(action, Wish):
        return f"{seat_name} wishes {rank_word(action.rank) if action.rank else 'nothing'}"
    if isinstance(action, Gift):
        to = names[action.to] if action.to < len(names) else f"seat {action.to}"
        return f"{seat_name} gives the Dragon trick to {to}"
    return f"{seat_name}: {action}"


@dataclass(frozen=True)
class Think:
    """One asked decision as the referee timed it."""

    seat: int
    ms: float
    log_from: int
    log_to: int


class Timeline:
    """Every step of one replay, re-played through the rules core once."""

    def __init__(self, replay: Replay, logs: Sequence[Path | None] = ()) -> None:
        self.replay = replay
        self.logs = list(logs)
        match = Match(replay.options, replay.seed, replay.deals)
        self.states: list[Match] = [match.copy()]
        self.actions: list[tuple[int, Action]] = []
        self.hand_starts: list[int] = [0]
        self.trick_starts: list[list[int]] = [[0]]  # per hand, the step each trick starts
        #: Actions that are bomb-window declines no one else could notice.
        self.silent: set[int] = set()
        raw: list[Any] = replay.recorded or [
            {"seat": seat, **action_to_json(action)} for seat, action in replay.actions
        ]
        for i, entry in enumerate(raw, 1):
            body = {k: v for k, v in entry.items() if k != "seat"}
            try:
                action = action_from_json(body, match.top)
                seat = match.seat
                hand = match.hand_no
                tricks = _tricks(match)
                match.apply(action)
            except Exception as e:  # the rules core's errors, or a malformed entry
                raise ReplayError(f"action {i}: {match.where()}: cannot re-play: {e}") from e
            before = self.states[-1]
            if (
                before.phase is Phase.BOMB_WINDOW
                and action == PASS
                and match.phase is not Phase.DRAGON_GIFT
                and len(match.events) == len(before.events)
                and match.hand_no == before.hand_no
            ):
                self.silent.add(i - 1)  # nothing public happened: the window stays secret
            self.actions.append((seat, action))
            self.states.append(match.copy())
            if match.hand_no != hand:
                self.hand_starts.append(i)
                self.trick_starts.append([i])
            elif _tricks(match) != tricks:
                self.trick_starts[-1].append(i)
        self.think: dict[int, Think] = {}
        self.failures: dict[int, list[dict[str, Any]]] = {}
        try:  # the referee's notes: a file from elsewhere (an upload) may hold anything
            for entry in replay.meta.get("think", []):
                at, seat, ms, log_from, log_to = entry
                self.think[int(at)] = Think(int(seat), float(ms), int(log_from), int(log_to))
            for f in replay.meta.get("failures", []):
                self.failures.setdefault(int(f.get("decision", -1)), []).append(dict(f))
        except (TypeError, ValueError, AttributeError) as e:
            raise ReplayError(f"meta: malformed referee notes (think, failures): {e}") from e

    def _private(self, failure: Mapping[str, Any]) -> bool:
        """Whether a failure was told to its seat alone: a bomb window's (a replay written
        before failures said so: one whose decision was asked in a bomb window)."""
        if "private" in failure:
            return bool(failure["private"])
        at = int(failure.get("decision", -1))
        return 0 <= at < len(self.states) and self.states[at].phase is Phase.BOMB_WINDOW

    def failures_for(self, who: str, at: int | None = None) -> list[dict[str, Any]]:
        """The failures perspective ``who`` may see (those of decision ``at``, or all).

        A failure's detail may quote its seat's cards, and a private failure (a bomb
        window's) tells that the seat held a bomb: both are for the failing seat's view and
        the all-cards view alone; the others see a public failure's seat, kind and outcome.
        """
        found = (
            self.failures.get(at, [])
            if at is not None
            else [f for fs in self.failures.values() for f in fs]
        )
        own = int(who) if who.isdigit() else -1
        out: list[dict[str, Any]] = []
        for f in found:
            if who == "all" or f.get("seat") == own:
                out.append(dict(f))
            elif not self._private(f):
                out.append({k: f.get(k) for k in _PUBLIC_FAILURE})
        return out

    @property
    def steps(self) -> int:
        """The last step (the number of actions)."""
        return len(self.actions)

    def visible(self, who: str) -> list[int]:
        """The steps perspective ``who`` may see: a bomb window is a secret of its seat.

        A seat asked in a bomb window holds a bomb; when it declines nothing public happens,
        so that step exists only for the seat itself and for the all-cards view.
        """
        if who == "all":
            return list(range(self.steps + 1))
        own = int(who) if who.isdigit() else -1
        return [
            k
            for k in range(self.steps + 1)
            if k == 0 or k - 1 not in self.silent or self.actions[k - 1][0] == own
        ]

    def position(self, who: str, step: int) -> int:
        """The number, in ``who``'s own count, of the last step it may see at or before ``step``."""
        return bisect_right(self.visible(who), step) - 1

    def outline(self, who: str = "spectator") -> dict[str, Any]:
        """What the viewer needs before the first step: names, steps, hands and tricks.

        Steps are numbered in ``who``'s own count (``visible``), so a gap in the numbers
        cannot tell of a secret step either.
        """
        r = self.replay
        time = r.meta.get("time")
        tricks = [sorted({self.position(who, s) for s in hand}) for hand in self.trick_starts]
        return {
            "seats": r.seats,
            "steps": len(self.visible(who)) - 1,
            "hand_starts": [self.position(who, s) for s in self.hand_starts],
            "trick_starts": tricks,
            "options": {
                "hands": r.options.hands,
                "target_score": r.options.target_score,
                "grand_tichu": r.options.grand_tichu,
            },
            "decision_ms": time.get("decision_ms") if isinstance(time, dict) else None,
            "result": r.result,
            "termination": r.meta.get("termination"),
            "failures": self.failures_for(who),
            "moves": self.moves(who),
        }

    def moves(self, who: str) -> list[dict[str, Any]]:
        """The move list in ``who``'s count: each visible step's action and what followed it
        (a trick taken, a wish fulfilled, a seat out, the hand's end)."""
        own = int(who) if who.isdigit() else -1
        out: list[dict[str, Any]] = []
        for number, step in enumerate(self.visible(who)):
            if step == 0:
                continue
            seat, action = self.actions[step - 1]
            full = who == "all" or seat == own
            before = self.states[step - 1]
            if not full and before.phase is Phase.BOMB_WINDOW and action == PASS:
                seat, text = -1, "the trick is collected"
            else:
                text = action_text(self.replay.seats[seat], action, not full, self.replay.seats)
            out.append(
                {
                    "step": number,
                    "seat": seat,
                    "hand": before.hand_no + 1,
                    "text": text,
                    "notes": self.moment(step)["notes"],
                }
            )
        return out

    def moment(self, step: int) -> dict[str, Any]:
        """What step ``step``'s action made happen, in public: notes, a trick taken (by whom,
        for how many points, given to whom), the hand's end with its result."""
        names = self.replay.seats
        out: dict[str, Any] = {"notes": [], "collected": None, "hand_end": None}
        if step == 0:
            return out
        before, after = self.states[step - 1], self.states[step]
        if after.hand_no != before.hand_no or (
            after.phase is Phase.MATCH_OVER and before.phase is not Phase.MATCH_OVER
        ):
            events = list(after.log[before.hand_no][len(before.events) :])
            r = after.hand_results[before.hand_no]
            out["hand_end"] = {
                "hand": before.hand_no + 1,
                "out": [names[s] for s in r.out],
                "double_victory": "AB"[r.double_victory] if r.double_victory >= 0 else None,
                "card_points": list(r.card_points),
                "bets": list(r.bets),
                "score": list(r.score),
                "total": [
                    sum(h.score[t] for h in after.hand_results[: before.hand_no + 1])
                    for t in (0, 1)
                ],
                "calls": [
                    ("Grand Tichu" if r.grand[s] else "Tichu" if r.tichu[s] else None)
                    for s in range(4)
                ],
            }
        else:
            events = list(after.events[len(before.events) :])
        entries = list(observe(before, 0).entries)
        seat, action = self.actions[step - 1]
        if isinstance(action, Play) and before.phase in (Phase.PLAY, Phase.BOMB_WINDOW):
            # the turn that ended the trick (its last pass, or the hand's last card) with it
            entries.append(TrickEntry(seat, action, before.phase is Phase.BOMB_WINDOW))
        for ev in events:
            if ev.kind == EventKind.TRICK_WON and ev.cards == DOG_BIT:
                out["notes"].append(event_note(names, ev, _next_name(after, names)))
                continue
            note = event_note(names, ev)
            if note:
                out["notes"].append(note)
            if ev.kind in (EventKind.TRICK_WON, EventKind.DRAGON_GIFT):
                dragon = ev.kind == EventKind.DRAGON_GIFT
                out["collected"] = {
                    "seat": ev.seat,
                    "to": ev.value if dragon else ev.seat,
                    "points": ev.points,
                    "entries": [_entry(e) for e in entries],
                }
        if out["hand_end"] is not None:
            h = out["hand_end"]
            a, b = h["score"]
            out["notes"].append(f"hand {h['hand']} over: A {a:+d}, B {b:+d}")
        return out

    def view(self, number: int, who: str) -> dict[str, Any]:
        """Step ``number`` of ``who``'s count as ``who`` may see it (see the module docstring)."""
        if who not in PERSPECTIVES:
            raise ValueError(f"perspective {who!r}: use one of {', '.join(PERSPECTIVES)}")
        visible = self.visible(who)
        if not 0 <= number < len(visible):
            raise ValueError(f"step {number} is outside 0..{len(visible) - 1}")
        step = visible[number]
        seat_view = int(who) if who.isdigit() else -1
        m = self.states[step]
        names = self.replay.seats
        obs = observe(m, max(seat_view, 0))
        over = m.phase is Phase.MATCH_OVER
        hidden_calls = m.phase is Phase.GRAND_TICHU
        phase, to_act = m.phase, m.seat
        if phase is Phase.BOMB_WINDOW and who != "all" and m.seat != seat_view:
            phase, to_act = Phase.PLAY, m.turn  # who is asked in a window is a secret
        seats = []
        for s in range(4):
            if who == "all" or s == seat_view:
                cards: list[str] | None = _cards(m.hands[s])
            else:
                cards = None
            seats.append(
                {
                    "name": names[s] if s < len(names) else f"seat {s}",
                    "team": "AB"[team_of(s)],
                    "count": obs.card_counts[s],
                    "cards": cards,
                    "grand": bool(m.grand[s]) if not hidden_calls or who == "all" else False,
                    "tichu": bool(m.tichu[s]),
                    "out": obs.out.index(s) + 1 if s in obs.out else 0,
                    "won_points": obs.won_points[s],
                    "won_cards": m.won[s].bit_count(),
                }
            )
        if hidden_calls and seat_view >= 0:
            seats[seat_view]["grand"] = bool(m.grand[seat_view])
        view: dict[str, Any] = {
            "step": number,
            "steps": len(visible) - 1,
            "perspective": who,
            "hand": m.hand_no + 1 if not over else len(m.hand_results),
            "trick_no": 1 + sum(1 for e in m.events if e.kind == EventKind.TRICK_WON),
            "phase": phase.name.lower(),
            "to_act": to_act,
            "seats": seats,
            "trick": [
                {"seat": s, "play": str(p), "combo": p.describe(), "label": play_label(p)}
                for s, p in (m.trick or [])
            ],
            # the running trick turn by turn, passes included: each seat's last turn
            "entries": [_entry(e) for e in obs.entries],
            "wish": rank_name(m.wish) if m.wish else None,
            "scores": list(m.scores),
            "hand_scores": [list(r.score) for r in m.hand_results],
            "exchange": self._exchange(m, who, seat_view),
            "received": self._received(m, who, seat_view),
            **self.moment(step),
            "last": None,
            "played": None,
            "decision": None,
        }
        if step > 0:
            seat, action = self.actions[step - 1]
            full = who == "all" or seat == seat_view
            name = str(seats[seat]["name"])
            if not full and self.states[step - 1].phase is Phase.BOMB_WINDOW and action == PASS:
                # A decline that ended the window: the public sees only its consequence.
                view["last"] = {"seat": -1, "text": "the trick is collected"}
            else:
                view["last"] = {
                    "seat": seat,
                    "text": action_text(name, action, not full, names),
                }
                if isinstance(action, Play) and action.cards:
                    view["played"] = {"seat": seat, **_entry(TrickEntry(seat, action))}
                view["decision"] = self._decision(step - 1, seat, action, full, who)
        return view

    def _exchange(self, m: Match, who: str, seat_view: int) -> dict[str, Any] | None:
        """The passed cards a perspective may see: its own (or all), once chosen."""
        out: dict[str, Any] = {}
        for s in range(4):
            given = m.exchanges[s]
            if given is None or not (who == "all" or s == seat_view):
                continue
            out[str(s)] = [card_name(c) for c in given]
        return out or None

    def _received(self, m: Match, who: str, seat_view: int) -> dict[str, Any] | None:
        """The cards a perspective's seats received, by giver (previous, partner, next)."""
        out: dict[str, Any] = {}
        for s in range(4):
            if who == "all" or s == seat_view:
                got = observe(m, s).received
                if got:
                    out[str(s)] = [card_name(c) for c in got]
        return out or None

    def _decision(
        self, index: int, seat: int, action: Action, full: bool, who: str
    ) -> dict[str, Any]:
        """The decision answered by action ``index``; ``full`` adds the legal list and log."""
        before = self.states[index]
        think = self.think.get(index)
        if think is None and index > 0 and isinstance(self.actions[index - 1][1], CallTichu):
            think = self.think.get(index - 1)  # one answer: the call and the play with it
        out: dict[str, Any] = {
            "seat": seat,
            "phase": before.phase.name.lower(),
            "chosen": action_text(self.replay.seats[seat], action, not full, self.replay.seats),
            # Whether the seat was asked (and how long it thought) tells which answers were
            # forced, so what it held: its own and the all-cards view alone see it.
            "asked": (think is not None) if full else None,
            "think_ms": think.ms if think is not None and full else None,
            "failures": [
                {"kind": f.get("kind"), "outcome": f.get("outcome"), "detail": f.get("detail")}
                for f in self.failures_for(who, index)
            ],
            "legal": None,
            "log": None,
        }
        if not full:
            return out
        if before.phase is Phase.EXCHANGE:
            out["legal"] = ["any three cards of the hand"]
        elif not isinstance(action, CallTichu):
            out["legal"] = [_legal_text(a) for a in before.legal_actions()]
        if think is not None:
            out["log"] = self._log_lines(think)
        return out

    def _log_lines(self, think: Think) -> list[str] | None:
        """The bot's log lines written during the decision, or ``None`` without a log."""
        if think.log_from < 0 or think.log_to < think.log_from:
            return None
        path = self.logs[think.seat] if think.seat < len(self.logs) else None
        if path is None:
            return None
        try:
            with path.open("rb") as f:
                f.seek(think.log_from)
                data = f.read(min(think.log_to - think.log_from, MAX_LOG_BYTES))
        except OSError:
            return None
        lines = data.decode("utf-8", "replace").splitlines()
        return lines[:MAX_LOG_LINES]

    def public_actions(self) -> list[dict[str, Any]]:
        """Every action as a spectator sees it, with its step: the duplicate comparison's unit."""
        names = self.replay.seats
        number = {step: k for k, step in enumerate(self.visible("spectator"))}
        return [
            {
                "step": number[i + 1],  # in the spectator's count
                "seat": s,
                "key": _public_key(a),
                "text": action_text(names[s], a, True, names),
                # Asked of all four at once (Grand Tichu, the exchange): the seat order of
                # these answers is the referee's, not the table's.
                "together": self.states[i].phase in (Phase.GRAND_TICHU, Phase.EXCHANGE),
            }
            for i, (s, a) in enumerate(self.actions)
            if i not in self.silent
        ]


def _next_name(m: Match, names: Sequence[str]) -> str:
    """Who is to play now (after the Dog: the partner, or the next seat still in)."""
    return names[m.seat] if 0 <= m.seat < len(names) else "the next seat"


def _entry(e: TrickEntry) -> dict[str, Any]:
    """One turn of a trick for the page: seat, play (``pass``), label, out of turn."""
    return {
        "seat": e.seat,
        "play": str(e.play),
        "label": play_label(e.play),
        "bomb": e.play.is_bomb,
        "out_of_turn": e.out_of_turn,
    }


def event_note(names: Sequence[str], ev: Event, lead: str = "") -> str:
    """A public event worth saying aloud, or an empty string (``lead``: who leads after a
    Dog, when the caller knows)."""
    name = names[ev.seat] if 0 <= ev.seat < len(names) else ""
    k = ev.kind
    if k == EventKind.TICHU:
        return tichu_note(name)
    if k == EventKind.GRAND_TICHU:
        called = [names[s] for s, c in enumerate(ev.called) if c]
        return f"Grand Tichu: {', '.join(called)}" if called else ""
    if k == EventKind.EXCHANGE:
        return "the cards are exchanged"
    if k == EventKind.PLAY and ev.play is not None and ev.play.is_bomb:
        return play_note(name, play_label(ev.play), bool(ev.value))
    if k == EventKind.WISH:
        return wish_note(name, ev.value)
    if k == EventKind.WISH_FULFILLED:
        return fulfilled_note(name, ev.value)
    if k == EventKind.TRICK_WON:
        return dog_note(lead) if ev.cards == DOG_BIT else trick_note(name, ev.points)
    if k == EventKind.DRAGON_GIFT:
        to = names[ev.value] if 0 <= ev.value < len(names) else f"seat {ev.value}"
        return gift_note(name, ev.points, to)
    if k == EventKind.OUT:
        return out_note(name, ev.value)
    return ""


def _tricks(m: Match) -> int:
    return sum(1 for e in m.events if e.kind == EventKind.TRICK_WON) + (1 if m.trick else 0)


def _legal_text(action: Action) -> str:
    """An answer as the decision panel and the move list write it: label and cards."""
    if isinstance(action, Play):
        return f"{play_label(action)} · {action}" if action.cards else "pass"
    return str(action)


def _public_key(action: Action) -> str:
    """What a spectator can compare between two tables: passed cards and Grand no's hidden."""
    if isinstance(action, Exchange):
        return "exchange"
    if isinstance(action, GrandTichu):
        return "grand"
    return str(action)


def plain_name(name: object) -> str | None:
    """``name`` if it is a plain file name (a string, not empty, ``.`` or ``..``, with no path
    separator and no NUL), else None: all a replay may name inside its own logs folder."""
    if not isinstance(name, str) or name in ("", ".", "..") or any(c in name for c in "/\\\0"):
        return None
    return name


def replay_logs(folder: Path, names: object) -> list[Path | None]:
    """The bots' logs a replay's ``meta.log_files`` names, one a seat, each a file of
    ``folder`` (the replay's own logs folder).

    A replay may come from elsewhere (an upload, a copied database): a name that is not a
    plain file name (``../../etc/passwd``, ``/etc/passwd``, a number) is that seat's missing
    log, so the viewer reads no file outside the folder.
    """
    if not isinstance(names, list):
        return []
    plain = [plain_name(name) for name in names]
    return [None if name is None else folder / name for name in plain]


def load_timeline(path: Path, log_dir: Path | None) -> Timeline:
    """Reads a replay file and re-plays it; the bots' logs come from its table's folder in
    ``log_dir`` if present (the table's id, like the logs' names, a plain name)."""
    replay = load(path)
    table = plain_name(replay.meta.get("table_id"))
    if log_dir is None or table is None:
        return Timeline(replay)
    return Timeline(replay, replay_logs(log_dir / table, replay.meta.get("log_files")))
