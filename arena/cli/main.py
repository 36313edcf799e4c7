"""The ``arena`` command: one Typer app per group, joined here."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer

from arena.cli import bench, event, league, replay
from arena.cli.gate import GateCommand, gate
from arena.cli.kit import check_bot_command, new_bot_command
from arena.cli.ladder import ladder
from arena.cli.leaderboard import leaderboard
from arena.cli.play import play
from arena.cli.ratings import ratings
from arena.cli.serve import serve
from arena.cli.table import table
from arena.cli.web import web

app = typer.Typer(
    help="Tichu Arena: referee, events and tools for Tichu bots.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(replay.app, name="replay")
app.add_typer(bench.app, name="bench")
app.add_typer(event.app, name="event")
app.add_typer(league.app, name="league")
app.command("ratings")(ratings)
app.command("leaderboard")(leaderboard)
app.command("ladder")(ladder)
app.command("play")(play)
app.command("serve")(serve)
app.command("web")(web)
app.command("table")(table)
app.command("gate", cls=GateCommand)(gate)
app.command("new-bot")(new_bot_command)
app.command("check-bot")(check_bot_command)


DEMO_EVENT = Path(__file__).resolve().parents[2] / "example_bots" / "events" / "demo.toml"


@app.command()
def demo(
    db: Annotated[Path, typer.Option(help="Results file (replaced).")] = Path("runs/demo.sqlite"),
    out: Annotated[Path, typer.Option(help="Folder for the leaderboard files.")] = Path(
        "leaderboards"
    ),
) -> None:
    """Run the demo event: the example bots in a round robin over gRPC, then the leaderboard."""
    for old in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        old.unlink(missing_ok=True)
    for folder in (db.with_name(db.name + ".replays"), db.with_name(db.name + ".logs")):
        shutil.rmtree(folder, ignore_errors=True)
    event.run(DEMO_EVENT, db=db, jobs=None, out=out, quiet=False)


if __name__ == "__main__":  # pragma: no cover
    app()
