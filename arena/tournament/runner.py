"""The event runner: plays an event's pending plays over gRPC and records each one.

The plan (``plan_event``) is stored first, so an interrupted event resumes where it stopped:
``pending_plays`` is exactly what is left. An *executor* plays them: ``LocalExecutor`` on
this machine (the default), ``arena.tournament.cluster.DaskExecutor`` on Dask workers.

The local executor groups plays into *sessions*: the boards one table (four bots in fixed
seats) plays in one rotation of one round. A session starts its four bot processes once and
plays its boards one after another on them; the two rotations of a board are always
different sessions, so they never share a bot process. ``jobs`` sessions run at once on one
referee server, started by the scheduling rules every executor shares
(``arena.tournament.scheduling``): never two sessions of one round that seat the same bot,
a half-played board's next session first, at most ``jobs`` groups of boards half-played. A
run that records plays without completing a board for longer than those rules allow stops
(``Stalled``) rather than running on to its cap.

Every bot process runs in the runner's sandbox (``arena.server.sandbox``; ``full`` unless the
caller allowed less), with its manifest's limits capped by the event's ``[limits]``; each
recorded play keeps its sandbox in the store.

Each finished play is written (replay file first, then its hands in one transaction) by the
runner alone, the store's only writer (``EventRunner.record_play``). A play cut short by
Ctrl-C or a referee stop is not recorded; it is played again on resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from arena.referee import MatchRecord
from arena.referee.policy import FailureKind, FailurePolicy, GiveUp, Termination, TimeControl
from arena.rules import ArenaError
from arena.runtime.aio import run as run_loop
from arena.server import ARENA_FAULT, ArenaServer, MatchPlan, Table, TableSpec, play_table
from arena.server.bots import bot_key, seat_log
from arena.server.manifest import Manifest, load_manifest, resolve_bot
from arena.server.sandbox import Sandbox, SandboxError, require_sandbox, runtime_paths
from arena.tournament.live import LiveFeed, live_dir, live_path
from arena.tournament.model import EventSpec, PlannedPlay
from arena.tournament.scheduling import BoardScheduler, Slot, drive
from arena.tournament.store import EventStatus, EventStore, FailureRow, HandRow, StoredPlay

#: Deals handed to a game played to the target: enough for any real game.
GAME_DEALS = 64

STARTUP_HANDS = 4
"""Hands a bot plays in a run before the runner judges that it started: a bot that crashed or
disconnected in each of its first ones cannot start, and the run stops (``keep_going`` aside)
rather than playing the event on default answers."""


class BotCannotStart(ArenaError):
    """A bot crashed or disconnected in each of its first ``STARTUP_HANDS`` hands."""


class Stalled(ArenaError):
    """More plays were recorded without completing a board than the schedule allows."""


class ArenaFault(Stalled):
    """A play failed by the arena's own fault (``ARENA_FAULT``) more than ``ARENA_REPLAYS``
    times; it stays unrecorded, to be played by a resume."""


ARENA_REPLAYS = 3
"""How many times a play that failed by the arena's fault (a bot's sandbox that failed to set
up or was killed from outside it: ``arena.server.ARENA_FAULT``) is played again in one run.
Such a play is never recorded: its failure is not the bot's."""

ARENA_KIND = "arena"
"""The failure kind of a hand row for a failure of the arena's (never stored)."""


@dataclass(frozen=True)
class Session:
    """The plays one table plays on one set of bot processes (same seats, one rotation)."""

    round: int
    table: int
    rotation: int
    seats: tuple[str, str, str, str]
    plays: tuple[StoredPlay, ...]


