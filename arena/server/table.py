"""Tables and their seat tokens: many tables at once, each playing its matches.

``TableManager.create(spec)`` makes a table with four fresh seat tokens (random, unique over
the server: a token names one seat of one table and nothing else) and starts it. A table
waits for its four bots (``startup_timeout_s``), plays ``spec.matches`` matches in a row on
the same streams, writes a replay for every match and closes the streams with status OK.
A seat with no bot when a match starts is given up at once; a table no bot joined ends
without a match.

The table also tells a disconnect from a crash: when it started the bot's process itself
(``manage``), a dropped stream is judged a moment later, once the process's fate is known.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import grpc

from arena.referee import (
    FailureKind,
    MatchConfig,
    MatchInfo,
    MatchPlan,
    MatchRecord,
    MatchSettings,
    Referee,
    TableEvent,
    Termination,
)
from arena.rules import bot_seed
from arena.rules.state import Deal
from arena.server.seat import EventCodec, GrpcSeat, Refused, SeatObserver, broadcast

CRASH_CHECK_S = 1.0
"""How long after a managed bot's stream drops the table waits to see whether it crashed: a
crashed process's exit reaches the runner after its stream's end, later on a loaded machine."""

CRASH_CHECK_TRIES = 10
"""How many times ``CRASH_CHECK_S`` the table waits for the runner to report a process it can
see has ended (on a heavily loaded machine the report can come seconds after the stream's
end): its drop is then judged a crash, with its exit code, not a disconnect."""

FINISHED_TOKENS = 40_000
"""Tokens of finished tables remembered (refused as over rather than unknown)."""

ARENA_FAULT = "the arena's fault: "
"""How the detail of a failure the arena caused, not the bot, begins (``Table.bot_exited``'s
``fault``, found by ``BotProcess.arena_fault``): a runner plays such a play again rather than
record it against the bot."""


@dataclass(frozen=True, kw_only=True)
class TableSpec(MatchSettings):
    """What a table plays: the match settings (rules, clock, policy), names, which matches.

    ``names`` are the seats' display names (``None``: the bots' Hello names, not announced
    in ``Welcome``). Match *k* (from 1) uses seed ``seed + k - 1``; with ``seed = None`` the
    table draws a 128-bit seed, which no seat can guess. ``replay`` is where the
    single match's replay goes (default ``<runs>/<table id>/match-<k>.json``). ``plans``,
    when given, replaces ``matches``, ``seed``, ``deals`` and ``replay``: one match per plan,
    in order, on the same bot streams. ``meta`` is added to every replay's ``meta`` (the
    runner records the bots' sandbox there). ``pace_forced`` (on by default: bots are
    strangers) delays forced actions like asked ones; benchmarks turn it off.
    """

    seed: int | None = 0
    deals: tuple[Deal, ...] = ()
    names: tuple[str, ...] | None = None
    matches: int = 1
    startup_timeout_s: float = 30.0
    replay: Path | None = None
    table_id: str | None = None
    plans: tuple[MatchPlan, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    pace_forced: bool = True

    def plan(self, k: int) -> MatchPlan:
        """The plan of match ``k`` (from 1)."""
        if self.plans:
            return self.plans[k - 1]
        if self.seed is None:
            raise ValueError("a table spec without a seed has no plans: Table draws its seed")
        replay = self.replay if self.matches == 1 else None
        return MatchPlan(self.seed + k - 1, self.deals, replay)

    @property
    def match_count(self) -> int:
        """How many matches the table plays."""
        return len(self.plans) if self.plans else self.matches

    def seat_seed(self, k: int, seat: int) -> int:
        """The bot seed of ``seat`` in match ``k`` (``Welcome.seed``, ``TICHU_ARENA_SEED``)."""
        plan = self.plan(k)
        return plan.seat_seeds[seat] if plan.seat_seeds else bot_seed(plan.seed, seat)


class _Logged(Protocol):
    """A bot process's output so far (``arena.server.bots.BotProcess``)."""

    logged: int


class TableState(Enum):
    """Where a table is in its life."""

    WAITING = "waiting"
    PLAYING = "playing"
    DONE = "done"


