"""``arena leaderboard``: regenerate an event's Markdown, JSON and HTML leaderboard files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from arena.cli.common import make_console
from arena.cli.ratings import (
    AnchorOption,
    DatabaseArg,
    EventOption,
    no_ratings_line,
    nothing_to_show,
)
from arena.tournament.leaderboard import (
    build_leaderboard,
)
from arena.tournament.leaderboard_render import (
    other_event,
    write_leaderboard,
)
from arena.tournament.store import EventStore, StoreError

OutOption = Annotated[
    Path, typer.Option(file_okay=False, help="Directory for <event>.md, .json and .html.")
]


def leaderboard(
    db: DatabaseArg,
    event: EventOption = None,
    out: OutOption = Path("leaderboards"),
    anchor: AnchorOption = None,
) -> None:
    """Write an event's leaderboard (Markdown, JSON, HTML) from its database; print the paths."""
    console = make_console()
    try:
        with EventStore(db, create=False) as store:
            board = build_leaderboard(store, event, anchor=anchor)
        if nothing_to_show(board):
            # As ``arena ratings``: one line, exit 1, and no files of an empty table.
            console.print(no_ratings_line(board), highlight=False, soft_wrap=True)
            raise typer.Exit(1)
        if (created := other_event(board, out)) is not None:
            console.print(
                f"note: {out}/{board.event}.md, .json and .html held another event of this"
                f" name (created {created}, another database?); they are replaced",
                highlight=False,
            )
        paths = write_leaderboard(board, out)
    except (StoreError, ValueError, OSError) as e:
        console.print(f"[red]error[/red]: {escape(str(e))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    for path in paths:
        print(path)
    if not board.ratings:
        console.print(
            f"no ratings yet: {escape(board.ratings_note or '')}", highlight=False, soft_wrap=True
        )