def sessions_of(pending: Sequence[StoredPlay], restart: str = "session") -> list[Session]:
    """Groups pending plays by (round, table, rotation), in running order.

    With ``restart = "play"`` every play is a session of its own (fresh bot processes).
    """
    groups: dict[tuple[int, ...], list[StoredPlay]] = {}
    for sp in pending:
        p = sp.play
        key = (p.round, p.table, p.rotation) + ((p.ordinal,) if restart == "play" else ())
        groups.setdefault(key, []).append(sp)
    out = []
    for key, plays in groups.items():
        out.append(Session(key[0], key[1], key[2], plays[0].play.seats, tuple(plays)))
    return out


def session_slots(sessions: Sequence[Session], manifests: Mapping[str, Manifest]) -> list[Slot]:
    """The sessions as the scheduler sees them (``arena.tournament.scheduling``): a group is
    the rotations of the same boards (round, table and first board), the running order is
    (round, table, board, rotation), and each session holds (bot, round) for its bots, a bot
    named by its manifest, so no two processes of one bot hold the same boards at once,
    whatever names the event gives it."""
    slots = []
    for i, s in enumerate(sessions):
        board = min(sp.play.board for sp in s.plays)
        holds = {(bot_key(manifests[name]), s.round) for name in s.seats}
        group = (s.round, s.table, board)
        slots.append(Slot(i, group, (*group, s.rotation), frozenset(holds)))
    return slots


@dataclass
class Progress:
    """What the runner reports as it goes (for the progress bar)."""

    plays_total: int
    plays_done: int
    hands: int = 0
    failures: int = 0  # the bots' failures in the recorded plays
    arena_faults: int = 0  # plays failed by the arena's fault: played again, not recorded
    boards_done: int = 0  # boards with every rotation recorded (duplicate pairs, complete)
    boards_open: int = 0  # boards with some rotation recorded and some not: half-played
    plays_ended: int = 0  # ended on a Dask worker, recorded when their session's task returns
    started: float = field(default_factory=time.monotonic)

    @property
    def hands_per_second(self) -> float:
        """Hands recorded per second since the run started."""
        return self.hands / max(time.monotonic() - self.started, 1e-9)


def manifests_for(spec: EventSpec) -> dict[str, Manifest]:
    """Loads every bot's manifest (built-in names resolve to ``example_bots``), with the
    event's ``env`` and ``args`` for it applied."""
    out: dict[str, Manifest] = {}
    for entry in (*spec.bots, *spec.fillers):
        manifest = resolve_bot(entry.bot) if entry.builtin else load_manifest(Path(entry.bot))
        out[entry.display_name] = manifest.configured(entry.env, entry.args)
    return out


def hand_rows(record: MatchRecord, logs: Sequence[str] = ("", "", "", "")) -> list[HandRow]:
    """The hands of a finished play, with each hand's failures and the failing bot's log.

    A failure after the last hand (or before any) goes with the nearest hand.
    """
    results = record.hand_results
    by_hand: dict[int, list[FailureRow]] = {}
    for f in record.failures:
        hand = min(max(f.hand - 1, 0), max(len(results) - 1, 0))
        arena = f.kind is FailureKind.CRASH and f.detail.startswith(ARENA_FAULT)
        by_hand.setdefault(hand, []).append(
            FailureRow(
                seat=f.seat,
                kind=ARENA_KIND if arena else f.kind.name.lower(),
                detail=f.detail,
                log=logs[f.seat],
                private=f.private,
            )
        )
    return [HandRow.from_result(r, by_hand.get(r.hand, ())) for r in results]


class Executor(Protocol):
    """Plays an event's pending plays for an ``EventRunner``, which alone writes the store.

    ``LocalExecutor`` (the default) plays them on this machine; ``arena.tournament.cluster
    .DaskExecutor`` hands them to Dask workers. Either calls ``runner.record_play`` for every
    play that finished and returns when none is left or the runner stops.
    """

    def play(self, runner: EventRunner, pending: Sequence[StoredPlay], progress: Progress) -> None:
        """Plays ``pending``; returns early once ``runner.stopping`` is set."""

    def stop(self) -> None:
        """Abandons the plays under way (called from a signal handler or another thread)."""

    def slots(self, runner: EventRunner) -> int:
        """How many sessions it plays at once."""


