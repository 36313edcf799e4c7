"""What several ``arena`` commands share: options, and how failures and counts are printed."""

from __future__ import annotations

import contextlib
import math
import signal
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from arena.tournament.leaderboard import FailureRow
from arena.tournament.runner import Progress

LOG_WIDTH = 250
"""Columns of output that is not a terminal (a pipe, a CI log): wide enough that no table or
line is wrapped, so a printed command stays on one line to copy and ``grep`` finds it."""


def make_console(*, stderr: bool = False, soft_wrap: bool = False) -> Console:
    """A console for a command's output: rich's own on a terminal; otherwise plain lines that
    are never wrapped (``soft_wrap``) and tables laid out ``LOG_WIDTH`` wide."""
    probe = Console(stderr=stderr)
    if probe.is_terminal:
        return Console(stderr=stderr, soft_wrap=soft_wrap)
    return Console(stderr=stderr, soft_wrap=True, width=max(LOG_WIDTH, probe.width))


console = make_console()

AllowUnsandboxedOpt = Annotated[
    bool,
    typer.Option(
        "--allow-unsandboxed",
        help="Run bot processes in a weaker sandbox (partial, none) when this host cannot"
        " make a full one (docs/security.md).",
    ),
]

ClusterOption = Annotated[
    str | None,
    typer.Option(help="Play on Dask: a scheduler (tcp://HOST:8786) or local:N worker processes."),
]


def old_spelling(name: str, min: float | None = None) -> Any:
    """A hidden option: an earlier name kept working after the one vocabulary of issue 51
    (every duration's unit at the end of its name, ``-ms`` or ``-s``; one unit a concept)."""
    return typer.Option(name, hidden=True, show_default=False, min=min)


PLAIN_EVERY_S = 10.0
"""Seconds between progress lines when the output is not a terminal."""


class PlainProgress:
    """Progress lines for output that is not a terminal (a CI log): one at the first play,
    then one about every ``PLAIN_EVERY_S``, and one at the last, each with the pace and an
    ETA (``plain_line``)."""

    def __init__(self, out: Console, every: float = PLAIN_EVERY_S) -> None:
        self.out = out
        self.every = every
        self.last = -math.inf
        self.first: tuple[float, int] | None = None

    def __call__(self, progress: Progress, top: Callable[[], str], now: float) -> None:
        """Called after each recorded play; ``top`` (the leaders) is asked only to print."""
        if self.first is None:
            self.first = (now, progress.plays_done)
        if now - self.last >= self.every or progress.plays_done == progress.plays_total:
            self.last = now
            self.out.print(plain_line(progress, self.first, now, top()), highlight=False)


def plain_line(progress: Progress, first: tuple[float, int], now: float, top: str) -> str:
    """``plays 40/144, boards 18 (2 half-played), 3.2 hands/s, ETA 0:32, leader: greedy +210``.

    The ETA runs at the pace since ``first`` (the time and count of this run's first finished
    play), so the bot processes' start-up does not inflate it; "?" until a second play ends.
    """
    done, total = progress.plays_done, progress.plays_total
    since, done_then = first
    eta = "?"
    if done > done_then:
        left = round((now - since) / (done - done_then) * (total - done))
        eta = f"{left // 60}:{left % 60:02d}"
    leader = f", leader: {top.split('  ')[0]}" if top else ""
    boards = f"boards {progress.boards_done} ({progress.boards_open} half-played)"
    return (
        f"plays {done}/{total}, {boards}, {progress.hands_per_second:.1f} hands/s,"
        f" ETA {eta}{leader}"
    )


def print_failures(rows: Sequence[FailureRow], *, to: Console | None = None) -> None:
    """One line per bot with failures: the counts by kind and the bot's log."""
    out = to or console
    for row in rows:
        log = f"; log: {row.log}" if row.log else ""
        out.print(
            f"[yellow]{escape(row.bot)}[/yellow]: {plural(row.total, 'failure')}"
            f" ({row.describe()}) in {plural(row.hands, 'hand')}{escape(log)}",
            highlight=False,
            soft_wrap=True,
        )


def plural(count: int, noun: str) -> str:
    """``"1 hand"``, ``"2 hands"``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def arena_faults(count: int) -> str:
    """The plays a run played again after a fault of the arena's, as a clause ('' for none)."""
    if not count:
        return ""
    return f" (and {plural(count, 'play')} played again after a fault of the arena's, not scored)"


@contextlib.contextmanager
def interrupted_exits(stop: Callable[[], None] | None = None) -> Iterator[list[int]]:
    """Ends a server's command with the README's exit code for a signal: 128 + the signal
    (130 for Ctrl-C, 143 for SIGTERM) once the body has returned; yields the signals caught.

    The first SIGINT or SIGTERM calls ``stop`` (which asks the body to stop gracefully;
    without it the body watches the yielded list); a second one stops the body at once
    (``KeyboardInterrupt``). uvicorn, which catches the signals itself while it serves,
    hands them back to this handler once it has stopped.
    """
    caught: list[int] = []

    def note(sig: int, frame: FrameType | None) -> None:
        caught.append(sig)
        if len(caught) > 1:
            raise KeyboardInterrupt
        if stop is not None:
            stop()

    before = {sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield caught
    except KeyboardInterrupt:
        caught.append(signal.SIGINT)
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    if caught:
        raise typer.Exit(128 + caught[0])


def say_scheduler(identity: str, out: Console) -> None:
    """Names the scheduler that answered at ``--cluster tcp://...`` in a run's first lines:
    it and its workers run the plays, whoever's it is (docs/cluster.md)."""
    out.print(
        f"cluster: scheduler {identity} (it and its workers run the bots: check it is yours)",
        highlight=False,
        markup=False,
    )
