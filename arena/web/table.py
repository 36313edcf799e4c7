"""A table where people play against bots: a lobby, invite links, and a person's seat.

``TableRoom`` holds four seats. People take seats in the lobby (``/``) or through an invite
link carrying that seat's secret (``/seat?token=...``); when someone starts the game, bots
fill the empty seats. The referee is the same as for ``arena play``: an ``ArenaServer`` on
loopback, each bot a sandboxed process started by ``play_table``, and each person's seat a
client of that referee like any bot (``sdk.client.BotClient``): its ``PersonBot`` hands each
decision to the person's page and waits for the answer, which the SDK sends and the referee
checks as it checks every bot's. The game is recorded to a replay file.

Hidden information: a person's page asks ``/api/seat/state`` with its seat's secret and gets
``observe(match, seat)`` (the rules core's view of one seat: its own hand, public events) and
its own pending decision; no other seat's card is ever in it. A bomb window offered to another
seat is shown as the ordinary turn, as the replay viewer does.

Spectators (``/live``, linked from the lobby) see the table's public events under the spectator
delay (``delay``: ``trick`` by default, as ``arena web``), drawn by the live page.

Clock: people get ``decision_ms`` per decision and a bank per hand (much longer than a bot's);
a bomb window waits ``window_s`` for the person's bomb, then passes. A person whose page has not
asked for ``away_s`` seconds has left: with ``leave="bot"`` a stand-in bot answers for them
until they come back; with ``leave="wait"`` the table waits for them up to their clock (then
the stand-in answers, as it does when a person's time runs out).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import secrets
import threading
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from fastapi import Body, FastAPI, Header, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent
from fastapi.staticfiles import StaticFiles

from arena.referee import FailurePolicy, GiveUp, TimeControl
from arena.rules import (
    DOG_BIT,
    PASS,
    Action,
    EventKind,
    Exchange,
    Gift,
    GrandTichu,
    Observation,
    Options,
    Phase,
    Play,
    Wish,
    card_name,
    cards_of,
    observe,
    parse_card,
)
from arena.rules.errors import ArenaError
from arena.server.manifest import Manifest, resolve_bot
from arena.server.sandbox import Sandbox
from arena.tournament.live import event_json
from arena.web.app import STATIC
from arena.web.labels import play_label, rank_word
from arena.web.live import DELAYS, PublicTable, visible_count
from arena.web.timeline import event_note
from arena.web.viewer import resume_id
from example_bots.heuristic.bot import HeuristicBot
from sdk.bot import Bot

__all__ = ["LEAVE_RULES", "Person", "PersonBot", "SeatError", "TableRoom", "TableSettings"]

LEAVE_RULES = ("bot", "wait")
_MARGIN_S = 1.0
"""A person's answer is cut this long before the referee's deadline: the stand-in's is in time."""


class SeatError(ArenaError):
    """A request the table refuses (unknown seat secret, a seat taken, a stale answer)."""


@dataclass(frozen=True)
class TableSettings:
    """How a table with people plays: rules, clock, bomb window, the rule for who leaves."""

    options: Options = field(default_factory=lambda: Options(hands=1))
    decision_ms: int = 60_000
    bank_ms: int = 120_000
    window_s: float = 3.0
    away_s: float = 20.0
    leave: str = "bot"
    seed: int | None = None
    delay: str = "trick"

    def __post_init__(self) -> None:
        if self.delay not in DELAYS:
            raise ValueError(f"spectator delay {self.delay!r}: use one of {', '.join(DELAYS)}")
        if self.leave not in LEAVE_RULES:
            raise ValueError(f"leave rule {self.leave!r}: use one of {', '.join(LEAVE_RULES)}")


@dataclass
class _Ask:
    """One decision waiting for a person: its number, the seat's view, the answer to come."""

    number: int
    obs: Observation
    deadline: float  # monotonic seconds
    answer: concurrent.futures.Future[tuple[Action, bool]] = field(
        default_factory=concurrent.futures.Future
    )


