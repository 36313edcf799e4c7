"""Events beyond one machine: the runner's plays handed to Dask workers.

``DaskExecutor(address)`` is the runner's executor for ``--cluster tcp://HOST:8786`` (a
running ``dask scheduler`` with ``dask worker`` processes) or ``--cluster local:N`` (a local
cluster of N worker processes, started and stopped here). Dask is an optional dependency
(``pip install 'tichu-arena[cluster]'``).

* **A task is a duplicate pair**: the pending plays of one board at one line-up (both
  rotations), so a worker plays the whole comparison. The worker runs the referee in its own
  process and starts the bots there (each play on fresh bot processes, as the local runner
  does, sandboxed where the worker's host allows); it returns each play's hand rows, failure
  count, replay and bot logs. Nothing on the worker touches the results database.
* **One writer**: the driver records each returned play (replay file first, then its hands in
  one transaction), exactly as the local runner does. A task's Dask key is made of its play
  ids, and a play already recorded is never written again, so a task re-run after a lost
  worker (Dask reschedules it) cannot double a hand; a driver that died is resumed with
  ``arena event resume``, which submits what is still pending.
* **Bots travel as content-hashed bundles** (``arena.server.bundle``): a worker unpacks them
  into its cache and refuses a bundle whose files do not match its hash; built-in bots are the
  worker's own installed copies, refused when their hash differs from the driver's.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arena.referee.policy import Termination
from arena.rules.errors import ArenaError
from arena.server.bundle import BotBundle, bundle_of, unpack
from arena.server.manifest import Limits
from arena.server.table import TableSpec
from arena.tournament.runner import EventRunner, Progress, hand_rows
from arena.tournament.store import HandRow, StoredPlay

__all__ = [
    "LOG_BYTES",
    "ClusterError",
    "DaskExecutor",
    "PairTask",
    "PlayOutcome",
    "TaskPlay",
    "executor_for",
    "pair_tasks",
    "play_task",
]

LOG_BYTES = 256 * 1024
"""The most of each bot's log a worker sends back per play (the end of it is kept)."""

ENV_CACHE = "TICHU_ARENA_CACHE"
"""A worker's folder for unpacked bot bundles (default: a folder in the system's temp)."""


class ClusterError(ArenaError):
    """The cluster cannot be reached, lacks Dask, or a task failed on every try."""


@dataclass(frozen=True)
class TaskPlay:
    """One play of a task: its id in the store and the table that plays it."""

    play_id: int
    table: TableSpec


@dataclass(frozen=True)
class PairTask:
    """The pending plays of one board at one line-up, and the four bots, as sent to a worker."""

    key: str
    plays: tuple[TaskPlay, ...]
    bots: tuple[BotBundle, BotBundle, BotBundle, BotBundle]
    limits: Limits
    allow_unsandboxed: bool = False


@dataclass(frozen=True)
class PlayOutcome:
    """What a worker returns for one finished play."""

    play_id: int
    rows: tuple[HandRow, ...]
    failures: int
    replay: bytes
    logs: tuple[tuple[str, bytes], ...]
    sandbox: dict[str, Any] | None = None


def executor_for(cluster: str | None, allow_unsandboxed: bool = False) -> DaskExecutor | None:
    """The runner's executor for a ``--cluster`` value (``None``: the local pool)."""
    if cluster is None:
        return None
    return DaskExecutor(cluster, allow_unsandboxed=allow_unsandboxed)


def pair_tasks(
    runner: EventRunner, pending: Sequence[StoredPlay], allow_unsandboxed: bool = False
) -> list[PairTask]:
    """Groups ``pending`` into duplicate pairs (round, table, board), in running order."""
    bundles = {name: bundle_of(m) for name, m in runner.manifests.items()}
    groups: dict[tuple[int, int, int], list[StoredPlay]] = {}
    for sp in pending:
        p = sp.play
        groups.setdefault((p.round, p.table, p.board), []).append(sp)
    tasks = []
    for (round_, table, board), plays in groups.items():
        seats = plays[0].play.seats
        task_plays = tuple(
            TaskPlay(
                sp.id,
                runner.table_spec(
                    seats, [sp], f"r{round_}-t{table}-b{board}-rot{sp.play.rotation}", [None]
                ),
            )
            for sp in plays
        )
        key = f"tichu-{runner.event}-plays-" + "-".join(str(sp.id) for sp in plays)
        b = tuple(bundles[name] for name in seats)
        four = (b[0], b[1], b[2], b[3])
        tasks.append(PairTask(key, task_plays, four, runner.spec.limits, allow_unsandboxed))
    return tasks


def play_task(task: PairTask) -> list[PlayOutcome]:
    """Plays a task's plays on this worker and returns their outcomes (runs on the worker)."""
    from arena.runtime import configure

    configure()  # before this process imports gRPC, if it has not yet
    from arena.runtime.aio import run as run_loop

    cache = Path(os.environ.get(ENV_CACHE) or Path(tempfile.gettempdir()) / "tichu-arena-bots")
    cache.mkdir(parents=True, exist_ok=True)
    manifests = [unpack(bundle, cache) for bundle in task.bots]
    with tempfile.TemporaryDirectory(prefix="tichu-task-") as tmp:
        outcomes: list[PlayOutcome] = run_loop(_play(task, manifests, Path(tmp)))
    return outcomes


