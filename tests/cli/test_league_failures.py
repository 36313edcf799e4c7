"""A league round with a bot that cannot start plays on and names the bot, its failures and log."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

LEAGUE = """
name = "plays-on"
[round]
boards_per_round = 1
rotations = 2
[round.time_control]
decision_ms = 5000
"""


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli.main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_a_league_round_plays_on_with_a_broken_bot_and_names_it(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "bot.toml").write_text('name = "broken"\ncommand = ["{python}", "bot.py"]\n')
    (broken / "bot.py").write_text("import no_such_module_anywhere\n")
    (tmp_path / "league.toml").write_text(LEAGUE)
    db = ["--db", "league.sqlite"]
    for step in (
        ["league", "init", "league.toml", *db],
        ["league", "submit", "broken", *db],
        *(["league", "submit", bot, *db] for bot in ("random", "greedy", "heuristic")),
    ):
        done = arena(*step, cwd=tmp_path)
        assert done.returncode == 0, (step, done.stdout + done.stderr)
    done = arena("league", "run", "--rounds", "1", *db, cwd=tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    line = re.search(
        r"^broken v1: (\d+) failures? \((.*)\) in (\d+) hands?; log: (\S+)$", out, re.M
    )
    assert line is not None, out
    assert "crash" in line[2] or "disconnect" in line[2], line[0]
    # The round's line counts the failures it then lists (issue 50: "0 failures", then crashes).
    listed = sum(int(n) for n in re.findall(r"^\S+ v\d+: (\d+) failures? ", out, re.M))
    said = re.search(r"finished: .*, (\d+) failures? in the round", out)
    assert said is not None and int(said[1]) == listed > 0, out
    log = Path(line[4]) if Path(line[4]).is_absolute() else tmp_path / line[4]
    assert "no_such_module_anywhere" in log.read_text(), log


def test_a_league_round_that_records_nothing_exits_1_and_says_so(tmp_path: Path) -> None:
    """Every bot dies at start: no table plays; the round is not called interrupted, nor done."""
    for k in range(4):
        folder = tmp_path / f"dead{k}"
        folder.mkdir()
        (folder / "bot.toml").write_text(f'name = "dead{k}"\ncommand = ["{{python}}", "bot.py"]\n')
        (folder / "bot.py").write_text("raise SystemExit(3)\n")
    (tmp_path / "league.toml").write_text(LEAGUE)
    db = ["--db", "league.sqlite"]
    for step in (
        ["league", "init", "league.toml", *db],
        *(["league", "submit", f"dead{k}", *db] for k in range(4)),
    ):
        done = arena(*step, cwd=tmp_path)
        assert done.returncode == 0, (step, done.stdout + done.stderr)
    done = arena("league", "run", "--rounds", "1", *db, cwd=tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert re.search(r"error: round 1: \d+ plays could not be played and are not recorded", out)
    assert "interrupted" not in out and "Traceback" not in out
