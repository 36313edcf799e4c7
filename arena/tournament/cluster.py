"""Events beyond one machine: the runner's plays handed to Dask workers.

``DaskExecutor(address)`` is the runner's executor for ``--cluster tcp://HOST:8786`` (a
running ``dask scheduler`` with ``dask worker`` processes) or ``--cluster local:N`` (a local
cluster of N worker processes, started and stopped here). Dask is an optional dependency
(``pip install 'tichu-arena[cluster]'``).

* **A task is one session**: the pending plays of up to ``boards_per_task`` boards of one
  table of one round in one rotation (``session_tasks``). The worker runs the referee in its
  own process and starts the four bots there, sandboxed as well as its host allows, and plays
  the boards on them. The driver submits tasks by the rules every runner shares
  (``arena.tournament.scheduling``): the rotations of one batch never at once (the twin
  exclusion), a half-played batch's next rotation first, as many tasks at once as the workers
  have threads. A worker returns each play's hand rows, failure count and replay, and the
  bots' logs. Nothing on the worker touches the results database.
* **One writer**: the driver records each returned play (replay file first, then its hands in
  one transaction), exactly as the local runner does. A task's Dask key is made of its play
  ids and a token of the driver's run (so a resumed driver never meets the keys of the one
  that died, which the scheduler may still hold), and a play already recorded is never
  written again, so a task re-run after a lost worker (Dask reschedules it) cannot double a
  hand; a driver that died is resumed with ``arena event resume``, which submits what is
  still pending. The driver releases each task's result once it has recorded its plays: the
  cluster holds running tasks alone, and a lost worker makes it compute nothing recorded.
* **Live feeds**: a worker sends the public events of its plays to the driver as they happen
  (``LIVE_TOPIC``, the scheduler's events; ``arena.tournament.live.FeedLines``), which
  writes them to ``<db>.live/`` as the local pool does and hears of each play's end
  (``EventRunner.play_ended``: the progress bar moves play by play).
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
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arena.referee.policy import Termination
from arena.rules.errors import ArenaError
from arena.server.bundle import BotBundle, bundle_of, unpack
from arena.server.manifest import Limits
from arena.server.table import TableSpec
from arena.tournament.live import FeedLines, LiveFeed
from arena.tournament.runner import (
    EventRunner,
    Progress,
    Session,
    hand_rows,
    session_slots,
    sessions_of,
)
from arena.tournament.scheduling import BoardScheduler, Slot
from arena.tournament.store import HandRow, StoredPlay

__all__ = [
    "LOG_BYTES",
    "ClusterError",
    "DaskExecutor",
    "PlayOutcome",
    "SessionTask",
    "TaskResult",
    "executor_for",
    "play_task",
    "scheduler_identity",
    "session_tasks",
]

LOG_BYTES = 256 * 1024
"""The most of each bot's log a worker sends back per session (the end of it is kept)."""

ENV_CACHE = "TICHU_ARENA_CACHE"
"""A worker's folder for unpacked bot bundles (default: a folder in the system's temp)."""


class ClusterError(ArenaError):
    """The cluster cannot be reached, lacks Dask, or a task failed on every try."""


LIVE_TOPIC = "tichu-arena-live"
"""The scheduler's event topic that carries the workers' feed lines to the drivers (one topic
for all: the scheduler keeps the last thousand events of each topic it has seen)."""

BOARDS_PER_TASK = 8
"""Boards (duplicate pairs) a task plays by default: enough to amortise the bots' start-up."""


@dataclass(frozen=True)
class SessionTask:
    """One session as sent to a worker: its play ids in order, the table that plays them on
    one set of bot processes, and the four bots."""

    key: str
    play_ids: tuple[int, ...]
    table: TableSpec
    bots: tuple[BotBundle, BotBundle, BotBundle, BotBundle]
    limits: Limits
    allow_unsandboxed: bool = False
    strict: bool = False  # one bot process at a time on the worker's machine


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


def executor_for(
    cluster: str | None,
    allow_unsandboxed: bool = False,
    on_connected: Callable[[str], None] | None = None,
) -> DaskExecutor | None:
    """The runner's executor for a ``--cluster`` value (``None``: the local pool)."""
    if cluster is None:
        return None
    return DaskExecutor(cluster, allow_unsandboxed=allow_unsandboxed, on_connected=on_connected)


