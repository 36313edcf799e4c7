"""Which session of an event starts next: the one scheduling rule every runner shares.

A *session* is the plays one table plays on one set of bot processes (arena.tournament.runner);
its boards are played again by the other sessions of its *group* (the other rotations of the
same boards), and a board counts (a duplicate pair) only when every rotation is recorded. The
local pool, the Dask executor, league rounds and the gate all start sessions through
``BoardScheduler``, which keeps three rules:

* **Apart**: two sessions that *hold* a common key never run at once. The runners' key is
  (bot, round): a bot's processes in one round hold that round's boards (the other rotation's
  cards), so no two of them are ever live together (docs/security.md, the twin exclusion).
* **Completion first**: when a slot is free, a session of an *open* group (one whose boards
  are half-played: some session started, some not) starts before any session of a new group;
  within each kind the running order (round, table, rotation) decides.
* **Bounded**: a new group opens only while fewer than ``slots`` groups are open, so at most
  ``slots`` groups' boards are ever half-played, and plays wasted on a stop are few.

Progress is guaranteed: whenever no session runs and some are pending, ``next`` returns one
(with nothing running, no key is held, so every pending session of an open group can start,
and with no open group a new one may open). Every pending session is therefore started once
the sessions before it finish. ``tests/tournament/test_scheduling.py`` checks the three rules
and this guarantee as properties over random event shapes.

Pure: no clock, no I/O; ``drive`` runs a schedule on an asyncio loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Hashable, Iterable
from dataclasses import dataclass

__all__ = ["BoardScheduler", "Slot", "drive"]


@dataclass(frozen=True)
class Slot:
    """One session as the scheduler sees it.

    Attributes:
        id: The session's index among those given to the scheduler.
        group: The sessions whose plays together complete their boards (one per rotation).
        order: Its place in the running order; lower starts first.
        holds: Keys no other running session may hold at the same time.
    """

    id: int
    group: Hashable
    order: tuple[int, ...]
    holds: frozenset[Hashable]


class BoardScheduler:
    """Starts sessions under the rules of the module doc; ``slots`` run at once at most."""

    def __init__(self, sessions: Iterable[Slot], slots: int) -> None:
        if slots < 1:
            raise ValueError(f"slots must be at least 1, got {slots}")
        self.slots = slots
        self._pending = sorted(sessions, key=lambda s: s.order)
        self._running: dict[int, Slot] = {}
        self._held: dict[Hashable, int] = {}
        self._left: dict[Hashable, int] = {}  # sessions of a group not yet finished
        self._started: set[Hashable] = set()  # groups with a session started
        for s in self._pending:
            self._left[s.group] = self._left.get(s.group, 0) + 1

    @property
    def running(self) -> tuple[Slot, ...]:
        """The sessions started and not yet finished."""
        return tuple(self._running.values())

    @property
    def pending(self) -> int:
        """Sessions not yet started."""
        return len(self._pending)

    @property
    def open_groups(self) -> int:
        """Groups with a session started and one not yet finished: their boards are
        half-played."""
        return sum(1 for g in self._started if self._left[g] > 0)

    def done(self) -> bool:
        """Whether every session has started and finished."""
        return not self._pending and not self._running

    def next(self) -> Slot | None:
        """The session to start now, marked running; None when none may start yet."""
        if len(self._running) >= self.slots:
            return None
        fresh: Slot | None = None
        may_open = self.open_groups < self.slots
        for s in self._pending:
            if any(key in self._held for key in s.holds):
                continue
            if s.group in self._started:
                return self._start(s)
            if fresh is None and may_open:
                fresh = s
        return None if fresh is None else self._start(fresh)

    def finished(self, slot: Slot) -> None:
        """Marks a started session finished (played, failed or abandoned alike)."""
        del self._running[slot.id]
        for key in slot.holds:
            del self._held[key]
        self._left[slot.group] -= 1

    def _start(self, slot: Slot) -> Slot:
        self._pending.remove(slot)
        self._running[slot.id] = slot
        self._started.add(slot.group)
        for key in slot.holds:
            self._held[key] = slot.id
        return slot


async def drive(
    scheduler: BoardScheduler,
    play: Callable[[Slot], Awaitable[None]],
    stopping: Callable[[], bool],
    on_start: Callable[[BoardScheduler], None] | None = None,
) -> None:
    """Plays every session of ``scheduler`` with ``play``, as many at once as it allows.

    Stops starting sessions once ``stopping()`` is true and returns when the running ones
    have ended. ``on_start`` sees the scheduler after each start (for tests and reports). The
    first error of a session cancels the others and is raised.
    """
    running: dict[asyncio.Task[None], Slot] = {}
    try:
        while True:
            while not stopping() and (slot := scheduler.next()) is not None:
                running[asyncio.ensure_future(play(slot))] = slot
                if on_start is not None:
                    on_start(scheduler)
            if not running:
                return
            done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                scheduler.finished(running.pop(task))
            for task in done:
                task.result()  # a session's error ends the drive
    finally:
        for task in running:
            task.cancel()
        for task in running:
            with contextlib.suppress(BaseException):
                await task