class EventRunner:
    """Runs the pending plays of one stored event."""

    def __init__(
        self,
        store: EventStore,
        event: str,
        spec: EventSpec,
        *,
        jobs: int | None = None,
        log_dir: Path | None = None,
        on_play: Callable[[Progress, PlannedPlay], None] | None = None,
        on_ended: Callable[[Progress], None] | None = None,
        executor: Executor | None = None,
        sandbox: Sandbox | None = None,
        pace_forced: bool = True,
        keep_going: bool = True,
    ) -> None:
        self.store = store
        # False: a bot that cannot start stops the run (arena event, leagues); the gate checks
        # its two sides itself.
        self.keep_going = keep_going
        self.error: BotCannotStart | Stalled | None = None  # why the run stopped itself
        self._first_hands: dict[str, list[FailureRow | None]] = {}
        self.pace_forced = pace_forced  # off only where speed is the point (arena bench)
        self.event = event
        self.spec = spec
        self.jobs = jobs or spec.jobs
        self.log_dir = log_dir
        self.on_play = on_play
        self.on_ended = on_ended  # heard from an executor's thread (``play_ended``)
        self._ended: set[int] = set()  # plays ended and not recorded yet
        self._ended_lock = threading.Lock()
        self.manifests = manifests_for(spec)
        self.owners = {e.display_name: e.owner for e in (*spec.bots, *spec.fillers)}
        self.executor: Executor = executor or LocalExecutor()
        self.sandbox = sandbox if sandbox is not None else require_sandbox()
        _check_private(
            self.manifests,
            [store.path, live_dir(store.path), *([log_dir] if log_dir else [])],
        )
        self.stopping = False
        self.stopped_by: int | None = None  # the signal that stopped the run, if one did
        self._progress = Progress(plays_total=0, plays_done=0)
        self._boards = _Boards(())
        self._arena_tries: dict[int, int] = {}  # play id: its plays failed by the arena
        self._replay: set[int] = set()  # plays to play again for that

    def run(self) -> Progress:
        """Plays every pending play; returns the progress reached (Ctrl-C stops cleanly).

        Raises:
            BotCannotStart: A bot crashed or disconnected in each of its first hands (unless
                ``keep_going``); what was recorded stays, and the event can be resumed.
            Stalled: Plays were recorded without completing a board for longer than the
                scheduling rules allow (a fault of the arena's; what was recorded stays).
        """
        plays = self.store.plays(self.event)
        pending = tuple(sp for sp in plays if not sp.done)
        self._boards = _Boards(plays, restart=self.spec.restart)
        progress = self._progress = Progress(
            plays_total=len(plays),
            plays_done=len(plays) - len(pending),
            boards_done=self._boards.complete,
            boards_open=self._boards.open,
        )
        if not pending:
            self.store.set_status(self.event, EventStatus.FINISHED)
            return progress
        self.store.set_status(self.event, EventStatus.RUNNING)
        self.executor.play(self, pending, progress)
        while self._replay and not self.stopping:
            # Plays failed by the arena's fault, played again on fresh processes.
            again = [sp for sp in self.store.pending_plays(self.event) if sp.id in self._replay]
            self._replay.clear()
            if again:
                self.executor.play(self, again, progress)
        if self.store.pending_plays(self.event):
            self.store.set_status(self.event, EventStatus.INTERRUPTED)
        if self.error is not None:
            raise self.error
        return progress

    @property
    def arena_faults(self) -> int:
        """Plays of this run failed by the arena's fault (played again, never recorded)."""
        return self._progress.arena_faults

    def on_signal(self, signum: int) -> None:
        """Ctrl-C or SIGTERM: stops the run and remembers which (the exit code tells it)."""
        self.stopped_by = signum
        self.stop()

    def stop(self) -> None:
        """Stops the run: running plays are abandoned (not recorded), nothing new starts."""
        self.stopping = True
        self.executor.stop()

    def table_spec(
        self,
        seats: Sequence[str],
        plays: Sequence[StoredPlay],
        table_id: str,
        replays: Sequence[Path | None],
    ) -> TableSpec:
        """The table that plays ``plays`` (one match each, in order) with ``seats``."""
        spec = self.spec
        deals = spec.hands_per_board if spec.format == "board" else GAME_DEALS
        plans = tuple(
            MatchPlan(
                seed=sp.play.seed,
                deals=sp.play.deals(deals),
                replay=replay,
                seat_seeds=sp.play.seat_seeds,
            )
            for sp, replay in zip(plays, replays, strict=True)
        )
        return TableSpec(
            options=spec.match_options(),
            time=TimeControl(decision_ms=spec.time_control.decision_ms),
            policy=FailurePolicy(
                max_strikes=spec.policy.max_strikes,
                max_rejections=spec.policy.max_rejections,
                reconnect_grace_ms=spec.policy.reconnect_grace_ms,
                give_up=GiveUp[spec.policy.give_up.upper()],
            ),
            names=tuple(seats),
            plans=plans,
            table_id=table_id,
            pace_forced=self.pace_forced,
        )

    def play_ended(self, sp: StoredPlay) -> None:
        """An executor saw a play end that it records later (a Dask worker's session goes on:
        its plays come back with its task): counted in ``Progress.plays_ended`` until
        recorded, so a progress bar moves play by play. Any thread may call it."""
        with self._ended_lock:
            if sp.id in self._ended:
                return
            self._ended.add(sp.id)
            self._progress.plays_ended = len(self._ended)
        if self.on_ended is not None:
            self.on_ended(self._progress)

    def record_play(
        self,
        sp: StoredPlay,
        rows: Sequence[HandRow],
        failures: int,
        replay: Path | None,
        sandbox: Mapping[str, object] | None = None,
    ) -> None:
        """Writes one finished play (its replay file is already in place) and reports it.

        A play that is already recorded (a task that ran twice) is left as it is, so nothing
        is ever counted twice.
        """
        with self._ended_lock:
            self._ended.discard(sp.id)
            self._progress.plays_ended = len(self._ended)
        if self.store.play_status(sp.id) != "pending":
            return
        arena = [f for row in rows for f in row.failures if f.kind == ARENA_KIND]
        if arena:
            self._arena_fault(sp, arena[0])
            return
        self.store.record_play(sp.id, rows, replay, sandbox)
        # Its live feed has served: the replay holds all of it (``arena web`` streams a feed
        # from the file it holds open, so a spectator sees the end all the same).
        live_path(self.store.path, self.event, sp.play.ordinal).unlink(missing_ok=True)
        if not self.keep_going:
            self._check_start(sp.play.seats, rows)
        progress = self._progress
        progress.plays_done += 1
        progress.hands += len(rows)
        progress.failures += failures
        self._boards.record(sp.play)
        progress.boards_done, progress.boards_open = self._boards.complete, self._boards.open
        if self.error is None and self._boards.since_complete > self._boards.allowance(
            self.executor.slots(self)
        ):
            self.error = Stalled(
                f"{self._boards.since_complete} plays were recorded without completing a"
                f" board ({self._boards.open} boards half-played), more than the scheduling"
                " rules allow: the arena is not pairing its plays (a fault of the arena's, to"
                " report); what was recorded stays"
            )
            self.stop()
        if self.on_play is not None:
            self.on_play(progress, sp.play)

    def _arena_fault(self, sp: StoredPlay, failure: FailureRow) -> None:
        """A play failed by the arena's fault: not recorded (its failure is not the bot's);
        played again up to ``ARENA_REPLAYS`` times, then the run ends with ``ArenaFault``."""
        tries = self._arena_tries[sp.id] = self._arena_tries.get(sp.id, 0) + 1
        self._progress.arena_faults += 1
        if tries <= ARENA_REPLAYS:
            self._replay.add(sp.id)
        elif self.error is None:
            why = failure.detail.removeprefix(ARENA_FAULT)
            self.error = ArenaFault(
                f"play {sp.play.ordinal} failed {tries} times by the arena's fault, not the"
                f" bot's ({sp.play.seats[failure.seat]}: {why}); it is not recorded"
            )

    def _check_start(self, seats: Sequence[str], rows: Sequence[HandRow]) -> None:
        """Stops the run when a bot crashed or disconnected in each of its first
        ``STARTUP_HANDS`` hands of this run, naming the failure and the bot's log."""
        for row in sorted(rows, key=lambda r: r.hand):
            for seat, bot in enumerate(seats):
                first = self._first_hands.setdefault(bot, [])
                if len(first) >= STARTUP_HANDS:
                    continue
                first.append(
                    next(
                        (
                            f
                            for f in row.failures
                            if f.seat == seat and f.kind in ("crash", "disconnect")
                        ),
                        None,
                    )
                )
                failure = first[0]
                if self.error is None and len(first) == STARTUP_HANDS and all(first) and failure:
                    log = f"; its log: {failure.log}" if failure.log else ""
                    self.error = BotCannotStart(
                        f"bot {bot!r} cannot start: it crashed or disconnected in each of"
                        f" its first {STARTUP_HANDS} hands ({failure.detail}){log}"
                    )
                    self.stop()


