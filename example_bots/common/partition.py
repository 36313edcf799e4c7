"""Hand partitions: the cheapest way to split a hand into combinations to go out with.

A plan keeps every bomb whole and splits the other cards into singles, pairs, triples, full
houses, steps and straights (the Phoenix as a joker where it helps), minimising the summed
cost of the parts, where a part's cost is about the leads it still needs (``ranks.cost``).
Fewer, longer and higher parts are cheaper; splitting a straight into singles is dearer.

The search runs on rank profiles, lowest rank first (the lowest card must start some part),
and is memoised across calls and hands: a cold 14-card hand takes about 0.1 ms, a warm one
microseconds.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from arena.rules import (
    DOG_BIT,
    DOG_K,
    DRAGON_BIT,
    FULL_HOUSE,
    MAHJONG_BIT,
    PAIR,
    PHOENIX_BIT,
    RANK_MASKS,
    SINGLE,
    STEPS,
    STRAIGHT,
    TRIPLE,
    Mask,
    Play,
)
from example_bots.common.ranks import (
    BITS,
    BOMB_COST,
    DOG_COST,
    DRAGON_RANK,
    PHOENIX_RANK,
    UNIT,
    cost,
    find_bombs,
    profile_of,
)


class Part(NamedTuple):
    """One combination of a plan, at rank level.

    ``rank`` follows ``Play`` (top rank; the triple for a full house), with 15 for the Dragon
    and 16 for a lone Phoenix; ``profile`` counts the natural cards it uses per rank.
    """

    kind: int
    length: int
    rank: int
    phoenix: bool
    profile: int

    @property
    def cost(self) -> float:
        """The part's cost in a plan."""
        if self.kind == DOG_K:
            return DOG_COST
        return cost(self.kind, self.length, self.rank)


class Plan(NamedTuple):
    """A hand split into bombs (kept whole) and parts, with the plan's total cost."""

    cost: float
    parts: tuple[Part, ...]
    bombs: tuple[Play, ...]

    @property
    def size(self) -> int:
        """Number of combinations (parts and bombs) the hand goes out in."""
        return len(self.parts) + len(self.bombs)


PHOENIX_PART = Part(SINGLE, 1, PHOENIX_RANK, True, 0)
DRAGON_PART = Part(SINGLE, 1, DRAGON_RANK, False, 0)
DOG_PART = Part(DOG_K, 1, 0, False, 0)

# A candidate part and what it leaves: (kind, length, rank, joker, used profile, rest, rest_ph).
_Candidate = tuple[int, int, int, bool, int, int, bool]

# The memo tables hold parts packed into plain ints (kind, length, rank, joker, profile), so
# their entries are untracked by the garbage collector: caches of tuples of NamedTuples made
# every full collection walk hundreds of thousands of objects (pauses of 100 ms and more).


def _pack(kind: int, length: int, rank: int, joker: bool, profile: int) -> int:
    return kind | length << 4 | rank << 8 | joker << 13 | profile << 14


def _unpack(code: int) -> Part:
    return Part(code & 15, code >> 4 & 15, code >> 8 & 31, bool(code >> 13 & 1), code >> 14)


_PHOENIX_CODE = _pack(SINGLE, 1, PHOENIX_RANK, True, 0)


def plan(mask: Mask) -> Plan:
    """The cheapest plan for the cards in ``mask``."""
    bombs = find_bombs(mask)
    rest = mask
    for b in bombs:
        rest &= ~b.cards
    total, codes = _solve(profile_of(rest), bool(rest & PHOENIX_BIT))
    parts = [_unpack(c) for c in codes]
    if rest & DRAGON_BIT:
        parts.append(DRAGON_PART)
        total += DRAGON_PART.cost
    if rest & DOG_BIT:
        parts.append(DOG_PART)
        total += DOG_COST
    total += BOMB_COST * len(bombs)
    return Plan(total, tuple(parts), bombs)


@lru_cache(maxsize=1 << 16)
def hand_cost(mask: Mask) -> float:
    """Cost of the best plan for ``mask``: roughly the leads still needed to go out."""
    bombs = find_bombs(mask)
    rest = mask
    for b in bombs:
        rest &= ~b.cards
    total = _solve(profile_of(rest), bool(rest & PHOENIX_BIT))[0]
    if rest & DRAGON_BIT:
        total += DRAGON_PART.cost
    if rest & DOG_BIT:
        total += DOG_COST
    return total + BOMB_COST * len(bombs)


@lru_cache(maxsize=1 << 18)
def _solve(prof: int, ph: bool) -> tuple[float, tuple[int, ...]]:
    if not prof:
        if ph:
            return PHOENIX_PART.cost, (_PHOENIX_CODE,)
        return 0.0, ()
    best = float("inf")
    best_parts: tuple[int, ...] = ()
    for kind, length, rank, joker, used, rest, rest_ph in _candidates(prof, ph):
        sub_cost, sub_parts = _solve(rest, rest_ph)
        total = _COST[kind][length][rank] + sub_cost
        if total < best - 1e-9:
            best = total
            best_parts = (_pack(kind, length, rank, joker, used), *sub_parts)
    return best, best_parts


# _COST[kind][length][rank]: the part costs, looked up in the search's inner loop.
def _cost_or_zero(kind: int, length: int, rank: int) -> float:
    if kind == SINGLE:
        return cost(kind, length, rank) if length == 1 and 1 <= rank <= PHOENIX_RANK else 0.0
    return cost(kind, length, rank) if kind > SINGLE and 2 <= rank <= 14 else 0.0


