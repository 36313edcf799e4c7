"""The learned bot: its shipped weights load, and it answers every decision legally."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from arena.env.encoding import N_ACTION_FEATURES, OBS_SIZE
from arena.rules import Options
from example_bots.learned.bot import LearnedBot
from example_bots.learned.policy import PARAMETERS, WEIGHTS, Policy
from sdk.testing import check_bot_local, play_local


def test_the_shipped_weights_fit_the_encoding() -> None:
    policy = Policy.load(WEIGHTS)
    x = np.zeros(OBS_SIZE, np.float32)
    assert policy.scores(x, np.zeros((3, N_ACTION_FEATURES), np.float32)).shape == (3,)


def test_the_learned_bot_plays_every_seat_legally() -> None:
    check_bot_local(LearnedBot(), options=Options(hands=2), seed=5)


def _random_weights(path: Path, hidden: int = 16) -> None:
    rng = np.random.default_rng(0)
    shapes = {"Wo": (OBS_SIZE, hidden), "Wa": (N_ACTION_FEATURES, hidden), "b1": (hidden,),
              "W2": (hidden, hidden), "b2": (hidden,), "w3": (hidden, 1), "b3": (1,)}  # fmt: skip
    np.savez(path, **{k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()})


def test_other_weights_by_path(tmp_path: Path) -> None:
    path = tmp_path / "w.npz"
    _random_weights(path)
    bots = [LearnedBot(path), LearnedBot(), LearnedBot(path), LearnedBot()]
    m = play_local(bots, options=Options(hands=1), seed=3)
    assert m.over and len(m.hand_results) == 1


def test_weights_of_another_model_are_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "flat.npz"
    np.savez(path, w0=np.zeros((OBS_SIZE, 4), np.float32), b0=np.zeros(4, np.float32))
    with pytest.raises(ValueError, match=", ".join(PARAMETERS[:2])):
        Policy.load(path)