class Person:
    """One person's seat: who sits there, their secret, the decision they are asked."""

    _numbers = itertools.count(1)

    def __init__(self, seat: int, name: str, secret: str) -> None:
        self.seat = seat
        self.name = name
        self.secret = secret
        self.ask: _Ask | None = None
        self.seen = time.monotonic()
        self.polling = 0  # the page's requests waiting now (long polls)
        self.notice = ""
        self._lock = threading.Lock()
        self.changed: Any = None  # set by the room: tells the pages something changed

    def away(self, away_s: float) -> bool:
        """Whether the person's page is gone: no request waiting, none for ``away_s`` seconds."""
        return self.polling == 0 and time.monotonic() - self.seen > away_s

    def open(self, obs: Observation, wait_s: float) -> _Ask:
        """Asks the person a decision (from the SDK's thread)."""
        with self._lock:
            self.ask = _Ask(next(self._numbers), obs, time.monotonic() + wait_s)
            ask = self.ask
        if self.changed is not None:
            self.changed()
        return ask

    def close(self, ask: _Ask, notice: str = "") -> None:
        """The decision is answered (or its time ran out)."""
        with self._lock:
            if self.ask is ask:
                self.ask = None
            if notice:
                self.notice = notice
        if self.changed is not None:
            self.changed()

    def give(self, number: int, body: dict[str, Any]) -> None:
        """The person's answer to decision ``number``, checked against its legal answers.

        An answer to no open decision (a late click: the bomb window closed, or the time ran
        out, while it was on its way; or a forged one) changes nothing; the decision was
        answered for the person and the table goes on.

        Raises:
            SeatError: No such decision open, or an answer that is not one of its answers.
        """
        with self._lock:
            ask = self.ask
        if ask is None:
            raise SeatError(
                f"decision {number} is not open: no decision of yours is (a bomb out of turn"
                " only while the page asks 'Bomb now?')"
            )
        if ask.number != number:
            raise SeatError(f"decision {number} is no longer open: decision {ask.number} is")
        action = _action(ask.obs, body)
        call = bool(body.get("tichu")) and ask.obs.may_call_tichu
        try:
            ask.answer.set_result((action, call))
        except concurrent.futures.InvalidStateError:  # answered, or its time ran out, just now
            why = "its time ran out" if ask.answer.cancelled() else "it was answered"
            raise SeatError(f"decision {number} is no longer open: {why}") from None
        self.notice = ""


def _action(obs: Observation, body: dict[str, Any]) -> Action:
    """The action a page's answer names: an index into the legal answers, or three cards."""
    if obs.phase is Phase.EXCHANGE:
        names = body.get("exchange")
        if not isinstance(names, list) or len(names) != 3:
            raise SeatError("pass three cards: to the next seat, the partner, the previous seat")
        try:
            cards = [parse_card(str(n)) for n in names]
        except ArenaError as e:
            raise SeatError(str(e)) from None
        if len(set(cards)) != 3 or any(not obs.hand >> c & 1 for c in cards):
            raise SeatError("pass three different cards of your hand")
        return Exchange(*cards)
    index = body.get("index")
    if not isinstance(index, int) or not 0 <= index < len(obs.legal):
        raise SeatError(f"answer {index!r} is not one of the {len(obs.legal)} legal answers")
    return obs.legal[index]


class PersonBot(Bot):
    """The bot a person's seat runs: each decision waits for the person's page.

    Runs in the SDK client's thread (``threaded``). A bomb window waits ``window_s`` then
    passes; a person who is away (``leave="bot"``) or out of time gets the stand-in's answer.
    """

    def __init__(self, person: Person, settings: TableSettings) -> None:
        super().__init__()
        self.name = person.name
        self.person = person
        self.settings = settings
        self.stand_in = HeuristicBot()

    def answer(self, obs: Observation) -> tuple[Action, bool]:
        s = self.settings
        left = max(0.5, (self.time_left_ms or s.decision_ms) / 1000.0 - _MARGIN_S)
        window = obs.phase is Phase.BOMB_WINDOW
        if self.person.away(s.away_s) and s.leave == "bot":
            if window:
                return PASS, False
            self.person.notice = "you were away: the stand-in bot answered for you"
            return self.stand_in.answer(obs)
        wait = min(left, s.window_s) if window else left
        ask = self.person.open(obs, wait)
        until = time.monotonic() + wait
        away = False
        try:
            while (slice_s := min(0.5, until - time.monotonic())) > 0:
                try:  # in slices: a person who leaves meanwhile is noticed
                    return ask.answer.result(timeout=slice_s)
                except concurrent.futures.TimeoutError:
                    pass
                if s.leave == "bot" and self.person.away(s.away_s):
                    away = True
                    break
            # Closed for the person first: an answer on its way now is refused (``give``),
            # one that came as the time ran out is the answer.
            if not ask.answer.cancel():
                return ask.answer.result()
            if window:
                return PASS, False
            self.person.notice = (
                "you were away: the stand-in bot answered for you"
                if away
                else "your time ran out: the stand-in bot answered for you"
            )
            return self.stand_in.answer(obs)
        finally:
            self.person.close(ask)


