"""What several ``arena`` commands share: options, and how failures and counts are printed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from arena.tournament.leaderboard import FailureRow

console = Console()

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