async def _play(task: PairTask, manifests: list[Any], tmp: Path) -> list[PlayOutcome]:
    from arena.server import ArenaServer, play_table
    from arena.server.sandbox import require_sandbox

    sandbox = require_sandbox(task.allow_unsandboxed)  # this worker's host, probed once
    server = ArenaServer(port=0, runs_dir=None)
    await server.start()
    try:
        out = []
        for play in task.plays:
            replay = tmp / f"play-{play.play_id}.json"
            plan = replace(play.table.plans[0], replay=replay)
            logs = tmp / f"logs-{play.play_id}"
            _, records = await play_table(
                server,
                replace(play.table, plans=(plan,)),
                manifests,
                log_dir=logs,
                sandbox=sandbox,
                limits=task.limits,
            )
            if not records or records[0].termination is Termination.ABORTED:
                raise ClusterError(f"play {play.play_id} was cut short on the worker")
            record = records[0]
            out.append(
                PlayOutcome(
                    play.play_id,
                    tuple(hand_rows(record)),
                    len(record.failures),
                    replay.read_bytes(),
                    tuple(_logs(logs)),
                    record.replay.meta.get("sandbox"),
                )
            )
        return out
    finally:
        await server.stop(grace_s=1.0)


def _logs(folder: Path) -> Iterator[tuple[str, bytes]]:
    if not folder.is_dir():
        return
    for path in sorted(folder.iterdir()):
        with path.open("rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - LOG_BYTES))
            yield path.name, f.read()


class DaskExecutor:
    """Plays an event's pending plays on a Dask cluster (see the module docstring).

    ``address`` is a scheduler (``tcp://HOST:8786``) or ``local:N`` for a local cluster of
    N single-threaded worker processes. ``retries`` is how often Dask re-runs a task whose
    worker died or that raised. Each worker sandboxes its bots as well as its host allows,
    and refuses less than ``full`` unless ``allow_unsandboxed``.
    """

    def __init__(self, address: str, *, retries: int = 3, allow_unsandboxed: bool = False) -> None:
        self.address = address
        self.retries = retries
        self.allow_unsandboxed = allow_unsandboxed
        self._client: Any = None
        self._futures: list[Any] = []
        self._lock = threading.Lock()

    def play(self, runner: EventRunner, pending: Sequence[StoredPlay], progress: Progress) -> None:
        """Submits every pair, records each finished play as it comes back."""
        try:
            from distributed import as_completed
        except ImportError:
            raise ClusterError("--cluster needs Dask: pip install 'tichu-arena[cluster]'") from None
        by_id = {sp.id: sp for sp in pending}
        tasks = pair_tasks(runner, pending, self.allow_unsandboxed)
        with self._connect() as client, _stop_on_signals(runner):
            self._client = client
            with self._lock:
                self._futures = [
                    client.submit(play_task, t, key=t.key, retries=self.retries, pure=False)
                    for t in tasks
                ]
            if runner.stopping:
                self.stop()
            for future in as_completed(self._futures):  # type: ignore[no-untyped-call]
                if runner.stopping:
                    break
                if future.cancelled():
                    continue
                try:
                    outcomes = future.result()
                except Exception as e:  # the task failed on every try: say which and why
                    self.stop()
                    raise ClusterError(f"a task failed on the cluster: {e}") from None
                for outcome in outcomes:
                    self._record(runner, by_id[outcome.play_id], outcome)
            self._client = None

    def stop(self) -> None:
        """Cancels the tasks not yet finished; their plays stay pending."""
        with self._lock:
            futures, client = list(self._futures), self._client
        if client is not None and futures:
            with contextlib.suppress(Exception):
                client.cancel(futures)

    @contextlib.contextmanager
    def _connect(self) -> Iterator[Any]:
        from distributed import Client, LocalCluster

        if self.address.startswith("local:"):
            count = self.address.removeprefix("local:")
            if not count.isdigit() or int(count) < 1:
                raise ClusterError(f"--cluster {self.address}: use local:N with N >= 1")
            cluster = LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=int(count),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                host="127.0.0.1",
                silence_logs=logging.ERROR,  # Dask's notes on cancelled tasks are not for users
            )
            try:
                with Client(cluster) as client:  # type: ignore[no-untyped-call]
                    yield client
            finally:
                cluster.close()
            return
        try:
            client = Client(self.address, timeout=30)  # type: ignore[no-untyped-call]
        except (OSError, TimeoutError, ValueError) as e:
            raise ClusterError(f"cannot reach the Dask scheduler at {self.address}: {e}") from None
        with client:
            yield client

    @staticmethod
    def _record(runner: EventRunner, sp: StoredPlay, outcome: PlayOutcome) -> None:
        replay = runner.store.replay_path(runner.event, sp.play)
        replay.parent.mkdir(parents=True, exist_ok=True)
        partial = replay.with_name(replay.name + ".part")
        partial.write_bytes(outcome.replay)
        partial.replace(replay)
        if runner.log_dir is not None and outcome.logs:
            p = sp.play
            folder = runner.log_dir / f"r{p.round}-t{p.table}-b{p.board}-rot{p.rotation}"
            folder.mkdir(parents=True, exist_ok=True)
            for name, data in outcome.logs:
                (folder / name).write_bytes(data)
        runner.record_play(sp, outcome.rows, outcome.failures, replay, outcome.sandbox)


@contextlib.contextmanager
def _stop_on_signals(runner: EventRunner) -> Iterator[None]:
    """Ctrl-C and SIGTERM stop the runner (as the local executor's loop handlers do)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        runner.stop()

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
