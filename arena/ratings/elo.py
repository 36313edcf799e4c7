"""Logistic Elo conversions and sequential team Elo for live display (§3.1, §3.4).

Sequential Elo depends on the order of hands and has a noise floor set by K, so it is only
for live display; official ratings come from the batch fit in ``bradley_terry``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from arena.ratings.hands import TEAM_A_SEATS, TEAM_B_SEATS, HandOutcome

DEFAULT_K = 16.0
DEFAULT_INITIAL = 1500.0


def expected_score(elo_diff: float) -> float:
    """Returns ``L(x) = 1/(1 + 10^(−x/400))``: the expected hand outcome at an Elo lead x."""
    return 1.0 / (1.0 + math.pow(10.0, -elo_diff / 400.0))


def elo_from_score(score: float) -> float:
    """Returns the Elo lead whose expected hand outcome is ``score`` (inverse of L).

    Raises:
        ValueError: If ``score`` is not strictly between 0 and 1.
    """
    if not 0.0 < score < 1.0:
        raise ValueError(f"expected score must be in (0, 1), got {score!r}")
    return 400.0 * math.log10(score / (1.0 - score))


def elo_update(
    ratings: Mapping[str, float],
    hand: HandOutcome,
    *,
    k: float = DEFAULT_K,
    initial: float = DEFAULT_INITIAL,
) -> dict[str, float]:
    """Returns the ratings after one hand of team Elo (mean-of-members convention).

    Team rating is the mean of its two seats, ``E_A = L(R_A − R_B)`` and
    ``δ = K(S_A − E_A)``. Every member of A gains δ and every member of B loses δ, so each
    team mean moves by δ as in 1v1 Elo. A bot holding both seats of a team moves once
    (by δ); a bot sitting on both teams does not move. Bots not yet rated start at
    ``initial``; the input mapping is not changed.
    """
    updated = dict(ratings)
    for bot in hand.seats:
        updated.setdefault(bot, initial)
    team_a = [updated[hand.seats[seat]] for seat in TEAM_A_SEATS]
    team_b = [updated[hand.seats[seat]] for seat in TEAM_B_SEATS]
    delta = k * (hand.outcome - expected_score(sum(team_a) / 2.0 - sum(team_b) / 2.0))
    for bot in set(hand.seats):
        on_a = sum(hand.seats[seat] == bot for seat in TEAM_A_SEATS)
        on_b = sum(hand.seats[seat] == bot for seat in TEAM_B_SEATS)
        updated[bot] += delta * (on_a - on_b) / (on_a + on_b)
    return updated


def sequential_elo(
    hands: Iterable[HandOutcome],
    *,
    k: float = DEFAULT_K,
    initial: float = DEFAULT_INITIAL,
    ratings: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Returns team-Elo ratings after playing through ``hands`` in order.

    Starts from ``ratings`` if given (bots missing from it start at ``initial``).
    """
    current = dict(ratings or {})
    for hand in hands:
        current = elo_update(current, hand, k=k, initial=initial)
    return current
