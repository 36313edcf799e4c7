"""GreedyBot: the simplest bot that plays Tichu sensibly, the first yardstick after random.

It plays the lowest play that beats the table, leads the longest combination holding its
lowest card, keeps the Phoenix and its bombs out of ordinary play, and never overtakes its
partner. Its calls, exchange, wish and Dragon gift are one-line rules. It plans nothing: no
hand partition, no card counting, no reading of the opponents.
"""

from __future__ import annotations

from arena.rules import (
    DOG_K,
    DRAGON_BIT,
    PASS,
    PHOENIX_BIT,
    RANK_MASKS,
    Exchange,
    Observation,
    Phase,
    Play,
    cards_of,
)
from example_bots.common.ranks import find_bombs, lowest_rank, rank_of
from example_bots.common.table import can_pass, opponents, owner, partner, plays_of
from sdk import Bot

#: An opponent with this many cards or fewer who leads the trick is about to go out.
ABOUT_TO_GO_OUT = 2


class GreedyBot(Bot):
    """Lowest beating play; bombs only to stop an opponent going out."""

    name = "greedy"

    def grand_tichu(self, obs: Observation) -> bool:
        """Grand Tichu with the Dragon, the Phoenix and two Aces among the first eight."""
        return _has_strong_core(obs.hand, aces_needed=2)

    def call_tichu(self, obs: Observation) -> bool:
        """Tichu after the exchange with the Dragon and an Ace plus a bomb or the Phoenix."""
        if obs.phase is Phase.EXCHANGE or obs.tichu[partner(obs.seat)]:
            return False
        return _has_strong_core(obs.hand, aces_needed=1)

    def exchange(self, obs: Observation) -> Exchange:
        """The two lowest cards to the opponents, the best card to the partner."""
        ranked = sorted(cards_of(obs.hand), key=lambda c: (rank_of(c), c))
        best = DRAGON_BIT.bit_length() - 1 if obs.hand & DRAGON_BIT else ranked[-1]
        low = [c for c in ranked if c != best]
        return Exchange(low[0], best, low[1])

    def play(self, obs: Observation) -> Play:
        """Go out if possible; otherwise lead low and long, or follow with the lowest beater."""
        plays = plays_of(obs)
        for p in plays:
            if p.cards == obs.hand:
                return p
        if obs.top is None:
            return self._lead(obs, plays)
        if owner(obs) == partner(obs.seat) and can_pass(obs):
            return PASS
        kept = _bomb_cards(obs.hand)
        normal = [p for p in plays if not p.is_bomb and not p.cards & kept]
        if normal:
            return min(normal, key=lambda p: (bool(p.cards & PHOENIX_BIT), p.rank, p.cards))
        if plays and (_opponent_about_to_go_out(obs) or not can_pass(obs)):
            return min(plays, key=_bomb_order)
        return PASS

    def bomb(self, obs: Observation) -> Play:
        """Out of turn only to stop an opponent who leads the trick with one or two cards."""
        bombs = plays_of(obs)
        if bombs and _opponent_about_to_go_out(obs):
            return min(bombs, key=_bomb_order)
        return PASS

    def wish(self, obs: Observation) -> int:
        """The highest rank it does not hold (so the wish never binds itself)."""
        for r in range(14, 1, -1):
            if not obs.hand & RANK_MASKS[r]:
                return r
        return 0

    def _lead(self, obs: Observation, plays: list[Play]) -> Play:
        partner_out = obs.card_counts[partner(obs.seat)] == 0
        bomb_cards = _bomb_cards(obs.hand)
        plain = [
            p
            for p in plays
            if not p.is_bomb
            and not p.cards & (PHOENIX_BIT | bomb_cards)
            and not (p.kind == DOG_K and partner_out)
        ]
        choices = plain or [p for p in plays if not p.is_bomb] or plays
        if any(obs.card_counts[o] == 1 for o in opponents(obs.seat)):
            # Lead something a lone last card cannot beat: a combination, or the top single.
            multi = [p for p in choices if p.length > 1]
            if multi:
                return max(multi, key=lambda p: (p.length, -p.rank))
            return max(choices, key=lambda p: (p.kind != DOG_K, p.rank))
        return min(choices, key=lambda p: (lowest_rank(p.cards), -p.length, p.rank, p.cards))


def _has_strong_core(hand: int, aces_needed: int) -> bool:
    """Dragon plus ``aces_needed`` Aces plus a bomb or the Phoenix."""
    if not hand & DRAGON_BIT:
        return False
    aces = (hand & RANK_MASKS[14]).bit_count()
    extra = bool(hand & PHOENIX_BIT) or bool(find_bombs(hand))
    return aces >= aces_needed and extra


def _bomb_cards(hand: int) -> int:
    """The cards of the bombs in ``hand``, which are kept whole."""
    cards = 0
    for b in find_bombs(hand):
        cards |= b.cards
    return cards


def _opponent_about_to_go_out(obs: Observation) -> bool:
    """An opponent leads the trick and holds at most ``ABOUT_TO_GO_OUT`` cards (not yet out)."""
    who = owner(obs)
    return who in opponents(obs.seat) and 0 < obs.card_counts[who] <= ABOUT_TO_GO_OUT


def _bomb_order(p: Play) -> tuple[int, int, int]:
    """Weakest bomb first."""
    return (p.kind, p.length, p.rank)


__all__ = ["GreedyBot"]