class TableRoom:
    """Four seats, a lobby, then one game between the people seated and bots."""

    def __init__(
        self,
        bots: Sequence[str],
        settings: TableSettings,
        out: Path,
        sandbox: Sandbox | None,
    ) -> None:
        if len(bots) != 4:
            raise ValueError(
                f"give four bots, one for each seat a person leaves empty, not {len(bots)}"
            )
        self.manifests: list[Manifest] = [resolve_bot(b) for b in bots]
        self.settings = settings
        self.out = out
        self.sandbox = sandbox
        self.secrets = [secrets.token_urlsafe(18) for _ in range(4)]
        self.people: list[Person | None] = [None, None, None, None]
        plain = [m.name for m in self.manifests]
        # a name used twice gets its seat number, as in ``arena play``
        self.names = [f"{n}-{s}" if plain.count(n) > 1 else n for s, n in enumerate(plain)]
        self.state = "lobby"
        self.error = ""
        self.table: Any = None
        self.notes: list[dict[str, Any]] = []
        self.feed: list[dict[str, Any]] = []  # the public events, as a live feed's lines
        self.version = 0
        self._changed = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[None] | None = None
        self._views: dict[int, dict[str, Any]] = {}  # each seat's last view (kept at the end)

    # ------------------------------------------------------------------ lobby

    def person(self, secret: str) -> Person:
        """The person holding this seat secret.

        Raises:
            SeatError: No seat has this secret, or nobody sits there yet.
        """
        for p in self.people:
            if p is not None and secrets.compare_digest(p.secret, secret):
                p.seen = time.monotonic()
                return p
        raise SeatError("no seat has this token: ask for a new invite link")

    def sit(self, seat: int, name: str, secret: str | None = None) -> Person:
        """Seats a person (from the lobby, or through an invite link with ``secret``).

        Raises:
            SeatError: The game has started, the seat is taken, or a wrong secret.
        """
        if self.state != "lobby":
            raise SeatError("the game has started: every seat is taken")
        if not 0 <= seat < 4:
            raise SeatError(f"seat {seat}: use 0..3")
        if secret is not None and not secrets.compare_digest(secret, self.secrets[seat]):
            raise SeatError("this invite link is not for this seat")
        if self.people[seat] is not None:
            raise SeatError(f"seat {seat} is taken")
        name = " ".join(name.split())[:24] or f"person {seat}"
        if name in [n for i, n in enumerate(self.names) if self.people[i] is not None]:
            name = f"{name}-{seat}"
        person = Person(seat, name, self.secrets[seat])
        person.changed = self.changed
        self.people[seat] = person
        self.names[seat] = name
        self.changed()
        return person

    def lobby(self) -> dict[str, Any]:
        """The lobby as anyone sees it: who sits where (never a seat's secret)."""
        return {
            "state": self.state,
            "error": self.error,
            "seats": [
                {
                    "seat": s,
                    "team": "AB"[s & 1],
                    "name": self.names[s],
                    "person": self.people[s] is not None,
                }
                for s in range(4)
            ],
            "replay": self.out.name if self.state == "over" else None,
            "version": self.version,
        }

    # ------------------------------------------------------------------ changes

    def changed(self) -> None:
        """Something changed: wakes every waiting page (safe from any thread)."""
        loop = self._loop
        if loop is None:
            return
        loop.call_soon_threadsafe(self._bump)

    def _bump(self) -> None:
        self.version += 1
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait(self, since: int, timeout_s: float) -> None:
        """Waits until the version passes ``since`` (or ``timeout_s``)."""
        if self.version != since:
            return
        event = self._changed
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), timeout_s)

    # ------------------------------------------------------------------ the game

    def start(self) -> None:
        """Starts the game (on the running loop): bots fill the seats nobody took."""
        if self.state != "lobby":
            raise SeatError("the game has already started")
        if not any(self.people):
            raise SeatError("nobody sits at the table: take a seat first")
        self.state = "playing"
        self.task = asyncio.ensure_future(self._play())
        self.changed()

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop the room's game and pages run on."""
        self._loop = loop

    async def _play(self) -> None:
        from arena.server import ArenaServer, TableSpec
        from arena.server.bots import play_table
        from sdk.client import BotClient, ClientConfig

        s = self.settings
        server = ArenaServer()
        await server.start()
        spec = TableSpec(
            options=s.options,
            seed=s.seed if s.seed is not None else secrets.randbits(128),
            time=TimeControl(s.decision_ms, s.bank_ms),
            policy=FailurePolicy(0, 3, 30_000, GiveUp.FALLBACK_BOT),
            names=tuple(self.names),
            replay=self.out,
            table_id="table",
        )
        clients: list[asyncio.Task[int]] = []

        def seated(table: Any) -> None:
            self.table = table
            table.watchers.append(self._watch)
            for p in self.people:
                if p is None:
                    continue
                config = ClientConfig(
                    server=server.address,
                    token=table.tokens[p.seat],
                    name=p.name,
                    results_only=True,
                    threaded=True,
                )
                client = BotClient(PersonBot(p, s), config)
                clients.append(asyncio.ensure_future(client.run()))

        manifests = [
            None if p is not None else m for p, m in zip(self.people, self.manifests, strict=True)
        ]
        try:
            await play_table(
                server,
                spec,
                manifests,
                log_dir=self.out.with_name(self.out.stem + "-logs"),
                on_table=seated,
                sandbox=self.sandbox,
            )
            self.state = "over"
        except Exception as e:  # a bot that cannot start, say: the lobby says so
            self.state = "over"
            self.error = f"the game stopped: {e}"
        finally:
            for p in self.people:
                if p is not None and p.ask is not None:
                    p.ask.answer.cancel()
            await server.stop(1.0)
            for c in clients:
                c.cancel()
            self.changed()

    def _watch(self, ev: Any) -> None:
        """A published table event: a public note for every page (``only_seat`` kept)."""
        if ev.only_seat < 0:
            self.feed.append(event_json(ev))
        if ev.event is not None:
            note = event_note(self.names, ev.event)
            if note:
                self.notes.append({"seat": -1, "text": note, "hand": ev.hand})
        elif ev.result is not None:
            a, b = ev.result.score
            self.notes.append(
                {"seat": -1, "text": f"hand {ev.hand} over: A {a:+d}, B {b:+d}", "hand": ev.hand}
            )
        elif ev.failure is not None:
            f = ev.failure
            text = f"{self.names[f.seat]}: {f.kind.name.lower().replace('_', ' ')}"
            self.notes.append({"seat": ev.only_seat, "text": text, "hand": ev.hand})
        self.changed()

    # ------------------------------------------------------------------ a seat's view

    def seat_view(self, person: Person) -> dict[str, Any]:
        """What a person's page shows: that seat's view from the rules core, its decision."""
        me = person.seat
        out: dict[str, Any] = {
            "version": self.version,
            "state": self.state,
            "error": self.error,
            "seat": me,
            "name": person.name,
            "names": self.names,
            "notice": person.notice,
            "notes": [n for n in self.notes if n["seat"] in (-1, me)][-60:],
            "view": None,
            "ask": None,
            "replay": self.out.name if self.state == "over" else None,
        }
        referee = self.table.referee if self.table is not None else None
        if referee is not None:
            m = referee.match
            self._views[me] = _view(observe(m, me), self.names, m.hand_results)
        out["view"] = self._views.get(me)
        ask = person.ask
        if ask is not None and not ask.answer.done():
            out["ask"] = _ask_json(ask, self.names)
        return out


