"""RandomBot: a uniformly random legal answer to every decision; the floor every bot must beat.

It never calls Grand Tichu or Tichu (random play would lose nearly every bet, and matches
between random bots would then rarely reach 1000), and passes three distinct random cards.
"""

from __future__ import annotations

import random

from arena.rules import NO_GRAND, Action, Exchange, Observation, Phase, cards_of
from sdk import Bot


class RandomBot(Bot):
    """Uniform over ``obs.legal``; a random exchange; no bets."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__()
        self.rng = random.Random(seed)

    def act(self, obs: Observation) -> Action:
        """A random legal answer (no Grand Tichu; three random different cards to pass)."""
        if obs.phase is Phase.EXCHANGE:
            a, b, c = self.rng.sample(list(cards_of(obs.hand)), 3)
            return Exchange(a, b, c)
        if obs.phase is Phase.GRAND_TICHU:
            return NO_GRAND
        return self.rng.choice(obs.legal)


if __name__ == "__main__":
    import sdk

    raise SystemExit(sdk.run(RandomBot()))
