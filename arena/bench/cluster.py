"""Cluster benchmark: one event played by the local pool, a local Dask cluster and Dask workers
started by hand, side by side, each with the same number of tables at once.

The event is a round robin of eight copies of one bot on duplicate boards (two tables a
round, so every way can keep ``tables`` sessions busy). Each way plays it from scratch:

* the **local pool** with ``jobs = tables``;
* ``--cluster local:N`` (``DaskExecutor`` starting a local cluster of N one-thread workers);
* **hand-started workers**: ``dask scheduler`` and ``dask worker ADDRESS --host 127.0.0.1
  --nthreads 1 --nworkers N`` started as a user starts them (docs/cluster.md), or the
  scheduler at ``address`` when one is given.

Figures per way: plays, hands, wall time, hands/s, and hands/s **per core** (divided by the
tables at once, at most the machine's cores), and memory growth per 1,000 plays of the runner
and of the workers (summed): the resident size once a fifth of the plays are recorded (the
referee's bounded caches are full by then) against the end's, over the plays between. An
event of any length should grow neither. And the CPU milliseconds per hand of the runner,
Dask's processes and the referees, start-up included (not the bots': ``cpu_ms_per_hand``): on
a machine busy with other work, wall times vary with the load, CPU per hand much less.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arena.tournament.cluster import DaskExecutor
from arena.tournament.model import PlannedPlay, parse_event, plan_event
from arena.tournament.runner import EventRunner, Executor, Progress
from arena.tournament.store import EventStore

BOTS = 8
"""Copies of the bot: a round robin of 8 has 7 rounds of 2 tables."""

WARM = 0.2
"""The share of the plays after which memory is first measured."""


@dataclass(frozen=True)
class WayFigures:
    """One way of playing the event, measured."""

    label: str
    plays: int
    hands: int
    seconds: float
    cores: int
    runner_mib_per_1k: float
    workers_mib_per_1k: float | None  # None: the runner is the worker (local pool)
    cpu_s: float = 0.0  # CPU of the runner, Dask's processes and the referees (not the bots)

    @property
    def cpu_ms_per_hand(self) -> float:
        """The arena's and Dask's CPU milliseconds per hand, start-up included: what a loaded
        machine's wall time hides least. The bots are not counted (a sandbox's processes are
        killed, not reaped by the runner, so their CPU is not its children's)."""
        return 1000 * self.cpu_s / max(self.hands, 1)

    @property
    def hands_per_second(self) -> float:
        """Hands recorded per second of wall time."""
        return self.hands / self.seconds

    @property
    def per_core(self) -> float:
        """Hands per second per core playing."""
        return self.hands_per_second / self.cores


def rss_mib(pid: int | str = "self") -> float:
    """A process's resident size in MiB (0 when it cannot be read)."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _workers_rss(client: Any) -> float:
    """The workers' resident sizes summed, in MiB."""
    sizes = client.run(rss_mib)
    return float(sum(sizes.values()))


