"""Which task ran where and when, as the workers saw it: a Dask worker plugin for the tests
that count task runs (issue 50: a lost worker must not make the cluster compute again what
the driver has recorded)."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cloudpickle
from distributed import Client
from distributed.diagnostics.plugin import WorkerPlugin

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/


class TaskLog(WorkerPlugin):  # type: ignore[misc]
    """Appends a line to ``path`` for every task a worker starts (``executing``) and
    finishes (``memory``): the key, the worker's pid and the time."""

    name = "tichu-task-log"

    def __init__(self, path: str) -> None:
        self.path = path

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if finish in ("executing", "memory"):
            line = {"key": str(key), "state": finish, "pid": os.getpid(), "at": time.time()}
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")


@dataclass(frozen=True)
class TaskRun:
    """One line of the log."""

    key: str
    state: str
    pid: int
    at: float

    @property
    def plays(self) -> tuple[int, ...]:
        """The play ids the task plays (``arena.tournament.cluster.session_tasks``' keys)."""
        return tuple(int(p) for p in self.key.split("-plays-")[1].split("-"))


def install(address: str, path: Path) -> None:
    """Makes every worker of the scheduler at ``address``, and every later one, log to
    ``path``."""
    with Client(address, timeout=60) as client:
        client.register_plugin(TaskLog(str(path)))


def runs(path: Path) -> Iterator[TaskRun]:
    """The log's lines so far."""
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.endswith("}"):
                yield TaskRun(**json.loads(line))
