"""The arena's failure policy: clocks, strikes, giving a seat up, and what each failure costs.

The rules say what is illegal; this module says what the arena does about a bot that fails.
Every failure gets exactly one recorded outcome (docs/referee.md, "Failure policy"):

* a **timeout**, or a request whose counted rejections (malformed or illegal answers) reach
  ``max_rejections``: the default action is applied and the seat gets a strike;
* a **disconnect**: the seat is held ``reconnect_grace_ms`` for a resume, then given up;
* a **crash** of a bot process the referee started: as a disconnect if the runner restarts the
  bot, otherwise the seat is given up at once (nobody is left to resume it);
* ``max_strikes`` strikes: the seat is given up;
* a **bot fault** the client reports with its answer (late, exception, bad answer): recorded
  with the outcome ``CLIENT_ANSWER``; the answer is applied as usual and no strike counts.

A seat that is given up is played by default actions, by a fallback bot, or forfeits the match
(``GiveUp``). ``Adjudicator`` keeps the per-seat counters and turns each failure into an outcome.

What the other seats learn of a failure is ``Failure.public``: the referee's own words for its
kind and outcome, never the detail (which may hold the seat's cards or values the bot chose,
a covert channel between partners). The detail, capped at ``TEXT_CAP`` bytes, goes to the
failing seat in-band and to the record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

TEXT_CAP = 256
"""Most bytes (UTF-8) of any text the referee writes about a failure or an error."""


def cap_text(text: str, limit: int = TEXT_CAP) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes (with "..." when cut)."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    return data[: limit - 3].decode("utf-8", "ignore") + "..."


class FailureKind(IntEnum):
    """What went wrong with a seat (wire ``FailureKind``, same numbers)."""

    TIMEOUT = 1
    MALFORMED = 2
    ILLEGAL = 3
    DISCONNECT = 4
    CRASH = 5
    # Reported by the bot's client library, which answered for the bot (no strike).
    LATE = 6
    EXCEPTION = 7
    BAD_ANSWER = 8

    @property
    def bot_side(self) -> bool:
        """Whether the bot's client reported it (``Action.fault``) rather than the referee."""
        return self.value >= FailureKind.LATE


class FailureOutcome(IntEnum):
    """What the referee did about a failure (wire ``FailureOutcome``, same numbers)."""

    DEFAULT_ACTION = 1
    AWAITING_RECONNECT = 2
    RECONNECTED = 3
    DEFAULT_ACTIONS = 4
    FALLBACK_BOT = 5
    FORFEIT = 6
    CLIENT_ANSWER = 7


class GiveUp(IntEnum):
    """Treatment of a seat that is given up (wire ``GiveUp``, same numbers)."""

    DEFAULT_ACTIONS = 1
    FALLBACK_BOT = 2
    FORFEIT = 3

    @property
    def outcome(self) -> FailureOutcome:
        """The failure outcome recorded when a seat is given up this way."""
        return FailureOutcome(self.value + 3)


class Termination(IntEnum):
    """How a match ended (wire ``Termination``, same numbers)."""

    NORMAL = 1
    FORFEIT = 2
    ADJUDICATED = 3
    ABORTED = 4


@dataclass(frozen=True)
class TimeControl:
    """The clock: an allowance per decision plus a bank refilled every hand (milliseconds)."""

    decision_ms: int = 1000
    bank_ms_per_hand: int = 0

    def __post_init__(self) -> None:
        if self.decision_ms <= 0 or self.bank_ms_per_hand < 0:
            raise ValueError(f"bad time control {self!r}")


@dataclass(frozen=True)
class FailurePolicy:
    """Strikes, rejections, reconnect grace, resumes and what happens to a seat given up.

    ``max_strikes`` and ``max_rejections`` of 0 mean no limit. ``max_resumes`` is how many
    times a seat may be resumed (``Hello.resume``) in a match, at least ``resume_gap_ms``
    apart; 0 forbids resuming, so a seat that loses its stream is given up at once.
    """

    max_strikes: int = 3
    max_rejections: int = 3
    reconnect_grace_ms: int = 5000
    give_up: GiveUp = GiveUp.DEFAULT_ACTIONS
    max_resumes: int = 10
    resume_gap_ms: int = 1000

    def __post_init__(self) -> None:
        if (
            min(
                self.max_strikes,
                self.max_rejections,
                self.reconnect_grace_ms,
                self.max_resumes,
                self.resume_gap_ms,
            )
            < 0
        ):
            raise ValueError(f"bad failure policy {self!r}")