def scheduler_identity(info: Mapping[str, Any]) -> str:
    """Who answered at a scheduler's address, from Dask's ``scheduler_info()``: its id,
    address, start and workers (``Scheduler-1f2e… at tcp://10.0.0.5:8786, started
    2026-12-07 06:00:00 UTC, 2 workers on 10.0.0.6``). Whatever answers there runs the
    event's plays: this is what the user checks it against."""
    workers = info.get("workers") or {}
    hosts = sorted({str(w).rsplit(":", 1)[0].removeprefix("tcp://") for w in workers})
    started = info.get("started")
    when = (
        time.strftime(", started %Y-%m-%d %H:%M:%S UTC", time.gmtime(started))
        if isinstance(started, int | float)
        else ""
    )
    on = f" on {', '.join(hosts)}" if hosts else ""
    count = len(workers)
    return (
        f"{info.get('id', 'a scheduler')} at {info.get('address', '?')}{when},"
        f" {count} worker{'' if count == 1 else 's'}{on}"
    )


def session_tasks(
    runner: EventRunner,
    pending: Sequence[StoredPlay],
    allow_unsandboxed: bool = False,
    boards_per_task: int = BOARDS_PER_TASK,
) -> tuple[list[SessionTask], list[Slot]]:
    """Cuts ``pending`` into tasks of one rotation of up to ``boards_per_task`` boards of one
    table and round, with each task's place in the scheduler (``session_slots``): the
    rotations of one batch of boards form a group, and hold the same (bot, round) keys."""
    if boards_per_task < 1:
        raise ValueError(f"boards_per_task must be at least 1, not {boards_per_task}")
    run = uuid.uuid4().hex[:12]  # this call's own keys: none is left over from another driver
    bundles = {name: bundle_of(m) for name, m in runner.manifests.items()}
    tables: dict[tuple[int, int], list[StoredPlay]] = {}
    for sp in pending:
        tables.setdefault((sp.play.round, sp.play.table), []).append(sp)
    sessions: list[Session] = []
    for plays in tables.values():
        boards = sorted({sp.play.board for sp in plays})
        for i in range(0, len(boards), boards_per_task):
            chosen = set(boards[i : i + boards_per_task])
            sessions += sessions_of([sp for sp in plays if sp.play.board in chosen])
    slots = session_slots(sessions, runner.manifests)
    tasks = []
    for s in sessions:
        table_id = f"r{s.round}-t{s.table}-rot{s.rotation}-p{s.plays[0].play.ordinal}"
        spec = runner.table_spec(s.seats, s.plays, table_id, [None] * len(s.plays))
        key = f"tichu-{runner.event}-{run}-plays-" + "-".join(str(sp.id) for sp in s.plays)
        b = tuple(bundles[name] for name in s.seats)
        tasks.append(
            SessionTask(
                key,
                tuple(sp.id for sp in s.plays),
                spec,
                (b[0], b[1], b[2], b[3]),
                runner.spec.limits,
                allow_unsandboxed,
                runner.spec.strict,
            )
        )
    return tasks, slots


def play_task(task: SessionTask) -> TaskResult:
    """Plays a task's session on this worker and returns its outcomes (runs on the worker).

    The public events of its plays go to the driver as they happen (``LIVE_TOPIC``), which
    writes them to the event's live feeds."""
    from arena.runtime import configure

    configure()  # before this process imports gRPC, if it has not yet
    from arena.runtime.aio import run as run_loop

    cache = Path(os.environ.get(ENV_CACHE) or Path(tempfile.gettempdir()) / "tichu-arena-bots")
    cache.mkdir(parents=True, exist_ok=True)
    manifests = [unpack(bundle, cache) for bundle in task.bots]
    with tempfile.TemporaryDirectory(prefix="tichu-task-") as tmp:
        result: TaskResult = run_loop(_play(task, manifests, Path(tmp), _feed_sender(task)))
    return result


def _feed_sender(task: SessionTask) -> FeedLines | None:
    """Sends the task's feed lines to the driver through the scheduler's events, from the
    Dask worker running it (None elsewhere: a test calling ``play_task`` itself)."""
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return None
    started: set[int] = set()

    def send(k: int, lines: list[str], end: bool) -> None:
        first = k not in started
        started.add(k)
        msg = {"task": task.key, "play": k, "lines": lines, "end": end, "first": first}
        worker.log_event(LIVE_TOPIC, msg)

    return FeedLines(len(task.play_ids), send)


