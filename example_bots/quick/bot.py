"""QuickBot: HeuristicBot's reasoning with a fraction of its search, and a better exchange.

The heuristic spends its time in ``hand_cost`` (the partition search) for every candidate play
and exchange pair. QuickBot keeps its rules but scores fewer candidates, best-first by a
bound from the plan: a play (or a card) plus the best plan of the rest is a plan of the whole
hand, so the rest costs at least the hand's cost minus the part's own cost. Leads, the cards
cheapest to pass and the opponents' pair in the exchange are scored in the order of that
bound, and each search stops once no bound can beat what it has found; with the heuristic's
weights it picks the heuristic's answers.

Two weights of the exchange differ, both measured by paired duplicate runs against the
heuristic (``example_bots.common.duel``): a weak hand weighs a card's value to the partner
less against what it costs its own plan (it keeps a Dragon, Phoenix or Ace and gives a high
card its plan can spare), and the Dog is kept rather than passed to an opponent, who would
use it to hand the lead to its partner.
"""

from __future__ import annotations

from arena.rules import (
    DOG,
    DOG_K,
    DRAGON,
    PAIR,
    PHOENIX,
    PHOENIX_BIT,
    SINGLE,
    Exchange,
    Observation,
    Play,
    cards_of,
)
from example_bots.common.partition import hand_cost
from example_bots.common.ranks import DOG_COST, cost, rank_of
from example_bots.common.strength import hand_strength
from example_bots.common.table import opponents, partner
from example_bots.heuristic.bot import (
    EXCHANGE_POOL,
    LEAD_LENGTH,
    THREAT_SINGLE,
    TICHU_MARGIN,
    HeuristicBot,
    _bomb_cards,
    _Context,
    _gift_value,
    _pass_penalty,
)

BOMB_LEAD = 1.5  # the heuristic's penalty for leading a bomb while other cards remain
# Generosity: how much a card's value to the partner counts against its cost to the own plan.
GRAND_GENEROSITY = 3.0  # the partner called Grand Tichu (the heuristic's)
STRONG_GENEROSITY = 0.3  # a hand strong enough to call (the heuristic's)
WEAK_GENEROSITY = 0.6  # any other hand (the heuristic: 1.2, giving away its best card)
DOG_KEEP = 0.3  # passing the Dog to an opponent (the heuristic: -0.4, glad to be rid of it)
EPS = 1e-9  # float slack when a bound meets a score


class QuickBot(HeuristicBot):
    """The heuristic with bounded candidate searches and its own exchange weights."""

    name = "quick"
    weak_generosity = WEAK_GENEROSITY
    dog_pass = DOG_KEEP

    # ------------------------------------------------------------------ exchange

    def exchange(self, obs: Observation) -> Exchange:
        """The heuristic's exchange rules at QuickBot's weights, the pair found by bound.

        Removing ``b`` saves at most its cost as a single part, so the rest without ``a`` and
        ``b`` costs at least the rest without ``a`` minus that: the opponents' pairs are
        scored in the order of that bound, ties broken as the heuristic breaks them.
        """
        hand = obs.hand
        me = obs.seat
        mate = partner(me)
        strong = obs.grand[me] or hand_strength(hand).margin >= TICHU_MARGIN - 0.5
        bomb_cards = _bomb_cards(hand)
        if obs.grand[mate]:
            generosity = GRAND_GENEROSITY
        elif strong:
            generosity = STRONG_GENEROSITY
        else:
            generosity = self.weak_generosity
        cards = list(cards_of(hand))
        if strong and not obs.grand[mate]:
            # Keep the controls; spare the partner a good card the plan can do without.
            gifts = [c for c in cards if 10 <= rank_of(c) <= 13]
        else:
            gifts = [c for c in cards if _gift_value(c) >= 0.3]
        gifts = [c for c in gifts if c != DOG and not (1 << c) & bomb_cards]
        if not gifts:
            gifts = [c for c in cards if c != DOG] or cards
        to_partner = _best_gift(hand, gifts, generosity, bomb_cards)
        rest = hand & ~(1 << to_partner)
        keep_dog = obs.grand[mate]  # the Dog hands the lead to a partner who called Grand
        pool = [c for c in cards_of(rest) if c not in (DRAGON, PHOENIX)]
        if len(pool) < 2:
            pool = list(cards_of(rest))
        penalty = {c: _pass_penalty(c, keep_dog, bomb_cards) for c in pool}
        if DOG in penalty and not keep_dog:
            penalty[DOG] = self.dog_pass
        pool, alone = _cheapest(rest, pool, penalty, bomb_cards)
        single = {c: _single_cost(c, bomb_cards) for c in pool}
        bounded: list[tuple[float, int, int, int]] = []
        for i, a in enumerate(pool):
            for b in pool[i + 1 :]:
                floor = max(alone[a] - single[b], alone[b] - single[a])
                bounded.append((floor + penalty[a] + penalty[b], len(bounded), a, b))
        bounded.sort()
        best_pair = (pool[0], pool[1])
        best = (float("inf"), 0)
        for bound, order, a, b in bounded:
            if bound > best[0] + EPS:
                break
            score = hand_cost(rest & ~(1 << a) & ~(1 << b)) + penalty[a] + penalty[b]
            if (score, order) < best:
                best, best_pair = (score, order), (a, b)
        lo, hi = sorted(best_pair, key=lambda c: (rank_of(c) if c != DOG else -1, c))
        # The worse card (the lower, or the Dog) goes to an opponent who bet, else the next.
        nxt, prev = opponents(me)
        if obs.grand[prev] and not obs.grand[nxt]:
            return Exchange(hi, to_partner, lo)
        return Exchange(lo, to_partner, hi)

    # ------------------------------------------------------------------ leading

    def _lead(self, ctx: _Context, plays: list[Play]) -> Play:
        """The heuristic's lead score, searched best-first by its plan bound.

        Bombs, the Dog, the lone Phoenix and plays that break a bomb are scored exactly
        (the plan keeps bombs whole, so the bound does not hold for them).
        """
        obs = ctx.obs
        sure = self._sure_chain(ctx, plays)
        if sure is not None:
            return sure
        threat1 = any(obs.card_counts[o] == 1 for o in ctx.opps)
        threat2 = any(obs.card_counts[o] == 2 for o in ctx.opps)
        mate_count = obs.card_counts[ctx.mate]
        feed = 0 < mate_count <= 2 and not ctx.my_bet
        # (score or its lower bound, whether exact, distinct-play order, play)
        scored: list[tuple[float, bool, int, Play]] = []
        for i, p in enumerate(ctx.distinct(plays)):
            adj = -LEAD_LENGTH * p.length
            if p.kind == DOG_K:
                adj += self._dog_adjust(ctx)
            elif threat1 and p.kind == SINGLE:
                adj += THREAT_SINGLE * ctx.beat(p)
            elif threat2 and p.kind == PAIR:
                adj += 1.2 * ctx.beat(p)
            if feed and p.length == mate_count:
                adj -= 0.6 * ctx.beat(p)  # feed a partner about to go out
            exact = p.is_bomb or p.kind == DOG_K or p.cards == PHOENIX_BIT
            if exact or p.cards & ctx.bomb_cards:
                rem = ctx.hand & ~p.cards
                score = hand_cost(rem) + adj + (BOMB_LEAD if p.is_bomb and rem else 0.0)
                scored.append((score, True, i, p))
            else:
                scored.append((ctx.cost - cost(p.kind, p.length, p.rank) + adj, False, i, p))
        scored.sort(key=lambda t: (t[0], t[2]))
        best: Play | None = None
        best_score = float("inf")
        for bound, exact, _, p in scored:
            if bound >= best_score - EPS:
                break
            score = bound
            if not exact:
                floor = ctx.cost - cost(p.kind, p.length, p.rank)
                score += hand_cost(ctx.hand & ~p.cards) - floor
            if score < best_score:
                best, best_score = p, score
        return best if best is not None else plays[0]


