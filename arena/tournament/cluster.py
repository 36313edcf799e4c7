"""Events beyond one machine: the runner's plays handed to Dask workers.

``DaskExecutor(address)`` is the runner's executor for ``--cluster tcp://HOST:8786`` (a
running ``dask scheduler`` with ``dask worker`` processes) or ``--cluster local:N`` (a local
cluster of N worker processes, started and stopped here). Dask is an optional dependency
(``pip install 'tichu-arena[cluster]'``).

* **A task is a batch of duplicate pairs**: the pending plays of up to ``boards_per_task``
  boards of one table of one round (one line-up), both rotations, so a worker plays whole
  comparisons. The worker runs the referee in its own process and starts the bots there,
  sandboxed as well as its host allows: one set of four processes per rotation, reused over
  the batch's boards and never shared between rotations (as the local runner's sessions), the
  two rotations played at once. It returns each play's hand rows, failure count and replay,
  and the bots' logs. Nothing on the worker touches the results database.
* **One writer**: the driver records each returned play (replay file first, then its hands in
  one transaction), exactly as the local runner does. A task's Dask key is made of its play
  ids and a token of the driver's run (so a resumed driver never meets the keys of the one
  that died, which the scheduler may still hold), and a play already recorded is never
  written again, so a task re-run after a lost worker (Dask reschedules it) cannot double a
  hand; a driver that died is resumed with ``arena event resume``, which submits what is
  still pending.
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
import uuid
import warnings
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
    "TaskResult",
    "TaskSession",
    "executor_for",
    "pair_tasks",
    "play_task",
]

LOG_BYTES = 256 * 1024
"""The most of each bot's log a worker sends back per session (the end of it is kept)."""

ENV_CACHE = "TICHU_ARENA_CACHE"
"""A worker's folder for unpacked bot bundles (default: a folder in the system's temp)."""


class ClusterError(ArenaError):
    """The cluster cannot be reached, lacks Dask, or a task failed on every try."""


BOARDS_PER_TASK = 8
"""Boards (duplicate pairs) a task plays by default: enough to amortise the bots' start-up."""


@dataclass(frozen=True)
class TaskSession:
    """One rotation of a task: the play ids in order and the table that plays them."""

    play_ids: tuple[int, ...]
    table: TableSpec


@dataclass(frozen=True)
class PairTask:
    """Duplicate pairs of one line-up and the four bots, as sent to a worker."""

    key: str
    sessions: tuple[TaskSession, ...]
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
    sandbox: dict[str, Any] | None = None


@dataclass(frozen=True)
class TaskResult:
    """What a worker returns for a task: its plays, and each session's bot logs by table."""

    plays: tuple[PlayOutcome, ...]
    logs: tuple[tuple[str, tuple[tuple[str, bytes], ...]], ...]


def executor_for(cluster: str | None, allow_unsandboxed: bool = False) -> DaskExecutor | None:
    """The runner's executor for a ``--cluster`` value (``None``: the local pool)."""
    if cluster is None:
        return None
    return DaskExecutor(cluster, allow_unsandboxed=allow_unsandboxed)


def pair_tasks(
    runner: EventRunner,
    pending: Sequence[StoredPlay],
    allow_unsandboxed: bool = False,
    boards_per_task: int = BOARDS_PER_TASK,
) -> list[PairTask]:
    """Groups ``pending`` into tasks of up to ``boards_per_task`` boards of one table and round."""
    if boards_per_task < 1:
        raise ValueError(f"boards_per_task must be at least 1, not {boards_per_task}")
    run = uuid.uuid4().hex[:12]  # this call's own keys: none is left over from another driver
    bundles = {name: bundle_of(m) for name, m in runner.manifests.items()}
    tables: dict[tuple[int, int], list[StoredPlay]] = {}
    for sp in pending:
        tables.setdefault((sp.play.round, sp.play.table), []).append(sp)
    tasks = []
    for (round_, table), plays in tables.items():
        boards = sorted({sp.play.board for sp in plays})
        for i in range(0, len(boards), boards_per_task):
            chosen = set(boards[i : i + boards_per_task])
            batch = sorted(
                (sp for sp in plays if sp.play.board in chosen),
                key=lambda sp: (sp.play.rotation, sp.play.board),
            )
            sessions = []
            for rotation in sorted({sp.play.rotation for sp in batch}):
                group = [sp for sp in batch if sp.play.rotation == rotation]
                table_id = f"r{round_}-t{table}-rot{rotation}-p{group[0].play.ordinal}"
                spec = runner.table_spec(group[0].play.seats, group, table_id, [None] * len(group))
                sessions.append(TaskSession(tuple(sp.id for sp in group), spec))
            key = f"tichu-{runner.event}-{run}-plays-" + "-".join(str(sp.id) for sp in batch)
            b = tuple(bundles[name] for name in batch[0].play.seats)
            four = (b[0], b[1], b[2], b[3])
            tasks.append(
                PairTask(key, tuple(sessions), four, runner.spec.limits, allow_unsandboxed)
            )
    return tasks


