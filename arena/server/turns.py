"""Sealed in time: a bot's processes run only while the referee waits for its answer.

Two processes that run at the same moment share the CPUs and caches under them, and can pass
bits by contending for them (docs/security.md §9). The sandbox cannot refuse that; time can:

* **One seat at a time at a table.** Every managed bot process is frozen (the cgroup freezer,
  ``BotCgroup.freeze``: all its processes and threads, waited for until the kernel reports
  them stopped) from the moment it joins, and thawed only while it is asked; it is frozen
  again when its answer is in, before the next seat is thawed: a table's bots take turns (a
  lock per table). The decisions the rules make simultaneous (Grand Tichu, the exchange) are
  asked of all seats at once as before; the bots among them are thawed one after another,
  each clock starting when its bot is thawed (a person's seat is not kept waiting).
* **One process of a bot at a time in a referee.** Before a seat is thawed it takes its
  bot's turn: a lock per bot (its manifest file; none for the arena's reference bots) and
  per owner (a league's), held until its turn ends; the next holder of a lock first waits
  until the last one's bot is seen stopped (``BotTurn.settle``), so the wait for the kernel
  is paid where the referee would wait anyway. A referee plays every table of an event run
  here, of a gate, of a league round, so two copies of a bot there, partners at one table or
  at two tables, never run at once. On a Dask cluster a task (one table) has a referee of its
  own, one of its worker machine's several: its locks are the machine's too (``TurnLocks``
  with a folder: an ``flock`` per key). ``strict`` adds one lock for all: at most one bot
  process of the referee (of the machine, on a cluster) runs at a time.

A bot's decision time is not touched: its clock starts once it is thawed. What it cannot do
any more is compute on the others' time.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

__all__ = ["MACHINE", "BotTurn", "Freezable", "TurnLock", "TurnLocks", "machine_folder"]

MACHINE = "*all*"
"""The key of the strict level's one lock: every bot process of the referee takes it."""

_POLL_S = 0.0005
"""How often a bot still running is looked at again while the referee waits for it to stop."""


class Freezable(Protocol):
    """A bot process that can be stopped and let run again as a whole."""

    def freeze(self) -> None:
        """Asks for it to stop (``frozen`` says when it has)."""

    def frozen(self) -> bool:
        """Whether none of its processes runs."""

    def thaw(self) -> None:
        """Lets it run."""


_SPINS = 32
"""Reads of a freezer's state before waiting on the loop: a bot asleep (waiting for its next
request, as an answered bot is) stops at once; one still computing stops at its next tick."""
_FREEZE_WAIT_S = 5.0
"""The longest the referee waits for a bot to stop. A task deep in the kernel stops on its way
out; one that has not stopped by then is let be and the turn goes on (``stopped`` says False):
a limit on what a bot stuck in the kernel can cost the table, not a guarantee."""


async def stopped(bot: Freezable) -> bool:
    """Stops ``bot`` if it runs (a process that never joined was never asked to) and waits
    until it has (polling the loop, never blocking it); False after ``_FREEZE_WAIT_S``."""
    if bot.frozen():
        return True
    bot.freeze()
    for _ in range(_SPINS):
        if bot.frozen():
            return True
    deadline = time.monotonic() + _FREEZE_WAIT_S
    while not bot.frozen():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(_POLL_S)
    return True


