"""Rank-level views of card masks: rank profiles, bombs, and static combination strengths.

A *profile* packs the number of natural cards of each rank into one int, three bits per rank
(rank ``r`` at bit ``3 * r``; the Mah Jong is rank 1). Profiles ignore suits, which only
matter for straight-flush bombs, so plans and lookups keyed by a profile are shared by every
hand with the same ranks. Bombs are found on the card mask first and kept out of profiles.
"""

from __future__ import annotations

from functools import lru_cache

from arena.rules import (
    CARD_RANKS,
    DOG_BIT,
    DRAGON_BIT,
    FLUSH_BOMB,
    FOUR_BOMB,
    FULL_HOUSE,
    MAHJONG_BIT,
    PAIR,
    PHOENIX_BIT,
    RANK_MASKS,
    SINGLE,
    STEPS,
    STRAIGHT,
    SUIT_MASKS,
    TRIPLE,
    Mask,
    Play,
    may_hold_bomb,
)

#: Rank used for the Dragon as a single, and for a Phoenix single in plans (it beats an Ace).
DRAGON_RANK = 15
PHOENIX_RANK = 16
#: Bits per rank in a profile and the unit of rank ``r``.
BITS = 3
UNIT: tuple[int, ...] = tuple(1 << (BITS * r) for r in range(16))
_NIBBLE_COUNT: tuple[int, ...] = tuple(n.bit_count() for n in range(16))
#: Natural point cards (5s, 10s and Ks), the cards never worth passing to an opponent.
POINT_RANKS = frozenset((5, 10, 13))


def count(profile: int, rank: int) -> int:
    """Number of cards of ``rank`` in ``profile``."""
    return profile >> (BITS * rank) & 7


def profile_of(mask: Mask) -> int:
    """Profile of the natural cards and the Mah Jong in ``mask``."""
    prof = UNIT[1] if mask & MAHJONG_BIT else 0
    nat = mask >> 2
    for r in range(2, 15):
        nib = nat & 15
        if nib:
            prof += _NIBBLE_COUNT[nib] << (BITS * r)
        nat >>= 4
    return prof


def rank_of(card: int) -> int:
    """Rank of a card for ordering: Dog 0, Mah Jong 1, 2..14, Dragon 15, Phoenix 16."""
    if card == 55:
        return PHOENIX_RANK
    return CARD_RANKS[card]


def lowest_rank(mask: Mask) -> int:
    """Lowest card rank in ``mask`` (Phoenix ignored unless alone); 17 when empty."""
    rest = mask & ~PHOENIX_BIT
    if not rest:
        return PHOENIX_RANK if mask else 17
    return rank_of((rest & -rest).bit_length() - 1)


def find_bombs(mask: Mask) -> tuple[Play, ...]:
    """Disjoint bombs in ``mask``: longest straight flushes first, then four of a kinds.

    Keeping each bomb whole is the plan; where a card could serve two bombs the straight
    flush wins, because it beats every four of a kind.
    """
    if not may_hold_bomb(mask):
        return ()
    return _find_bombs(mask)


@lru_cache(maxsize=1 << 14)
def _find_bombs(mask: Mask) -> tuple[Play, ...]:
    found: list[Play] = []
    left = mask
    for suit in range(4):
        suited = left & SUIT_MASKS[suit]
        if suited.bit_count() < 5:
            continue
        r = 2
        while r <= 14:
            if not suited & RANK_MASKS[r]:
                r += 1
                continue
            hi = r
            run = 0
            while hi <= 14 and suited & RANK_MASKS[hi]:
                run |= suited & RANK_MASKS[hi]
                hi += 1
            if hi - r >= 5:
                found.append(Play(FLUSH_BOMB, hi - r, hi - 1, run))
                left &= ~run
            r = hi
    for r in range(2, 15):
        if left & RANK_MASKS[r] == RANK_MASKS[r]:
            found.append(Play(FOUR_BOMB, 4, r, RANK_MASKS[r]))
            left &= ~RANK_MASKS[r]
    return tuple(found)


# Static strengths: a rough chance that the combination wins its trick when led early in a
# hand, from nothing but its shape. They set the costs plans minimise (cost = 1 - strength).
_SINGLE = (0.0, 0.0, 0.0, 0.0, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12, 0.18, 0.27, 0.4, 0.6, 0.95)
_PAIR = (0.0, 0.0, 0.02, 0.03, 0.04, 0.05, 0.07, 0.09, 0.12, 0.16, 0.22, 0.3, 0.4, 0.52, 0.7)
PHOENIX_SINGLE_STRENGTH = 0.6
DOG_COST = 0.6
BOMB_COST = -0.6


def strength(kind: int, length: int, rank: int) -> float:
    """Static strength in [0, 1] of a combination shape (rank 16 is a Phoenix single)."""
    if kind == SINGLE:
        return PHOENIX_SINGLE_STRENGTH if rank == PHOENIX_RANK else _SINGLE[rank]
    if kind == PAIR:
        return _PAIR[rank]
    if kind == TRIPLE:
        return min(0.9, 0.12 + 0.055 * (rank - 2))
    if kind == FULL_HOUSE:
        return min(0.92, 0.2 + 0.055 * (rank - 2))
    if kind == STRAIGHT:
        return max(0.1, min(0.9, 0.15 + 0.05 * (rank - 5) + 0.06 * (length - 5)))
    if kind == STEPS:
        return max(0.08, min(0.9, 0.08 + 0.05 * (rank - 3) + 0.1 * (length // 2 - 2)))
    return 1.0


def cost(kind: int, length: int, rank: int) -> float:
    """Cost of holding a combination in a plan: about the leads it still needs."""
    if kind >= FOUR_BOMB:
        return BOMB_COST
    return 1.0 - strength(kind, length, rank)


def specials(mask: Mask) -> tuple[bool, bool, bool, bool]:
    """Whether ``mask`` holds the Dog, the Mah Jong, the Dragon and the Phoenix."""
    return (
        bool(mask & DOG_BIT),
        bool(mask & MAHJONG_BIT),
        bool(mask & DRAGON_BIT),
        bool(mask & PHOENIX_BIT),
    )
