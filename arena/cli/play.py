"""``arena play``: one match between four bots, each in its own process (or in-process).

Bots are manifests (``bot.toml``) or built-in names (``random``, ``greedy``, ``heuristic``,
``search``). Over gRPC the command starts a referee on an ephemeral loopback port, one
sandboxed process per seat (``arena.server.sandbox``; ``full`` unless
``--allow-unsandboxed``), prints each hand as it ends, then the final table, and writes the
replay. ``--in-process`` bots are the user's own trusted code: no process, no sandbox.
"""

from __future__ import annotations

import importlib
import secrets
import sys
import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from arena.cli.common import AllowUnsandboxedOpt, make_console, plural, print_failures
from arena.referee import (
    FailurePolicy,
    GiveUp,
    InProcessSeat,
    MatchConfig,
    MatchRecord,
    Referee,
    TableEvent,
    TimeControl,
)
from arena.rules import Options
from arena.runtime.aio import run as run_loop
from arena.runtime.aio import tune_gc
from arena.server.manifest import Manifest, ManifestError, resolve_bot
from arena.server.runs import runs_folder
from arena.server.sandbox import Sandbox
from arena.tournament.leaderboard import tally_failures
from sdk.bot import Bot

console = make_console(soft_wrap=True)


class GiveUpChoice(StrEnum):
    """What happens to a seat that is given up (``--give-up``)."""

    DEFAULT_ACTIONS = "default-actions"
    FALLBACK_BOT = "fallback-bot"
    FORFEIT = "forfeit"

    def policy(self) -> GiveUp:
        """The referee's ``GiveUp`` value."""
        return GiveUp[self.name]


# Options shared with ``arena serve``.
TargetOpt = Annotated[int, typer.Option("--target", min=1, help="Score that ends the match.")]
HandsOpt = Annotated[
    int,
    typer.Option("--hands", min=0, help="Play exactly this many hands (0: play to --target)."),
]
GrandOpt = Annotated[
    bool, typer.Option("--grand-tichu/--no-grand-tichu", help="Grand Tichu after 8 cards.")
]
DecisionOpt = Annotated[
    int, typer.Option("--decision-ms", min=1, help="Time allowed per decision (ms).")
]
BankOpt = Annotated[int, typer.Option("--bank-ms", min=0, help="Extra time bank per hand (ms).")]
StrikesOpt = Annotated[
    int, typer.Option("--max-strikes", min=0, help="Strikes before a seat is given up (0: none).")
]
RejectOpt = Annotated[
    int,
    typer.Option(
        "--max-rejections", min=0, help="Rejected answers per decision before its default."
    ),
]
GraceOpt = Annotated[
    int, typer.Option("--grace-ms", min=0, help="Reconnect grace for a dropped seat (ms).")
]
GiveUpOpt = Annotated[
    GiveUpChoice, typer.Option("--give-up", help="What happens to a seat that is given up.")
]


def make_options(target: int, hands: int, grand: bool) -> Options:
    """Rules options from the command line."""
    return Options(target_score=target, hands=hands, grand_tichu=grand)


def make_policy(
    strikes: int, rejections: int, grace_ms: int, give_up: GiveUpChoice
) -> FailurePolicy:
    """The failure policy from the command line."""
    return FailurePolicy(strikes, rejections, grace_ms, give_up.policy())