def _best_gift(hand: int, gifts: list[int], generosity: float, bomb_cards: int) -> int:
    """The card of ``gifts`` whose loss costs the plan least against its value to the
    partner (the heuristic's choice, ties to the earlier card), scored best-first.

    Without ``c`` the hand costs at least its whole cost minus ``c``'s cost as a single, so
    cards are scored in the order of that bound until none can win.
    """
    whole = hand_cost(hand)
    floors = sorted(
        (whole - _single_cost(c, bomb_cards) - generosity * _gift_value(c), i, c)
        for i, c in enumerate(gifts)
    )
    best = (float("inf"), 0)
    choice = gifts[0]
    for floor, i, c in floors:
        if floor > best[0] + EPS:
            break
        score = (hand_cost(hand & ~(1 << c)) - generosity * _gift_value(c), i)
        if score < best:
            best, choice = score, c
    return choice


def _cheapest(
    rest: int, pool: list[int], penalty: dict[int, float], bomb_cards: int
) -> tuple[list[int], dict[int, float]]:
    """The ``EXCHANGE_POOL`` cards cheapest to pass alone, in the heuristic's order, and the
    cost of the rest without each card costed.

    Leaving out ``c`` saves at most its cost as a single, which bounds the rest's cost from
    below: cards are costed in the order of that bound until no bound can enter.
    """
    whole = hand_cost(rest)
    order = {c: i for i, c in enumerate(pool)}
    floors = sorted(pool, key=lambda c: whole - _single_cost(c, bomb_cards) + penalty[c])
    alone: dict[int, float] = {}
    keys: list[float] = []
    for c in floors:
        floor = whole - _single_cost(c, bomb_cards) + penalty[c]
        if len(keys) >= EXCHANGE_POOL and floor > keys[EXCHANGE_POOL - 1] + EPS:
            break
        alone[c] = hand_cost(rest & ~(1 << c))
        keys.append(alone[c] + penalty[c])
        keys.sort()
    chosen = sorted(alone, key=lambda c: (alone[c] + penalty[c], order[c]))
    return chosen[:EXCHANGE_POOL], alone


def _single_cost(c: int, bomb_cards: int) -> float:
    """The most removing ``c`` can save: its cost as a single part (unbounded in a bomb)."""
    if (1 << c) & bomb_cards:
        return float("inf")
    return DOG_COST if c == DOG else cost(SINGLE, 1, rank_of(c))


__all__ = ["QuickBot"]
