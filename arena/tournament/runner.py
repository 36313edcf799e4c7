"""The event runner: plays an event's pending plays over gRPC and records each one.

The plan (``plan_event``) is stored first, so an interrupted event resumes where it stopped:
``pending_plays`` is exactly what is left. Plays are grouped into *sessions*: the boards one
table (four bots in fixed seats) plays in one rotation of one round. A session starts its
four bot processes once and plays its boards one after another on them; the two rotations
of a board are always different sessions, so they never share a bot process. ``jobs``
sessions run at once on one referee server.

Each finished play is written (replay file first, then its hands in one transaction) from
the event loop's thread, the store's only writer. A play cut short by Ctrl-C or a referee
stop is not recorded; it is played again on resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.referee import MatchRecord
from arena.referee.policy import FailurePolicy, Termination, TimeControl
from arena.runtime.aio import run as run_loop
from arena.server.app import ArenaServer
from arena.server.bots import play_table, seat_log
from arena.server.manifest import Manifest, load_manifest, resolve_bot
from arena.server.table import MatchPlan, TableSpec
from arena.tournament.model import EventSpec, PlannedPlay
from arena.tournament.store import EventStatus, EventStore, Failure, HandRow, StoredPlay

#: Deals handed to a game played to the target: enough for any real game.
GAME_DEALS = 64


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


@dataclass
class Progress:
    """What the runner reports as it goes (for the progress bar)."""

    plays_total: int
    plays_done: int
    plays_resumed: int = 0  # already done when the run started
    hands: int = 0
    failures: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def hands_per_second(self) -> float:
        """Hands recorded per second since the run started."""
        return self.hands / max(time.monotonic() - self.started, 1e-9)


def manifests_for(spec: EventSpec) -> dict[str, Manifest]:
    """Loads every bot's manifest (built-in names resolve to ``example_bots``)."""
    out: dict[str, Manifest] = {}
    for name, source in spec.bot_sources().items():
        if source.startswith("builtin:"):
            out[name] = resolve_bot(source.removeprefix("builtin:"))
        else:
            out[name] = load_manifest(Path(source))
    return out


def hand_rows(record: MatchRecord, logs: Sequence[str] = ("", "", "", "")) -> list[HandRow]:
    """The hands of a finished play, with each hand's failures and the failing bot's log.

    A failure after the last hand (or before any) goes with the nearest hand.
    """
    results = record.hand_results
    by_hand: dict[int, list[Failure]] = {}
    for f in record.failures:
        hand = min(max(f.hand - 1, 0), max(len(results) - 1, 0))
        by_hand.setdefault(hand, []).append(
            Failure(seat=f.seat, kind=f.kind.name.lower(), detail=f.detail, log=logs[f.seat])
        )
    return [HandRow.from_result(r, by_hand.get(r.hand, ())) for r in results]


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
    ) -> None:
        self.store = store
        self.event = event
        self.spec = spec
        self.jobs = jobs or spec.jobs
        self.log_dir = log_dir
        self.on_play = on_play
        self.manifests = manifests_for(spec)
        self.stopping = False
        self.stopped_by: int | None = None  # the signal that stopped the run, if one did
        self._tables: list[object] = []

    def run(self) -> Progress:
        """Plays every pending play; returns the progress reached (Ctrl-C stops cleanly)."""
        return run_loop(self._run())

    async def _run(self) -> Progress:
        pending = self.store.pending_plays(self.event)
        total = len(self.store.plays(self.event))
        done = total - len(pending)
        progress = Progress(plays_total=total, plays_done=done, plays_resumed=done)
        if not pending:
            self.store.set_status(self.event, EventStatus.FINISHED)
            return progress
        self.store.set_status(self.event, EventStatus.RUNNING)
        server = ArenaServer(port=0, runs_dir=None)
        await server.start()
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError):
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, self._on_signal, signum)
        gate = asyncio.Semaphore(self.jobs)
        try:
            await asyncio.gather(
                *(
                    self._session(server, s, gate, progress)
                    for s in sessions_of(pending, self.spec.restart)
                )
            )
        finally:
            with contextlib.suppress(NotImplementedError):
                loop.remove_signal_handler(signal.SIGINT)
                loop.remove_signal_handler(signal.SIGTERM)
            await server.stop(grace_s=1.0)
        if self.store.pending_plays(self.event):
            self.store.set_status(self.event, EventStatus.INTERRUPTED)
        return progress

    def _on_signal(self, signum: int) -> None:
        self.stopped_by = signum
        self.stop()

    def stop(self) -> None:
        """Stops the run: running plays are abandoned (not recorded), nothing new starts."""
        self.stopping = True
        for table in self._tables:
            table.abort("the event was interrupted")  # type: ignore[attr-defined]

    async def _session(
        self, server: ArenaServer, session: Session, gate: asyncio.Semaphore, progress: Progress
    ) -> None:
        async with gate:
            if self.stopping:
                return
            spec = self.spec
            options = spec.match_options()
            deals = spec.hands_per_board if spec.format == "board" else GAME_DEALS
            plays = session.plays
            plans = tuple(
                MatchPlan(
                    seed=sp.play.seed,
                    deals=sp.play.deals(deals),
                    replay=self.store.replay_path(self.event, sp.play),
                    seat_seeds=sp.play.seat_seeds,
                )
                for sp in plays
            )
            table_spec = TableSpec(
                options=options,
                time=TimeControl(decision_ms=spec.time_control.decision_ms),
                policy=FailurePolicy(),
                names=session.seats,
                plans=plans,
                table_id=f"r{session.round}-t{session.table}-rot{session.rotation}"
                f"-p{plays[0].play.ordinal}",
            )

            def recorded(k: int, record: MatchRecord) -> None:
                sp = plays[k - 1]
                if record.termination is Termination.ABORTED:
                    return  # cut short: it stays pending and is played again on resume
                rows = hand_rows(record, logs)
                self.store.record_play(sp.id, rows, plans[k - 1].replay)
                progress.plays_done += 1
                progress.hands += len(rows)
                progress.failures += len(record.failures)
                if self.on_play is not None:
                    self.on_play(progress, sp.play)

            log_dir = None
            logs: Sequence[str] = ("", "", "", "")
            if self.log_dir is not None:
                log_dir = self.log_dir / str(table_spec.table_id)
                logs = [
                    str(seat_log(log_dir, s, self.manifests[n].name))
                    for s, n in enumerate(session.seats)
                ]
            await play_table(
                server,
                table_spec,
                [self.manifests[name] for name in session.seats],
                log_dir=log_dir,
                on_table=self._tables.append,
                on_record=recorded,
            )
