"""One played hand as rating input, and the seat and team vocabulary of the rating code.

The outcome unit of every rating here is the *hand*: one play of one board, scored for team A
as ``s = 1`` (won), ``½`` (tied) or ``0`` (lost) by the sign of the score difference
("hand-Elo"). Team A holds seats 0 and 2 (N/S), team B seats 1 and 3 (E/W).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypeAlias

Team: TypeAlias = Literal["A", "B"]

TEAM_A_SEATS = (0, 2)
TEAM_B_SEATS = (1, 3)


class RatingError(ValueError):
    """A rating or statistic cannot be computed from the given hands."""


@dataclass(frozen=True)
class HandOutcome:
    """One play of one board: the bots at the four seats and each team's score.

    Attributes:
        board: Duplicate board id. All plays of a board are one cluster for robust errors.
        seats: Bot names at seats 0..3 (N, E, S, W); team A = seats 0 and 2, team B = 1 and 3.
            The bots keep their seats in every rotation; the hands move (§2.1).
        score_a: Team A's points in this hand (cards, Tichu bets, double victory).
        score_b: Team B's points in this hand.
        rotation: Rotation k of the board: the bot at seat p held hand ``(p + k) mod 4``.
            Rotations 0 and 1 (and 2 and 3) of a board at one line-up form a duplicate pair.
    """

    board: str
    seats: tuple[str, str, str, str]
    score_a: int
    score_b: int
    rotation: int = 0

    def __post_init__(self) -> None:
        if len(self.seats) != 4:
            raise ValueError(f"a hand needs 4 seats, got {self.seats!r}")
        if self.rotation not in (0, 1, 2, 3):
            raise ValueError(f"rotation must be 0..3, got {self.rotation!r}")

    @property
    def margin(self) -> int:
        """Team A's score minus team B's score (``d`` of §2.3)."""
        return self.score_a - self.score_b

    @property
    def outcome(self) -> float:
        """Team A's hand outcome: 1 for a won hand, 0.5 for a tie, 0 for a lost hand."""
        return outcome_of(self.margin)

    def team_of(self, bot: str) -> Team | None:
        """Returns the team ``bot`` plays for in this hand, or None if it does not play.

        Raises:
            RatingError: If ``bot`` sits on both teams, which has no team perspective.
        """
        on_a = any(self.seats[seat] == bot for seat in TEAM_A_SEATS)
        on_b = any(self.seats[seat] == bot for seat in TEAM_B_SEATS)
        if on_a and on_b:
            raise RatingError(f"{bot!r} sits on both teams on board {self.board!r}")
        if on_a:
            return "A"
        if on_b:
            return "B"
        return None

    def outcome_for(self, team: Team) -> float:
        """Returns the hand outcome (1, 0.5 or 0) from ``team``'s side."""
        return self.outcome if team == "A" else 1.0 - self.outcome


def outcome_of(margin: float) -> float:
    """Maps a score margin to the hand outcome: 1 if positive, 0.5 if zero, 0 if negative."""
    if margin > 0:
        return 1.0
    if margin < 0:
        return 0.0
    return 0.5


def team_weights(seats: tuple[str, str, str, str]) -> dict[str, float]:
    """Returns each bot's entry of the design row: +½ per seat on team A, −½ per seat on B.

    The team rating is the mean of its two seats, so team A's lead over team B is the
    dot product of this row with the individual ratings (§3.2).
    """
    weights: dict[str, float] = {}
    for seat, bot in enumerate(seats):
        sign = 0.5 if seat in TEAM_A_SEATS else -0.5
        weights[bot] = weights.get(bot, 0.0) + sign
    return weights


def bots_of(hands: Iterable[HandOutcome]) -> tuple[str, ...]:
    """Returns the sorted names of all bots that sat in ``hands``."""
    return tuple(sorted({bot for hand in hands for bot in hand.seats}))


def board_pairs(hands: Iterable[HandOutcome]) -> tuple[tuple[HandOutcome, HandOutcome], ...]:
    """Returns the duplicate pairs: rotations 0 and 1 (or 2 and 3) of a board at one line-up.

    A pair is keyed by board, seats and rotation // 2; the even rotation comes first. Plays
    whose partner rotation is missing (a board still in progress) are left out. Pairs come in
    the order of their even-rotation plays.

    Raises:
        RatingError: If the same board, seats and rotation were played twice.
    """
    plays: dict[tuple[str, tuple[str, str, str, str], int], HandOutcome] = {}
    order: list[tuple[str, tuple[str, str, str, str], int]] = []
    for hand in hands:
        key = (hand.board, hand.seats, hand.rotation)
        if key in plays:
            raise RatingError(
                f"board {hand.board!r} rotation {hand.rotation} was played twice by {hand.seats!r}"
            )
        plays[key] = hand
        if hand.rotation % 2 == 0:
            order.append(key)
    pairs: list[tuple[HandOutcome, HandOutcome]] = []
    for board, seats, rotation in order:
        partner = plays.get((board, seats, rotation + 1))
        if partner is not None:
            pairs.append((plays[(board, seats, rotation)], partner))
    return tuple(pairs)
