"""Dask workers started by hand, as docs/cluster.md shows, from a shell that knows nothing of
the arena's gRPC settings: the bot processes they start are forked from no process whose
gRPC fork handlers run (issue 49: on such workers bots sometimes died with SIGSEGV before
joining, and the worker logged "skipping fork() handlers" hundreds of times). 300 plays
(three rounds of 50 duplicate boards), no failure."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800), pytest.mark.xdist_group("dask-cluster")]

pytest.importorskip("distributed", reason="the cluster extra is not installed")

BIN = Path(sys.executable).parent
EVENT = """\
name = "by-hand"
bots = ["random", "greedy", { bot = "random", name = "random-2" },
        { bot = "greedy", name = "greedy-2" }]
schedule = "round_robin"
format = "board"
hands_per_board = 1
rotations = 2
boards_per_round = 50
seed = 11
"""


def shell_env(tmp: Path) -> dict[str, str]:
    """A user's shell: the venv on the PATH, no GRPC_* setting (the test process has them)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRPC_", "PYTEST", "XDG_"))}
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    env["HOME"] = str(tmp / "home")
    env.pop("PYTHONPATH", None)
    return env


@pytest.fixture
def hand_started(tmp_path: Path) -> Iterator[tuple[str, Path, dict[str, str]]]:
    """``dask scheduler`` and ``dask worker ... --nthreads 1 --nworkers 2`` from that shell."""
    env = shell_env(tmp_path)
    log_path = tmp_path / "dask.log"
    log = log_path.open("ab")
    file = tmp_path / "scheduler.json"
    scheduler = subprocess.Popen(
        ["dask", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
         "--scheduler-file", str(file)],
        env=env, stdout=log, stderr=log,
    )  # fmt: skip
    procs = [scheduler]
    try:
        deadline = time.monotonic() + 120
        while not file.exists():
            assert time.monotonic() < deadline and scheduler.poll() is None, "no scheduler"
            time.sleep(0.2)
        address = json.loads(file.read_text())["address"]
        procs.append(
            subprocess.Popen(
                [
                    "dask",
                    "worker",
                    address,
                    "--nthreads",
                    "1",
                    "--nworkers",
                    "2",
                    "--no-dashboard",
                    "--host",
                    "127.0.0.1",
                ],
                env=env,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        )
        from distributed import Client

        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=300)
        yield address, log_path, env
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


def test_bots_on_hand_started_workers_are_forked_without_grpc_fork_handlers(
    tmp_path: Path, hand_started: tuple[str, Path, dict[str, str]]
) -> None:
    address, log, env = hand_started
    (tmp_path / "by-hand.toml").write_text(EVENT)
    done = subprocess.run(
        ["arena", "event", "run", "by-hand.toml", "--db", "by-hand.sqlite", "--cluster", address],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with sqlite3.connect(tmp_path / "by-hand.sqlite") as conn:
        (plays,) = conn.execute("SELECT COUNT(*) FROM plays WHERE status = 'done'").fetchone()
        failures = [
            f for (text,) in conn.execute("SELECT failures FROM hands") for f in json.loads(text)
        ]
    assert plays == 300 and failures == [], failures  # a few hundred plays, none scored
    text = log.read_text(errors="replace")
    assert "skipping fork() handlers" not in text, text[-4000:]