class Table:
    """One table: four ``GrpcSeat``s, their tokens, and the matches they play."""

    def __init__(
        self,
        table_id: str,
        spec: TableSpec,
        tokens: list[str],
        runs_dir: Path | None,
        on_done: Callable[[Table], None],
        on_match: Callable[[Table, int, MatchRecord], None] | None = None,
    ) -> None:
        self.id = table_id
        # Without a seed the table draws one of 128 bits; match k plays seed + k - 1.
        self.spec = spec if spec.seed is not None else replace(spec, seed=secrets.randbits(128))
        self.tokens = tokens
        self.runs_dir = runs_dir
        self.state = TableState.WAITING
        self.records: list[MatchRecord] = []
        self.referee: Referee | None = None
        self.watchers: list[Callable[[TableEvent], None]] = []
        self.on_record: Callable[[int, MatchRecord], None] | None = None
        #: The seats' bot log files, when the runner keeps them (named in each replay).
        self.logs: list[Path] | None = None
        self.logged: Sequence[_Logged] = ()  # by seat: how much output each log holds
        self.shutting_down = False
        self._on_done = on_done
        self._manager_hook = on_match
        self._managed: dict[int, Callable[[], bool]] = {}  # seat: has its process ended?
        self._exited: set[int] = set()
        self._exit_codes: dict[int, str] = {}  # a seat's exit code and its cause, as said
        self._faults: dict[int, str] = {}  # a seat whose process ended by the arena's fault
        self._lost: dict[int, asyncio.TimerHandle] = {}
        self._resumes: dict[int, list[float]] = {}  # seat -> loop times of its resumes (match)
        self._all_joined = asyncio.Event()
        self.codec = codec = EventCodec(spec.options.tournament)
        self.seats = [GrpcSeat(self, s, tokens[s], self._info(s, 1), codec) for s in range(4)]
        self._task: asyncio.Task[list[MatchRecord]] | None = None

    def _info(self, seat: int, match_no: int) -> MatchInfo:
        spec = self.spec
        names = spec.names or ()
        seed = spec.seat_seed(match_no, seat)
        return MatchInfo(self.id, seat, spec.options, spec.time, spec.policy, names, match_no, seed)

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> asyncio.Task[list[MatchRecord]]:
        """Starts the table's task (waiting for bots, then the matches)."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())
        return self._task

    async def wait(self) -> list[MatchRecord]:
        """Waits until the table is done; returns its match records."""
        return await self.start()

    def observe(self, observer: SeatObserver) -> None:
        """Lets ``observer`` hear every seat's joins and decisions from now on."""
        for seat in self.seats:
            seat.observers.append(observer)

    def manage(self, seat: int, ended: Callable[[], bool] = lambda: False) -> None:
        """Marks a seat whose bot process the runner started (for crash detection); ``ended``
        tells whether that process has ended, before the runner has reported its exit."""
        self._managed[seat] = ended

    async def _run(self) -> list[MatchRecord]:
        spec = self.spec
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._all_joined.wait(), spec.startup_timeout_s)
            if all(seat.stream is None for seat in self.seats) and not self._faults:
                # Nobody came: no match to play. Unless the arena kept a bot away: its
                # matches are played on defaults, each failed by the arena's fault (a runner
                # plays them again).
                return self.records
            for k in range(1, spec.match_count + 1):
                if self.shutting_down:
                    break
                record = await self._play(k)
                self.records.append(record)
                if self.on_record is not None:
                    self.on_record(k, record)
                if self._manager_hook is not None:
                    self._manager_hook(self, k, record)
                if record.termination is Termination.ABORTED:
                    break
        finally:
            self.state = TableState.DONE
            for handle in self._lost.values():
                handle.cancel()
            code = grpc.StatusCode.UNAVAILABLE if self.shutting_down else grpc.StatusCode.OK
            for seat in self.seats:
                seat.close(code, "the referee is shutting down" if self.shutting_down else "")
            self._on_done(self)
        return self.records

    async def _play(self, k: int) -> MatchRecord:
        spec = self.spec
        names = spec.names or tuple(seat.name or f"seat {seat.seat}" for seat in self.seats)
        config = MatchConfig.of_plan(spec, spec.plan(k), table_id=self.id, names=names, match_no=k)
        absent = [(s.seat, *self._why_absent(s.seat)) for s in self.seats if s.stream is None]
        self._resumes.clear()
        watch = self._watch if self.watchers else None
        referee = Referee(
            self.seats,
            config,
            watch=watch,
            on_give_up=self._given_up,
            broadcast=partial(broadcast, self.seats, self.codec),
        )
        if self.logs is not None:
            referee.log_size = self._log_size
        self.referee = referee
        self.state = TableState.PLAYING
        try:
            record = await referee.run(absent)
        finally:
            self.referee = None
        record.replay.meta.update(spec.meta)
        if self.logs is not None:
            record.replay.meta["log_files"] = [log.name for log in self.logs]
        path = self.replay_path(k)
        if path is not None:
            record.save(path)
        return record

    def _log_size(self, seat: int) -> int:
        return self.logged[seat].logged if seat < len(self.logged) else -1

    def _why_absent(self, seat: int) -> tuple[FailureKind, str]:
        fault = self._faults.get(seat)
        if fault is not None:
            return FailureKind.CRASH, f"{ARENA_FAULT}{fault}"
        code = self._exit_codes.get(seat)
        if code is not None:
            return FailureKind.CRASH, f"the bot process exited with code {code} before joining"
        return FailureKind.DISCONNECT, "did not join the table"

    def replay_path(self, k: int) -> Path | None:
        """Where match ``k``'s replay is written (``None``: not written)."""
        replay = self.spec.plan(k).replay
        if replay is not None:
            return replay
        if self.runs_dir is None:
            return None
        return self.runs_dir / self.id / f"match-{k}.json"

    def abort(self, reason: str) -> None:
        """Stops the table: the running match ends without a result (ABORTED)."""
        self.shutting_down = True
        if self.referee is not None:
            self.referee.abort(reason)
        elif self._task is not None and self.state is TableState.WAITING:
            self._all_joined.set()  # stop waiting; the loop sees shutting_down

    def _watch(self, ev: TableEvent) -> None:
        for w in self.watchers:
            w(ev)

    def _given_up(self, seat: int) -> None:
        self.seats[seat].release()

    # ---------------------------------------------------------------- seat hooks

    def _check_joined(self) -> None:
        """Starts the table once every seat has a stream or a bot that will never come."""
        if all(s.stream is not None or s.seat in self._exited for s in self.seats):
            self._all_joined.set()

    def seat_joined(self, seat: int) -> None:
        """A stream took the seat; the table starts when all four have one. A managed bot
        is stopped until it is asked (``arena.server.turns``)."""
        turn = self.seats[seat].turn
        if turn is not None:
            turn.rest()
        self._check_joined()
        handle = self._lost.pop(seat, None)
        if handle is not None:
            # Back before its drop was judged: the drop was a disconnect after all.
            handle.cancel()
            if self.referee is not None:
                self.referee.seat_lost(seat, FailureKind.DISCONNECT, "the stream ended")

    def seat_lost(self, seat: int) -> None:
        """A seat's stream ended; judged now, or after ``CRASH_CHECK_S`` for a managed bot."""
        referee = self.referee
        if referee is None or self.state is not TableState.PLAYING:
            self._all_joined.clear()
            return
        if seat in self._exited:
            return
        if seat in self._managed:
            loop = asyncio.get_running_loop()
            self._lost[seat] = loop.call_later(CRASH_CHECK_S, self._lost_check, seat)
            return
        referee.seat_lost(seat, FailureKind.DISCONNECT, "the stream ended", self._resumable(seat))

    def _lost_check(self, seat: int, tries: int = 1) -> None:
        self._lost.pop(seat, None)
        referee = self.referee
        if referee is None or seat in self._exited or self.seats[seat].stream is not None:
            return
        if self._managed[seat]() and tries < CRASH_CHECK_TRIES:
            # Its process has ended but the runner has not said so yet: wait for its code.
            loop = asyncio.get_running_loop()
            self._lost[seat] = loop.call_later(CRASH_CHECK_S, self._lost_check, seat, tries + 1)
            return
        referee.seat_lost(seat, FailureKind.DISCONNECT, "the stream ended", self._resumable(seat))

    def seat_back(self, seat: int, took_over: bool, peer: str) -> None:
        """A stream resumed the seat: counted for the rate limit and recorded by the referee."""
        self._resumes.setdefault(seat, []).append(asyncio.get_running_loop().time())
        if self.referee is not None:
            self.referee.seat_back(seat, took_over, peer)

    def bot_exited(
        self,
        seat: int,
        returncode: int | None,
        restarting: bool = False,
        cause: str = "",
        fault: str = "",
    ) -> None:
        """The runner saw the seat's bot process exit before the table was done (``cause``:
        what the runner knows of why, e.g. its cgroup's memory limit; ``returncode`` None:
        it could not be started). ``fault`` says why the end is the arena's fault, not the
        bot's (its sandbox failed to set up, or was killed from outside it): the failure's
        detail then begins with ``ARENA_FAULT``, and an event plays the match again."""
        if self.state is TableState.DONE:
            return
        handle = self._lost.pop(seat, None)
        if handle is not None:
            handle.cancel()
        if not restarting:
            self._exited.add(seat)
            self._exit_codes[seat] = f"{returncode}{cause}"
            if fault:
                self._faults[seat] = fault
            if self.state is TableState.WAITING:
                self._check_joined()
        referee = self.referee
        if referee is not None:
            detail = f"the bot process exited with code {returncode}{cause}"
            if fault:
                detail = f"{ARENA_FAULT}{fault}"
            if restarting:
                detail += "; restarting it"
            referee.seat_lost(seat, FailureKind.CRASH, detail, resumable=restarting)

    def refuse_join(self, seat: int, resume: bool) -> Refused | None:
        """Why a stream may not take ``seat`` now, or ``None``.

        A resume (``resume``: the seat already played in this match) must be allowed by the
        policy (``max_resumes``) and keep to its rate (``resume_gap_ms`` between two).
        """
        if self.state is TableState.DONE:
            return Refused(grpc.StatusCode.FAILED_PRECONDITION, f"table {self.id} is over")
        if self.shutting_down:
            return Refused(grpc.StatusCode.UNAVAILABLE, "the referee is shutting down")
        if self.referee is not None and self.referee.given_up(seat):
            return Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"seat {seat} of table {self.id} was given up for the rest of the match",
            )
        if resume and self.referee is not None:
            return self._refuse_resume(seat)
        return None

    def _resumable(self, seat: int) -> bool:
        """Whether the seat may still be resumed in this match (else a drop gives it up)."""
        limit = self.spec.policy.max_resumes
        return limit > 0 and len(self._resumes.get(seat, ())) < limit

    def _refuse_resume(self, seat: int) -> Refused | None:
        policy = self.spec.policy
        done = self._resumes.get(seat, [])
        if policy.max_resumes == 0:
            return Refused(
                grpc.StatusCode.PERMISSION_DENIED, f"table {self.id} does not allow resuming a seat"
            )
        if len(done) >= policy.max_resumes:
            return Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"seat {seat} of table {self.id} resumed {len(done)} times in this match, the"
                " most its policy allows",
            )
        gap = policy.resume_gap_ms / 1000.0
        if done and asyncio.get_running_loop().time() - done[-1] < gap:
            return Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"seat {seat} of table {self.id} resumed less than {policy.resume_gap_ms} ms ago",
            )
        return None


