"""The learned bot: a policy trained over the learning environment's encoding, played as an
ordinary bot process (``scripts/train_learned.py`` trains it; docs/learning.md).

Inference is plain numpy; the weights are ``weights.npz`` beside this file, or the file
named by ``TICHU_LEARNED_WEIGHTS``.
"""

from __future__ import annotations

import os
from pathlib import Path

from arena.rules import Action, Observation
from example_bots.learned.policy import WEIGHTS, Policy, answer, wants_tichu
from sdk import Bot


class LearnedBot(Bot):
    """Answers every decision with the policy's highest-scoring legal index."""

    name = "learned"

    def __init__(self, weights: Path | None = None) -> None:
        super().__init__()
        path = weights or Path(os.environ.get("TICHU_LEARNED_WEIGHTS", "") or WEIGHTS)
        self.policy = Policy.load(path)

    def call_tichu(self, obs: Observation) -> bool:
        """Calls when the call is the policy's first choice."""
        return wants_tichu(self.policy, obs)

    def act(self, obs: Observation) -> Action:
        """The policy's answer, index by index."""
        return answer(self.policy, obs)
