"""``arena bench env``: both sides play whole hands and the figures add up."""

from __future__ import annotations

from typer.testing import CliRunner

from arena.bench.env import bench_env
from arena.cli.main import app


def test_bench_env_counts_answers_and_steps() -> None:
    f = bench_env(hands=3, seed=5, rounds=1)
    assert f.hands == 3
    # a hand has at least the 4 Grand Tichu answers, the 4 exchanges and 14 plays
    assert f.core_answers >= 3 * 22 and f.env_answers >= 3 * 22
    # an exchange is three picks: every hand takes at least 8 steps more than answers
    assert f.env_steps >= f.env_answers + 3 * 8
    assert f.core_us > 0 and f.env_us > 0 and f.floor_us > 0 and f.blocks_us > 0


def test_bench_env_command_prints_both_figures() -> None:
    out = CliRunner().invoke(app, ["bench", "env", "--hands", "2", "--rounds", "1"])
    assert out.exit_code == 0, out.output
    assert "rules core" in out.output and "steps/s" in out.output
    assert "encoding cost" in out.output and "floor" in out.output and "card blocks" in out.output