def _view(obs: Observation, names: Sequence[str], results: Sequence[Any]) -> dict[str, Any]:
    """A seat's observation in the table component's shape (the replay viewer's seat view)."""
    me = obs.seat
    phase, to_act = obs.phase, obs.to_act
    if phase is Phase.BOMB_WINDOW and to_act != me:
        phase, to_act = Phase.PLAY, obs.turn  # whom a window is offered to is a secret
    hidden_calls = obs.phase is Phase.GRAND_TICHU
    return {
        "perspective": str(me),
        "hand": obs.hand_no + 1,
        "trick_no": 1 + sum(1 for e in obs.events if e.kind == EventKind.TRICK_WON),
        "phase": phase.name.lower(),
        "to_act": to_act,
        "seats": [
            {
                "name": names[s],
                "team": "AB"[s & 1],
                "count": obs.card_counts[s],
                "cards": [card_name(c) for c in cards_of(obs.hand)] if s == me else None,
                "grand": bool(obs.grand[s]) and (not hidden_calls or s == me),
                "tichu": bool(obs.tichu[s]),
                "out": obs.out.index(s) + 1 if s in obs.out else 0,
                "won_points": obs.won_points[s],
                "won_cards": None,
            }
            for s in range(4)
        ],
        "trick": [
            {"seat": s, "play": str(p), "combo": p.describe(), "label": play_label(p)}
            for s, p in obs.trick
        ],
        "entries": [
            {
                "seat": e.seat,
                "play": str(e.play),
                "label": play_label(e.play),
                "bomb": e.play.is_bomb,
                "out_of_turn": e.out_of_turn,
            }
            for e in obs.entries
        ],
        "wish": rank_word(obs.wish) if obs.wish else None,
        "scores": list(obs.scores),
        "hand_scores": [list(r.score) for r in results],
        "exchange": {str(me): [card_name(c) for c in obs.given]} if obs.given else None,
        "received": {str(me): [card_name(c) for c in obs.received]} if obs.received else None,
        "collected": _collected(obs),
        "hand_end": _last_result(obs, names, results),
        "played": None,
        "last": None,
    }


