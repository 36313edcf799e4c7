"""Inference of the hidden hands: how much likelier each seat is to hold each card.

``card_weights(obs)`` reads the public events of the hand and returns, per seat and card, a
relative weight for ``sdk.sim.Determinizer.deal``: 1 where nothing is known, above 1 where
the seat's behaviour suggests it holds the card, below 1 where it suggests it does not.
What is certain (cards this seat passed, the Mah Jong's holder, voids from the wish) is
already enforced by the determinizer; this adds what is likely:

* **Bets.** A Grand Tichu is called on eight cards with several controls, a Tichu on a hand
  that expects to go out first: the caller's weight of the Dragon, the Phoenix and the Aces
  is ``GRAND_CONTROL`` or ``TICHU_CONTROL``, of Kings half as much above 1.
* **Exchange.** A card received from an opponent is mostly the giver's only card of its
  rank: each of its rank-mates weighs ``GIVEN_MATES`` with the giver. (Cards passed to the
  partner are not weighed.)
* **Sets played.** A single, pair or triple is mostly all the seat held of its rank: each
  other card of the rank weighs ``LED_MATES`` with a seat that led it, ``FOLLOW_MATES``
  with one that played it on an opponent's play (on the partner's, nothing is inferred).

The factors are the heuristic's choices in self-play against what a random hand holds
(``scripts/inference_quality.py --fit`` prints both). Of the cards the heuristic passes to
an opponent, 76 % are the only card of their rank in its hand (44 % of a random hand's
cards are); of the singles, pairs and triples it leads, 99 %; of those it plays on an
opponent's play, 79 %. ``scripts/inference_quality.py`` scores the weights by how likely
the deals they draw make the true deal.
"""

from __future__ import annotations

from arena.rules import (
    CARD_RANKS,
    DRAGON,
    PAIR,
    PHOENIX,
    PHOENIX_BIT,
    RANK_MASKS,
    SINGLE,
    TRIPLE,
    EventKind,
    Observation,
    Play,
    cards_of,
)

__all__ = ["card_weights"]

GRAND_CONTROL = 3.0
TICHU_CONTROL = 2.0
GIVEN_MATES = 0.3  # a card an opponent passed: each of its rank-mates with the giver
LED_MATES = 0.05  # a single, pair or triple led: each other card of its rank with the leader
FOLLOW_MATES = 0.45  # one played on an opponent's play: likewise
_SETS = (SINGLE, PAIR, TRIPLE)

_ACES = tuple(cards_of(RANK_MASKS[14]))
_KINGS = tuple(cards_of(RANK_MASKS[13]))


def card_weights(obs: Observation) -> list[list[float]]:
    """Per seat, per card: the relative weight of the seat holding the card."""
    w = [[1.0] * 56 for _ in range(4)]
    me = obs.seat
    for t in range(4):
        if t == me:
            continue
        stake = 3 if obs.grand[t] else 2 if obs.tichu[t] else 0
        if stake:
            f = GRAND_CONTROL if stake == 3 else TICHU_CONTROL
            for c in (DRAGON, PHOENIX, *_ACES):
                w[t][c] *= f
            for c in _KINGS:
                w[t][c] *= 1.0 + (f - 1.0) / 2
    # Cards received from opponents: mostly the giver's only card of their rank.
    if obs.received and len(obs.received) == 3:
        for k, c in enumerate(obs.received, 1):
            giver = (me - k) & 3
            if giver == (me + 2) & 3 or not 2 <= c <= 53:
                continue
            for d in cards_of(RANK_MASKS[CARD_RANKS[c]] & ~(1 << c)):
                w[giver][d] *= GIVEN_MATES
    # Singles, pairs and triples led or played on an opponent's play: mostly all the seat
    # held of the rank then.
    top: Play | None = None
    owner = -1
    for e in obs.events:
        k = e.kind
        if k == EventKind.PLAY:
            p = e.play
            s = e.seat
            if (
                p is not None
                and s != me
                and p.kind in _SETS
                and not p.cards & PHOENIX_BIT
                and (top is None or (owner ^ s) & 1)  # led, or on an opponent's play
            ):
                f = LED_MATES if top is None else FOLLOW_MATES
                for d in cards_of(RANK_MASKS[p.rank] & ~p.cards):
                    w[s][d] *= f
            top = p
            owner = s
        elif k == EventKind.TRICK_WON or k == EventKind.DRAGON_GIFT:
            top = None
            owner = -1
    return w
