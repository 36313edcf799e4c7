"""Bot processes: start each seat's bot from its manifest, watch it, report crashes.

Every seat gets its own process (partners never share one), started with the manifest's
command in its working directory, in a sandbox (``arena.server.sandbox``), with
``TICHU_ARENA_SERVER`` (its own Unix socket to the referee: ``arena.server.relay``),
``TICHU_ARENA_TOKEN`` (or ``TICHU_ARENA_BOT_KEY``) and ``TICHU_ARENA_SEED`` (the seat's
seed for the table's first match) in its environment. Its output goes to a log file,
capped. A process that exits before its table is done is a crash: the table is told
(``Table.bot_exited``), and the bot is restarted while ``restarts`` allow (it then resumes
its seat with its token).

``play_table`` is what ``arena play``, the benchmark and the tests use: one table on a
running ``ArenaServer``, four bot processes, the records when the table is done.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from arena.referee import MatchRecord, TableEvent
from arena.rules.errors import ArenaError
from arena.server.app import ArenaServer
from arena.server.image import runtime_programs
from arena.server.manifest import CommandError, Limits, Manifest, is_reference_bot
from arena.server.relay import SeatRelay
from arena.server.sandbox import (
    Launch,
    Sandbox,
    SandboxLevel,
    SandboxSetupError,
    bot_path,
    require_sandbox,
)
from arena.server.table import Table, TableSpec, TableState
from arena.server.turns import MACHINE, BotTurn, TurnLock

ENV_TOKEN = "TICHU_ARENA_TOKEN"
ENV_BOT_KEY = "TICHU_ARENA_BOT_KEY"
ENV_NAME = "TICHU_ARENA_NAME"

LOG_CHUNK = 64 * 1024
LOG_DRAIN_PAUSE_S = 0.05
"""Past the log cap, one read of ``LOG_CHUNK`` bytes per pause: about 1.3 MB/s at most."""
ENV_SEED = "TICHU_ARENA_SEED"
_PREPARING = threading.Lock()
"""One sandbox prepared at a time in a process (the image module's state is not shared
between threads)."""


class BotStartError(ArenaError):
    """A bot process that could not be started (its command or working directory is wrong)."""


class BotSetupError(BotStartError):
    """A bot process the arena could not start through no fault of the bot's (its cgroup, the
    runner's start of the sandbox): the seat counts as ended by the arena's fault."""


class BotProcess:
    """One bot process started from a manifest, in ``sandbox``.

    Its stdout and stderr go through a pipe to ``log``: the first ``limits.log_kb`` KiB of
    each start are kept, the rest is read at a bounded rate and dropped (a bot that floods
    its output is slowed, not the referee). Stopping it kills its whole process tree: the
    sandbox's pid namespace (``full``, ``partial``) or its process group (``none``).
    """

    def __init__(
        self,
        manifest: Manifest,
        env: Mapping[str, str],
        log: Path | None = None,
        *,
        sandbox: Sandbox,
        socket: Path,
        limits: Limits | None = None,
        writable: Sequence[Path] = (),
    ) -> None:
        self.manifest = manifest
        self.env = dict(env)
        self.log = log
        self.sandbox = sandbox
        self.limits = limits or manifest.limits
        self.writable = tuple(writable)
        self.proc: asyncio.subprocess.Process | None = None
        self._pump: asyncio.Task[None] | None = None
        self.logged = 0  # bytes of output in the log: what the referee marks decisions with
        self._launch: Launch | None = None  # what the running process holds on the host
        self._ran: bool | None = None  # whether its sandbox ran the bot's command (once known)
        self.relay = SeatRelay(socket)  # its own socket: no flood of it reaches other bots

    async def start(self) -> None:
        """Starts the process in its sandbox (its output to ``log``, or discarded)."""
        m = self.manifest
        await asyncio.to_thread(self._cleanup)  # what a previous start of it left
        where = m.path or m.name
        if m.path is None:  # made in code: it has no folder to show its sandbox
            raise BotStartError(f"{where}: a manifest needs a path (its folder is the bot's view)")
        try:
            argv = m.launch_argv()
        except CommandError as e:
            raise BotStartError(f"{where}: {e}") from None
        bare = "/" not in argv[0]  # a name looked up on the sandbox's PATH
        exe = shutil.which(argv[0], path=bot_path()) if bare else argv[0]
        if exe is None or not os.access(exe, os.X_OK):
            raise BotStartError(f"{where}: cannot start {m.argv()!r} in {m.cwd}: no such program")
        if bare and self.sandbox.level is SandboxLevel.FULL and Path(exe) not in runtime_programs():
            raise BotStartError(
                f"{where}: {m.command[0]!r} is {exe} on this host, which the sandbox does not "
                "hold: a command runs {python}, python3, node, or a program in the bot's folder"
            )
        argv[0] = exe
        socket = self.relay.path or await self.relay.start()  # kept across restarts

        def prepare() -> Launch:
            with _PREPARING:
                return self.sandbox.launch(
                    argv,
                    cwd=m.cwd,
                    folder=m.folder,
                    env={**m.env, ENV_NAME: m.name, **self.env},
                    socket=socket,
                    limits=self.limits,
                    writable=self.writable,
                )

        try:
            # In a thread: building an image reads and copies files, and waits on other
            # processes' builds; on the loop that would stall every table of the referee
            # (gRPC cancels a call its server has not taken up within 30 s).
            launch = await asyncio.to_thread(prepare)
        except SandboxSetupError as e:  # its cgroup: the host's, not the bot's
            raise BotSetupError(f"{where}: {e}") from None
        except ArenaError as e:  # its folder's image (too large) or the filter
            raise BotStartError(f"{where}: {e}") from None
        self._launch, self._ran = launch, None
        out = asyncio.subprocess.PIPE if self.log is not None else asyncio.subprocess.DEVNULL
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *launch.argv,
                cwd=launch.cwd,
                env=launch.env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                pass_fds=launch.fds,
            )
        except OSError as e:  # the sandbox's tools, or the host's processes, not the bot
            await asyncio.to_thread(self._cleanup)
            raise BotSetupError(
                f"{where}: the runner cannot start {launch.argv[0]}: {e.strerror or e}"
            ) from e
        finally:
            launch.close()
        if self.log is not None and self.proc.stdout is not None:
            self._pump = asyncio.ensure_future(self._copy(self.proc.stdout, self.log))

    async def _copy(self, stream: asyncio.StreamReader, log: Path) -> None:
        """Copies the output to the log up to the cap; past it, reads slowly and drops."""
        log.parent.mkdir(parents=True, exist_ok=True)
        room = self.limits.log_kb * 1024
        dropped = 0
        with log.open("ab") as f:
            self.logged = f.tell()  # a restarted bot appends to its earlier output
            while chunk := await stream.read(LOG_CHUNK):
                if room > 0:
                    kept = chunk[:room]
                    f.write(kept)
                    f.flush()
                    self.logged += len(kept)
                    dropped += max(0, len(chunk) - room)
                    room -= len(chunk)
                else:
                    dropped += len(chunk)
                    await asyncio.sleep(LOG_DRAIN_PAUSE_S)
            if dropped:
                f.write(f"\n[arena: {dropped} bytes of output past the cap dropped]\n".encode())

    @property
    def pid(self) -> int | None:
        """The process id, once started."""
        return self.proc.pid if self.proc is not None else None

    def ended(self) -> bool:
        """Whether the process has ended, even before the runner has reaped it (a zombie)."""
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return proc is not None
        try:
            with open(f"/proc/{proc.pid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        return state in (b"Z", b"X")

    async def wait(self) -> int:
        """Waits for the process to exit; returns its exit code."""
        assert self.proc is not None, "not started"
        return await self.proc.wait()

    def freeze(self) -> None:
        """Asks the kernel to stop all its processes and threads (its cgroup's freezer)."""
        cgroup = self._launch.cgroup if self._launch is not None else None
        if cgroup is not None:
            cgroup.freeze()

    def frozen(self) -> bool:
        """Whether none of its processes runs (True when it has no cgroup left)."""
        cgroup = self._launch.cgroup if self._launch is not None else None
        return cgroup is None or cgroup.frozen()

    def thaw(self) -> None:
        """Lets its processes run again."""
        cgroup = self._launch.cgroup if self._launch is not None else None
        if cgroup is not None:
            cgroup.thaw()

    def exit_cause(self) -> str:
        """What the runner knows of why the process ended, as a clause ('' when nothing)."""
        cgroup = self._launch.cgroup if self._launch is not None else None
        if cgroup is None or not cgroup.oom_kills():
            return ""
        mib = self.limits.memory_mb + self.limits.tmp_mb
        return f" (the kernel ended its processes at the bot's memory limit, {mib} MiB in all)"

    def arena_fault(self) -> str:
        """Once the process has ended: why its end is the arena's fault, not the bot's, or ''.

        In the ``full`` sandbox bwrap reports the bot's exit only when it had set up and run
        the bot's command; a process that ended without that report (other than at the bot's
        memory limit) failed to set up or was killed from outside the sandbox, which the bot
        cannot reach. Below ``full`` the end of the sandbox's tools cannot be told from the
        bot's own (a signal may be the bot's own crash): '' (docs/referee.md).
        """
        proc, launch = self.proc, self._launch
        if proc is None or proc.returncode is None or launch is None:
            return ""
        if self._ran is None:
            self._ran = launch.ran_bot()
        if self._ran is not False or self.exit_cause():
            return ""
        code = proc.returncode
        if code < 0:
            signame = _signal_name(code)
            return f"the sandbox was killed by {signame} before it reported the bot's exit"
        return (
            f"the sandbox ended with code {code} before it ran the bot (its set-up failed; its"
            " message is in the bot's log)"
        )

    async def stop(self, timeout_s: float = 5.0) -> int | None:
        """Lets the process exit on its own for ``timeout_s``, then terminates, then kills it.

        The kill reaches the whole tree: the process group, and with it the sandbox (whose
        pid namespace dies with its first process).
        """
        proc = self.proc
        if proc is None:  # never started, or its start failed after the relay was opened
            await self.relay.close()
            return None
        self.thaw()  # a frozen process can neither end on its own nor die
        try:
            for sig, wait_s in ((None, timeout_s), (signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
                if proc.returncode is not None:
                    break
                if sig is not None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(proc.pid, sig)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), wait_s)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # what the bot left in its group
            if self._pump is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self._pump), 5.0)
                self._pump.cancel()
        finally:
            await asyncio.to_thread(self._cleanup)  # may wait for its cgroup to empty
            await self.relay.close()
        return proc.returncode

    def _cleanup(self) -> None:
        launch, self._launch = self._launch, None
        if launch is not None:
            launch.release()


