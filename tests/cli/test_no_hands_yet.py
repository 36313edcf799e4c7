"""An event with no hands yet: ``ratings`` and ``leaderboard`` agree (one line, exit 1, no
files), and the run's summary names no sandbox level rather than an empty list (issue 51)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.event import sandbox_line
from arena.cli.main import app
from arena.tournament.model import parse_event, plan_event
from arena.tournament.store import EventStore


@pytest.fixture
def unplayed(tmp_path: Path) -> Path:
    db = tmp_path / "e.sqlite"
    with EventStore(db) as store:
        bots = [{"bot": "random", "name": f"r{i}"} for i in range(4)]
        spec = parse_event({"name": "unplayed", "seed": 1, "bots": bots})
        store.create_event(spec, plan_event(spec))
    return db


@pytest.mark.parametrize("command", ["ratings", "leaderboard"])
def test_an_event_without_hands_has_no_ratings_yet(
    unplayed: Path, tmp_path: Path, command: str
) -> None:
    out = tmp_path / "boards"
    argv = [command, str(unplayed)] + (["--out", str(out)] if command == "leaderboard" else [])
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("no ratings yet: "), result.output
    assert not out.exists()  # no files of an empty table


def test_the_sandbox_line_before_any_play_says_none() -> None:
    assert sandbox_line({}) == "plays by sandbox level: none"
    assert sandbox_line({"full": 40, "partial": 2}) == "plays by sandbox level: 40 full, 2 partial"
