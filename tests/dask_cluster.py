"""A real Dask cluster for tests: a ``dask scheduler`` and its ``dask worker`` processes on
127.0.0.1, as docs/cluster.md starts them (the scheduler on a port of its choosing), and the
``own_cluster`` fixture (tests/conftest.py makes it every test module's)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["DASK", "Cluster", "own_cluster"]

DASK = str(Path(sys.executable).parent / "dask")
"""The installed ``dask`` command (the cluster extra)."""


class Cluster:
    """A scheduler and its workers as real processes; ``workers`` holds their processes."""

    def __init__(self, tmp: Path) -> None:
        self.file = tmp / "scheduler.json"
        self.log = (tmp / "dask.log").open("ab")
        self.scheduler = subprocess.Popen(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", str(self.file)],
            stdout=self.log, stderr=self.log,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while not self.file.exists():
            assert time.monotonic() < deadline, "the scheduler did not start"
            assert self.scheduler.poll() is None, "the scheduler exited"
            time.sleep(0.2)
        self.address = json.loads(self.file.read_text())["address"]
        self.workers = [self.start_worker() for _ in range(2)]
        self.wait_for(2)

    def start_worker(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [DASK, "worker", self.address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
             "--host", "127.0.0.1"],
            stdout=self.log, stderr=self.log,
        )  # fmt: skip

    def wait_for(self, count: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=60) as client:
            client.wait_for_workers(count, timeout=120)

    def executed(self) -> int:
        """How many tasks the live workers have run."""
        from distributed import Client

        with Client(self.address, timeout=60) as client:
            counts = client.run(lambda dask_worker: dask_worker.state.executed_count)
        return sum(counts.values())

    def close(self) -> None:
        """Kills the workers (a graceful worker shutdown takes seconds), stops the scheduler."""
        for proc in self.workers:
            if proc.poll() is None:
                proc.kill()
        if self.scheduler.poll() is None:
            self.scheduler.terminate()
        for proc in [*self.workers, self.scheduler]:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.log.close()


@pytest.fixture
def own_cluster(tmp_path: Path) -> Iterator[Cluster]:
    """A scheduler and two workers of the test's own (one it may kill, or a service's),
    stopped whatever the test's end."""
    started = Cluster(tmp_path)
    try:
        yield started
    finally:
        started.close()