async def _watch(
    table: Table, seat: int, bot: BotProcess, restarts: int, on_exit: Callable[[int, int], None]
) -> None:
    """Reports the seat's process exiting before the table is done; restarts it if allowed."""
    while True:
        code = await bot.wait()
        if table.state is TableState.DONE:
            return
        on_exit(seat, code)
        restarting = restarts > 0
        table.bot_exited(seat, code, restarting, bot.exit_cause(), bot.arena_fault())
        if not restarting:
            return
        restarts -= 1
        await bot.start()


async def play_table(
    server: ArenaServer,
    spec: TableSpec,
    manifests: Sequence[Manifest | None],
    *,
    log_dir: Path | None = None,
    restarts: int = 0,
    watch: Callable[[TableEvent], None] | None = None,
    on_exit: Callable[[int, int], None] | None = None,
    extra_env: Callable[[Table], Sequence[Mapping[str, str]]] | None = None,
    on_table: Callable[[Table], None] | None = None,
    on_record: Callable[[int, MatchRecord], None] | None = None,
    sandbox: Sandbox | None = None,
    limits: Limits | None = None,
    writable: Sequence[Path] = (),
    strict: bool = False,
    owners: Sequence[str | None] = (None, None, None, None),
) -> tuple[Table, list[MatchRecord]]:
    """Creates a table, starts a bot process per seat, and plays the table's matches.

    A seat whose manifest is ``None`` gets no process: someone else joins it with its token
    (a person's client, ``arena table``); its log file stays empty.

    ``on_exit(seat, code)`` hears about every early exit. ``extra_env(table)[seat]`` adds
    to a seat's environment (tests use it); ``on_table(table)`` hears of the table once its
    seats are set up, before any bot starts; ``on_record(k, record)`` of each match (from 1)
    as soon as it ends. The processes are stopped before returning.

    Every process runs in ``sandbox`` (default: the host's, which must be ``full``:
    ``require_sandbox``), with its manifest's limits capped by ``limits``; the sandbox is
    recorded in each replay's ``meta``. ``writable`` folders are shown to the bots
    read-write (tests collect what the bots saw there).

    Where the sandbox can freeze a bot (a cgroup with a freezer) and the server does not ping
    its bots (a frozen bot cannot answer a ping), each process runs only while its seat is
    asked, and never beside another process of the same bot or of another bot of the seat's
    ``owners`` entry (``arena.server.turns``; with ``strict``, beside no other bot process at
    all).
    """
    if len(manifests) != 4:
        raise ValueError(f"a table needs four bots, not {len(manifests)}")
    if server.socket is None:
        raise ValueError("the server has no Unix socket for sandboxed bots (not started?)")
    if sandbox is None:
        sandbox = require_sandbox()
    seat_limits = [
        None if m is None else m.limits.capped(limits) if limits else m.limits for m in manifests
    ]
    spec = replace(
        spec,
        meta={
            **spec.meta,
            "sandbox": {
                **sandbox.describe(),
                "limits": [None if lim is None else lim.model_dump() for lim in seat_limits],
            },
        },
    )
    # A table waits for its slowest bot, and at least ``spec.startup_timeout_s``: many bots
    # starting at once take longer than one alone.
    timeout = max((m.startup_timeout_s for m in manifests if m is not None), default=0.0)
    if timeout > spec.startup_timeout_s:
        spec = replace(spec, startup_timeout_s=timeout)
    table = server.create_table(spec)
    table.on_record = on_record
    if watch is not None:
        table.watchers.append(watch)
    bots: list[BotProcess | None] = []
    extra = extra_env(table) if extra_env is not None else [{}, {}, {}, {}]
    taking_turns = TurnLock()  # one of this table's bots thawed at a time
    turns: list[BotTurn] = []
    for seat, m in enumerate(manifests):
        if m is None:
            bots.append(None)
            continue
        env = {
            ENV_TOKEN: table.tokens[seat],
            ENV_SEED: str(spec.seat_seed(1, seat)),
            **extra[seat],
        }
        log = seat_log(log_dir, seat, m.name) if log_dir is not None else None
        bot = BotProcess(
            m,
            env,
            log,
            sandbox=sandbox,
            socket=server.socket,
            limits=seat_limits[seat],
            writable=writable,
        )
        bots.append(bot)
        table.manage(seat, bot.ended)
        if server.freezes and sandbox.freezes:
            keys = [*bot_keys(m), *turn_keys(owners[seat], strict)]
            turn = BotTurn(bot, server.turns.get(keys), bots, taking_turns)
            table.seats[seat].turn = turn
            turns.append(turn)
    if log_dir is not None:
        table.logs = [
            seat_log(log_dir, s, "person") if m is None else seat_log(log_dir, s, m.name)
            for s, m in enumerate(manifests)
        ]
        table.logged = [_NO_LOG if proc is None else proc for proc in bots]
    if on_table is not None:
        on_table(table)
    watchers: list[asyncio.Task[None]] = []
    try:
        for seat, proc in enumerate(bots):
            if proc is None:
                continue
            try:
                await proc.start()
            except BotSetupError as e:  # the seat is absent by the arena's fault
                table.bot_exited(seat, None, fault=str(e))
                continue
            watchers.append(
                asyncio.ensure_future(
                    _watch(table, seat, proc, restarts, on_exit or (lambda s, c: None))
                )
            )
        records = await table.wait()
    finally:
        if table.state is not TableState.DONE:
            table.abort("the runner stopped")
        for w in watchers:
            w.cancel()
        for turn in turns:  # each last turn ends once its bot is seen stopped
            await turn.settle()
        # A seat given up is sent nothing more: its process gets no time to end on its own.
        given_up = {seat for record in table.records for seat in record.outcome.given_up}
        await asyncio.gather(
            *(
                proc.stop(0.0 if seat in given_up else STOP_GRACE_S)
                for seat, proc in enumerate(bots)
                if proc is not None
            )
        )
    return table, records