class _Boards:
    """Counts the boards an event has completed (every rotation recorded) and half-played,
    and the plays recorded since a board last completed (for ``EventRunner``'s stall check).
    """

    def __init__(self, plays: Sequence[StoredPlay], restart: str = "session") -> None:
        self.rotations: dict[tuple[int, int, int], int] = {}
        self.recorded: dict[tuple[int, int, int], int] = {}
        self.per_group: dict[tuple[int, ...], set[int]] = {}
        for sp in plays:
            key = _board_key(sp.play)
            self.rotations[key] = self.rotations.get(key, 0) + 1
            self.recorded[key] = self.recorded.get(key, 0) + sp.done
            group = key if restart == "play" else key[:2]
            self.per_group.setdefault(group, set()).add(sp.play.board)
        self.complete = sum(self.recorded[k] == n for k, n in self.rotations.items())
        self.open = sum(0 < self.recorded[k] < n for k, n in self.rotations.items())
        self.since_complete = 0

    def record(self, play: PlannedPlay) -> None:
        """Counts one more recorded play."""
        key = _board_key(play)
        before = self.recorded[key]
        self.recorded[key] = before + 1
        if before + 1 == self.rotations[key]:
            self.complete += 1
            self.open -= before > 0
            self.since_complete = 0
        else:
            self.open += before == 0
            self.since_complete += 1

    def allowance(self, slots: int) -> int:
        """The most plays the scheduling rules let be recorded before a board completes:
        ``slots`` groups open at once, each of its boards short of one rotation; doubled,
        so only a real stall crosses it."""
        boards = max((len(b) for b in self.per_group.values()), default=1)
        rotations = max(self.rotations.values(), default=1)
        return 2 * slots * boards * max(rotations - 1, 1) + 2 * slots


