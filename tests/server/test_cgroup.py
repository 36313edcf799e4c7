"""A cgroup per bot process (arena.server.cgroup): limits on the bot as a whole, and nothing left.

Real processes in the host's sandbox; each test that needs cgroups is skipped, saying why, on a
host that allows none (this machine and CI, as root, make cgroup v1). The memory test runs the
same bot without its cgroup too, so it fails if the cgroup is not what holds the limit.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from arena.server.bots import BotProcess
from arena.server.cgroup import EXTRA_PIDS, BotCgroup, CgroupHost, host_cgroups
from arena.server.manifest import Limits, load_manifest
from arena.server.sandbox import SOCKET_NAME, Sandbox, host_sandbox, unsandboxed

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

CHILDREN = 4
CHILD_MB = 60

# Four children each write 60 MiB and report; the parent prints how many still live.
HOG = f"""
import subprocess, sys
code = "import time; x = b'\\\\1' * ({CHILD_MB} << 20); print('ok', flush=True); time.sleep(60)"
kids = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        for _ in range({CHILDREN})]
for k in kids:
    k.stdout.readline()  # "ok", or nothing from a child killed first
print("alive", sum(k.poll() is None for k in kids), flush=True)
"""

# Two children spin for a wall-clock second; the parent prints their CPU seconds per second.
SPIN = """
import os, resource, sys, time
for _ in range(2):
    if os.fork() == 0:
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            pass
        os._exit(0)
t = time.monotonic()
os.wait(); os.wait()
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print("ratio", (ru.ru_utime + ru.ru_stime) / (time.monotonic() - t), flush=True)
"""


def _host() -> CgroupHost:
    found = host_cgroups()
    if not isinstance(found, CgroupHost):
        pytest.skip(f"this host allows no cgroup per bot: {found}")
    return found


def _run(sb: Sandbox, code: str, limits: Limits, tmp_path: Path) -> tuple[str, BotCgroup | None]:
    """Runs ``code`` in ``sb`` to its end; its output and its cgroup (still there)."""
    (tmp_path / SOCKET_NAME).touch()
    os.chmod(tmp_path, 0o755)
    launch = sb.launch(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        folder=tmp_path,
        env={},
        socket=tmp_path / SOCKET_NAME,
        limits=limits,
    )
    try:
        done = subprocess.run(
            launch.argv,
            env=launch.env,
            cwd=launch.cwd,
            pass_fds=launch.fds,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
    finally:
        launch.close()
    assert done.returncode == 0, done.stderr
    return done.stdout, launch.cgroup


def test_the_host_sandbox_records_its_cgroups() -> None:
    host = _host()
    sb = host_sandbox()
    assert sb.cgroups == host and sb.describe()["cgroup"] == host.summary()
    assert "a cgroup of its own" in sb.summary()


def test_a_bot_cgroup_holds_the_limits_and_is_removed(tmp_path: Path) -> None:
    host = _host()
    limits = Limits(memory_mb=128, tmp_mb=16, processes=10, cpus=0.5)
    cgroup = BotCgroup.make(host, limits)
    folder = cgroup.paths[0]
    if host.version == 1:
        values = {
            c: (host.folders[c] / folder.name / f).read_text().strip()
            for c, f in (
                ("memory", "memory.limit_in_bytes"),
                ("pids", "pids.max"),
                ("cpu", "cpu.cfs_quota_us"),
            )
            if c in host.folders
        }
        assert values["memory"] == str(144 << 20)
        assert values["pids"] == str(10 + EXTRA_PIDS)
        assert values.get("cpu", "50000") == "50000"
    else:
        assert (folder / "memory.max").read_text().strip() == str(144 << 20)
        assert (folder / "pids.max").read_text().strip() == str(10 + EXTRA_PIDS)
    assert cgroup.release()
    assert not any(p.exists() for p in cgroup.paths)


def test_a_bots_processes_share_one_memory_limit(tmp_path: Path) -> None:
    """Four processes of 60 MiB each fit their rlimits; together they pass the bot's 144 MiB."""
    _host()
    sb = host_sandbox()
    limits = Limits(memory_mb=128, tmp_mb=16)
    out, cgroup = _run(sb, HOG, limits, tmp_path)
    assert cgroup is not None
    try:
        assert cgroup.oom_kills() >= 1, out  # the kernel ended one of its processes
    finally:
        assert cgroup.release()
    # The same bot without its cgroup: every child lives (the rlimits alone allow it).
    out, none = _run(replace(sb, cgroups=None), HOG, limits, tmp_path)
    assert none is None and int(out.split()[-1]) == CHILDREN, out