def play(
    bots: Annotated[
        list[str],
        typer.Argument(
            help="Four bots: manifest files (bot.toml) or built-in names.", show_default=False
        ),
    ],
    seed: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Match seed (default: 128 random bits, printed). A given seed's deals can be"
            " guessed: use one only to reproduce a match.",
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
    restarts: Annotated[
        int, typer.Option(min=0, help="Restarts allowed per crashed bot (0: a crash gives up).")
    ] = 0,
    in_process: Annotated[
        bool,
        typer.Option(
            "--in-process",
            help="Run Python sdk bots in this process, no gRPC and no sandbox: trusted code only.",
        ),
    ] = False,
    allow_unsandboxed: AllowUnsandboxedOpt = False,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Replay file (default: runs/play/<time>-<random>.json; outside the bots'"
            " folders, else in ~/.local/state/tichu-arena/runs)."
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No per-hand progress.")] = False,
    keep_going: Annotated[
        bool,
        typer.Option(
            "--keep-going",
            help="Play on when a bot cannot start (the referee answers for it) instead of"
            " stopping.",
        ),
    ] = False,
) -> None:
    """Play one match between four bots and print the final table; write its replay."""
    if len(bots) != 4:
        console.print(f"[red]error[/red]: give exactly four bots, not {len(bots)}")
        raise typer.Exit(2)
    try:
        manifests = [resolve_bot(b) for b in bots]
    except ManifestError as e:
        console.print(f"[red]error[/red]: {escape(str(e))}", highlight=False)
        raise typer.Exit(2) from None
    sandbox = None
    if not in_process:
        from arena.server.sandbox import SandboxError, require_sandbox

        try:
            sandbox = require_sandbox(allow_unsandboxed)
        except SandboxError as e:
            console.print(f"[red]error[/red]: {escape(str(e))}", highlight=False)
            raise typer.Exit(2) from None
    if seed is None:
        seed = secrets.randbits(128)
    names = _seat_names(manifests)
    if out is None:  # no seed in the name: a bot may see its log folder's path
        runs = runs_folder(manifests)
        out = runs / "play" / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}.json"
    options = make_options(target, hands, grand)
    clock = TimeControl(decision_ms, bank_ms)
    policy = make_policy(max_strikes, max_rejections, grace_ms, give_up)
    console.print(
        f"match seed {seed}: team A = {names[0]} + {names[2]}, team B = {names[1]} + {names[3]}"
        f"{' (in-process)' if in_process else ''}",
        highlight=False,
    )
    if sandbox is None:
        console.print("bots run in this process, unsandboxed: trusted code only", highlight=False)
    else:
        console.print(f"bot processes sandboxed: {sandbox.summary()}", highlight=False)
    progress = _Progress(names, quiet)
    tune_gc()
    if in_process:
        try:
            players = [_load_bot(m) for m in manifests]
        except ManifestError as e:
            console.print(f"[red]error[/red]: {escape(str(e))}", highlight=False)
            raise typer.Exit(2) from None
        config = MatchConfig(
            options=options, seed=seed, time=clock, policy=policy, names=names, table_id="play"
        )
        seats = [InProcessSeat(bot, name) for bot, name in zip(players, names, strict=True)]
        record = run_loop(Referee(seats, config, watch=progress).run())
        record.save(out)
        logs = ["", "", "", ""]
        absent: list[int] = []
    else:
        from arena.server import BotStartError

        try:
            played, absent, logs, stopped = run_loop(
                _play_grpc(
                    manifests,
                    names,
                    options,
                    seed,
                    clock,
                    policy,
                    restarts,
                    out,
                    progress,
                    sandbox,
                    keep_going,
                )
            )
        except BotStartError as e:
            console.print(f"[red]error[/red]: {escape(str(e))}", highlight=False)
            raise typer.Exit(1) from None
        if stopped:
            _never_joined(absent, names, logs)
            console.print(
                "the match was stopped: a bot that cannot start would have played on the"
                " referee's default answers (--keep-going plays it anyway)",
                highlight=False,
            )
            raise typer.Exit(1)
        if played is None:
            _never_joined(absent, names, logs)
            raise typer.Exit(1)
        record = played
    _final_table(record, names, logs)
    console.print(f"replay written to {out} (arena replay verify {out})", highlight=False)
    if absent:
        _never_joined(absent, names, logs)
        raise typer.Exit(1)


def _never_joined(seats: list[int], names: tuple[str, ...], logs: list[str]) -> None:
    for s in seats:
        console.print(
            f"[red]error[/red]: {escape(names[s])} (seat {s}) never joined the table;"
            f" its output is in {escape(logs[s])}",
            highlight=False,
            soft_wrap=True,
        )


