"""``arena ratings``: an event's hand-Elo ratings, printed from its database."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from arena.cli.common import make_console
from arena.tournament.leaderboard import Leaderboard, build_leaderboard
from arena.tournament.leaderboard_render import rating_text
from arena.tournament.store import EventStore, StoreError

DatabaseArg = Annotated[
    Path,
    typer.Argument(
        exists=True, dir_okay=False, readable=True, help="An event database (SQLite file)."
    ),
]
EventOption = Annotated[
    str | None, typer.Option(help="Event name; needed when the database holds several.")
]
AnchorOption = Annotated[
    str | None, typer.Option(help="Bot whose rating is fixed at 0 (default: mean 0).")
]


def ratings(db: DatabaseArg, event: EventOption = None, anchor: AnchorOption = None) -> None:
    """Print an event's ratings: rank, bot, hand-Elo [95% CI], LOS vs next, margin, hands."""
    console = make_console()
    try:
        with EventStore(db, create=False) as store:
            board = build_leaderboard(store, event, anchor=anchor)
    except StoreError as e:
        console.print(f"[red]error[/red]: {escape(str(e))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    if board.ratings:
        console.print(_ratings_table(board))
    else:
        console.print(no_ratings_line(board), highlight=False, soft_wrap=True)
    d = board.duplicate
    if d is not None:
        console.print(
            f"duplicate: ρ̂ = {d.correlation:+.3f} over {d.pairs} pairs, "
            f"one duplicate hand ≈ {d.effective_sample_multiplier:.2f} independent hands",
            highlight=False,
            soft_wrap=True,
        )
    if board.teams:
        console.print(_teams_table(board))
    if nothing_to_show(board):
        raise typer.Exit(1)


def nothing_to_show(board: Leaderboard) -> bool:
    """No ratings and no team results yet (no hands): ``ratings`` and ``leaderboard`` both
    say so in one line and exit 1, the README's "no ratings yet"."""
    return not board.ratings and not board.teams


def no_ratings_line(board: Leaderboard) -> str:
    """``no ratings yet: <why>``, as rich markup."""
    return f"[red]no ratings yet[/red]: {escape(board.ratings_note or '')}"


def _ratings_table(board: Leaderboard) -> Table:
    table = Table(
        title=(
            f"{board.event}: hand-Elo, {board.hands} hands, "
            f"{board.boards_done}/{board.boards_total} boards ({board.status})"
        )
    )
    table.add_column("#", justify="right")
    table.add_column("bot")
    table.add_column("hand-Elo [95%]", justify="right")
    table.add_column("LOS vs next", justify="right")
    table.add_column("pts/hand", justify="right")
    table.add_column("hands", justify="right")
    for r in board.ratings:
        los = "" if r.los_next is None else f"{100 * r.los_next:.1f}%"
        margin = "" if r.margin is None else f"{r.margin:+.1f}"
        table.add_row(
            str(r.rank),
            escape(r.bot),
            rating_text(r.rating, r.low, r.high),
            los,
            margin,
            str(r.hands),
        )
    return table


def _teams_table(board: Leaderboard) -> Table:
    table = Table(title="partnerships")
    for column in ("team", "hands", "won", "tied", "lost", "pts/hand"):
        table.add_column(column, justify="left" if column == "team" else "right")
    for t in board.teams:
        table.add_row(
            escape(" & ".join(t.players)),
            str(t.hands),
            str(t.won),
            str(t.tied),
            str(t.lost),
            f"{t.margin:+.1f}",
        )
    return table
