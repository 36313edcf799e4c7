"""``arena ladder``: the reference ladder (Markdown, JSON) from fixed-partnership leaderboards."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from arena.cli.common import make_console
from arena.tournament.ladder import Rung, read_ladder, write_ladder

RungArgs = Annotated[
    list[Path],
    typer.Argument(
        help="Rung leaderboards (<event>.json of fixed-partnership events), lowest rung first.",
        show_default=False,
    ),
]
OutOption = Annotated[
    Path, typer.Option(file_okay=False, help="Directory for <name>.md and <name>.json.")
]
NameOption = Annotated[str, typer.Option(help="File name of the ladder, without suffix.")]


def ladder(
    rung_json: RungArgs,
    out: OutOption = Path("leaderboards"),
    name: NameOption = "reference",
) -> None:
    """Write the ladder (Markdown, JSON) from rung leaderboards; print the table and the paths."""
    console = make_console()
    try:
        read = read_ladder(rung_json)
        paths = write_ladder(read, out, name)
    except (ValueError, OSError) as e:
        console.print(f"[red]error[/red]: {escape(str(e))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    console.print(_ladder_table(read, name))
    for path in paths:
        print(path)


def _ladder_table(rungs: Sequence[Rung], name: str) -> Table:
    # The sources are in the written files; without them the table fits 80 columns.
    table = Table(title=f"{name}: points per hand, duplicate boards, fixed partnerships")
    table.add_column("rung", no_wrap=True)
    table.add_column("pts/hand ± 95%", justify="right", no_wrap=True)
    table.add_column("excl. 0")
    table.add_column("hands", justify="right")
    table.add_column("W/T/L", justify="right", no_wrap=True)
    for r in rungs:
        table.add_row(
            escape(r.label),
            f"{r.margin:+.2f} ± {r.margin_ci:.2f}",
            "yes" if r.excludes_zero else "no",
            str(r.hands),
            f"{r.won}/{r.tied}/{r.lost}",
        )
    return table
