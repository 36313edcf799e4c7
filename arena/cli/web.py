"""``arena web``: the viewer over event databases and replay files (needs the ``web`` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from arena.cli.common import interrupted_exits, make_console

console = make_console(stderr=True)


def web(
    replays: Annotated[
        list[Path] | None,
        typer.Argument(
            exists=True,
            dir_okay=False,
            help="Replay files to open (from arena play or arena table).",
            show_default=False,
        ),
    ] = None,
    db: Annotated[
        list[Path] | None,
        typer.Option(exists=True, dir_okay=False, help="An event database (repeat for more)."),
    ] = None,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8000,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    delay: Annotated[
        str, typer.Option(help="Spectator delay of live tables: trick, hand or none.")
    ] = "trick",
) -> None:
    """Serve the event pages, game lists, replay viewer and live tables in the browser."""
    if not db and not replays:
        console.print("[red]error[/red]: give replay files, or event databases with --db")
        raise typer.Exit(2)
    try:
        import uvicorn  # the web extra, checked here

        from arena.web.app import create_app
        from arena.web.service_guard import guarded_config
    except ImportError as e:
        console.print(
            f"[red]error[/red]: the web viewer needs the web extra ({e.name} is missing):"
            " pip install 'tichu-arena[web]'"
        )
        raise typer.Exit(2) from None
    from arena.rules import ArenaError

    try:
        app = create_app(db or [], delay=delay, files=replays or [])
    except (ArenaError, ValueError) as e:
        console.print(f"[red]error[/red]: {escape(str(e))}", soft_wrap=True)
        raise typer.Exit(2) from None
    config = guarded_config(app, host, port)
    server = uvicorn.Server(config)
    what = f"{len(db or [])} database(s), {len(replays or [])} replay file(s)"
    with interrupted_exits(stop=lambda: setattr(server, "should_exit", True)):
        console.print(f"serving {what}; open http://{host}:{port}/ (Ctrl-C stops)")
        server.run()
