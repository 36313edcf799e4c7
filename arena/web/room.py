"""A table where people play against bots: four seats, a lobby, then a game (and more).

People take seats in the lobby or through an invite link carrying that seat's secret; when
someone starts the game, bots fill the empty seats. The referee is the same as for ``arena
play``: an ``ArenaServer`` on loopback, each bot a sandboxed process started by
``play_table``, and each person's seat a client of that referee like any bot (``PersonBot``).
The game is recorded to a replay file. Every page waiting on the room is woken when
something changes (``version``).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.referee import FailurePolicy, GiveUp, TimeControl
from arena.rules import Match, Phase, format_cards, observe
from arena.server.manifest import Manifest, resolve_bot
from arena.server.sandbox import Sandbox
from arena.tournament.live import event_json
from arena.web.live import PublicTable
from arena.web.seat import Person, PersonBot, SeatError, TableSettings
from arena.web.seat_view import ask_json, view_json

__all__ = ["TableRoom"]

_NOTES_KEPT = 1500
"""The events a seat's page gets (the hand history): a whole game to 1000 is some 600."""


class TableRoom:
    """Four seats, a lobby, then a game between the people seated and bots (another one
    with ``again``)."""

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
        self.public = PublicTable({"seats": self.names})  # the public events folded, no delay
        self.match: Match | None = None  # the game's rules state, kept when the game is over
        self._held: tuple[int, tuple[int, ...]] = (0, ())  # (hand, each seat's cards) now
        self.games = 1  # games played at this table (``again``)
        self.ended: list[tuple[Path, str]] = []  # each game over: its record, its error
        self.first_stem = out.stem

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
        if secret is None:  # from the lobby: a new secret, not the invite link shown before
            self.secrets[seat] = secrets.token_urlsafe(18)
        person = Person(seat, name, self.secrets[seat])
        person.changed = self.changed
        self.people[seat] = person
        self.names[seat] = name
        self.changed()
        return person

    def invite(self, secret: str) -> dict[str, Any]:
        """What an invite link is for: its seat, team and partner, and whether it can still be
        taken (known only to whoever holds the link).

        Raises:
            SeatError: No seat has this secret.
        """
        seat = next((s for s in range(4) if secrets.compare_digest(self.secrets[s], secret)), -1)
        if seat < 0:
            raise SeatError("no seat has this token: ask for a new invite link")
        return {
            "seat": seat,
            "team": "AB"[seat & 1],
            "partner": self.names[(seat + 2) % 4],
            "taken": self.people[seat] is not None,
            "state": self.state,
        }

    def again(self) -> None:
        """A new game at the same table once this one is over: the same people in the same
        seats, a new deal, recorded to a new file (``<name>-2.json``, ...); it starts when one
        of them starts it, as the first did.

        Raises:
            SeatError: The game is not over.
        """
        if self.state != "over":
            raise SeatError("the game is not over yet")
        self.games += 1
        self.out = self.out.with_name(f"{self.first_stem}-{self.games}{self.out.suffix}")
        self.state = "lobby"
        self.error = ""
        self.notes, self.feed = [], []
        self.public = PublicTable({"seats": self.names})
        self.match = None
        self.table = None
        self._held = (0, ())
        for p in self.people:
            if p is not None:
                p.notice = ""
        self.changed()

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
        self.public = PublicTable({"seats": self.names})
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
            self.ended.append((self.out, self.error))
            self.changed()

    def _watch(self, ev: Any) -> None:
        """A published table event: folded into the public table, and a note for the pages
        (a failure told to one seat only, for that seat's page)."""
        referee = self.table.referee if self.table is not None else None
        if referee is not None:
            self.match = referee.match
        m = self.match
        if m is not None and m.hand_no + 1 == ev.hand:  # (the next hand is dealt at once)
            self._held = (ev.hand, tuple(m.hands))
        if ev.only_seat < 0:
            line = event_json(ev)
            if line.get("type") == "hand_end" and self._held[0] == ev.hand:
                # The cards left in hand: shown at the hand's end, as players lay them down.
                out = line.get("result", {}).get("out", [])
                hands = self._held[1]
                line["left"] = {
                    str(s): format_cards(hands[s]) for s in range(4) if s not in out and hands[s]
                }
            self.feed.append(line)
            before = self.public.last
            self.public.apply(line)
            last = self.public.last
            if last is not None and last is not before:
                self.notes.append({"seat": -1, "text": last["text"], "hand": ev.hand})
        elif ev.failure is not None:
            f = ev.failure
            text = f"{self.names[f.seat]}: {f.kind.name.lower().replace('_', ' ')}"
            self.notes.append({"seat": ev.only_seat, "text": text, "hand": ev.hand})
        self.changed()

    # ------------------------------------------------------------------ a seat's view

    def _clocks(self, me: int) -> dict[str, int]:
        """The time left to the other people at the table on the decision they are asked (a
        bomb window's is secret: whom it is offered to tells that they hold a bomb)."""
        now = time.monotonic()
        clocks = {}
        for p in self.people:
            ask = p.ask if p is not None and p.seat != me else None
            if p is not None and ask is not None and ask.obs.phase is not Phase.BOMB_WINDOW:
                clocks[str(p.seat)] = max(0, int((ask.deadline - now) * 1000))
        return clocks

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
            "notes": [n for n in self.notes if n["seat"] in (-1, me)][-_NOTES_KEPT:],
            "invites": [
                {"seat": s, "team": "AB"[s & 1], "link": f"/seat?token={self.secrets[s]}"}
                for s in range(4)
                if self.people[s] is None and self.state == "lobby"
            ],
            "view": None,
            "ask": None,
            "replay": self.out.name if self.state == "over" else None,
        }
        m = self.match
        if m is not None:
            out["view"] = view_json(observe(m, me), self.public.view())
            out["view"]["clocks"] = self._clocks(me)
        ask = person.ask
        if ask is not None and not ask.answer.done():
            out["ask"] = ask_json(ask, self.names)
        return out
