"""``arena replay``: verify and show replay files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.markup import escape
from rich.table import Table

from arena.cli.common import make_console, plural
from arena.referee import replay as replays

app = typer.Typer(help="Check and read replay files.", no_args_is_help=True)
console = make_console()

FileArg = Annotated[
    Path, typer.Argument(exists=True, dir_okay=False, readable=True, help="A replay JSON file.")
]


@app.command()
def verify(path: FileArg) -> None:
    """Re-play FILE through the rules; print per-hand and final scores, or the first error.

    Exit 0: the replay holds; 1: an action breaks the rules or the result differs; 2: FILE is
    no well-formed replay.
    """
    try:
        rep = replays.load(path)
        result = replays.verify(rep)
    except replays.ReplayError as e:
        _invalid(path, e)
    m = result.match
    table = Table(title=f"{path.name}: {' / '.join(rep.seats)}")
    for col in ("hand", "out", "team A", "team B", "total A", "total B"):
        table.add_column(col, justify="right")
    ta = tb = 0
    for r in m.hand_results:
        ta += r.score[0]
        tb += r.score[1]
        dv = " 1-2" if r.double_victory >= 0 else ""
        out = "".join(str(s) for s in r.out) + dv
        table.add_row(
            str(r.hand + 1), out, f"{r.score[0]:+d}", f"{r.score[1]:+d}", str(ta), str(tb)
        )
    console.print(table)
    for problem in result.mismatches:
        console.print(f"[red]mismatch[/red]: {problem}", highlight=False)
    status = "finished" if m.over else "unfinished"
    console.print(
        f"{plural(len(m.actions), 'action')} replayed; match {status}: team A {m.scores[0]}, "
        f"team B {m.scores[1]}",
        highlight=False,
    )
    if result.mismatches:
        raise typer.Exit(1)


@app.command()
def show(path: FileArg) -> None:
    """Print the game in FILE hand by hand: seats and teams, sorted hands, plays, scores."""
    try:
        text = replays.render(replays.load(path))
    except replays.ReplayError as e:
        _invalid(path, e)
    print(text)


def _invalid(path: Path, error: replays.ReplayError) -> NoReturn:
    """Prints why a replay is invalid (naming the file once) and exits: 2 for a file that is
    no well-formed replay, 1 for one whose actions the rules refuse."""
    message = str(error) if str(path) in str(error) else f"{path}: {error}"
    console.print(f"[red]invalid replay[/red] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(2 if isinstance(error, replays.ReplayFormatError) else 1)
