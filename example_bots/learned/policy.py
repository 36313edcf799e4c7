"""A policy over the learning environment's encodings: a small scorer of (observation, action)
pairs in numpy.

Each legal index of a decision is scored from the observation vector
(``arena.env.encoding.encode_observation``) and the index's action features
(``action_features``: the cards it commits, the hand it leaves, its kind): the first layer is
the sum of the observation's part (computed once) and the action's, then ReLU, a second
hidden layer and one score out. The index of highest score is played. Weights: an ``.npz``
with ``Wo`` (observation to hidden), ``Wa`` (action features to hidden), ``b1``, ``W2``,
``b2``, ``w3`` (hidden to score) and ``b3`` (``scripts/train_learned.py`` writes them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from arena.env.encoding import TICHU_ACTION, Decision, action_features, encode_observation
from arena.rules import Action, Observation, Phase

WEIGHTS = Path(__file__).with_name("weights.npz")
#: The arrays a weights file holds.
PARAMETERS = ("Wo", "Wa", "b1", "W2", "b2", "w3", "b3")
F32 = npt.NDArray[np.float32]


class Policy:
    """Scores of a decision's indices (float32 throughout)."""

    def __init__(self, weights: dict[str, F32]) -> None:
        missing = [k for k in PARAMETERS if k not in weights]
        if missing:
            raise ValueError(f"weights lack {', '.join(missing)}")
        self.w = {k: weights[k].astype(np.float32) for k in PARAMETERS}

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> Policy:
        """Reads the weights of an ``.npz``."""
        with np.load(path) as data:
            return cls({k: data[k] for k in data.files})

    def scores(self, x: F32, features: F32) -> F32:
        """One score per row of ``features`` (an index's action features) in the view ``x``."""
        w = self.w
        h = np.maximum(x @ w["Wo"] + features @ w["Wa"] + w["b1"], 0)
        h = np.maximum(h @ w["W2"] + w["b2"], 0)
        out: F32 = h @ w["w3"][:, 0] + w["b3"][0]
        return out

    def choose(self, obs: Observation, decision: Decision) -> int:
        """The legal index of highest score (the only one without scoring)."""
        indices = decision.indices()
        if len(indices) == 1:
            return indices[0]
        x = encode_observation(obs, decision)
        return indices[int(np.argmax(self.scores(x, action_features(decision))))]


def new_decision(obs: Observation, may_call_tichu: bool) -> Decision:
    """The decision of ``obs`` over the action indices."""
    legal = obs.legal if obs.phase is not Phase.EXCHANGE else ()
    return Decision(obs.phase, obs.seat, legal, obs.hand, may_call_tichu)


def wants_tichu(policy: Policy, obs: Observation) -> bool:
    """Whether the call is the policy's choice at the decision's first step."""
    return policy.choose(obs, new_decision(obs, True)) == TICHU_ACTION


def answer(policy: Policy, obs: Observation) -> Action:
    """The policy's answer to the decision (the Tichu call is asked apart: ``wants_tichu``)."""
    d = new_decision(obs, False)
    while True:
        a = d.step(policy.choose(obs, d))
        if a is not None:
            return a