def play_task(task: PairTask) -> TaskResult:
    """Plays a task's sessions on this worker and returns their outcomes (runs on the worker)."""
    from arena.runtime import configure

    configure()  # before this process imports gRPC, if it has not yet
    from arena.runtime.aio import run as run_loop

    cache = Path(os.environ.get(ENV_CACHE) or Path(tempfile.gettempdir()) / "tichu-arena-bots")
    cache.mkdir(parents=True, exist_ok=True)
    manifests = [unpack(bundle, cache) for bundle in task.bots]
    with tempfile.TemporaryDirectory(prefix="tichu-task-") as tmp:
        result: TaskResult = run_loop(_play(task, manifests, Path(tmp)))
    return result


async def _play(task: PairTask, manifests: list[Any], tmp: Path) -> TaskResult:
    import asyncio

    from arena.server import ArenaServer, play_table
    from arena.server.sandbox import require_sandbox

    sandbox = require_sandbox(task.allow_unsandboxed)  # this worker's host, probed once
    server = ArenaServer(port=0, runs_dir=None)
    await server.start()

    async def session(s: TaskSession) -> list[PlayOutcome]:
        table_id = s.table.table_id or "table"
        replays = [tmp / f"play-{play_id}.json" for play_id in s.play_ids]
        plans = tuple(
            replace(plan, replay=path) for plan, path in zip(s.table.plans, replays, strict=True)
        )
        _, records = await play_table(
            server,
            replace(s.table, plans=plans),
            manifests,
            log_dir=tmp / "logs" / table_id,
            sandbox=sandbox,
            limits=task.limits,
        )
        if len(records) != len(s.play_ids) or any(
            r.termination is Termination.ABORTED for r in records
        ):
            raise ClusterError(f"table {table_id} was cut short on the worker")
        return [
            PlayOutcome(
                play_id,
                tuple(hand_rows(record)),
                len(record.failures),
                path.read_bytes(),
                record.replay.meta.get("sandbox"),
            )
            for play_id, record, path in zip(s.play_ids, records, replays, strict=True)
        ]

    try:
        done = await asyncio.gather(*(session(s) for s in task.sessions))
    finally:
        await server.stop(grace_s=1.0)
    logs = tuple(
        (s.table.table_id or "table", tuple(_logs(tmp / "logs" / (s.table.table_id or "table"))))
        for s in task.sessions
    )
    return TaskResult(tuple(o for outcomes in done for o in outcomes), logs)


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
    worker died or that raised; ``boards_per_task`` sizes the tasks. Each worker sandboxes its
    bots as well as its host allows, and refuses less than ``full`` unless
    ``allow_unsandboxed``.
    """

    def __init__(
        self,
        address: str,
        *,
        retries: int = 3,
        allow_unsandboxed: bool = False,
        boards_per_task: int = BOARDS_PER_TASK,
    ) -> None:
        self.address = address
        self.retries = retries
        self.allow_unsandboxed = allow_unsandboxed
        self.boards_per_task = boards_per_task
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
        tasks = pair_tasks(runner, pending, self.allow_unsandboxed, self.boards_per_task)
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
                    result = future.result()
                except Exception as e:  # the task failed on every try: say which and why
                    if runner.stopping:
                        break  # cancelled by the stop itself: its plays stay pending
                    self.stop()
                    raise ClusterError(f"a task failed on the cluster: {e}") from None
                self._write_logs(runner, result)
                for outcome in result.plays:
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
            # The scheduler's HTTP server moves off a busy 8787 (another cluster's) on its own,
            # with a warning that is no concern of a local cluster's user: leave it out.
            warnings.filterwarnings("ignore", r"Port \d+ is already in use", UserWarning)
            cluster = LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=int(count),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                worker_dashboard_address=None,
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
    def _write_logs(runner: EventRunner, result: TaskResult) -> None:
        if runner.log_dir is None:
            return
        for table_id, files in result.logs:
            folder = runner.log_dir / table_id
            folder.mkdir(parents=True, exist_ok=True)
            for name, data in files:
                (folder / name).write_bytes(data)

    @staticmethod
    def _record(runner: EventRunner, sp: StoredPlay, outcome: PlayOutcome) -> None:
        replay = runner.store.replay_path(runner.event, sp.play)
        replay.parent.mkdir(parents=True, exist_ok=True)
        partial = replay.with_name(replay.name + ".part")
        partial.write_bytes(outcome.replay)
        partial.replace(replay)
        runner.record_play(sp, outcome.rows, outcome.failures, replay, outcome.sandbox)


@contextlib.contextmanager
def _stop_on_signals(runner: EventRunner) -> Iterator[None]:
    """Ctrl-C and SIGTERM stop the runner (as the local executor's loop handlers do)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        runner.on_signal(signum)

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
