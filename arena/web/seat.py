"""A person's seat at a table: who sits there, the decision asked, the bot that waits for them.

``PersonBot`` is the bot a person's seat runs (a client of the referee like any bot, through
``sdk.client.BotClient``): it hands each decision to the person's page (``Person.open``) and
waits for the answer (``Person.give``), which the SDK sends and the referee checks as it
checks every bot's. A bomb window waits ``window_s``; a person who is away or out of time
gets the stand-in bot's answer (``TableSettings.leave``).
"""

from __future__ import annotations

import concurrent.futures
import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from arena.rules import PASS, Action, Exchange, Observation, Options, Phase, parse_card
from arena.rules.errors import ArenaError
from arena.web.live import DELAYS
from example_bots.heuristic.bot import HeuristicBot
from sdk.bot import Bot

__all__ = ["LEAVE_RULES", "Person", "PersonBot", "SeatError", "TableSettings"]

LEAVE_RULES = ("bot", "wait")
_MARGIN_S = 1.0
"""A person's answer is cut this long before the referee's deadline: the stand-in's is in time."""


WINDOW_RAN_OUT = (
    "your bomb window ran out: no bomb. From now on the table waits about as long after"
    " plays, so that nobody can tell who holds a bomb: say 'no bomb' at once to keep it quick"
)
"""The notice after a person's bomb window ran out: why later plays pause (the referee's
pacing, ``arena.referee.match``), and how to keep the game quick."""


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
class Ask:
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
        self.ask: Ask | None = None
        self.seen = time.monotonic()
        self.polling = 0  # the page's requests waiting now (long polls)
        self.notice = ""
        self._lock = threading.Lock()
        self.changed: Any = None  # set by the room: tells the pages something changed

    def away(self, away_s: float) -> bool:
        """Whether the person's page is gone: no request waiting, none for ``away_s`` seconds."""
        return self.polling == 0 and time.monotonic() - self.seen > away_s

    def open(self, obs: Observation, wait_s: float) -> Ask:
        """Asks the person a decision (from the SDK's thread)."""
        with self._lock:
            self.ask = Ask(next(self._numbers), obs, time.monotonic() + wait_s)
            ask = self.ask
        if self.changed is not None:
            self.changed()
        return ask

    def close(self, ask: Ask, notice: str = "") -> None:
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
                self.person.notice = WINDOW_RAN_OUT
                return PASS, False
            self.person.notice = (
                "you were away: the stand-in bot answered for you"
                if away
                else "your time ran out: the stand-in bot answered for you"
            )
            return self.stand_in.answer(obs)
        finally:
            self.person.close(ask)