class TurnLock(asyncio.Lock):
    """A lock of turns that remembers its last holder: the next one waits for that bot to
    have stopped before its own runs (``BotTurn.settle``).

    With a ``path`` it is the machine's too: held, it also holds an ``flock`` on that file,
    so referees in other processes of the machine (a Dask worker's tasks) wait for it; its
    holder then waits until its bot has stopped before letting it go, since no other process
    can wait for that."""

    def __init__(self, path: Path | None = None) -> None:
        super().__init__()
        self.last: BotTurn | None = None
        self.path = path
        self._fd: int | None = None

    async def acquire(self) -> Literal[True]:
        """Takes the lock (in this referee, then on the machine)."""
        await super().acquire()
        if self.path is None:
            return True
        try:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            wait = _POLL_S
            while True:
                try:
                    fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return True
                except BlockingIOError:  # a referee of another process has its turn
                    await asyncio.sleep(wait)
                    wait = min(2 * wait, 0.02)
        except BaseException:
            super().release()
            raise

    def release(self) -> None:
        """Gives the lock back (on the machine first)."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        super().release()

    def close(self) -> None:
        """Closes its file (which lets the machine's lock go, were it still held)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def machine_folder() -> Path:
    """Where the locks of the machine's turns live: beside the runtime's images (one per user
    and machine, in memory where there is a memory file system)."""
    from arena.server.image import images_folder

    return images_folder() / "turns"


class TurnLocks:
    """The turns of one referee's bots, by key (a bot's manifest, an owner, or ``MACHINE``).

    With a ``folder`` (a cluster's task: several referees on one machine) every lock is the
    machine's too, by a file of the folder named after its key."""

    def __init__(self, folder: Path | None = None) -> None:
        self._locks: dict[str, TurnLock] = {}
        self.folder = folder

    def get(self, keys: Sequence[str]) -> list[TurnLock]:
        """The locks of ``keys``, in one order for every caller (no two wait on each other)."""
        return [self._lock(key) for key in sorted(set(keys))]

    def close(self) -> None:
        """Closes the machine's lock files (the referee stops; a worker plays many tasks)."""
        for lock in self._locks.values():
            lock.close()

    def _lock(self, key: str) -> TurnLock:
        lock = self._locks.get(key)
        if lock is None:
            path = None
            if self.folder is not None:
                self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
                path = self.folder / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".lock")
            lock = self._locks[key] = TurnLock(path)
        return lock


class BotTurn:
    """A seat's turn: once whatever held its locks and the other seats' bots at its table
    are stopped, take its bot's locks and thaw it; at its end ask it to stop and give the
    locks back. The next holder of a lock waits until the bot has stopped (``settle``), so
    the wait for the kernel falls where the referee would wait anyway, not on every answer."""

    def __init__(
        self,
        bot: Freezable,
        locks: Sequence[TurnLock],
        table: Sequence[Freezable | None] = (),
        table_lock: TurnLock | None = None,
    ) -> None:
        self.bot = bot
        # The table's lock first (one bot of a table thawed at a time), then the bot's own.
        self.locks = (*(() if table_lock is None else (table_lock,)), *locks)
        self.table = table  # every seat's bot, this one's too (None: a person's seat)
        self._held: list[TurnLock] = []
        self._began = 0
        self._stopping = False  # asked to stop at the end of a turn, not yet seen stopped
        #: When set (a list), each turn's (thawed, seen stopped) monotonic ns, and at index 0
        #: the first rest as (0, asked to stop): what a test checks the bot's own clock against.
        self.windows: list[tuple[int, int]] | None = None

    async def begin(self) -> None:
        """Waits for the bot's turn (its table's, then its own), waits until the last holder
        of each of its locks and whatever else of the table has stopped, then lets the bot
        run."""
        for lock in self.locks:
            await lock.acquire()
            self._held.append(lock)
        for lock in self._held:
            if lock.last is not None and lock.last is not self:
                await lock.last.settle()
        await self.settle()  # its own last turn, if nobody has waited for it yet
        for other in self.table:
            if other is not None and other is not self.bot:
                await stopped(other)
        self._began = time.monotonic_ns()
        self.bot.thaw()

    async def end(self) -> None:
        """Asks the bot to stop and gives its turn back; the next holder of its locks waits
        until it has stopped (or this turn does, before a lock of the machine goes)."""
        self.bot.freeze()
        if self._held:
            self._stopping = True
            if self.windows is not None:
                self.windows.append((self._began, time.monotonic_ns()))
            if any(lock.path is not None for lock in self._held):
                await self.settle()
        held, self._held = self._held, []
        for lock in reversed(held):
            lock.last = self
            lock.release()

    async def settle(self) -> None:
        """Waits until the bot, asked to stop at the end of its last turn, has stopped; that
        turn's window then ends when it was seen stopped."""
        if not self._stopping:
            return
        await stopped(self.bot)
        if self._stopping:  # not already seen stopped by another waiter meanwhile
            self._stopping = False
            if self.windows:
                self.windows[-1] = (self.windows[-1][0], time.monotonic_ns())

    def rest(self) -> None:
        """Stops the bot between turns (it joined, or came back); the next seat's turn waits
        until it has stopped."""
        if not self._held:
            self.bot.freeze()
            if self.windows is not None and not self.windows:
                self.windows.append((0, time.monotonic_ns()))
