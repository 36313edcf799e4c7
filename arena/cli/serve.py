"""``arena serve``: run the referee server until interrupted.

Tables come from ``--tables N`` (created at start; their seat tokens are printed, or written
to ``--tokens FILE`` as JSON) and, with ``--open``, from bots that join with a registered key
(``--keys FILE``: a TOML table ``[keys]`` of ``bot name = "key"``, and optionally ``[seats]``
of ``bot name = N`` for a key that may fill N seats of one table; default 1). Without
``--seed`` every match is dealt from 128 fresh random bits. SIGINT or SIGTERM shuts
down gracefully: running matches get ``--shutdown-grace-s`` seconds, then they are aborted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from arena.cli.common import make_console, old_spelling, plural
from arena.cli.play import (
    BankOpt,
    DecisionOpt,
    GiveUpChoice,
    GiveUpOpt,
    GraceOpt,
    GrandOpt,
    HandsOpt,
    RejectOpt,
    StrikesOpt,
    TargetOpt,
    make_options,
    make_policy,
)
from arena.referee import MatchRecord, TimeControl
from arena.runtime.aio import run as run_loop
from arena.runtime.aio import tune_gc
from arena.server import ArenaServer, Seating, Table, TableSpec

console = make_console(stderr=True, soft_wrap=True)


def _keys_file(path: Path) -> dict[str, object]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"{path}: cannot read keys: {e}") from e


def load_key_seats(path: Path) -> dict[str, int]:
    """Reads the optional ``[seats]`` (bot name = 1..4 seats of one open table); key -> seats.

    A bot missing there fills one seat of a table.
    """
    keys = {name: key for key, name in load_keys(path).items()}
    seats = _keys_file(path).get("seats", {})
    if not isinstance(seats, dict):
        raise ValueError(f"{path}: [seats] must be a table of bot name = seats")
    out: dict[str, int] = {}
    for name, count in seats.items():
        if name not in keys:
            raise ValueError(f"{path}: [seats] names {name!r}, which has no key")
        if type(count) is not int or not 1 <= count <= 4:
            raise ValueError(f"{path}: seats of {name!r} must be 1 to 4")
        out[keys[name]] = count
    return out


def load_keys(path: Path) -> dict[str, str]:
    """Reads ``[keys]`` (bot name = key) from a TOML file; returns key -> name."""
    keys = _keys_file(path).get("keys")
    if not isinstance(keys, dict) or not keys:
        raise ValueError(f'{path}: needs a [keys] table of bot name = "key"')
    out: dict[str, str] = {}
    for name, key in keys.items():
        if not isinstance(key, str) or len(key) < 8:
            raise ValueError(f"{path}: key of {name!r} must be a string of 8 characters or more")
        if key in out:
            raise ValueError(f"{path}: {name!r} and {out[key]!r} share a key")
        out[key] = name
    return out


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0: any free port, printed).")] = 50051,
    tables: Annotated[int, typer.Option(min=0, help="Tables to create at start.")] = 0,
    tokens: Annotated[
        Path | None, typer.Option(help="Write the created tables' seat tokens here (JSON).")
    ] = None,
    open_tables: Annotated[
        bool, typer.Option("--open", help="Let bots with a registered key join open tables.")
    ] = False,
    keys: Annotated[
        Path | None,
        typer.Option(
            exists=True, dir_okay=False, help='TOML file whose "keys" table maps bot names to keys.'
        ),
    ] = None,
    seating: Annotated[
        Seating, typer.Option(help="Open tables: tichujoin (first two are partners) or random.")
    ] = Seating.TICHUJOIN,
    matches: Annotated[int, typer.Option(min=1, help="Matches per table, in a row.")] = 1,
    join_timeout_s: Annotated[
        float,
        typer.Option(
            min=0.1, help="Seconds a table waits for its bots; absent seats are given up."
        ),
    ] = 600.0,
    seed: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Seed of the first table's first match (table k: seed + 1000·k). Default: every"
            " match draws 128 random bits. A given seed's deals can be guessed: tests only.",
        ),
    ] = None,
    target: TargetOpt = 1000,
    hands: HandsOpt = 0,
    grand: GrandOpt = True,
    decision_ms: DecisionOpt = 1000,
    bank_ms: BankOpt = 0,
    max_strikes: StrikesOpt = 3,
    max_rejections: RejectOpt = 3,
    grace_ms: GraceOpt = 5000,
    give_up: GiveUpOpt = GiveUpChoice.DEFAULT_ACTIONS,
    pace_forced: Annotated[
        bool,
        typer.Option(
            help="Delay forced passes like asked answers, and pause where a private bomb"
            " window could have opened like one, so no seat learns from timing that another"
            " had no choice or holds a bomb (turn off only for benchmarks)."
        ),
    ] = True,
    runs: Annotated[Path, typer.Option(help="Folder for the replays.")] = Path("runs/serve"),
    shutdown_grace_s: Annotated[
        float, typer.Option(min=0, help="Seconds running matches get at shutdown before aborting.")
    ] = 10.0,
    join_timeout: Annotated[float | None, old_spelling("--join-timeout", min=0.1)] = None,
    grace: Annotated[float | None, old_spelling("--grace", min=0)] = None,
) -> None:
    """Run the referee server: pre-made tables and/or open tables, until interrupted."""
    if join_timeout is not None:
        join_timeout_s = join_timeout
    if grace is not None:
        shutdown_grace_s = grace
    key_map: dict[str, str] | None = None
    key_seats: dict[str, int] = {}
    if open_tables:
        if keys is None:
            console.print("[red]error[/red]: --open needs --keys FILE")
            raise typer.Exit(2)
        try:
            key_map = load_keys(keys)
            key_seats = load_key_seats(keys)
        except ValueError as e:
            console.print(f"[red]error[/red]: {escape(str(e))}", highlight=False)
            raise typer.Exit(2) from None
    spec = TableSpec(
        options=make_options(target, hands, grand),
        seed=seed,
        time=TimeControl(decision_ms, bank_ms),
        policy=make_policy(max_strikes, max_rejections, grace_ms, give_up),
        matches=matches,
        startup_timeout_s=join_timeout_s,
        pace_forced=pace_forced,
    )
    if tokens is not None and (tokens.is_dir() or not tokens.parent.is_dir()):
        what = "is a folder" if tokens.is_dir() else "is in a folder that does not exist"
        console.print(f"[red]error[/red]: --tokens {escape(str(tokens))} {what}", highlight=False)
        raise typer.Exit(2)
    sig = run_loop(
        _serve(
            host, port, tables, tokens, key_map, key_seats, seating, spec, runs, shutdown_grace_s
        )
    )
    # The shell's convention, as the README's table: 130 for Ctrl-C, 143 for SIGTERM.
    raise typer.Exit(128 + sig)


def _report(table: Table, k: int, record: MatchRecord) -> None:
    """One line per finished match, on stderr."""
    o = record.outcome
    path = table.replay_path(k)
    console.print(
        f"table {table.id} match {k}: {' / '.join(record.names)}: {o.scores[0]} : {o.scores[1]}"
        f" ({o.termination.name.lower()}, {plural(o.hands_played, 'hand')},"
        f" {plural(len(record.failures), 'failure')}){f'; replay {path}' if path else ''}",
        highlight=False,
        markup=False,
    )


async def _serve(
    host: str,
    port: int,
    n_tables: int,
    tokens_out: Path | None,
    key_map: dict[str, str] | None,
    key_seats: dict[str, int],
    seating: Seating,
    spec: TableSpec,
    runs: Path,
    grace: float,
) -> int:
    """Serves until SIGINT or SIGTERM; returns the signal."""
    server = ArenaServer(
        host=host,
        port=port,
        runs_dir=runs,
        keys=key_map,
        open_spec=spec,
        seating=seating,
        key_seats=key_seats,
        pings=True,  # its bots are elsewhere: half-open connections are noticed
    )
    server.manager.on_match = _report
    bound = await server.start()
    tune_gc()
    console.print(
        f"referee listening on {host}:{bound}"
        f"{' (open tables: ' + seating.value + ')' if key_map is not None else ''};"
        f" replays in {runs}",
        highlight=False,
    )
    made = []
    for k in range(n_tables):
        seed = None if spec.seed is None else spec.seed + 1000 * k
        table = server.create_table(replace(spec, seed=seed))
        made.append({"table_id": table.id, "tokens": table.tokens})
    if made:
        text = json.dumps({"server": f"{host}:{bound}", "tables": made}, indent=1)
        if tokens_out is not None:
            # Whole or not at all (a script waiting for the file never reads half of it), and
            # readable by its owner alone: the tokens are the seats.
            partial = tokens_out.with_name(tokens_out.name + ".partial")
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text + "\n")
            partial.replace(tokens_out)
            console.print(f"seat tokens of {plural(len(made), 'table')} written to {tokens_out}")
        else:
            print(text, flush=True)
    stop = asyncio.Event()
    caught: list[int] = []

    def on_signal(sig: int) -> None:
        caught.append(sig)
        stop.set()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, on_signal, sig)
    await stop.wait()
    console.print(f"shutting down: running matches get {grace:g} s")
    await server.stop(grace)
    console.print("referee stopped")
    return caught[0]