async def _play(
    task: SessionTask, manifests: list[Any], tmp: Path, feed: FeedLines | None = None
) -> TaskResult:
    from arena.server import ArenaServer, play_table
    from arena.server.sandbox import require_sandbox
    from arena.server.turns import machine_folder

    sandbox = require_sandbox(task.allow_unsandboxed)  # this worker's host, probed once
    # The task's referee is one of the worker machine's several: its bots take their turns on
    # the machine's locks, so one bot's processes never run at once there (docs/security.md §9).
    server = ArenaServer(port=0, runs_dir=None, machine_turns=machine_folder())
    await server.start()
    table_id = task.table.table_id or "table"
    replays = [tmp / f"play-{play_id}.json" for play_id in task.play_ids]
    plans = tuple(
        replace(plan, replay=path) for plan, path in zip(task.table.plans, replays, strict=True)
    )
    try:
        _, records = await play_table(
            server,
            replace(task.table, plans=plans),
            manifests,
            log_dir=tmp / "logs" / table_id,
            watch=feed,
            sandbox=sandbox,
            limits=task.limits,
            strict=task.strict,
        )
    finally:
        await server.stop(grace_s=1.0)
    if len(records) != len(task.play_ids) or any(
        r.termination is Termination.ABORTED for r in records
    ):
        raise ClusterError(f"table {table_id} was cut short on the worker")
    outcomes = tuple(
        PlayOutcome(
            play_id,
            tuple(hand_rows(record)),
            len(record.failures),
            path.read_bytes(),
            record.replay.meta.get("sandbox"),
        )
        for play_id, record, path in zip(task.play_ids, records, replays, strict=True)
    )
    return TaskResult(outcomes, ((table_id, tuple(_logs(tmp / "logs" / table_id))),))


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
    ``allow_unsandboxed``. ``on_connected`` hears who answered at a ``tcp://`` address
    (``scheduler_identity``) before any task is sent.
    """

    def __init__(
        self,
        address: str,
        *,
        retries: int = 3,
        allow_unsandboxed: bool = False,
        boards_per_task: int = BOARDS_PER_TASK,
        on_connected: Callable[[str], None] | None = None,
    ) -> None:
        self.address = address
        self.on_connected = on_connected
        self.retries = retries
        self.allow_unsandboxed = allow_unsandboxed
        self.boards_per_task = boards_per_task
        self._client: Any = None
        self._futures: list[Any] = []
        self._lock = threading.Lock()
        self._slots = 1

    def play(self, runner: EventRunner, pending: Sequence[StoredPlay], progress: Progress) -> None:
        """Submits the sessions as the scheduler lets them start (as many at once as the
        workers have threads), and records each finished play as it comes back."""
        try:
            from distributed import wait
        except ImportError:
            raise ClusterError("--cluster needs Dask: pip install 'tichu-arena[cluster]'") from None
        by_id = {sp.id: sp for sp in pending}
        tasks, slots = session_tasks(runner, pending, self.allow_unsandboxed, self.boards_per_task)
        feeds = _Feeds(runner, tasks, by_id)
        with self._connect() as client, _stop_on_signals(runner), feeds.subscribed(client):
            self._client = client
            scheduler = BoardScheduler(slots, self._threads(client))
            running: dict[Any, Slot] = {}
            while True:
                while not runner.stopping and (slot := scheduler.next()) is not None:
                    t = tasks[slot.id]
                    future = client.submit(
                        play_task, t, key=t.key, retries=self.retries, pure=False
                    )
                    running[future] = slot
                    with self._lock:
                        self._futures = list(running)
                if runner.stopping:
                    self.stop()
                    break
                if not running:
                    break
                try:
                    done = wait(list(running), return_when="FIRST_COMPLETED").done  # type: ignore[no-untyped-call]
                except Exception as e:  # a task cancelled: by a stop, or by the cluster
                    if runner.stopping:
                        break
                    self.stop()
                    raise ClusterError(f"the cluster cancelled a task: {e}") from None
                for future in done:
                    scheduler.finished(running.pop(future))
                    with self._lock:
                        self._futures = list(running)
                    try:
                        feeds.finished(future.key)  # closed: recording removes them
                        self._collect(runner, future, by_id)
                    finally:
                        # Recorded: the cluster forgets the result, so a worker lost later
                        # has nothing of it to compute again (only running tasks are held).
                        future.release()
                del done
                scheduler.slots = self._threads(client)
            self._client = None

    def stop(self) -> None:
        """Cancels the tasks not yet finished; their plays stay pending."""
        with self._lock:
            futures, client = list(self._futures), self._client
        if client is not None and futures:
            with contextlib.suppress(Exception):
                client.cancel(futures)

    def slots(self, runner: EventRunner) -> int:
        """The workers' threads when last counted (at least one)."""
        return self._slots

    def _threads(self, client: Any) -> int:
        """The cluster's worker threads now: the sessions it may play at once."""
        with contextlib.suppress(Exception):
            self._slots = max(1, sum(client.nthreads().values()))
        return self._slots

    def _collect(self, runner: EventRunner, future: Any, by_id: dict[int, StoredPlay]) -> None:
        """Records a finished task's plays; a task that failed on every try stops the event."""
        if future.cancelled() or runner.stopping:
            return
        try:
            result = future.result()
        except Exception as e:  # the task failed on every try: say which and why
            if runner.stopping:
                return  # cancelled by the stop itself: its plays stay pending
            self.stop()
            raise ClusterError(f"a task failed on the cluster: {e}") from None
        self._write_logs(runner, result)
        for outcome in result.plays:
            self._record(runner, by_id[outcome.play_id], outcome)

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
            if self.on_connected is not None:  # anyone's scheduler may answer at an address
                self.on_connected(scheduler_identity(client.scheduler_info()))
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


