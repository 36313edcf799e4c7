"""``arena table``: a table in the browser where people play against bots (``arena.web.table``)."""

from __future__ import annotations

import asyncio
import secrets
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from arena.cli.common import AllowUnsandboxedOpt, interrupted_exits, make_console, old_spelling
from arena.cli.play import GrandOpt, HandsOpt, TargetOpt, make_options

console = make_console(soft_wrap=True)


def table(
    bots: Annotated[
        list[str] | None,
        typer.Argument(
            help="Bots for the seats people leave empty, in seat order (manifests or built-in"
            " names; default: heuristic at every seat).",
            show_default=False,
        ),
    ] = None,
    sit: Annotated[
        str | None,
        typer.Option(help="Take seat 0 under this name now and print its link."),
    ] = None,
    hands: HandsOpt = 0,
    target: TargetOpt = 1000,
    grand: GrandOpt = True,
    seed: Annotated[
        int | None, typer.Option(min=0, help="Match seed (default: 128 random bits).")
    ] = None,
    decision_ms: Annotated[
        int, typer.Option(min=1000, help="A person's time per decision (ms).")
    ] = 60_000,
    bank_ms: Annotated[int, typer.Option(min=0, help="A person's extra time per hand (ms).")] = (
        120_000
    ),
    window_s: Annotated[
        float, typer.Option(min=0.5, help="How long a bomb window waits for a person's bomb (s).")
    ] = 3,
    leave: Annotated[
        str,
        typer.Option(
            help="A person who leaves: 'bot' (a stand-in plays) or 'wait' (the table waits)."
        ),
    ] = "bot",
    away_s: Annotated[
        float, typer.Option(min=1, help="Seconds without the page before a person has left.")
    ] = 20,
    delay: Annotated[
        str, typer.Option(help="Spectator delay of the table's /live page: trick, hand or none.")
    ] = "trick",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8100,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    out: Annotated[
        Path | None, typer.Option(help="Replay file (default: runs/table/<time>-<random>.json).")
    ] = None,
    linger_s: Annotated[
        float | None,
        typer.Option(
            min=0,
            help="Stop this many seconds after a game unless another starts (default: on Ctrl-C).",
        ),
    ] = None,
    allow_unsandboxed: AllowUnsandboxedOpt = False,
    decision_s: Annotated[float | None, old_spelling("--decision-s", min=1)] = None,
    bank_s: Annotated[float | None, old_spelling("--bank-s", min=0)] = None,
    linger: Annotated[float | None, old_spelling("--linger", min=0)] = None,
) -> None:
    """Open a table of four seats in the browser: people take seats, bots fill the others."""
    try:
        from arena.web.table import LEAVE_RULES, SeatError, TableRoom, TableSettings, serve_table
    except ImportError as e:
        console.print(
            f"[red]error[/red]: the table needs the web extra ({e.name} is missing):"
            " pip install 'tichu-arena[web]'"
        )
        raise typer.Exit(2) from None
    from arena.rules import ArenaError
    from arena.server.sandbox import SandboxError, require_sandbox

    if decision_s is not None:
        decision_ms = round(decision_s * 1000)
    if bank_s is not None:
        bank_ms = round(bank_s * 1000)
    if linger is not None:
        linger_s = linger
    names = bots or ["heuristic"] * 4
    if len(names) == 1:
        names = names * 4
    if leave not in LEAVE_RULES:
        console.print(f"[red]error[/red]: --leave {escape(leave)!r}: use bot or wait")
        raise typer.Exit(2)
    if out is None:
        out = Path("runs/table") / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}.json"
    try:
        sandbox = require_sandbox(allow_unsandboxed)
        settings = TableSettings(
            options=make_options(target, hands, grand),
            decision_ms=decision_ms,
            bank_ms=bank_ms,
            window_s=window_s,
            away_s=away_s,
            leave=leave,
            seed=seed,
            delay=delay,
        )
        room = TableRoom(names, settings, out, sandbox)
        host_seat = room.sit(0, sit) if sit is not None else None
    except (ArenaError, SandboxError, SeatError, ValueError) as e:
        console.print(f"[red]error[/red]: {escape(str(e))}", highlight=False)
        raise typer.Exit(2) from None

    def ready(bound: int) -> None:
        base = f"http://{host}:{bound}"
        console.print(f"table open: {base}/ (the lobby; Ctrl-C stops)", highlight=False)
        console.print(f"  spectators: {base}/live (delay: {delay})", highlight=False)
        for s in range(4):
            who = "you" if host_seat is not None and host_seat.seat == s else "invite"
            console.print(
                f"  seat {s} (team {'AB'[s & 1]}), {who}: {base}/seat?token={room.secrets[s]}",
                highlight=False,
            )

    async def main() -> None:
        stop = asyncio.Event()
        serving = asyncio.ensure_future(serve_table(room, host, port, ready, stop))
        said = 0  # the games whose end was printed ("play again" starts another)
        while not serving.done() and not caught:
            for record, error in room.ended[said:]:
                said += 1
                console.print(
                    error or f"game over: replay written to {record} (arena replay show {record})",
                    highlight=False,
                )
            if said and linger_s is not None and room.state == "over":
                await asyncio.sleep(linger_s)
                if room.state == "over" and len(room.ended) == said:
                    break  # nobody asked to play again meanwhile
            await asyncio.sleep(0.2)
        stop.set()  # Ctrl-C or SIGTERM: uvicorn's own handlers may not have been listening yet
        await asyncio.gather(serving, return_exceptions=True)

    with interrupted_exits() as caught:
        try:
            asyncio.run(main())
        finally:
            if caught:
                console.print("stopped", highlight=False)
    if any(error for _, error in room.ended):
        raise typer.Exit(1)
