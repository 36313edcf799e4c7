"""Victory-point standings for the individual 'turnier' mode (§1.3): a display, not a rating.

Per hand: a win earns each member of the winning team 2 VP and a tie 1 VP each. A double
victory earns its team 3 VP, or only 2 if a member of that team lost a Tichu or Grand Tichu
bet in the hand; the losers get 0. Ties in VP are broken by Tichu points (the sum of the
bot's team scores over its hands), then by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from arena.ratings.hands import HandOutcome, RatingError, Team
from arena.rules.scoring import victory_points as team_victory_points


@dataclass(frozen=True)
class TurnierHand:
    """One hand of a 'turnier' event with the facts that victory points need.

    Attributes:
        seats: Bot names at seats 0..3; team A = seats 0 and 2, team B = 1 and 3.
        score_a: Team A's Tichu points in the hand (a double victory scored as the event's
            rules say, for example 100 in the tournament variant).
        score_b: Team B's Tichu points in the hand.
        double_victory: The team whose two players went out first and second, if any. It
            wins the hand whatever the scores.
        failed_bet_a: A member of team A called Tichu or Grand Tichu and did not go out first.
        failed_bet_b: The same for team B.
    """

    seats: tuple[str, str, str, str]
    score_a: int
    score_b: int
    double_victory: Team | None = None
    failed_bet_a: bool = False
    failed_bet_b: bool = False

    def __post_init__(self) -> None:
        if len(self.seats) != 4:
            raise ValueError(f"a hand needs 4 seats, got {self.seats!r}")
        if self.double_victory not in (None, "A", "B"):
            raise ValueError(f"double_victory must be 'A', 'B' or None: {self.double_victory!r}")

    @classmethod
    def from_outcome(cls, hand: HandOutcome) -> TurnierHand:
        """Builds a hand without double victory or failed bets from a rating input."""
        return cls(seats=hand.seats, score_a=hand.score_a, score_b=hand.score_b)


@dataclass(frozen=True)
class Standing:
    """One bot's line in the VP table."""

    bot: str
    victory_points: int
    tichu_points: int
    hands: int


def victory_points(hand: TurnierHand) -> tuple[int, int]:
    """Returns the VP of (team A, team B) for one hand (``arena.rules.scoring``)."""
    double = {"A": 0, "B": 1, None: -1}[hand.double_victory]
    failed = hand.failed_bet_a if double == 0 else hand.failed_bet_b if double == 1 else False
    return team_victory_points((hand.score_a, hand.score_b), double, failed)


def vp_standings(hands: Iterable[TurnierHand]) -> tuple[Standing, ...]:
    """Returns the VP table, best first: VP, then Tichu points, then name.

    Raises:
        RatingError: If a bot sits on both teams of a hand.
    """
    vp: dict[str, int] = {}
    points: dict[str, int] = {}
    played: dict[str, int] = {}
    for hand in hands:
        team_vp = victory_points(hand)
        team_points = (hand.score_a, hand.score_b)
        teams = ({hand.seats[0], hand.seats[2]}, {hand.seats[1], hand.seats[3]})
        if teams[0] & teams[1]:
            raise RatingError(f"a bot sits on both teams: {hand.seats!r}")
        for side, members in enumerate(teams):
            for bot in members:
                vp[bot] = vp.get(bot, 0) + team_vp[side]
                points[bot] = points.get(bot, 0) + team_points[side]
                played[bot] = played.get(bot, 0) + 1
    table = [Standing(bot, vp[bot], points[bot], played[bot]) for bot in vp]
    return tuple(sorted(table, key=lambda s: (-s.victory_points, -s.tichu_points, s.bot)))
