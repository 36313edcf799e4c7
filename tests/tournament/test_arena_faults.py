"""The arena's faults are never a bot's (issue 49): a bot's sandbox killed by a signal before
the bot joined (as the runner's fork crashed on hand-started Dask workers) is the arena's
failure; the play is played again on fresh processes, and nothing of it is scored."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time
import uuid
from pathlib import Path

import pytest

from arena.server.sandbox import SandboxLevel, host_sandbox
from arena.tournament.model import parse_event, plan_event
from arena.tournament.runner import EventRunner
from arena.tournament.store import EventStore

pytestmark = pytest.mark.slow

# A bot that takes its time to connect: the test's window to crash its sandbox from outside.
SLOW = """\
import sys
import time

sys.argv = sys.argv[:1]
time.sleep(2)
import sdk
from example_bots.random.bot import RandomBot

raise SystemExit(sdk.run(RandomBot()))
"""


def children_with(marker: str) -> list[int]:
    """This process's children whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:"))
        if int(ppid) == os.getpid() and marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def test_a_sandbox_crashed_before_joining_is_played_again_not_scored(tmp_path: Path) -> None:
    if host_sandbox().level is not SandboxLevel.FULL:
        pytest.skip("the arena tells its own crashes apart in the full sandbox")
    marker = f"arena-fault-{uuid.uuid4().hex}"
    folder = tmp_path / "slow"
    folder.mkdir()
    (folder / "slow.py").write_text(SLOW)
    (folder / "bot.toml").write_text(
        f'name = "slow"\ncommand = ["{{python}}", "slow.py", "{marker}"]\nworkdir = "."\n'
        "startup_timeout_s = 120\n"
    )
    data = {
        "name": "faults",
        "schedule": "fixed",
        "bots": [str(folder / "bot.toml"), "random", {"bot": "random", "name": "r2"},
                 {"bot": "random", "name": "r3"}],
        "boards_per_round": 2,
        "rotations": 2,
        "seed": 5,
        "jobs": 1,
        "time_control": {"decision_ms": 10000},
    }  # fmt: skip
    spec = parse_event(data, source="test", base_dir=tmp_path)
    store = EventStore(tmp_path / "faults.sqlite")
    store.create_event(spec, plan_event(spec))
    killed: list[int] = []
    running = threading.Event()
    running.set()

    def crash_one_sandbox() -> None:
        """SIGSEGV to the first sandbox of the slow bot, as the runner's fork met it."""
        while running.is_set() and not killed:
            for pid in children_with(marker):
                os.kill(pid, signal.SIGSEGV)
                killed.append(pid)
                return
            time.sleep(0.01)

    crasher = threading.Thread(target=crash_one_sandbox, daemon=True)
    crasher.start()
    try:
        runner = EventRunner(store, "faults", spec, log_dir=tmp_path / "logs")
        progress = runner.run()
    finally:
        running.clear()
        crasher.join(60)
        store.close()
    assert killed, "no sandbox of the slow bot was seen"
    with sqlite3.connect(tmp_path / "faults.sqlite") as conn:
        statuses = [s for (s,) in conn.execute("SELECT status FROM plays")]
        failures = [f for (t,) in conn.execute("SELECT failures FROM hands") for f in json.loads(t)]
    assert statuses == ["done"] * 4 and failures == []
    assert progress.failures == 0 and progress.arena_faults >= 1  # counted apart