def _collected(obs: Observation) -> dict[str, Any] | None:
    """The trick just taken (by whom, for how many points, given to whom), until the next play."""
    taken = (EventKind.TRICK_WON, EventKind.DRAGON_GIFT)
    last = next((e for e in reversed(obs.events) if e.kind != EventKind.OUT), None)
    if obs.trick or last is None or last.kind not in taken or last.cards == DOG_BIT:
        return None  # (the Dog's "trick" only passes the lead)
    to = last.value if last.kind == EventKind.DRAGON_GIFT else last.seat
    return {"seat": last.seat, "to": to, "points": last.points, "entries": []}


def _last_result(obs: Observation, names: Sequence[str], results: Sequence[Any]) -> Any:
    """The previous hand's result, shown until the first play of the next hand (or at the end)."""
    played = any(e.kind == EventKind.PLAY for e in obs.events)
    if not results or (played and obs.phase is not Phase.MATCH_OVER):
        return None
    r = results[-1]
    return {
        "hand": len(results),
        "out": [names[s] for s in r.out],
        "double_victory": "AB"[r.double_victory] if r.double_victory >= 0 else None,
        "card_points": list(r.card_points),
        "bets": list(r.bets),
        "score": list(r.score),
        "total": [sum(h.score[t] for h in results) for t in (0, 1)],
        "calls": [
            "Grand Tichu" if r.grand[s] else "Tichu" if r.tichu[s] else None for s in range(4)
        ],
    }


def _ask_json(ask: _Ask, names: Sequence[str]) -> dict[str, Any]:
    """A pending decision for the page: its phase, legal answers, time left."""
    obs = ask.obs
    legal: list[dict[str, Any]] = []
    for i, a in enumerate(obs.legal):
        item: dict[str, Any] = {"index": i}
        if isinstance(a, Play):
            item["cards"] = [card_name(c) for c in cards_of(a.cards)]
            item["play"] = str(a)
            item["label"] = play_label(a)
            item["bomb"] = a.is_bomb
        elif isinstance(a, GrandTichu):
            item["label"] = "call Grand Tichu" if a.call else "no Grand Tichu"
        elif isinstance(a, Wish):
            item["label"] = f"wish for {rank_word(a.rank)}" if a.rank else "no wish"
            item["rank"] = rank_word(a.rank) if a.rank else ""
        elif isinstance(a, Gift):
            item["label"] = f"give the trick to {names[a.to]}"
        else:
            item["label"] = str(a)
        legal.append(item)
    return {
        "number": ask.number,
        "phase": obs.phase.name.lower(),
        "legal": legal,
        "may_call_tichu": obs.may_call_tichu,
        "left_ms": max(0, int((ask.deadline - time.monotonic()) * 1000)),
    }