def test_a_bots_processes_share_its_cpus(tmp_path: Path) -> None:
    """Two spinning processes of a bot allowed half a core get about half a core."""
    _host()
    out, cgroup = _run(host_sandbox(), SPIN, Limits(cpus=0.5), tmp_path)
    assert cgroup is not None and cgroup.release()
    ratio = float(out.split()[-1])
    assert ratio < 0.5 * 1.4, out  # CFS bandwidth periods: a little over, never a full core


def test_release_kills_what_escaped_the_process_group(tmp_path: Path) -> None:
    """Below ``full`` there is no pid namespace: a daemon the bot leaves is killed by its cgroup."""
    host = _host()
    sb = replace(unsandboxed(), cgroups=host)
    daemon = (
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    print(os.getpid(), flush=True)\n"
        "    os.close(1)\n"
        "    os.close(2)\n"
        "    time.sleep(120)\n"
        "    os._exit(0)\n"
        "time.sleep(0.2)\n"
    )
    out, cgroup = _run(sb, daemon, Limits(), tmp_path)
    pid = int(out.split()[0])
    assert cgroup is not None and pid in cgroup.pids()
    os.kill(pid, 0)  # alive after its bot ended
    assert cgroup.release()
    deadline = time.monotonic() + 30
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # killed; the init reaps it
    status = Path(f"/proc/{pid}/status")
    assert not status.exists() or "zombie" in status.read_text()


def test_a_bot_ended_at_its_memory_limit_is_told_so(tmp_path: Path) -> None:
    """The seat's crash detail says the kernel ended it at the bot's memory limit."""
    _host()
    folder = tmp_path / "hog"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "hog"\ncommand = ["{python}", "hog.py"]\n')
    # Its children hold 60 MiB each; once the kernel has ended one, it gives up with code 9.
    (folder / "hog.py").write_text(
        HOG.split('print("alive"')[0]
        + "import time\nwhile all(k.poll() is None for k in kids):\n    time.sleep(0.01)\n"
        + "sys.exit(9)\n"
    )
    os.chmod(tmp_path, 0o755)
    os.chmod(folder, 0o755)
    limits = Limits(memory_mb=128, tmp_mb=16)
    bot = BotProcess(
        load_manifest(folder / "bot.toml"),
        {},
        sandbox=host_sandbox(),
        socket=tmp_path / SOCKET_NAME,
        limits=limits,
    )

    async def run() -> tuple[int, str]:
        await bot.start()
        try:
            code = await asyncio.wait_for(bot.wait(), 240)
            return code, bot.exit_cause()
        finally:
            await bot.stop()

    code, cause = asyncio.run(run())
    assert code == 9
    assert cause == " (the kernel ended its processes at the bot's memory limit, 144 MiB in all)"


def test_a_frozen_bot_left_by_a_dead_runner_is_swept() -> None:
    """A runner killed while its bots were frozen leaves them frozen, and a frozen process
    (v1) cannot die: the next runner's sweep thaws them before it kills them."""
    from arena.server.cgroup import _sweep

    host = _host()
    if not host.freezer:
        pytest.skip("this host has no freezer")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a pid no runner has any more
    cgroup = BotCgroup.make(host, Limits())
    named = []
    for path in cgroup.paths:  # as a cgroup of that runner's
        target = path.with_name(f"{dead.pid}-{path.name.partition('-')[2]}")
        path.rename(target)
        named.append(target)
    left = replace(
        cgroup,
        paths=tuple(named),
        freezes=next(p for p in named if p.parent == (cgroup.freezes or named[0]).parent),
    )
    bot = subprocess.Popen(left.join_argv([sys.executable, "-c", "import time; time.sleep(300)"]))
    deadline = time.monotonic() + 60
    while bot.pid not in left.pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    left.freeze()
    while not left.frozen() and time.monotonic() < deadline:
        time.sleep(0.01)
    for folder in host.folders.values():
        _sweep(folder)
    assert bot.wait(timeout=60) == -9
    left.release()