_COST: list[list[list[float]]] = [
    [[_cost_or_zero(k, n, r) for r in range(17)] for n in range(15)] for k in range(8)
]


def _candidates(prof: int, ph: bool) -> list[_Candidate]:
    """Every part that holds the lowest rank of ``prof`` (as its lowest card)."""
    low = prof & -prof
    r = (low.bit_length() - 1) // BITS
    u = UNIT[r]
    c = prof >> (BITS * r) & 7
    out: list[_Candidate] = [(SINGLE, 1, r, False, u, prof - u, ph)]
    if r >= 2:
        if c >= 2:
            out.append((PAIR, 2, r, False, 2 * u, prof - 2 * u, ph))
            if c >= 3:
                out.append((TRIPLE, 3, r, False, 3 * u, prof - 3 * u, ph))
        if ph:
            if c & 1:
                out.append((PAIR, 2, r, True, u, prof - u, False))
            if c == 2:
                out.append((TRIPLE, 3, r, True, 2 * u, prof - 2 * u, False))
        if (c >= 2 or ph) and prof >> (BITS * (r + 1)):
            _full_houses(prof, ph, r, c, out)
        if c >= 2 or ph:
            _steps(prof, ph, r, out)
    if prof >> (BITS * (r + 1)) or ph:
        _straights(prof, ph, r, out)
    return out


def _full_houses(prof: int, ph: bool, r: int, c: int, out: list[_Candidate]) -> None:
    trips = [(n, used) for n, used in ((3, False), (2, True)) if c >= n and (ph or not used)]
    if c == 4:
        trips = [(3, False)]
    pairs = [(n, used) for n, used in ((2, False), (1, True)) if c >= n and (ph or not used)]
    u = UNIT[r]
    higher = prof >> (BITS * (r + 1))
    q = r
    while higher:
        q += 1
        cq = higher & 7
        higher >>= BITS
        if not cq:
            continue
        uq = UNIT[q]
        for n, used in trips:
            if cq >= 2:
                used_q, take = False, 2
            elif ph and not used:
                used_q, take = True, 1
            else:
                continue
            p = n * u + take * uq
            joker = used or used_q
            out.append((FULL_HOUSE, 5, r, joker, p, prof - p, ph and not joker))
        for n, used in pairs:
            if cq >= 3:
                used_q, take = False, 3
            elif cq == 2 and ph and not used:
                used_q, take = True, 2
            else:
                continue
            p = n * u + take * uq
            joker = used or used_q
            out.append((FULL_HOUSE, 5, q, joker, p, prof - p, ph and not joker))


def _steps(prof: int, ph: bool, r: int, out: list[_Candidate]) -> None:
    used = False
    acc = 0
    for hi in range(r, 15):
        ch = prof >> (BITS * hi) & 7
        if ch >= 2:
            acc += 2 * UNIT[hi]
        elif ch == 1 and ph and not used:
            acc += UNIT[hi]
            used = True
        else:
            break
        if hi > r:
            out.append((STEPS, 2 * (hi - r + 1), hi, used, acc, prof - acc, ph and not used))


def _straights(prof: int, ph: bool, r: int, out: list[_Candidate]) -> None:
    used = False
    acc = 0
    for hi in range(r, 15):
        if prof >> (BITS * hi) & 7:
            acc += UNIT[hi]
        elif ph and not used and hi >= 2:
            used = True
        else:
            break
        length = hi - r + 1
        if length >= 5:
            out.append((STRAIGHT, length, hi, used, acc, prof - acc, ph and not used))
        if hi == 14 and ph and not used and r >= 3 and length >= 4:
            # The Phoenix below the lowest card: the only way to lengthen a run ending in A.
            out.append((STRAIGHT, length + 1, 14, True, acc, prof - acc, False))


def realize(mask: Mask) -> tuple[Play, ...]:
    """The plan for ``mask`` as card-level plays (bombs first), for leading and search bots.

    Each part becomes a play of the same shape using the same ranks; suits are taken lowest
    first from the cards the bombs leave.
    """
    p = plan(mask)
    plays: list[Play] = list(p.bombs)
    left = mask
    for b in p.bombs:
        left &= ~b.cards
    for part in sorted(p.parts, key=lambda x: -x.length):
        play = match_part(part, left)
        if play is not None:
            plays.append(play)
            left &= ~play.cards
    return tuple(plays)


def match_part(part: Part, mask: Mask) -> Play | None:
    """A play from ``mask`` with the shape and ranks of ``part`` (lowest suits), or ``None``."""
    if part.kind == DOG_K:
        return Play(DOG_K, 1, 0, DOG_BIT) if mask & DOG_BIT else None
    if part.rank == DRAGON_RANK:
        return Play(SINGLE, 1, 15, DRAGON_BIT) if mask & DRAGON_BIT else None
    if part.rank == PHOENIX_RANK:
        return Play(SINGLE, 1, 1, PHOENIX_BIT) if mask & PHOENIX_BIT else None
    cards = PHOENIX_BIT if part.phoenix else 0
    if cards & ~mask:
        return None
    if part.profile & UNIT[1]:
        if not mask & MAHJONG_BIT:
            return None
        cards |= MAHJONG_BIT
    for r in range(2, 15):
        need = part.profile >> (BITS * r) & 7
        have = mask & RANK_MASKS[r]
        while need:
            if not have:
                return None
            low = have & -have
            cards |= low
            have ^= low
            need -= 1
    return Play(part.kind, part.length, part.rank, cards)
