"""Journey: an event on a local Dask cluster, as the README runs it, interrupted and resumed.

The README's ``arena event run docs/event-example.toml --cluster local:2`` with a short
stand-in for the example event (which plays the search bot for many minutes): Ctrl-C, then
the command the interruption prints, which must keep the cluster; every hand once, and no
Dask chatter (issue 23 found its port warning in the output).
"""

from __future__ import annotations

import contextlib
import signal
import socket
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.journeys.journey import doc_command, scratch_copy, sh, user_env, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800), pytest.mark.xdist_group("dask-cluster")]

pytest.importorskip("distributed", reason="the cluster extra is not installed")

README = ROOT / "README.md"
STAND_IN = """\
name = "example-2026"
bots = ["random", "greedy", { bot = "random", name = "random-2" },
        { bot = "greedy", name = "greedy-2" }]
schedule = "round_robin"
format = "board"
hands_per_board = 1
rotations = 2
boards_per_round = 4
seed = 5
"""


def counts(db: Path) -> tuple[int, int, int]:
    """Plays done, plays planned and hands stored (0s before the database exists)."""
    if not db.exists():
        return 0, 0, 0
    try:
        with sqlite3.connect(db, timeout=30) as conn:
            done, total = conn.execute(
                "SELECT SUM(status = 'done'), COUNT(*) FROM plays"
            ).fetchone()
            (hands,) = conn.execute("SELECT COUNT(*) FROM hands").fetchone()
    except sqlite3.OperationalError:
        return 0, 0, 0
    return int(done or 0), int(total), int(hands)


def test_an_event_on_a_local_cluster_is_interrupted_and_resumed(tmp_path: Path) -> None:
    repo = scratch_copy(tmp_path)
    env = user_env(tmp_path / "home")
    command = doc_command(README, "arena event run docs/event-example.toml --cluster local")
    (repo / "stand-in.toml").write_text(STAND_IN)
    argv = command.replace("docs/event-example.toml", "stand-in.toml").split()
    db = repo / "runs" / "example-2026.sqlite"
    busy = socket.socket()  # Dask's default port taken, as by another cluster on the machine
    with contextlib.suppress(OSError):
        busy.bind(("127.0.0.1", 8787))
        busy.listen()
    proc = subprocess.Popen(
        argv, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    wait_for(lambda: counts(db)[0] >= 2, "the first plays on the cluster", proc)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 130, out
    again = out.split("continue with: ")[1].splitlines()[0]
    assert again == "arena event resume runs/example-2026.sqlite --cluster local:2", out
    done, total, _ = counts(db)
    assert done < total
    out += sh(again, repo, env)
    done, total, hands = counts(db)
    assert done == total == hands  # one hand a play: none lost, none twice
    busy.close()
    assert "already in use" not in out and "Traceback" not in out, out