@dataclass(frozen=True)
class Failure:
    """One failure of a seat and the outcome applied, as recorded and announced.

    ``hand`` counts from 1; ``decision`` is the number of actions applied in the match when
    the failure happened (the index of the defaulted action, where there is one);
    ``request_id`` is the seat's request concerned (0 when none).
    """

    seat: int
    kind: FailureKind
    outcome: FailureOutcome
    hand: int
    decision: int
    request_id: int = 0
    strikes: int = 0
    detail: str = ""
    private: bool = False

    @property
    def public(self) -> str:
        """The text every seat may see: fixed words for the kind and the outcome."""
        return f"{_KIND_TEXT[self.kind]}; {_OUTCOME_TEXT[self.outcome]}"

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict for the replay's ``meta`` and logs."""
        return {
            "seat": self.seat,
            "kind": self.kind.name.lower(),
            "outcome": self.outcome.name.lower(),
            "hand": self.hand,
            "decision": self.decision,
            "request_id": self.request_id,
            "strikes": self.strikes,
            "detail": self.detail,
            "private": self.private,
        }


_KIND_TEXT = {
    FailureKind.TIMEOUT: "no answer in time",
    FailureKind.MALFORMED: "malformed answers",
    FailureKind.ILLEGAL: "illegal answers",
    FailureKind.DISCONNECT: "the stream ended",
    FailureKind.CRASH: "the bot process ended",
    FailureKind.LATE: "the bot's client answered late",
    FailureKind.EXCEPTION: "the bot raised an exception",
    FailureKind.BAD_ANSWER: "the bot gave a bad answer",
}
_OUTCOME_TEXT = {
    FailureOutcome.DEFAULT_ACTION: "the default action was applied",
    FailureOutcome.AWAITING_RECONNECT: "the seat is held for a resume",
    FailureOutcome.RECONNECTED: "the seat resumed",
    FailureOutcome.DEFAULT_ACTIONS: "the seat was given up to default actions",
    FailureOutcome.FALLBACK_BOT: "the seat was given up to the fallback bot",
    FailureOutcome.FORFEIT: "the seat forfeits",
    FailureOutcome.CLIENT_ANSWER: "the bot's client answered for it",
}


@dataclass
class SeatRecord:
    """The adjudicator's counters for one seat."""

    strikes: int = 0
    shown: int = 0  # strikes announced to every seat (not those of private bomb windows)
    given_up: bool = False
    away: FailureKind | None = None  # DISCONNECT or CRASH while held for a resume


@dataclass
class Adjudicator:
    """Turns failures into outcomes under a ``FailurePolicy``; keeps strikes and give-ups.

    ``given_up`` lists the seats given up, in order.
    """

    policy: FailurePolicy = field(default_factory=FailurePolicy)
    seats: list[SeatRecord] = field(default_factory=lambda: [SeatRecord() for _ in range(4)])
    given_up: list[int] = field(default_factory=list)

    def strike(self, seat: int, private: bool = False) -> bool:
        """Counts a strike; returns whether the seat must now be given up.

        A ``private`` strike (a bomb window) is not counted in ``shown``.
        """
        rec = self.seats[seat]
        rec.strikes += 1
        if not private:
            rec.shown += 1
        limit = self.policy.max_strikes
        return not rec.given_up and limit > 0 and rec.strikes >= limit

    def rejections_exhausted(self, rejections: int) -> bool:
        """Whether ``rejections`` counted rejections on one request end it with the default."""
        limit = self.policy.max_rejections
        return limit > 0 and rejections >= limit

    def lost(self, seat: int, kind: FailureKind) -> bool:
        """A seat's stream or process is gone; returns whether to hold it for a resume."""
        rec = self.seats[seat]
        if rec.given_up or rec.away is not None:
            return False
        rec.away = kind
        return True

    def back(self, seat: int) -> FailureKind | None:
        """A held seat resumed; returns the failure it had (``None`` if it was not held)."""
        rec = self.seats[seat]
        kind, rec.away = rec.away, None
        return kind

    def give_up(self, seat: int) -> FailureOutcome:
        """Marks the seat given up for the rest of the match; returns the outcome to record."""
        rec = self.seats[seat]
        if not rec.given_up:
            rec.given_up = True
            self.given_up.append(seat)
        rec.away = None
        return self.policy.give_up.outcome
