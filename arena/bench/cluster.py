"""Cluster benchmark: one event played by the local pool and by local Dask clusters.

The same event (four copies of a bot, a round robin on duplicate boards) is played by the
runner's local pool and by ``DaskExecutor`` on local clusters of 1 and 2 worker processes, and
the plays per second of each are printed. A cluster's start and stop are timed apart, and the
per-task overhead is what a no-op task costs on a running cluster: one round trip alone, and
the mean when many are in flight.
"""

from __future__ import annotations

import logging
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.tournament.cluster import DaskExecutor
from arena.tournament.model import parse_event, plan_event
from arena.tournament.runner import EventRunner, Executor
from arena.tournament.store import EventStore


@dataclass(frozen=True)
class RunFigures:
    """One way of playing the event: its label, plays, hands and wall time."""

    label: str
    plays: int
    hands: int
    seconds: float

    @property
    def plays_per_second(self) -> float:
        """Plays recorded per second of wall time."""
        return self.plays / self.seconds


@dataclass(frozen=True)
class OverheadFigures:
    """A no-op task on a running local cluster of one worker."""

    start_s: float
    round_trip_ms: float
    in_flight_ms: float


def _noop(x: int) -> int:
    return x


def _play(label: str, bot: str, boards: int, jobs: int, executor: Executor | None) -> RunFigures:
    per_round = -(-boards // 3)
    data = {
        "name": "bench",
        "bots": [{"bot": bot, "name": f"{bot}-{k}"} for k in range(1, 5)],
        "boards_per_round": per_round,
        "rotations": 2,
        "seed": 1,
        "jobs": jobs,
    }
    spec = parse_event(data, source="bench")
    with (
        tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp,
        EventStore(Path(tmp) / "bench.sqlite") as store,
    ):
        store.create_event(spec, plan_event(spec))
        start = time.perf_counter()
        progress = EventRunner(store, spec.name, spec, executor=executor).run()
        seconds = time.perf_counter() - start
    return RunFigures(label, progress.plays_done, progress.hands, seconds)


def bench_overhead(tasks: int = 200) -> OverheadFigures:
    """Starts a local cluster of one worker and times no-op tasks on it."""
    from distributed import Client, LocalCluster

    start = time.perf_counter()
    cluster = LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        worker_dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    client: Any = Client(cluster)  # type: ignore[no-untyped-call]
    try:
        client.wait_for_workers(1)
        start_s = time.perf_counter() - start
        trips = []
        for k in range(30):
            t0 = time.perf_counter()
            client.submit(_noop, k, pure=False).result()
            trips.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        client.gather([client.submit(_noop, k, pure=False) for k in range(tasks)])
        in_flight = (time.perf_counter() - t0) / tasks
    finally:
        client.close()
        cluster.close()
    return OverheadFigures(start_s, 1000 * statistics.median(trips), 1000 * in_flight)


def bench_cluster(
    bot: str = "random", boards: int = 60, jobs: int = 2, workers: Sequence[int] = (1, 2)
) -> list[RunFigures]:
    """Plays the event with the local pool, then on local clusters of ``workers`` processes."""
    runs = [_play(f"local pool, {jobs} jobs", bot, boards, jobs, None)]
    for n in workers:
        runs.append(_play(f"Dask, {n} worker(s)", bot, boards, jobs, DaskExecutor(f"local:{n}")))
    return runs
