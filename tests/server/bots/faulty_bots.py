"""SDK bots that fail on purpose, for the failure-reporting tests.

``FollowRaises`` raises ``KeyError`` whenever it follows a trick (the pass is legal), so the
SDK answers for it; with ``FAULTY_IMPORT=1`` importing this module raises instead.
"""

from __future__ import annotations

import os

from arena.rules import PASS, Action, Observation, Phase
from sdk.testing import RandomBot

if os.environ.get("FAULTY_IMPORT") == "1":
    raise RuntimeError("a bug at import time")


class FollowRaises(RandomBot):
    """A random bot with a bug on every follow."""

    name = "follow-raises"

    def act(self, obs: Observation) -> Action:
        """Raises ``KeyError`` when following; otherwise a random answer."""
        if obs.phase is Phase.PLAY and obs.legal[0] == PASS:
            raise KeyError("follow")
        return super().act(obs)
