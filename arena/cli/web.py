"""``arena web``: the viewer over event databases (needs the ``web`` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from arena.cli.common import make_console

console = make_console(stderr=True)


def web(
    db: Annotated[
        list[Path],
        typer.Option(exists=True, dir_okay=False, help="An event database (repeat for more)."),
    ],
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8000,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    delay: Annotated[
        str, typer.Option(help="Spectator delay of live tables: trick, hand or none.")
    ] = "trick",
) -> None:
    """Serve the event pages, game lists, replay viewer and live tables in the browser."""
    try:
        import uvicorn

        from arena.web.app import create_app
    except ImportError as e:
        console.print(
            f"[red]error[/red]: the web viewer needs the web extra ({e.name} is missing):"
            " pip install 'tichu-arena[web]'"
        )
        raise typer.Exit(2) from None
    from arena.rules import ArenaError

    try:
        app = create_app(db, delay=delay)
    except (ArenaError, ValueError) as e:
        console.print(f"[red]error[/red]: {escape(str(e))}", soft_wrap=True)
        raise typer.Exit(2) from None
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    server = uvicorn.Server(config)
    console.print(f"serving {len(db)} database(s); open http://{host}:{port}/ (Ctrl-C stops)")
    server.run()