def _board_key(play: PlannedPlay) -> tuple[int, int, int]:
    return (play.round, play.table, play.board)


class LocalExecutor:
    """Plays on this machine: one referee server, ``runner.jobs`` sessions at once."""

    def __init__(self) -> None:
        self._tables: list[Table] = []

    def play(self, runner: EventRunner, pending: Sequence[StoredPlay], progress: Progress) -> None:
        """Plays the sessions of ``pending`` on one in-process referee (see the module doc)."""
        run_loop(self._play(runner, pending, progress))

    def stop(self) -> None:
        """Aborts the running tables; their plays stay pending."""
        for table in list(self._tables):  # a copy: sessions that end take theirs out
            table.abort("the event was interrupted")

    def slots(self, runner: EventRunner) -> int:
        """``runner.jobs`` sessions at once."""
        return runner.jobs

    async def _play(
        self, runner: EventRunner, pending: Sequence[StoredPlay], progress: Progress
    ) -> None:
        server = ArenaServer(port=0, runs_dir=None)
        await server.start()
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError):
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, runner.on_signal, signum)
        sessions = sessions_of(pending, runner.spec.restart)
        scheduler = BoardScheduler(session_slots(sessions, runner.manifests), runner.jobs)

        async def play(slot: Slot) -> None:
            await self._play_session(runner, server, sessions[slot.id])

        try:
            await drive(scheduler, play, lambda: runner.stopping)
        finally:
            with contextlib.suppress(NotImplementedError):
                loop.remove_signal_handler(signal.SIGINT)
                loop.remove_signal_handler(signal.SIGTERM)
            await server.stop(grace_s=1.0)

    async def _play_session(
        self, runner: EventRunner, server: ArenaServer, session: Session
    ) -> None:
        """Plays one session's boards on one table of four fresh bot processes."""
        if runner.stopping:
            return
        plays = session.plays
        table_id = (
            f"r{session.round}-t{session.table}-rot{session.rotation}-p{plays[0].play.ordinal}"
        )
        replays = [runner.store.replay_path(runner.event, sp.play) for sp in plays]
        table_spec = runner.table_spec(session.seats, plays, table_id, replays)

        def recorded(k: int, record: MatchRecord) -> None:
            if record.termination is Termination.ABORTED:
                return  # cut short: it stays pending and is played again on resume
            runner.record_play(
                plays[k - 1],
                hand_rows(record, logs),
                len(record.failures),
                replays[k - 1],
                record.replay.meta.get("sandbox"),
            )

        log_dir = None if runner.log_dir is None else runner.log_dir / table_id
        logs: Sequence[str] = ("", "", "", "")
        if log_dir is not None:
            logs = [
                str(seat_log(log_dir, s, runner.manifests[n].name))
                for s, n in enumerate(session.seats)
            ]
        # The public events of each play, for ``arena web``'s live tables.
        feed = LiveFeed(runner.store.path, runner.event, [sp.play for sp in plays])
        mine: list[Table] = []

        def started(table: Table) -> None:
            mine.append(table)
            self._tables.append(table)

        try:
            await play_table(
                server,
                table_spec,
                [runner.manifests[name] for name in session.seats],
                log_dir=log_dir,
                watch=feed,
                on_table=started,
                on_record=recorded,
                sandbox=runner.sandbox,
                limits=runner.spec.limits,
                strict=runner.spec.strict,
                owners=[runner.owners[name] for name in session.seats],
            )
        finally:
            feed.close()
            for table in mine:  # the running tables alone: a finished one holds its records
                self._tables.remove(table)


def _check_private(manifests: Mapping[str, Manifest], private: Sequence[Path]) -> None:
    """Refuses a run whose results, logs or live feeds lie in a bot's folder or in the
    arena's runtime (the interpreter, its packages, the project's packages): every sandbox
    shows the one to its bot and the other to all bots."""
    runtime = runtime_paths()
    for path in private:
        p = path.resolve()
        inside = next((r for r in runtime if p == r or r in p.parents), None)
        if inside is not None:
            raise SandboxError(
                f"{p} is inside the arena's runtime ({inside}), which every bot can read:"
                " keep the event database, its logs and live feeds elsewhere"
            )
    for name, m in manifests.items():
        folder = m.folder.resolve()
        for path in private:
            p = path.resolve()
            if p == folder or folder in p.parents:
                raise SandboxError(
                    f"{p} is inside the folder of bot {name!r} ({folder}), which that bot can"
                    " read: keep the event database and its logs outside every bot's folder"
                )
