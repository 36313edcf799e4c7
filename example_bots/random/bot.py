"""RandomBot: a uniformly random legal answer to every decision; the floor every bot must beat.

It never calls Grand Tichu or Tichu (random play would lose nearly every bet, and matches
between random bots would then rarely reach 1000), and passes three distinct random cards.
The class lives in ``sdk.testing``, where the local harness uses it as the opponent too.
"""

from __future__ import annotations

from sdk.testing import RandomBot

__all__ = ["RandomBot"]

if __name__ == "__main__":
    import sdk

    raise SystemExit(sdk.run(RandomBot()))
