"""The referee: plays a match between four seats, whatever carries their answers.

``Referee(seats, MatchConfig(...)).run()`` returns a ``MatchRecord``. Seats implement the
``Seat`` protocol: ``InProcessSeat`` wraps a ``Player`` (``sdk.Bot`` is one); ``arena.server``
provides the gRPC seat. The failure policy (``FailurePolicy``, ``Adjudicator``) decides what
each failure costs.
"""

from arena.referee.config import MatchConfig, MatchPlan, MatchSettings
from arena.referee.match import Referee
from arena.referee.player import FallbackPlayer, Player
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
    "FallbackPlayer",
    "GiveUp",
    "InProcessSeat",
    "MatchConfig",
    "MatchInfo",
    "MatchOutcome",
    "MatchPlan",
    "MatchRecord",
    "MatchSettings",
    "Player",
    "Referee",
    "Seat",
    "TableEvent",
    "Termination",
    "TimeControl",
    "default_action",
]