class TableManager:
    """All the tables of a server, and the token index that finds a seat from a token.

    ``on_match(table, k, record)``, when set, hears of every match that ends on any table.
    """

    def __init__(self, runs_dir: Path | None = None) -> None:
        self.runs_dir = runs_dir
        self.tables: dict[str, Table] = {}
        self.on_match: Callable[[Table, int, MatchRecord], None] | None = None
        self.accepting = True
        self._tokens: dict[str, tuple[Table, int]] = {}
        self._finished: dict[str, None] = {}  # tokens of finished tables, oldest first
        self._count = 0
        self._idle = asyncio.Event()
        self._idle.set()

    def create(self, spec: TableSpec | None = None) -> Table:
        """Creates and starts a table; its four tokens are ``table.tokens``."""
        if not self.accepting:
            raise RuntimeError("the server is shutting down")
        spec = spec or TableSpec()
        self._count += 1
        table_id = spec.table_id or f"t{self._count}-{secrets.token_hex(3)}"
        if table_id in self.tables:
            raise ValueError(f"table {table_id!r} exists already")
        tokens = [secrets.token_urlsafe(18) for _ in range(4)]
        table = Table(table_id, spec, tokens, self.runs_dir, self._table_done, self.on_match)
        self.tables[table_id] = table
        for seat, token in enumerate(tokens):
            self._tokens[token] = (table, seat)
        self._idle.clear()
        table.start()
        return table

    def find(self, token: str) -> tuple[Table, int]:
        """The table and seat a token names; raises ``Refused`` for an unknown token."""
        hit = self._tokens.get(token)
        if hit is not None:
            return hit
        if token in self._finished:
            raise Refused(grpc.StatusCode.FAILED_PRECONDITION, "this token's match is over")
        raise Refused(grpc.StatusCode.UNAUTHENTICATED, "unknown seat token")

    def _table_done(self, table: Table) -> None:
        self.tables.pop(table.id, None)
        for token in table.tokens:
            self._tokens.pop(token, None)
            self._finished[token] = None
        while len(self._finished) > FINISHED_TOKENS:
            del self._finished[next(iter(self._finished))]
        if not self.tables:
            self._idle.set()

    async def shutdown(self, grace_s: float) -> None:
        """Stops taking tables; waits ``grace_s`` for running matches, then aborts the rest."""
        self.accepting = False
        for table in list(self.tables.values()):
            if table.state is TableState.WAITING:
                table.abort("the referee is shutting down")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), grace_s)
        for table in list(self.tables.values()):
            table.abort("the referee is shutting down")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), 5.0)