def create_table_app(room: TableRoom, *, poll_s: float = 20.0) -> FastAPI:
    """The web app of one table: the lobby (``/``), a person's seat (``/seat``), their API.

    Pages long-poll (``since``: the version they have; the answer comes when something
    changed, or after ``poll_s``), so every response is a plain JSON document.
    """
    app = FastAPI(title="Tichu Arena table", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    shell = (STATIC / "page.html").read_text(encoding="utf-8")

    @app.on_event("startup")
    async def bind() -> None:
        room.bind(asyncio.get_running_loop())

    for page, title in (("lobby", "Table"), ("seat", "Your seat"), ("live", "Watch the table")):
        html = shell.replace("{title}", title).replace("{page}", page)

        async def serve(html: str = html) -> HTMLResponse:
            return HTMLResponse(html)

        app.get("/" if page == "lobby" else f"/{page}", include_in_schema=False)(serve)

    @app.get("/api/live/stream", response_class=EventSourceResponse)
    async def watch(
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> AsyncIterator[ServerSentEvent]:
        """Spectators: the table's public events under the spectator delay (``/live``)."""
        header: dict[str, Any] = {"type": "header", "round": "-", "table": "table"}
        header |= {"board": "-", "rotation": "-", "seats": room.names}
        sent = resume_id(last_event_id, 0)
        while True:
            since = room.version
            events = list(room.feed)
            shown = visible_count(events, room.settings.delay)
            table = PublicTable(header)
            for i, ev in enumerate(events[:shown], 1):
                table.apply(ev)
                if i > sent:
                    sent = i
                    data = {"event": ev, "view": table.view(), "header": header}
                    yield ServerSentEvent(data=data, event="table", id=str(i))
            if room.state == "over":
                view = table.view()
                if not view["over"]:
                    view = {**view, "termination": room.error or "stopped"}
                yield ServerSentEvent(data={"view": view}, event="end", id=str(sent))
                return
            await room.wait(since, 5.0)

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> FileResponse:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    @app.get("/api/lobby")
    async def lobby_api(since: int = -1) -> dict[str, Any]:
        await room.wait(since, poll_s)
        return room.lobby()

    @app.post("/api/sit")
    async def sit_api(body: dict[str, Any] = Body(...)) -> dict[str, Any]:  # noqa: B008
        seat = body.get("seat")
        secret = body.get("token")
        if seat is None and isinstance(secret, str):  # an invite link names its seat
            seat = next(
                (s for s in range(4) if secrets.compare_digest(room.secrets[s], secret)), None
            )
        if not isinstance(seat, int):
            raise SeatError("name the seat to take (0..3), or use a seat's invite link")
        person = room.sit(seat, str(body.get("name", "")), secret if secret else None)
        return {"token": person.secret, "seat": person.seat, "name": person.name}

    @app.post("/api/start")
    async def start_api(body: dict[str, Any] = Body(...)) -> dict[str, Any]:  # noqa: B008
        room.person(str(body.get("token", "")))
        room.start()
        return room.lobby()

    @app.get("/api/seat/state")
    async def state_api(request: Request, token: str, since: int = -1) -> dict[str, Any]:
        person = room.person(token)
        person.polling += 1  # a page waiting here is present, however long it waits
        try:
            until = time.monotonic() + poll_s
            while room.version == since and time.monotonic() < until:
                await room.wait(since, 1.0)
                if await request.is_disconnected():  # the tab was closed
                    break
        finally:
            person.polling -= 1
            person.seen = time.monotonic()
        return room.seat_view(person)

    @app.post("/api/seat/answer")
    async def answer_api(body: dict[str, Any] = Body(...)) -> dict[str, Any]:  # noqa: B008
        person = room.person(str(body.get("token", "")))
        number = body.get("number")
        if not isinstance(number, int):
            raise SeatError("name the decision answered (number)")
        person.give(number, body)
        return {"ok": True}

    @app.get("/api/record")
    async def record_api() -> FileResponse:
        """The finished game's replay file (every hand is public once the game is over)."""
        if room.state != "over" or not room.out.is_file():
            raise SeatError("the game's record is written when the game is over")
        return FileResponse(room.out, media_type="application/json", filename=room.out.name)

    @app.exception_handler(SeatError)
    async def refused(_request: Request, exc: SeatError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=409)

    return app


async def serve_table(
    room: TableRoom, host: str, port: int, ready: Any = None, stop: asyncio.Event | None = None
) -> None:
    """Serves the table's pages with uvicorn on this loop, beside the referee, until ``stop``
    is set (or Ctrl-C); ``ready(port)`` hears the port bound."""
    import uvicorn

    config = uvicorn.Config(create_table_app(room), host=host, port=port, log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve())
    while not server.started:
        if task.done():
            await task
            return
        await asyncio.sleep(0.05)
    if ready is not None:
        ready(server.servers[0].sockets[0].getsockname()[1])
    if stop is not None:
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait([task, stopping], return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
    server.should_exit = True  # uvicorn ends its connections and returns
    await task
