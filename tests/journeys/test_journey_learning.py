"""Journey: a learner creates the environment, trains a tiny policy with the project's
pipeline (imitation, then a DAgger round resumed from the checkpoint), exports its weights
into the learned bot and plays it in ``arena play`` as a sandboxed bot process, as
docs/learning.md says."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.journeys.journey import scratch_copy, sh, user_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

pytest.importorskip("pettingzoo")

STEP_THE_ENV = """
import numpy as np
from arena.env import tichu_v0
env = tichu_v0.env()
env.reset(seed=7)
steps = 0
for agent in env.agent_iter():
    obs, reward, term, trunc, info = env.last()
    env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    steps += 1
print("steps", steps)
"""


def test_a_learner_trains_exports_and_plays_a_policy(tmp_path: Path) -> None:
    repo = scratch_copy(tmp_path)
    env = user_env(tmp_path / "home")
    out = sh(["python", "-c", STEP_THE_ENV], repo, env)
    assert int(out.split()[-1]) > 30
    weights = repo / "example_bots" / "learned" / "weights.npz"
    before = weights.read_bytes() if weights.exists() else b""
    train = ["python", "scripts/train_learned.py", "--hands", "20", "--epochs", "1", "--hidden",
             "32", "32", "--work", str(tmp_path / "work")]  # fmt: skip
    out = sh([*train, "--rounds", "0"], repo, env)  # imitation alone
    assert "imitation epoch 1/1" in out and "held out" in out
    assert weights.read_bytes() != before  # exported into the bot's folder
    out = sh([*train, "--rounds", "1", "--round-hands", "10", "--round-epochs", "1"], repo, env)
    assert "resumed from" in out and "round 1: the policy against heuristic" in out
    assert "round 1 epoch 1/1" in out and "imitation epoch" not in out
    manifest = repo / "example_bots" / "learned" / "bot.toml"
    out = sh(["arena", "play", str(manifest), "random", str(manifest), "random",
              "--hands", "2"], repo, env)  # fmt: skip
    assert "learned" in out
