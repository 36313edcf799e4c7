"""A policy over the learning environment's encoding: a small multilayer perceptron in numpy.

``Policy.load(path)`` reads the weights of an ``.npz`` (``w0``, ``b0``, ``w1``, ``b1``, ...:
ReLU between layers, logits over ``arena.env.encoding.N_ACTIONS`` out);
``Policy.choose(vector, indices)`` is the legal index of highest logit. ``answer`` plays a
whole decision: it encodes the view, picks, and steps the ``Decision`` until it names an
answer.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from arena.env.encoding import TICHU_ACTION, Decision, encode_observation
from arena.rules import Action, Observation, Phase

WEIGHTS = Path(__file__).with_name("weights.npz")


class Policy:
    """Logits of the action indices from the observation vector (float32 throughout)."""

    def __init__(self, layers: list[tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]]):
        self.layers = layers

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> Policy:
        """Reads ``w0, b0, w1, b1, ...`` from an ``.npz``."""
        with np.load(path) as data:
            n = len([k for k in data.files if k.startswith("w")])
            layers = [
                (data[f"w{i}"].astype(np.float32), data[f"b{i}"].astype(np.float32))
                for i in range(n)
            ]
        return cls(layers)

    def logits(self, x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The logits of one vector (or of a batch, one per row)."""
        h = x
        last = len(self.layers) - 1
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < last:
                h = np.maximum(h, 0)
        return h

    def choose(self, x: npt.NDArray[np.float32], indices: list[int]) -> int:
        """The legal index with the highest logit."""
        z = self.logits(x)
        return indices[int(np.argmax(z[indices]))]


def new_decision(obs: Observation, may_call_tichu: bool) -> Decision:
    """The decision of ``obs`` over the action indices."""
    legal = obs.legal if obs.phase is not Phase.EXCHANGE else ()
    return Decision(obs.phase, obs.seat, legal, obs.hand, may_call_tichu)


def wants_tichu(policy: Policy, obs: Observation) -> bool:
    """Whether the call is the policy's choice at the decision's first step."""
    d = new_decision(obs, True)
    return policy.choose(encode_observation(obs, d), d.indices()) == TICHU_ACTION


def answer(policy: Policy, obs: Observation) -> Action:
    """The policy's answer to the decision (the Tichu call is asked apart: ``wants_tichu``)."""
    d = new_decision(obs, False)
    while True:
        i = policy.choose(encode_observation(obs, d), d.indices())
        a = d.step(i)
        if a is not None:
            return a
