"""The learned bot: its shipped weights load, and it answers every decision legally."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from arena.env.encoding import N_ACTIONS, OBS_SIZE
from arena.rules import Options
from example_bots.learned.bot import LearnedBot
from example_bots.learned.policy import WEIGHTS, Policy
from sdk.testing import check_bot_local, play_local


def test_the_shipped_weights_fit_the_encoding() -> None:
    policy = Policy.load(WEIGHTS)
    assert policy.logits(np.zeros(OBS_SIZE, np.float32)).shape == (N_ACTIONS,)
    assert policy.logits(np.zeros((3, OBS_SIZE), np.float32)).shape == (3, N_ACTIONS)


def test_the_learned_bot_plays_every_seat_legally() -> None:
    check_bot_local(LearnedBot(), options=Options(hands=2), seed=5)


def test_other_weights_by_path(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    path = tmp_path / "w.npz"
    np.savez(path, w0=rng.standard_normal((OBS_SIZE, N_ACTIONS)).astype(np.float32),
             b0=np.zeros(N_ACTIONS, np.float32))  # fmt: skip
    bots = [LearnedBot(path), LearnedBot(), LearnedBot(path), LearnedBot()]
    m = play_local(bots, options=Options(hands=1), seed=3)
    assert m.over and len(m.hand_results) == 1
