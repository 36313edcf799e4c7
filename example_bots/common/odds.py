"""Card counting: the chance that an opponent can beat a combination, from an observation.

The cards a seat has not seen (``Observation.unseen``) are spread over the other hands. Each
opponent holds each unseen card with probability ``p = unknown cards in its hand / unseen``
(cards this seat passed it and that were not played yet are known to be there). Per rank the
number an opponent holds is then binomial; combinations of ranks are treated as independent.
That is rough but cheap (microseconds) and ranks combinations the way a counting player does:
an Ace single is safe once the Dragon and the Phoenix are gone, a pair of 9s is not while
unseen 10s to As remain in numbers.
"""

from __future__ import annotations

from collections.abc import Iterable
from math import comb

from arena.rules import (
    DRAGON_BIT,
    FOUR_BOMB,
    FULL_HOUSE,
    PAIR,
    PHOENIX_BIT,
    RANK_MASKS,
    SINGLE,
    STEPS,
    STRAIGHT,
    TRIPLE,
    Mask,
    Observation,
    Play,
)

#: Rough chance per opponent that a trick is bombed by it regardless of shape.
BOMB_RISK = 0.02


def _at_least(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    if k <= 0:
        return 1.0
    if n < k:
        return 0.0
    q = 1.0 - p
    below = 0.0
    for i in range(k):
        below += comb(n, i) * p**i * q ** (n - i)
    return max(0.0, 1.0 - below)


class Holding:
    """What one other seat may hold: known cards plus a share of the unseen ones."""

    __slots__ = ("cards", "known", "p", "seat")

    def __init__(self, seat: int, cards: int, known: Mask, p: float) -> None:
        self.seat = seat
        self.cards = cards
        self.known = known
        self.p = p

    def at_least(self, rank: int, k: int, unseen: list[int]) -> float:
        """Chance this seat holds at least ``k`` natural cards of ``rank``."""
        have = (self.known & RANK_MASKS[rank]).bit_count()
        return _at_least(k - have, unseen[rank], self.p)


class Odds:
    """Beat chances for one observation; build once per decision."""

    __slots__ = ("dragon", "opponents", "others", "phoenix", "unseen")

    def __init__(self, obs: Observation, seats: Iterable[int] | None = None) -> None:
        hidden = obs.unseen
        played = obs.played
        known = [0, 0, 0, 0]
        if obs.given is not None:
            for k, c in enumerate(obs.given, 1):
                t = (obs.seat + k) & 3
                if not played >> c & 1:
                    known[t] |= 1 << c
        self.unseen = [
            (hidden & RANK_MASKS[r]).bit_count() if 2 <= r <= 14 else 0 for r in range(15)
        ]
        pool = hidden.bit_count()
        self.phoenix = bool(hidden & PHOENIX_BIT)
        self.dragon = bool(hidden & DRAGON_BIT)
        others = []
        unknown_total = 0
        for t in range(4):
            if t == obs.seat:
                continue
            unknown_total += max(0, obs.card_counts[t] - known[t].bit_count())
        pool = max(pool, unknown_total, 1)
        for t in range(4):
            if t == obs.seat or obs.card_counts[t] == 0:
                continue
            unknown = max(0, obs.card_counts[t] - known[t].bit_count())
            others.append(Holding(t, obs.card_counts[t], known[t], unknown / pool))
        self.others = others
        want = {(obs.seat + 1) & 3, (obs.seat + 3) & 3} if seats is None else set(seats)
        self.opponents = [h for h in others if h.seat in want]

    def beat_chance(self, play: Play, seats: Iterable[int] | None = None) -> float:
        """Chance that some opponent (or ``seats``) holds a same-shape play beating ``play``.

        Bombs are counted only as a small flat risk; a bomb is beaten only by a bomb, which
        is taken as never.
        """
        if play.kind >= FOUR_BOMB:
            return 0.0
        holders = self.opponents if seats is None else [h for h in self.others if h.seat in seats]
        miss = 1.0
        for h in holders:
            miss *= 1.0 - min(1.0, self._holder_beats(h, play) + BOMB_RISK)
        return 1.0 - miss

    def _holder_beats(self, h: Holding, play: Play) -> float:
        kind = play.kind
        if h.cards < play.length:
            return 0.0
        ph = (1.0 if h.known & PHOENIX_BIT else h.p) if self.phoenix else 0.0
        r = play.rank
        u = self.unseen
        if kind == SINGLE:
            if play.cards == DRAGON_BIT:
                return 0.0
            n = sum(u[q] for q in range(r + 1, 15)) + int(self.dragon)
            if not play.cards & PHOENIX_BIT:
                n += int(self.phoenix)
            known = h.known & ~((1 << (4 * r - 2)) - 1) if r >= 2 else h.known
            if known:
                return 1.0
            return 1.0 - (1.0 - h.p) ** n
        if kind in (PAIR, TRIPLE):
            k = 2 if kind == PAIR else 3
            miss = 1.0
            for q in range(r + 1, 15):
                if u[q] or h.known & RANK_MASKS[q]:
                    full = h.at_least(q, k, u)
                    part = h.at_least(q, k - 1, u) - full
                    miss *= 1.0 - min(1.0, full + ph * part)
            return 1.0 - miss
        if kind == FULL_HOUSE:
            miss = 1.0
            for q in range(r + 1, 15):
                if u[q]:
                    full = h.at_least(q, 3, u)
                    part = h.at_least(q, 2, u) - full
                    miss *= 1.0 - min(1.0, full + ph * part)
            return (1.0 - miss) * (0.85 if h.cards >= 7 else 0.6)
        if kind == STRAIGHT:
            return self._runs(h, play.length, r, 1, ph)
        if kind == STEPS:
            return self._runs(h, play.length // 2, r, 2, ph)
        return 0.0

    def _runs(self, h: Holding, width: int, top: int, per: int, ph: float) -> float:
        """Chance ``h`` holds a run of ``width`` ranks (``per`` cards each) above ``top``."""
        u = self.unseen
        full = [0.0] * 15
        near = [0.0] * 15
        for q in range(2, 15):
            full[q] = h.at_least(q, per, u)
            near[q] = h.at_least(q, per - 1, u) - full[q] if ph else 0.0
        miss = 1.0
        for hi in range(top + 1, 15):
            lo = hi - width + 1
            if lo < 2:
                continue
            # prefix[i]: product of full[lo..lo+i-1]; the Phoenix may stand in for one rank.
            prefix = [1.0]
            for q in range(lo, hi + 1):
                prefix.append(prefix[-1] * full[q])
            allp = prefix[-1]
            if ph:
                gap = 0.0
                suffix = 1.0
                for j in range(hi, lo - 1, -1):
                    gap += prefix[j - lo] * suffix * near[j]
                    suffix *= full[j]
                allp = min(1.0, allp + ph * gap)
            miss *= 1.0 - allp
        return 1.0 - miss

    def holds_higher_single(self, rank: int) -> bool:
        """Whether any card that beats a single of ``rank`` is still unseen."""
        if rank >= 15:
            return False
        return self.dragon or self.phoenix or any(self.unseen[q] for q in range(rank + 1, 15))
