"""Bot processes: start each seat's bot from its manifest, watch it, report crashes.

Every seat gets its own process (partners never share one), started with the manifest's
command in its working directory and with ``TICHU_ARENA_SERVER`` and ``TICHU_ARENA_TOKEN``
(or ``TICHU_ARENA_BOT_KEY``) and ``TICHU_ARENA_SEED`` (the seat's seed for the table's first match)
in its environment. Its output goes to a log file. A process
that exits before its table is done is a crash: the table is told (``Table.bot_exited``), and
the bot is restarted while ``restarts`` allow (it then resumes its seat with its token).

``play_table`` is what ``arena play``, the benchmark and the tests use: one table on a
running ``ArenaServer``, four bot processes, the records when the table is done.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO

from arena.referee import MatchRecord, TableEvent
from arena.rules.errors import ArenaError
from arena.server.app import ArenaServer
from arena.server.manifest import Manifest
from arena.server.table import Table, TableSpec, TableState

ENV_SERVER = "TICHU_ARENA_SERVER"
ENV_TOKEN = "TICHU_ARENA_TOKEN"
ENV_BOT_KEY = "TICHU_ARENA_BOT_KEY"
ENV_SEED = "TICHU_ARENA_SEED"


class BotStartError(ArenaError):
    """A bot process that could not be started (its command or working directory is wrong)."""


class BotProcess:
    """One bot process started from a manifest."""

    def __init__(
        self,
        manifest: Manifest,
        env: Mapping[str, str],
        log: Path | None = None,
    ) -> None:
        self.manifest = manifest
        self.env = dict(env)
        self.log = log
        self.proc: asyncio.subprocess.Process | None = None
        self._log_file: IO[bytes] | None = None

    async def start(self) -> None:
        """Starts the process (its output to ``log``, or discarded)."""
        m = self.manifest
        env = {**os.environ, **m.env, **self.env, "PYTHONUNBUFFERED": "1"}
        out: IO[bytes] | int = asyncio.subprocess.DEVNULL
        if self.log is not None:
            self.log.parent.mkdir(parents=True, exist_ok=True)
            self._log_file = out = self.log.open("ab")
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *m.argv(),
                cwd=m.cwd,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=out,
            )
        except OSError as e:
            where = m.path or m.name
            raise BotStartError(
                f"{where}: cannot start {m.argv()!r} in {m.cwd}: {e.strerror or e}"
            ) from e

    @property
    def pid(self) -> int | None:
        """The process id, once started."""
        return self.proc.pid if self.proc is not None else None

    async def wait(self) -> int:
        """Waits for the process to exit; returns its exit code."""
        assert self.proc is not None, "not started"
        return await self.proc.wait()

    async def stop(self, timeout_s: float = 5.0) -> int | None:
        """Lets the process exit on its own for ``timeout_s``, then terminates, then kills it."""
        proc = self.proc
        if proc is None:
            return None
        try:
            for signal_it, wait_s in ((None, timeout_s), (proc.terminate, 2.0), (proc.kill, 5.0)):
                if proc.returncode is not None:
                    break
                if signal_it is not None:
                    with contextlib.suppress(ProcessLookupError):
                        signal_it()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), wait_s)
        finally:
            if self._log_file is not None:
                self._log_file.close()
                self._log_file = None
        return proc.returncode


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
        table.bot_exited(seat, code, restarting)
        if not restarting:
            return
        restarts -= 1
        await bot.start()


async def play_table(
    server: ArenaServer,
    spec: TableSpec,
    manifests: Sequence[Manifest],
    *,
    log_dir: Path | None = None,
    restarts: int = 0,
    watch: Callable[[TableEvent], None] | None = None,
    on_exit: Callable[[int, int], None] | None = None,
    extra_env: Callable[[Table], Sequence[Mapping[str, str]]] | None = None,
    on_table: Callable[[Table], None] | None = None,
    on_record: Callable[[int, MatchRecord], None] | None = None,
) -> tuple[Table, list[MatchRecord]]:
    """Creates a table, starts a bot process per seat, and plays the table's matches.

    ``on_exit(seat, code)`` hears about every early exit. ``extra_env(table)[seat]`` adds
    to a seat's environment (tests use it); ``on_table(table)`` hears of the table as soon
    as it exists; ``on_record(k, record)`` of each match (from 1) as soon as it ends. The
    processes are stopped before returning.
    """
    if len(manifests) != 4:
        raise ValueError(f"a table needs four bots, not {len(manifests)}")
    # A table waits for its slowest bot, and at least ``spec.startup_timeout_s``: many bots
    # starting at once take longer than one alone.
    timeout = max(m.startup_timeout_s for m in manifests)
    if timeout > spec.startup_timeout_s:
        spec = replace(spec, startup_timeout_s=timeout)
    table = server.create_table(spec)
    table.on_record = on_record
    if on_table is not None:
        on_table(table)
    if watch is not None:
        table.watchers.append(watch)
    bots = []
    extra = extra_env(table) if extra_env is not None else [{}, {}, {}, {}]
    for seat, m in enumerate(manifests):
        env = {
            ENV_SERVER: server.address,
            ENV_TOKEN: table.tokens[seat],
            ENV_SEED: str(spec.seat_seed(1, seat)),
            **extra[seat],
        }
        log = seat_log(log_dir, seat, m.name) if log_dir is not None else None
        bots.append(BotProcess(m, env, log))
        table.manage(seat)
    watchers: list[asyncio.Task[None]] = []
    try:
        for seat, bot in enumerate(bots):
            await bot.start()
            watchers.append(
                asyncio.ensure_future(
                    _watch(table, seat, bot, restarts, on_exit or (lambda s, c: None))
                )
            )
        records = await table.wait()
    finally:
        if table.state is not TableState.DONE:
            table.abort("the runner stopped")
        for w in watchers:
            w.cancel()
        await asyncio.gather(*(bot.stop() for bot in bots))
    return table, records


def seat_log(log_dir: Path, seat: int, name: str) -> Path:
    """The log file of the bot ``name`` at ``seat`` of a table whose logs go to ``log_dir``."""
    return log_dir / f"seat{seat}-{_safe(name)}.log"


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:40] or "bot"
