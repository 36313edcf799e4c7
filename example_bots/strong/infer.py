"""Inference of the hidden hands: how much likelier each seat is to hold each card.

``card_weights(obs)`` reads the public events of the hand and returns, per seat and card, a
relative weight for ``sdk.sim.Determinizer.deal``: 1 where nothing is known, above 1 where
the seat's behaviour suggests it holds the card, below 1 where it suggests it does not.
What is certain (cards this seat passed, the Mah Jong's holder, voids from the wish) is
already enforced by the determinizer; this adds what is likely:

* **Bets.** A Grand Tichu is called on eight cards with several controls, a Tichu on a hand
  that expects to go out first: the caller's weight of the Dragon, the Phoenix and the Aces
  is ``GRAND_CONTROL`` or ``TICHU_CONTROL``, of Kings half as much above 1.
* **Passes on a low single.** A seat that passes in turn on an opponent's single below a
  Jack, with the trick worth taking, rarely holds many singles that beat it cheaply: each
  such pass multiplies its weight of the natural cards ranked between the single and the
  Queen by ``LOW_PASS``. High cards are often saved, so they are left alone.
* **Passes on the partner.** Passing on one's partner says nothing, and is ignored.
* **Exchange.** A card received from an opponent is one it could spare: the cards of the
  same rank are a little likelier with it (``SAME_RANK``), since seats split ranks rarely
  unless the rank was a single. (Cards passed to the partner are not weighed.)

The constants were chosen by paired duplicate runs (``scripts/strong_ablation.py``).
"""

from __future__ import annotations

from arena.rules import (
    DRAGON,
    PHOENIX,
    RANK_MASKS,
    SINGLE,
    EventKind,
    Observation,
    Play,
    cards_of,
)

__all__ = ["card_weights"]

GRAND_CONTROL = 3.0
TICHU_CONTROL = 2.0
LOW_PASS = 0.8
LOW_PASS_BELOW = 11  # singles below a Jack count as low
LOW_PASS_UP_TO = 12  # the cards that would beat them cheaply: up to the Queen
SAME_RANK = 1.3

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
    # Cards received from opponents: their rank-mates likelier with the giver.
    if obs.received and len(obs.received) == 3:
        for k, c in enumerate(obs.received, 1):
            giver = (me - k) & 3
            if giver == (me + 2) & 3 or not 2 <= c <= 53:
                continue
            r = (c - 2) // 4 + 2
            for d in cards_of(RANK_MASKS[r]):
                w[giver][d] *= SAME_RANK
    top: Play | None = None
    owner = -1
    for e in obs.events:
        k = e.kind
        if k == EventKind.PLAY:
            top = e.play
            owner = e.seat
        elif k == EventKind.PASS:
            s = e.seat
            if (
                s != me
                and top is not None
                and top.kind == SINGLE
                and top.rank < LOW_PASS_BELOW
                and (owner ^ s) & 1
            ):
                for r in range(top.rank + 1, LOW_PASS_UP_TO + 1):
                    for c in cards_of(RANK_MASKS[r]):
                        w[s][c] *= LOW_PASS
        elif k == EventKind.TRICK_WON or k == EventKind.DRAGON_GIFT:
            top = None
            owner = -1
    return w
