"""Hand scoring, failed bets and victory points: the one place the scoring rules live.

docs/rules.md §8–9: a double victory (a team's two seats out first and second) scores 200
for that team (100 in the tournament mode) and no card points; otherwise each won pile counts for
its team, the last seat's pile goes to the first out and its hand to the opponents. A Tichu
bet is worth 100 and a Grand Tichu 200, won by the seat that goes out first and lost by any
other caller. Victory points (the tournament mode, docs/rules.md §10): 2 to the team with more
points and 1 each on a tie; a double victory earns 3, or 2 when a member of the winning team
lost a bet in the hand. The match state (``Match``), the event store and the standings all
score through these functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from arena.rules.cards import Mask, points_of

__all__ = [
    "HandScore",
    "bets",
    "failed_bet",
    "score_hand",
    "team_of",
    "victory_points",
]

#: Points of a double victory: the usual rules, and the tournament mode's (Italian source).
DOUBLE_VICTORY_POINTS = 200
TOURNAMENT_DOUBLE_VICTORY_POINTS = 100


def team_of(seat: int) -> int:
    """Team 0 (A) holds seats 0 and 2, team 1 (B) seats 1 and 3."""
    return seat & 1


class HandScore(NamedTuple):
    """A scored hand, per team (index 0 = team A): see ``score_hand``."""

    double_victory: int  # the team out first and second, or -1
    card_points: tuple[int, int]
    bets: tuple[int, int]
    victory_points: tuple[int, int]

    @property
    def score(self) -> tuple[int, int]:
        """Card points plus bets, per team."""
        return (self.card_points[0] + self.bets[0], self.card_points[1] + self.bets[1])


def bets(out: Sequence[int], grand: Sequence[bool], tichu: Sequence[bool]) -> tuple[int, int]:
    """The bet points of each team: +stake for the seat out first, -stake for other callers."""
    won = [0, 0]
    first = out[0] if out else -1
    for t in range(4):
        stake = 200 if grand[t] else 100 if tichu[t] else 0
        if stake:
            won[team_of(t)] += stake if t == first else -stake
    return (won[0], won[1])


def failed_bet(team: int, called: Sequence[bool], first_out: int | None) -> bool:
    """Whether a seat of ``team`` called a bet (``called``, by seat) and did not go out first."""
    return any(called[t] and t != first_out for t in (team, team + 2))


def victory_points(
    score: tuple[int, int], double_victory: int = -1, winner_failed_bet: bool = False
) -> tuple[int, int]:
    """The victory points of each team for one hand with these Tichu points (``score``).

    ``double_victory`` is the team out first and second (-1: none); it earns 3, or 2 when
    ``winner_failed_bet`` (one of its seats lost a bet), whatever the scores.
    """
    if double_victory >= 0:
        won = 2 if winner_failed_bet else 3
        return (won, 0) if double_victory == 0 else (0, won)
    a, b = score
    return (2, 0) if a > b else (0, 2) if b > a else (1, 1)


def score_hand(
    out: Sequence[int],
    won: Sequence[Mask],
    hands: Sequence[Mask],
    grand: Sequence[bool],
    tichu: Sequence[bool],
    tournament: bool = False,
) -> HandScore:
    """Scores a finished hand: ``out`` in order (two seats of a team, or three seats), the
    won piles and the hands left by seat, and the calls by seat."""
    card_points = [0, 0]
    double = -1
    if len(out) == 2:
        double = team_of(out[0])
        card_points[double] = (
            TOURNAMENT_DOUBLE_VICTORY_POINTS if tournament else DOUBLE_VICTORY_POINTS
        )
    else:
        last = next(t for t in range(4) if t not in out)
        piles = list(won)
        piles[out[0]] |= piles[last]
        piles[last] = 0
        for t in range(4):
            card_points[team_of(t)] += points_of(piles[t])
        card_points[1 - team_of(last)] += points_of(hands[last])
    bet = bets(out, grand, tichu)
    score = (card_points[0] + bet[0], card_points[1] + bet[1])
    called = [g or t for g, t in zip(grand, tichu, strict=True)]
    lost = double >= 0 and failed_bet(double, called, out[0])
    return HandScore(
        double, (card_points[0], card_points[1]), bet, victory_points(score, double, lost)
    )
