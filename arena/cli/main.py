"""The ``arena`` command: one Typer app per group, joined here."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer import rich_utils
from typer._click.exceptions import ClickException, NoArgsIsHelpError
from typer.core import TyperGroup

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


class ArenaGroup(TyperGroup):
    """The ``arena`` group: a command-line mistake is one line on stderr with its exit code
    (2; 3 for the gate), not click's usage lines and a boxed error."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        """Runs the command; as click's standalone mode, but a usage error is one line."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except NoArgsIsHelpError as e:  # ``arena`` alone (or a group alone): its help
            rich_utils.rich_format_error(e)
            sys.exit(e.exit_code)
        except ClickException as e:
            sys.exit(one_line_error(e))
        except typer.Abort:
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def one_line_error(e: ClickException) -> int:
    """Prints ``error: <click's message> (arena CMD --help)`` on one line; its exit code."""
    message = " ".join(e.format_message().split())
    ctx = getattr(e, "ctx", None)
    hint = f" ({ctx.command_path} --help)" if ctx is not None else ""
    print(f"error: {message}{hint}", file=sys.stderr, flush=True)
    return e.exit_code


app = typer.Typer(
    cls=ArenaGroup,
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
