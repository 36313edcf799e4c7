"""Sealed in time: a bot's processes run only while the referee waits for its answer.

Two processes that run at the same moment share the CPUs and caches under them, and can pass
bits by contending for them (docs/security.md §9). The sandbox cannot refuse that; time can:

* **One seat at a time at a table.** Every managed bot process is frozen (the cgroup freezer,
  ``BotCgroup.freeze``: all its processes and threads, waited for until the kernel reports
  them stopped) from the moment it joins, and thawed only while it is asked; it is frozen
  again when its answer is in, before the next seat is thawed. The referee asks decisions the
  rules make simultaneous (Grand Tichu, the exchange) seat by seat, each on its own clock.
* **One process of a bot at a time anywhere.** Before a seat is thawed it takes its bot's
  turn: a lock per bot (its manifest file) held until it is frozen again, in this process (an
  asyncio lock per referee) and across the machine's processes (an ``flock`` on a file of the
  runner's private folder: Dask workers, a league service and a CLI alike). So two copies of
  a bot, partners at one table or at two tables, never run at once. ``strict`` adds one lock
  for the whole machine: at most one bot process runs at a time.

A bot's decision time is not touched: its clock starts once it is thawed. What it cannot do
any more is compute on the others' time.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

__all__ = ["MACHINE", "BotTurn", "Freezable", "TurnLocks"]

MACHINE = "*machine*"
"""The key of the strict level's one lock: every bot process of the machine takes it."""

_POLL_S = 0.001
"""How often a turn held by another process of the machine is tried again."""


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
"""The longest the referee waits for a bot to stop (a task deep in the kernel stops on its
way out; it is never let run beside another meanwhile)."""


async def stopped(bot: Freezable) -> bool:
    """Waits until ``bot`` is frozen (polling the loop, never blocking it); False after
    ``_FREEZE_WAIT_S``."""
    for _ in range(_SPINS):
        if bot.frozen():
            return True
    deadline = time.monotonic() + _FREEZE_WAIT_S
    while not bot.frozen():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(_POLL_S)
    return True


def _folder() -> Path:
    """The runner's private folder of lock files (the same for every process of this user)."""
    folder = Path(tempfile.gettempdir()) / f"tichu-arena-turns-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


class _Turn:
    """One key's lock: an asyncio lock in this process, then an ``flock`` across processes."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.local = asyncio.Lock()
        name = hashlib.sha256(key.encode()).hexdigest()[:32]
        self._fd = os.open(_folder() / name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    async def acquire(self) -> None:
        await self.local.acquire()
        try:
            while True:
                try:
                    fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return
                except BlockingIOError:
                    await asyncio.sleep(_POLL_S)
        except BaseException:
            self.local.release()
            raise

    def release(self) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        self.local.release()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


class TurnLocks:
    """The turns of one referee's bots, by key (a bot's manifest, or ``MACHINE``)."""

    def __init__(self) -> None:
        self._turns: dict[str, _Turn] = {}

    def get(self, keys: Sequence[str]) -> list[_Turn]:
        """The locks of ``keys``, in one order for every caller (no two wait on each other)."""
        out = []
        for key in sorted(set(keys)):
            turn = self._turns.get(key)
            if turn is None:
                turn = self._turns[key] = _Turn(key)
            out.append(turn)
        return out

    def close(self) -> None:
        """Closes the lock files (the referee is done)."""
        for turn in self._turns.values():
            turn.close()
        self._turns.clear()


class BotTurn:
    """A seat's turn: once the other seats' bots at its table are stopped, take its bot's
    locks and thaw it; freeze it, wait until it is stopped and give the locks back."""

    def __init__(
        self, bot: Freezable, locks: Sequence[_Turn], table: Sequence[Freezable | None] = ()
    ) -> None:
        self.bot = bot
        self.locks = tuple(locks)
        self.table = table  # every seat's bot, this one's too (None: a person's seat)
        self._held: list[_Turn] = []
        self._began = 0
        #: When set (a list), each turn's (thawed, frozen) monotonic ns, and at index 0 the
        #: first rest as (0, asked to stop): what a test checks the bot's own clock against.
        self.windows: list[tuple[int, int]] | None = None

    async def begin(self) -> None:
        """Waits for the bot's turn, then lets it run."""
        for other in self.table:
            if other is not None and other is not self.bot:
                await stopped(other)
        for lock in self.locks:
            await lock.acquire()
            self._held.append(lock)
        self._began = time.monotonic_ns()
        self.bot.thaw()

    async def end(self) -> None:
        """Stops the bot, waits until it has stopped, then gives its turn back."""
        self.bot.freeze()
        try:
            await stopped(self.bot)
        finally:
            if self.windows is not None and self._held:
                self.windows.append((self._began, time.monotonic_ns()))
            held, self._held = self._held, []
            for lock in reversed(held):
                lock.release()

    def rest(self) -> None:
        """Stops the bot between turns (it joined, or came back); the next seat's turn waits
        until it has stopped."""
        if not self._held:
            self.bot.freeze()
            if self.windows is not None and not self.windows:
                self.windows.append((0, time.monotonic_ns()))
