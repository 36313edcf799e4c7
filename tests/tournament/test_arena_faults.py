"""The arena's faults are never a bot's (issue 49): a bot's sandbox killed by a signal before
the bot joined (as the runner's fork crashed on hand-started Dask workers), a sandbox that
failed to set up, or one the runner could not start, is the arena's failure; the play is
played again on fresh processes, and nothing of it is scored."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from arena.server import sandbox as sandbox_module
from arena.server.sandbox import SandboxLevel, host_sandbox
from arena.tournament.cluster import DaskExecutor
from arena.tournament.model import EventSpec, parse_event, plan_event
from arena.tournament.runner import ARENA_REPLAYS, ArenaFault, EventRunner
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


def sandboxes_with(marker: str) -> list[int]:
    """The outermost processes whose command line holds ``marker``: the sandboxes the runner
    started (here, or on a Dask worker), not the processes in them."""
    found: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            ppid = next(x.split()[1] for x in status.splitlines() if x.startswith("PPid:"))
            found[int(entry.name)] = int(ppid)
    return [pid for pid, parent in found.items() if parent not in found]


@pytest.mark.parametrize("where", ["local", "dask"])
def test_a_sandbox_crashed_before_joining_is_played_again_not_scored(
    tmp_path: Path, where: str, request: pytest.FixtureRequest
) -> None:
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
            for pid in sandboxes_with(marker):
                os.kill(pid, signal.SIGSEGV)
                killed.append(pid)
                return
            time.sleep(0.01)

    crasher = threading.Thread(target=crash_one_sandbox, daemon=True)
    crasher.start()
    try:
        executor = None
        if where == "dask":
            pytest.importorskip("distributed", reason="the cluster extra is not installed")
            executor = DaskExecutor(request.getfixturevalue("own_cluster").address)
        runner = EventRunner(store, "faults", spec, log_dir=tmp_path / "logs", executor=executor)
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


def _random_event(tmp_path: Path, name: str) -> tuple[EventStore, EventSpec]:
    """Four random bots, one board in two rotations: two plays."""
    data = {
        "name": name,
        "schedule": "fixed",
        "bots": ["random", *({"bot": "random", "name": f"r{k}"} for k in (2, 3, 4))],
        "boards_per_round": 1,
        "rotations": 2,
        "seed": 9,
        "jobs": 1,
    }
    spec = parse_event(data, source="test", base_dir=tmp_path)
    store = EventStore(tmp_path / f"{name}.sqlite")
    store.create_event(spec, plan_event(spec))
    return store, spec


def _scored(path: Path) -> tuple[list[str], list[object]]:
    with sqlite3.connect(path) as conn:
        statuses = [s for (s,) in conn.execute("SELECT status FROM plays")]
        failures = [f for (t,) in conn.execute("SELECT failures FROM hands") for f in json.loads(t)]
    return statuses, failures


def test_a_sandbox_that_fails_to_set_up_is_played_again_not_scored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bwrap cannot mount what the first sandbox binds (a runtime image gone): it ends with
    code 1 before it runs the bot, which its status descriptor tells; the play is played
    again and nothing of it is scored."""
    if host_sandbox().level is not SandboxLevel.FULL:
        pytest.skip("bwrap tells a set-up that failed in the full sandbox")
    view = sandbox_module._bwrap_view
    broken: list[int] = []

    def lose_an_image(*args: Any, **kwargs: Any) -> list[str]:
        mounts = view(*args, **kwargs)
        if not broken:
            broken.append(1)
            mounts += ["--ro-bind", str(tmp_path / "gone-image"), "/opt/gone"]
        return mounts

    monkeypatch.setattr(sandbox_module, "_bwrap_view", lose_an_image)
    store, spec = _random_event(tmp_path, "setup")
    try:
        progress = EventRunner(store, "setup", spec, log_dir=tmp_path / "logs").run()
    finally:
        store.close()
    assert broken
    statuses, failures = _scored(tmp_path / "setup.sqlite")
    assert statuses == ["done"] * 2 and failures == []
    assert progress.failures == 0 and progress.arena_faults == 1
    logs = "".join(p.read_text() for p in (tmp_path / "logs").rglob("*.log"))
    assert "Can't find source path" in logs  # bwrap's own word, kept in the bot's log


def test_a_sandbox_that_never_starts_stops_the_run_after_its_replays(tmp_path: Path) -> None:
    """The runner cannot start the sandbox at all (its bwrap gone): every play fails by the
    arena's fault, is played again ARENA_REPLAYS times, and the run stops with the reason,
    nothing recorded and nothing scored."""
    sandbox = host_sandbox()
    if sandbox.level is not SandboxLevel.FULL:
        pytest.skip("bwrap tells a set-up that failed in the full sandbox")
    store, spec = _random_event(tmp_path, "never")
    runner = EventRunner(store, "never", spec, sandbox=replace(sandbox, bwrap=str(tmp_path / "no")))
    try:
        with pytest.raises(ArenaFault, match="by the arena's fault, not the bot's"):
            runner.run()
    finally:
        store.close()
    statuses, failures = _scored(tmp_path / "never.sqlite")
    assert statuses == ["pending"] * 2 and failures == []
    assert runner.arena_faults == 2 * (ARENA_REPLAYS + 1)
