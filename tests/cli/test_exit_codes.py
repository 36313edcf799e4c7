"""The exit-code table of README.md: bad input is 2 in every command (issue 23, finding 7)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from tests.helpers import ROOT

BAD_INPUT = {
    "play with three bots": ["play", "random", "random", "random"],
    "play an unknown bot": ["play", "nobody", "random", "random", "random"],
    "event run of a broken file": ["event", "run", "{bad_toml}"],
    "event resume of a text file": ["event", "resume", "{text}"],
    "ratings of a text file": ["ratings", "{text}"],
    "leaderboard of a text file": ["leaderboard", "{text}"],
    "ladder of a text file": ["ladder", "{text}"],
    "replay verify of a text file": ["replay", "verify", "{text}"],
    "league standings without a league": ["league", "standings", "--db", "{missing}"],
    "league submit of a missing bot": ["league", "submit", "nobody", "--db", "{league}"],
    "check-bot of a missing manifest": ["check-bot", "{missing}"],
    "web of a text file": ["web", "--db", "{text}"],
    "web of a text file as a replay": ["web", "{text}"],
    "table with an unknown bot": ["table", "nobody"],
    "table with two bots": ["table", "random", "random"],
    "table with an unknown leave rule": ["table", "--leave", "maybe"],
    "an unknown option": ["event", "run", "--no-such-option"],
}


@pytest.mark.parametrize("argv", BAD_INPUT.values(), ids=BAD_INPUT.keys())
def test_bad_input_exits_2_with_one_line(argv: list[str], tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text("name = [")
    (tmp_path / "text.txt").write_text("hello")
    league = tmp_path / "league.sqlite"
    CliRunner().invoke(
        app, ["league", "init", str(ROOT / "docs" / "league-example.toml"), "--db", str(league)]
    )
    places = {
        "{bad_toml}": tmp_path / "bad.toml",
        "{text}": tmp_path / "text.txt",
        "{missing}": tmp_path / "missing.toml",
        "{league}": league,
    }
    result = CliRunner().invoke(app, [str(places.get(a, a)) for a in argv])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output


EVENT_OF_BROKEN_BOTS = """
name = "nobody-came"
bots = [
  { bot = "broken/bot.toml", name = "broken-1" },
  { bot = "broken/bot.toml", name = "broken-2" },
  { bot = "broken/bot.toml", name = "broken-3" },
  { bot = "broken/bot.toml", name = "broken-4" },
]
hands_per_board = 1
rotations = 2
"""


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_an_event_run_that_records_nothing_exits_1(tmp_path: Path) -> None:
    """Every bot dies at start: no table can play, nothing is recorded, and that is no success."""
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "bot.toml").write_text('name = "broken"\ncommand = ["{python}", "bot.py"]\n')
    (broken / "bot.py").write_text("raise SystemExit(3)\n")
    (tmp_path / "event.toml").write_text(EVENT_OF_BROKEN_BOTS)
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "event", "run", "event.toml", "--db", "e.sqlite"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=540,
        env={**os.environ, "COLUMNS": "200"},
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert re.search(r"error: no play was recorded \(0/\d+ done\)", out), out
    assert "Traceback" not in out


PARSER_MISTAKES = {
    "a missing file": (["web", "--db", "{missing}"], 2, "Invalid value for '--db'"),
    "a missing argument": (["ratings"], 2, "Missing argument"),
    "an unknown option": (["event", "run", "--no-such-option"], 2, "No such option"),
    "an unknown command": (["no-such-command"], 2, "No such command"),
    "the gate's unknown option": (["gate", "--no-such-option"], 3, "No such option"),
}


@pytest.mark.parametrize(
    ("argv", "code", "said"), PARSER_MISTAKES.values(), ids=PARSER_MISTAKES.keys()
)
def test_what_the_option_parser_catches_is_one_line(
    argv: list[str], code: int, said: str, tmp_path: Path
) -> None:
    """Click's usage lines and boxed error (5 lines) become one line with the exit code."""
    argv = [str(tmp_path / "missing.sqlite") if a == "{missing}" else a for a in argv]
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == code, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and said in lines[0], done.stderr
    assert "--help)" in lines[0]  # where to read more


@pytest.mark.parametrize(
    "argv",
    [
        ["play", "{folder}", "random", "random", "random"],
        ["check-bot", "{folder}"],
        ["table", "{folder}"],
        ["gate", "--candidate", "{folder}", "--baseline", "random"],
    ],
    ids=["play", "check-bot", "table", "gate"],
)
def test_a_folder_without_a_manifest_is_said_one_way(argv: list[str], tmp_path: Path) -> None:
    folder = tmp_path / "mybot"
    folder.mkdir()
    result = CliRunner().invoke(app, [str(folder) if a == "{folder}" else a for a in argv])
    assert result.exit_code in (2, 3), result.output  # the gate's errors are 3
    assert f"{folder}: a folder without a bot.toml manifest" in " ".join(result.output.split())