async def _play_grpc(
    manifests: list[Manifest],
    names: tuple[str, ...],
    options: Options,
    seed: int,
    clock: TimeControl,
    policy: FailurePolicy,
    restarts: int,
    out: Path,
    progress: _Progress,
    sandbox: Sandbox | None,
    keep_going: bool = False,
) -> tuple[MatchRecord | None, list[int], list[str], bool]:
    """Plays the match over gRPC: its record (None if no bot came), the seats that never
    joined (those that cannot start, if the match was stopped for them), each seat's log
    file, and whether the match was stopped because a bot cannot start."""
    from arena.server import ArenaServer, TableSpec
    from arena.server import Table as ServerTable
    from arena.server.bots import play_table, seat_log

    server = ArenaServer()
    await server.start()
    spec = TableSpec(
        options=options,
        seed=seed,
        time=clock,
        policy=policy,
        names=names,
        replay=out,
        table_id="play",
    )
    logs = out.with_name(out.stem + "-logs")
    tables: list[ServerTable] = []
    stopped_for: list[int] = []
    exits = [0, 0, 0, 0]

    def exited(seat: int, code: int) -> None:
        console.print(
            f"[yellow]{escape(names[seat])} (seat {seat}) exited with code {code}[/yellow];"
            f" its output is in {logs}",
            highlight=False,
            soft_wrap=True,
        )
        exits[seat] += 1
        never_joined = tables and not tables[0].seats[seat].joined
        if not keep_going and never_joined and exits[seat] > restarts:
            # A bot that cannot start: stop now rather than play the match on its defaults.
            stopped_for.append(seat)
            tables[0].abort(f"{names[seat]} (seat {seat}) cannot start")

    try:
        table, records = await play_table(
            server,
            spec,
            manifests,
            log_dir=logs,
            restarts=restarts,
            watch=progress,
            on_exit=exited,
            on_table=tables.append,
            sandbox=sandbox,
        )
    finally:
        await server.stop(1.0)
    absent = stopped_for or [seat.seat for seat in table.seats if not seat.joined]
    files = [str(seat_log(logs, s, m.name)) for s, m in enumerate(manifests)]
    return (records[0] if records else None), absent, files, bool(stopped_for)


def _seat_names(manifests: list[Manifest]) -> tuple[str, ...]:
    """Display names by seat; a name used twice gets its seat number."""
    names = [m.name for m in manifests]
    return tuple(f"{n}-{s}" if names.count(n) > 1 else n for s, n in enumerate(names))


def _load_bot(manifest: Manifest) -> Bot:
    """Imports a Python bot from its manifest's ``sdk.run`` entry (``module:Class``)."""
    entry = manifest.entry
    if entry is None:
        raise ManifestError(
            f"{manifest.path}: field 'command': --in-process needs a Python bot run as"
            " '{python} -m sdk module:Class'"
        )
    module_name, _, cls_name = entry.partition(":")
    folder = str(manifest.cwd)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        cls = getattr(importlib.import_module(module_name), cls_name)
    except (ImportError, AttributeError) as e:
        raise ManifestError(f"{manifest.path}: cannot load {entry!r}: {e}") from e
    bot = cls()
    if not isinstance(bot, Bot):
        raise ManifestError(f"{manifest.path}: {entry!r} is not an sdk.Bot")
    return bot


class _Progress:
    """Prints each hand's result and each failure as the match goes."""

    def __init__(self, names: tuple[str, ...], quiet: bool) -> None:
        self.names = names
        self.quiet = quiet

    def __call__(self, ev: TableEvent) -> None:
        if self.quiet:
            return
        if ev.result is not None:
            r = ev.result
            first = self.names[r.out[0]] + (" (1-2)" if r.double_victory >= 0 else "")
            a, b = r.score
            total = f"{ev.scores[0]} : {ev.scores[1]}"
            console.print(
                f"hand {ev.hand:>2}  A {a:+5d}  B {b:+5d}  total {total:<11}  first out {first}",
                highlight=False,
            )
        elif ev.failure is not None:
            f = ev.failure
            console.print(
                f"[yellow]hand {f.hand}: {escape(self.names[f.seat])} (seat {f.seat}):"
                f" {f.kind.name.lower()} -> {f.outcome.name.lower().replace('_', ' ')}"
                f"[/yellow] ({escape(f.detail)})",
                highlight=False,
            )


def _final_table(record: MatchRecord, names: tuple[str, ...], logs: list[str]) -> None:
    o = record.outcome
    table = Table(title=f"final: {record.table_id}, {plural(o.hands_played, 'hand')}")
    for col in ("team", "seats", "score"):
        table.add_column(col)
    for team in (0, 1):
        seats = f"{names[team]} + {names[team + 2]}"
        table.add_row("AB"[team], seats, str(o.scores[team]))
    console.print(table)
    if o.winners:
        letter = "AB"[o.winners[0] & 1]
        console.print(
            f"team {letter} wins {o.scores[0]} : {o.scores[1]} ({o.termination.name.lower()})",
            highlight=False,
        )
    else:
        console.print(f"no winner ({o.termination.name.lower()}) {o.detail}", highlight=False)
    rows = tally_failures(
        (names[f.seat], f.kind.name.lower(), logs[f.seat], f.hand) for f in record.failures
    )
    print_failures(rows, to=console)
    console.print(
        f"{plural(record.decisions, 'decision')} asked, {record.forced} forced, "
        f"{plural(record.defaults, 'default')} applied by the referee, {record.seconds:.1f} s",
        highlight=False,
    )
