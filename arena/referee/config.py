"""What a match is played with: the table's settings, each match's plan, the match's config.

``MatchSettings`` are the rules, the clock and the policy every match of a table shares; a
``MatchPlan`` says which match is played (its seed, deals or start position, and where its
replay goes); ``MatchConfig`` is both, plus the table's name and the seats' names, as the
referee needs them for one match. The server's ``TableSpec`` extends the same settings with
what a table needs (how many matches, start-up time), so each setting has one definition.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from arena.referee.policy import FailurePolicy, TimeControl
from arena.rules import Deal, Match, Options, bot_seed


@dataclass(frozen=True, kw_only=True)
class MatchSettings:
    """The settings every match of a table shares.

    ``skip_forced`` applies a decision with one legal answer (for a seat that may not call
    Tichu) without asking; ``pace_forced`` then delays it like an asked one, and pauses where
    a private bomb window could have opened but did not like one, so no seat learns from the
    timing that another had no choice or holds a bomb (``arena.referee.match``);
    ``max_hands`` caps a match (0 = no cap): a capped match is adjudicated as it stands.
    """

    options: Options = field(default_factory=Options)
    time: TimeControl = field(default_factory=TimeControl)
    policy: FailurePolicy = field(default_factory=FailurePolicy)
    skip_forced: bool = True
    pace_forced: bool = False
    max_hands: int = 0

    def settings(self) -> dict[str, Any]:
        """The ``MatchSettings`` fields by name, to build a ``MatchConfig`` from a table's."""
        return {f.name: getattr(self, f.name) for f in fields(MatchSettings)}


@dataclass(frozen=True)
class MatchPlan:
    """Which match is played: its seed, its deals, its replay file, the bots' seeds.

    ``seat_seeds`` are the bots' seeds, by seat (empty: ``arena.rules.bot_seed(seed, seat)``).

    ``start``, when given, is the position the match starts from instead of a deal (a copy
    is played; build it with ``Match.from_position`` and the table's options). Its replay
    cannot be replayed from its deal. Used by ``arena kit check-bot``.
    """

    seed: int = 0
    deals: tuple[Deal, ...] = ()
    replay: Path | None = None
    start: Match | None = None
    seat_seeds: tuple[int, ...] = ()


@dataclass(frozen=True, kw_only=True)
class MatchConfig(MatchSettings):
    """Everything that defines a match at a table besides its seats.

    ``seed``, ``deals``, ``start`` and ``seat_seeds`` are the match's plan (``MatchPlan``);
    ``names`` are the seats' display names, by seat; ``match_no`` counts the table's matches
    from 1.
    """

    seed: int = 0
    deals: tuple[Deal, ...] = ()
    start: Match | None = None
    seat_seeds: tuple[int, ...] = ()
    table_id: str = "table"
    names: tuple[str, ...] = ("seat 0", "seat 1", "seat 2", "seat 3")
    match_no: int = 1

    def seat_seed(self, seat: int) -> int:
        """The bot seed of ``seat`` in this match (``Welcome.seed``)."""
        return self.seat_seeds[seat] if self.seat_seeds else bot_seed(self.seed, seat)

    @classmethod
    def of_plan(
        cls,
        settings: MatchSettings,
        plan: MatchPlan,
        *,
        table_id: str,
        names: tuple[str, ...],
        match_no: int = 1,
    ) -> MatchConfig:
        """The config of the match ``plan`` at a table with these ``settings``."""
        return cls(
            **settings.settings(),
            seed=plan.seed,
            deals=plan.deals,
            start=plan.start,
            seat_seeds=plan.seat_seeds,
            table_id=table_id,
            names=names,
            match_no=match_no,
        )