def bench_spec_data(bot: str, plays: int, tables: int) -> dict[str, Any]:
    """The event: 8 copies of ``bot`` in a round robin of about ``plays`` one-hand plays."""
    per_round = max(1, -(-plays // (7 * 2 * 2)))  # 7 rounds, 2 tables, 2 rotations
    return {
        "name": "bench-cluster",
        "bots": [{"bot": bot, "name": f"{bot}-{k}"} for k in range(1, BOTS + 1)],
        "schedule": "round_robin",
        "format": "board",
        "hands_per_board": 1,
        "boards_per_round": per_round,
        "rotations": 2,
        "seed": 1,
        "jobs": tables,
    }


def _play(
    label: str,
    data: dict[str, Any],
    tables: int,
    executor: Executor | None,
    workers: Callable[[], float] | None,
) -> WayFigures:
    spec = parse_event(data, source="bench")
    cores = max(1, min(tables, os.cpu_count() or 1))
    marks: list[tuple[int, float, float]] = []  # (plays, runner MiB, workers MiB) at the marks

    def on_play(progress: Progress, _play: PlannedPlay) -> None:
        warm = max(1, round(WARM * progress.plays_total))
        if progress.plays_done in (warm, progress.plays_total):
            marks.append((progress.plays_done, rss_mib(), workers() if workers else 0.0))

    with (
        tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp,
        EventStore(Path(tmp) / "bench.sqlite") as store,
    ):
        store.create_event(spec, plan_event(spec))
        runner = EventRunner(
            store, spec.name, spec, executor=executor, on_play=on_play, pace_forced=False
        )
        start = time.perf_counter()
        progress = runner.run()
        seconds = time.perf_counter() - start
    runner_growth = workers_growth = 0.0
    if len(marks) == 2:
        (p0, r0, w0), (p1, r1, w1) = marks
        span = max(1, p1 - p0) / 1000
        runner_growth, workers_growth = (r1 - r0) / span, (w1 - w0) / span
    return WayFigures(
        label,
        progress.plays_done,
        progress.hands,
        seconds,
        cores,
        runner_growth,
        workers_growth if workers else None,
    )


class _Measured(DaskExecutor):
    """A ``DaskExecutor`` whose workers' memory can be read while it plays."""

    def workers_rss(self) -> float:
        client = self._client
        return _workers_rss(client) if client is not None else 0.0


@contextlib.contextmanager
def hand_started(workers: int) -> Iterator[str]:
    """``dask scheduler`` and ``dask worker --nthreads 1 --nworkers N`` on 127.0.0.1, as a user
    starts them; yields the scheduler's address and stops both after."""
    from distributed import Client

    dask = str(Path(sys.executable).parent / "dask")
    with tempfile.TemporaryDirectory(prefix="arena-bench-dask-") as tmp:
        file = Path(tmp) / "scheduler.json"
        log = (Path(tmp) / "dask.log").open("ab")
        argv = [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
        procs = [subprocess.Popen([*argv, "--scheduler-file", str(file)], stdout=log, stderr=log)]
        try:
            deadline = time.monotonic() + 120
            while not file.exists():
                if time.monotonic() > deadline or procs[0].poll() is not None:
                    raise RuntimeError(f"the scheduler did not start (its log: {log.name})")
                time.sleep(0.1)
            address = str(json.loads(file.read_text())["address"])
            argv = [dask, "worker", address, "--host", "127.0.0.1", "--nthreads", "1"]
            argv += ["--nworkers", str(workers), "--no-dashboard"]
            procs.append(subprocess.Popen(argv, stdout=log, stderr=log, start_new_session=True))
            with Client(address, timeout=60) as client:  # type: ignore[no-untyped-call]
                client.wait_for_workers(workers, timeout=300)
            yield address
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


def _cpu_s() -> float:
    """CPU seconds of this process and of its children that ended (and theirs)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def bench_cluster(
    bot: str = "random", plays: int = 600, tables: int = 2, address: str | None = None
) -> list[WayFigures]:
    """Plays the event the three ways (see the module doc), ``tables`` sessions at once.

    Each way's CPU counts the processes it started, once they have ended (a local cluster's
    and the hand-started workers' included, the bots not; a given scheduler's workers are not
    ours to count: 0)."""
    data = bench_spec_data(bot, plays, tables)
    ways = []
    cpu = _cpu_s()
    way = _play(f"local pool, {tables} jobs", data, tables, None, None)
    ways.append(replace(way, cpu_s=_cpu_s() - cpu))
    cpu = _cpu_s()
    local = _Measured(f"local:{tables}")
    way = _play(f"Dask local:{tables}", data, tables, local, local.workers_rss)
    ways.append(replace(way, cpu_s=_cpu_s() - cpu))
    cpu = _cpu_s()
    with contextlib.ExitStack() as stack:
        label = f"Dask at {address}"
        if address is None:
            address = stack.enter_context(hand_started(tables))
            label = f"Dask, {tables} hand-started workers"
        remote = _Measured(address)
        way = _play(label, data, tables, remote, remote.workers_rss)
    ways.append(replace(way, cpu_s=_cpu_s() - cpu if label.startswith("Dask,") else 0.0))
    return ways
