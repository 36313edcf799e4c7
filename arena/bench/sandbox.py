"""``arena bench sandbox``: what the bot sandbox costs a bot process at start.

Each round starts the same command (the interpreter importing the SDK client, as a Python
bot does before it connects) once plain, once at the ``none`` level (``prlimit`` and
``env -i`` only), once in the host's best sandbox and, where that sandbox gives each bot a
cgroup, once in it without one, in turn, so that the machine's load falls on all alike; the
medians are printed. Figures are printed, never asserted.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from arena.server.manifest import Limits
from arena.server.sandbox import SOCKET_NAME, Sandbox, host_sandbox, unsandboxed

BOT_START = "import sdk.client"
"""What a Python bot's process does before it connects: the runtime and the SDK loaded."""


@dataclass(frozen=True)
class StartFigures:
    """Start-to-exit times of one command, in milliseconds, by way of starting it."""

    sandbox: Sandbox
    starts: int
    plain_ms: list[float]
    none_ms: list[float]
    boxed_ms: list[float]
    uncgrouped_ms: list[float]  # the host sandbox without its cgroup; empty where it has none

    @staticmethod
    def median(values: list[float]) -> float:
        """The median of ``values`` (0 for none)."""
        return statistics.median(values) if values else 0.0


def _run_ms(
    argv: list[str], env: dict[str, str] | None, cwd: Path, fds: tuple[int, ...] = (), t: float = 0
) -> float:
    """Milliseconds from ``t`` (default: now) until the process has run."""
    t = t or time.perf_counter()
    subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        check=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=fds,
    )
    return 1000.0 * (time.perf_counter() - t)


def bench_startup(starts: int = 20, code: str = BOT_START) -> StartFigures:
    """``starts`` interleaved rounds of plain, ``none`` and sandboxed starts of ``code``."""
    boxed = host_sandbox()
    argv = [sys.executable, "-c", code]
    figures = StartFigures(boxed, starts, [], [], [], [])
    kinds = [(unsandboxed(), figures.none_ms), (boxed, figures.boxed_ms)]
    if boxed.cgroups is not None:
        kinds.append((replace(boxed, cgroups=None), figures.uncgrouped_ms))
    with tempfile.TemporaryDirectory(prefix="tichu-bench-") as tmp:
        folder = Path(tmp)
        socket = folder / SOCKET_NAME
        socket.touch()
        for _ in range(starts):
            figures.plain_ms.append(_run_ms(argv, None, folder))
            for sb, out in kinds:
                t = time.perf_counter()  # making the command is part of the start
                launch = sb.launch(
                    argv, cwd=folder, folder=folder, env={}, socket=socket, limits=Limits()
                )
                try:
                    out.append(_run_ms(launch.argv, launch.env, launch.cwd, launch.fds, t))
                finally:
                    launch.close()
                    launch.release()
    return figures