STOP_GRACE_S = 10.0
"""How long a table's bots have, thawed at its end, to read what was sent to them while they
were frozen (the last plays, the match's end) and exit on their own before they are stopped:
a frozen bot reads nothing, so at a loaded machine's table end it has that backlog first."""


def bot_keys(manifest: Manifest) -> list[str]:
    """The turn key of a bot's own processes (``bot_key``), none for the arena's reference
    bots: they are not a stranger's code, so their copies hold no channel to keep shut, and
    tables of them (the demo, the ladder, the benchmarks) play at once."""
    return [] if is_reference_bot(manifest) else [bot_key(manifest)]


def turn_keys(owner: str | None, strict: bool) -> list[str]:
    """The turn keys a bot takes beside its own (``bot_key``): its owner's, so that one
    owner's bots never run at once, and with ``strict`` the one of every bot."""
    return [*([f"owner:{owner}"] if owner else []), *([MACHINE] if strict else [])]


def bot_key(manifest: Manifest) -> str:
    """What makes two processes one bot's: its manifest file (its name where it has none)."""
    return str(manifest.path.resolve()) if manifest.path is not None else manifest.name


class _NoLog:
    """A seat without a process (a person's): no output to measure."""

    logged = -1


_NO_LOG = _NoLog()


def seat_log(log_dir: Path, seat: int, name: str) -> Path:
    """The log file of the bot ``name`` at ``seat`` of a table whose logs go to ``log_dir``."""
    return log_dir / f"seat{seat}-{_safe(name)}.log"


def _safe(name: str) -> str:
    # ``+`` kept: a league's bot names (``[A-Za-z0-9._+-]``) map to distinct files, so the
    # owner of ``data+bot`` is never served the logs of ``data_bot``
    return "".join(c if c.isalnum() or c in "-_.+" else "_" for c in name)[:40] or "bot"


def _signal_name(code: int) -> str:
    """``SIGSEGV`` for the exit code ``-11``."""
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"
