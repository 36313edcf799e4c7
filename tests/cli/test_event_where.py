"""``arena event run`` says where it writes and when it continues a stored event, and an
event stopped by Ctrl-C leaves the committed leaderboards as they were (issue 49: a stopped
ladder rung overwrote ``leaderboards/ladder-*`` with a partial result)."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.tournament.test_league import ARENA, arena_env, plays_done

pytestmark = pytest.mark.slow

EVENT = """\
name = "where"
schedule = "fixed"
bots = ["greedy", "random", { bot = "greedy", name = "greedy-2" }, { bot = "random", name = "r2" }]
boards_per_round = 400
jobs = 1
"""


def start(tmp_path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*ARENA, "event", "run", "where.toml", "--db", "where.sqlite", "--out", "boards"],
        cwd=tmp_path, env=arena_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip


def stop_after_plays(proc: subprocess.Popen[str], db: Path, least: int) -> str:
    """Ctrl-C once ``least`` plays are recorded; returns the output."""
    deadline = time.monotonic() + 600
    while plays_done(db, "where") < least:
        assert proc.poll() is None, proc.communicate()[0]
        assert time.monotonic() < deadline, "no plays recorded"
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 130, out
    return " ".join(out.split())


def test_a_stopped_event_keeps_the_committed_leaderboard_and_a_rerun_says_it_continues(
    tmp_path: Path,
) -> None:
    (tmp_path / "where.toml").write_text(EVENT)
    committed = tmp_path / "boards"
    committed.mkdir()
    for suffix in ("md", "json", "html"):
        (committed / f"where.{suffix}").write_text(f"the committed {suffix}\n")
    db = tmp_path / "where.sqlite"
    out = stop_after_plays(start(tmp_path), db, 2)
    assert "results: where.sqlite" in out, out
    partial = tmp_path / "where.sqlite.partial"
    assert "leaderboard so far (the event is unfinished): where.sqlite.partial/where.html" in out
    assert (partial / "where.md").is_file()
    for suffix in ("md", "json", "html"):
        assert (committed / f"where.{suffix}").read_text() == f"the committed {suffix}\n"
    done = plays_done(db, "where")
    again = stop_after_plays(start(tmp_path), db, done + 1)
    assert f"continuing event 'where' in where.sqlite: {done}/" in again, again
    assert (committed / "where.md").read_text() == "the committed md\n"
