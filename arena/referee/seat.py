"""What the referee talks to: the ``Seat`` protocol, its messages, and in-process seats.

The match loop (``arena.referee.match``) knows no transport. It drives four objects that
implement ``Seat``: ``start`` once per match, ``notify`` for every public event, ``decide``
for every decision. ``InProcessSeat`` wraps a ``Player`` (such as an ``sdk.Bot``) and calls
it directly; the gRPC
seat in ``arena.server`` sends the same decisions over a stream and enforces the clock.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from arena.referee.player import FallbackPlayer, Player
from arena.referee.policy import (
    Failure,
    FailureKind,
    FailurePolicy,
    Termination,
    TimeControl,
)
from arena.rules import Action, Event, HandResult, Observation, Options


@dataclass(frozen=True)
class MatchOutcome:
    """How a match ended: termination, final scores, winners (player numbers), give-ups."""

    termination: Termination
    scores: tuple[int, int]
    winners: tuple[int, ...]
    hands_played: int
    given_up: tuple[int, ...]
    detail: str = ""
    victory_points: tuple[int, int] = (0, 0)


class TableEvent(NamedTuple):
    """One numbered event of a table (docs/protocol.md §12).

    ``seq`` is the table's ``state_seq`` after the event and ``hand`` counts from 1.
    ``event`` is a public event of the rules core (``Match.events``, as every seat sees it)
    or ``None`` for the referee's own: a ``failure`` or the match's ``outcome``. A
    ``HAND_END`` event comes with the hand's ``result`` and the cumulative team ``scores``
    and ``victory_points`` after it. ``only_seat`` is the one seat allowed to receive the
    event (a failure about a bomb window, whose existence is private), or -1 for every seat.
    """

    seq: int
    hand: int
    event: Event | None = None
    failure: Failure | None = None
    outcome: MatchOutcome | None = None
    result: HandResult | None = None
    scores: tuple[int, int] = (0, 0)
    victory_points: tuple[int, int] = (0, 0)
    only_seat: int = -1


@dataclass(frozen=True)
class MatchInfo:
    """What a seat learns when a match starts (the wire ``Welcome``); ``seed`` is its bot seed."""

    table_id: str
    seat: int
    options: Options
    time: TimeControl
    policy: FailurePolicy
    names: tuple[str, ...]
    match_no: int = 1
    seed: int | None = None


class Decision(NamedTuple):
    """A question to one seat: its view (with the legal answers) and its clock.

    ``deadline_ms`` is the allowance for this decision and ``bank_ms`` what is left of the
    hand's bank; the seat may take ``deadline_ms + bank_ms`` before it times out.
    ``victory_points`` (by team, cumulative) is set in tournament mode only.
    """

    obs: Observation
    state_seq: int
    deadline_ms: int
    bank_ms: int
    victory_points: tuple[int, int] | None = None


class Answer(NamedTuple):
    """A seat's answer, or why there is none.

    ``action`` is the answer (``None`` when ``failure`` says why there is no acceptable one:
    timeout, too many malformed or illegal answers, a crash). An ``action`` with a
    ``failure`` is an answer the bot's client gave on its behalf and reported (a bot-side
    kind: late, exception, bad answer). ``call_tichu`` asks to call Tichu before the answer.
    ``elapsed_ms`` is the time the seat took, charged to its clock.
    """

    action: Action | None
    call_tichu: bool = False
    elapsed_ms: float = 0.0
    failure: FailureKind | None = None
    detail: str = ""
    request_id: int = 0


class Seat(Protocol):
    """One player at a table, as the match loop sees it, whatever the transport."""

    async def start(self, info: MatchInfo) -> None:
        """A match starts; ``info`` holds the seat, the rules, the clock and the policy."""

    def notify(self, event: TableEvent) -> None:
        """Takes one event (public, or a private failure of this seat); must not block.

        Synchronous on purpose: failures are announced from transport callbacks as they
        happen, and every event must reach every seat in ``state_seq`` order, so a seat
        buffers what it cannot deliver at once (the gRPC seat queues it for its writer).
        """

    async def decide(self, decision: Decision) -> Answer:
        """Asks for an answer and waits for it, the deadline or a failure."""
        ...


class InProcessSeat:
    """A seat played by a ``Player`` (an ``sdk.Bot``) in this process: no wire, the same clock.

    The player is asked through ``answer(obs)``: Tichu first whenever the view allows a call,
    then the action. It is told its time (``deadline_ms``, ``time_left_ms``, as the SDK
    client does); a player
    in this process cannot be interrupted, so an answer that comes later
    than the decision time plus the bank is discarded as a timeout, as a late answer over the
    wire would be. An exception raised by the bot is reported as a crash.
    """

    def __init__(self, bot: Player, name: str = "") -> None:
        self.bot = bot
        self.name = name or bot.name

    async def start(self, info: MatchInfo) -> None:
        """Re-seeds the bot with the seat's seed, then calls its ``on_match_start`` hook."""
        self.bot.reseed(info.seed)
        self.bot.on_match_start(info.seat)

    def notify(self, event: TableEvent) -> None:
        """Calls the bot's ``on_match_end`` hook at the end of the match."""
        if event.outcome is not None:
            self.bot.on_match_end(event.outcome.scores)

    async def decide(self, decision: Decision) -> Answer:
        """Asks the bot directly; a late answer is a timeout (see the class docstring)."""
        obs = decision.obs
        limit = decision.deadline_ms + decision.bank_ms
        self.bot.deadline_ms = float(decision.deadline_ms)
        self.bot.time_left_ms = float(limit)  # nothing is lost in transit: no safety margin
        t0 = time.perf_counter()
        try:
            action, call = self.bot.answer(obs)
        except Exception as e:  # a bot's bug must not take the referee down
            last = traceback.extract_tb(e.__traceback__)[-1:]
            where = f" at {last[0].filename}:{last[0].lineno}" if last else ""
            return Answer(None, failure=FailureKind.CRASH, detail=f"{e!r}{where}")
        elapsed = (time.perf_counter() - t0) * 1000.0
        if elapsed > limit:
            detail = f"answered after {elapsed:.0f} ms, beyond the {limit} ms allowed"
            return Answer(None, False, elapsed, FailureKind.TIMEOUT, detail)
        return Answer(action, obs.may_call_tichu and bool(call), elapsed)


def fallback_seat() -> InProcessSeat:
    """A fresh in-process seat for a seat given up under ``GIVE_UP_FALLBACK_BOT``."""
    return InProcessSeat(FallbackPlayer(), "fallback")
