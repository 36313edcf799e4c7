"""The referee: plays a match between four seats, whatever carries their answers.

``Referee(seats, MatchConfig(...)).run()`` returns a ``MatchRecord``. Seats implement the
``Seat`` protocol: ``InProcessSeat`` wraps an ``sdk.Bot``; ``arena.server`` provides the gRPC
seat. The failure policy (``FailurePolicy``, ``Adjudicator``) decides what each failure costs.
"""

from arena.referee.match import MatchConfig, Referee
from arena.referee.policy import (
    Adjudicator,
    Failure,
    FailureKind,
    FailureOutcome,
    FailurePolicy,
    GiveUp,
    Termination,
    TimeControl,
)
from arena.referee.record import MatchRecord
from arena.referee.seat import (
    Answer,
    Decision,
    FallbackBot,
    InProcessSeat,
    MatchInfo,
    MatchOutcome,
    Seat,
    TableEvent,
)
from arena.rules.observe import default_action

__all__ = [
    "Adjudicator",
    "Answer",
    "Decision",
    "Failure",
    "FailureKind",
    "FailureOutcome",
    "FailurePolicy",
    "FallbackBot",
    "GiveUp",
    "InProcessSeat",
    "MatchConfig",
    "MatchInfo",
    "MatchOutcome",
    "MatchRecord",
    "Referee",
    "Seat",
    "TableEvent",
    "Termination",
    "TimeControl",
    "default_action",
]