class _Feeds:
    """The driver's side of the live feeds of a cluster run: writes the lines the workers send
    (``LIVE_TOPIC``; ``FeedLines``) to ``<db>.live/`` as the local pool does, a ``LiveFeed``
    per run of a task (a task run again after a lost worker starts its feeds anew). A task's
    feeds are closed before its plays are recorded (which removes them), and nothing more
    is written for it; lines of another driver's tasks are left alone."""

    def __init__(
        self, runner: EventRunner, tasks: Sequence[SessionTask], by_id: Mapping[int, StoredPlay]
    ) -> None:
        self.runner = runner
        self.tasks = {t.key: t for t in tasks}
        self.by_id = by_id
        self._lock = threading.Lock()
        self._open: dict[str, LiveFeed] = {}
        self._done: set[str] = set()

    @contextlib.contextmanager
    def subscribed(self, client: Any) -> Iterator[None]:
        """Receives the workers' lines while the run lasts."""
        client.subscribe_topic(LIVE_TOPIC, self.receive)
        try:
            yield
        finally:
            with contextlib.suppress(Exception):
                client.unsubscribe_topic(LIVE_TOPIC)
            with self._lock:
                for feed in self._open.values():
                    feed.close()
                self._open.clear()

    def receive(self, event: tuple[float, Any]) -> None:
        """One message of a worker (on the client's thread)."""
        msg = event[1]
        task = self.tasks.get(msg.get("task", "")) if isinstance(msg, dict) else None
        if task is None:
            return
        with self._lock:
            if task.key in self._done:
                return
            feed = self._open.get(task.key)
            k = int(msg["play"])
            if feed is None or (msg["first"] and k == 0):  # the task's run (again)
                if feed is not None:
                    feed.close()
                plays = [self.by_id[i].play for i in task.play_ids[k:]]
                feed = self._open[task.key] = LiveFeed(
                    self.runner.store.path, self.runner.event, plays
                )
            with contextlib.suppress(OSError):  # a feed is for spectators: never fatal
                feed.write(msg["lines"], bool(msg["end"]))
            if msg["end"]:  # the bar moves as plays end, before their task returns
                self.runner.play_ended(self.by_id[task.play_ids[k]])

    def finished(self, key: str) -> None:
        """The task has returned: its feeds are closed, and stay so."""
        with self._lock:
            self._done.add(key)
            feed = self._open.pop(key, None)
            if feed is not None:
                feed.close()


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
