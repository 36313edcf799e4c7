"""Hand strength for bets: controlling cards against the combinations left to get rid of.

A hand goes out first when it can win back the lead often enough to lead all its weak
combinations. ``controls`` counts the cards that win the lead (Dragon, Phoenix, Aces, Kings,
bombs); ``losers`` counts the plan's combinations that will not. ``HandStrength.margin`` is
their difference, the number the Tichu thresholds use: from duplicate runs, a hand with a
margin of +0.5 or more after the exchange went out first about 70% of the time against
greedy opponents, one at -1 about 40%.
"""

from __future__ import annotations

from typing import NamedTuple

from arena.rules import (
    DOG_BIT,
    DOG_K,
    DRAGON_BIT,
    PAIR,
    PHOENIX_BIT,
    RANK_MASKS,
    SINGLE,
    TRIPLE,
    Mask,
)
from example_bots.common.partition import plan
from example_bots.common.ranks import find_bombs, strength


class HandStrength(NamedTuple):
    """Counts behind a bet decision."""

    controls: float
    losers: float
    parts: int
    cost: float

    @property
    def margin(self) -> float:
        """Controls minus losers: above about 0 a hand can often go out first."""
        return self.controls - self.losers


def controls(mask: Mask) -> float:
    """Cards that take the lead: Dragon 1, Phoenix 1, Ace 0.75, King 0.25, bomb 1.5 each."""
    c = 0.0
    if mask & DRAGON_BIT:
        c += 1.0
    if mask & PHOENIX_BIT:
        c += 1.0
    c += 0.75 * (mask & RANK_MASKS[14]).bit_count()
    c += 0.25 * (mask & RANK_MASKS[13]).bit_count()
    c += 1.5 * len(find_bombs(mask))
    return c


def hand_strength(mask: Mask) -> HandStrength:
    """Controls, losers and plan size of a hand (any number of cards)."""
    p = plan(mask)
    losers = 0.0
    for part in p.parts:
        if part.kind == DOG_K:
            losers += 0.5
            continue
        s = strength(part.kind, part.length, part.rank)
        if part.kind in (SINGLE, PAIR, TRIPLE) and s >= 0.45:
            continue  # counted among the controls (high cards) or strong enough alone
        if s < 0.25:
            losers += 1.0
        elif s < 0.5:
            losers += 0.5
    return HandStrength(controls(mask), losers, p.size, p.cost)


def grand_score(mask: Mask) -> float:
    """Strength of the first eight cards for Grand Tichu.

    Weights follow measured first-out rates from eight cards: the Phoenix (a joker in every
    shape) matters about twice as much as the Dragon or an Ace.
    """
    s = 1.5 if mask & PHOENIX_BIT else 0.0
    if mask & DRAGON_BIT:
        s += 0.75
    s += 0.75 * (mask & RANK_MASKS[14]).bit_count()
    s += 0.25 * (mask & RANK_MASKS[13]).bit_count()
    s += 1.5 * len(find_bombs(mask))
    for r in (12, 13, 14):
        if (mask & RANK_MASKS[r]).bit_count() >= 2:
            s += 0.25
    if mask & DOG_BIT:
        s -= 0.5
    return s
