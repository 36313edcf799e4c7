"""``MatchRecord``: how a match went (result, failures, counts) and its replay.

The record is what a runner keeps and prints; its ``replay`` is an ``arena.referee.replay.Replay``
whose ``meta`` carries the table, the termination, the winners and every failure, so a
replay file alone tells what the referee did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.referee import replay as replays
from arena.referee.policy import Failure, Termination
from arena.rules import HandResult, Match

if TYPE_CHECKING:
    from arena.referee.config import MatchConfig
    from arena.referee.seat import MatchOutcome


@dataclass
class MatchRecord:
    """One match as the referee saw it.

    ``decisions`` counts the decisions asked of seats, ``forced`` those applied without asking
    (a single legal answer), ``defaults`` the default actions applied (failures and seats
    given up). ``started`` is a Unix time; ``seconds`` the match's wall time.
    ``hand_results`` are the rules core's results of the hands played, in order.
    """

    table_id: str
    names: tuple[str, ...]
    outcome: MatchOutcome
    failures: list[Failure]
    replay: replays.Replay
    decisions: int
    forced: int
    defaults: int
    started: float
    seconds: float
    hand_results: list[HandResult] = field(default_factory=list)

    @property
    def termination(self) -> Termination:
        """How the match ended."""
        return self.outcome.termination

    @property
    def scores(self) -> tuple[int, int]:
        """Final team scores (team 0 = seats 0 and 2)."""
        return self.outcome.scores

    @classmethod
    def of(
        cls,
        match: Match,
        config: MatchConfig,
        outcome: MatchOutcome,
        failures: list[Failure],
        *,
        decisions: int,
        forced: int,
        defaults: int,
        started: float,
        seconds: float,
        clock: Sequence[tuple[int, int, float, int, int]] = (),
    ) -> MatchRecord:
        """Builds the record, and its replay, of a finished (or stopped) match.

        ``clock`` lists each asked decision as (index of its first action, seat, think ms,
        the seat's log size before and after, -1 without a log): the replay's ``think``.
        """
        meta: dict[str, Any] = {
            "table_id": config.table_id,
            "match_no": config.match_no,
            "termination": outcome.termination.name.lower(),
            "winners": list(outcome.winners),
            "given_up": list(outcome.given_up),
            "detail": outcome.detail,
            "failures": [f.to_json() for f in failures],
            "time": {
                "decision_ms": config.time.decision_ms,
                "bank_ms_per_hand": config.time.bank_ms_per_hand,
            },
            "policy": {
                "max_strikes": config.policy.max_strikes,
                "max_rejections": config.policy.max_rejections,
                "reconnect_grace_ms": config.policy.reconnect_grace_ms,
                "give_up": config.policy.give_up.name.lower(),
                "max_resumes": config.policy.max_resumes,
                "resume_gap_ms": config.policy.resume_gap_ms,
            },
            "pace_forced": config.pace_forced,
            "decisions": decisions,
            "forced": forced,
            "defaults": defaults,
            "started": round(started, 3),
            "seconds": round(seconds, 3),
            "think": [list(entry) for entry in clock],
        }
        replay = replays.from_match(match, config.names, **meta)
        return cls(
            table_id=config.table_id,
            names=config.names,
            outcome=outcome,
            failures=failures,
            replay=replay,
            decisions=decisions,
            forced=forced,
            defaults=defaults,
            started=started,
            seconds=seconds,
            hand_results=list(match.hand_results),
        )

    def save(self, path: Path) -> None:
        """Writes the replay (with the failures in its ``meta``) to ``path``."""
        replays.save(self.replay, path)
