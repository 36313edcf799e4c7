"""``arena league``: a long-lived league over one SQLite file: versions, rounds, seasons."""

from __future__ import annotations

import shlex
import signal
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from arena.cli import league_service
from arena.cli.common import (
    AllowUnsandboxedOpt,
    ClusterOption,
    PlainProgress,
    arena_faults,
    make_console,
    plural,
    print_failures,
    say_scheduler,
)
from arena.rules import ArenaError
from arena.runtime.aio import tune_gc
from arena.tournament.leaderboard import bot_failures
from arena.tournament.leaderboard_render import rating_text
from arena.tournament.league.render import league_board, write_league
from arena.tournament.league.season import (
    MIN_DIVISION,
    GateInterrupted,
    GateRefused,
    close_season,
    history,
    next_round,
    play_round,
    round_lock,
    season_complete,
    season_table,
    submit,
    table_json,
)
from arena.tournament.league.spec import load_league
from arena.tournament.league.store import LeagueStore, RoundInfo
from arena.tournament.runner import Progress

app = typer.Typer(
    help="Leagues: bots with versions, rounds over time, ratings pooled over a season.",
    no_args_is_help=True,
)
season_app = typer.Typer(help="Seasons: close the open one.", no_args_is_help=True)
app.add_typer(season_app, name="season")
console = make_console()

DbOption = Annotated[Path, typer.Option(dir_okay=False, help="The league database (SQLite).")]
DEFAULT_DB = Path("league.sqlite")
OutOption = Annotated[Path, typer.Option(file_okay=False, help="Folder for the leaderboards.")]
DEFAULT_OUT = Path("leaderboards")
JobsOption = Annotated[
    int | None, typer.Option(min=1, help="Tables at once (default: the round format's jobs).")
]
QuietOption = Annotated[bool, typer.Option(help="No progress lines.")]


@contextmanager
def _league(db: Path, *, create: bool = False) -> Iterator[LeagueStore]:
    """Opens the league database; any arena error becomes a one-line message and exit 2."""
    if not create and not db.is_file():
        _fail(f"{db}: no league database here; create one with arena league init")
    try:
        store = LeagueStore(db, create=create)
    except ArenaError as e:
        _fail(str(e))
    try:
        yield store
    except ArenaError as e:
        _fail(str(e))
    finally:
        store.close()


def _fail(message: str, code: int = 2) -> None:
    console.print(f"[red]error[/red]: {escape(message)}", soft_wrap=True, highlight=False)
    raise typer.Exit(code)


@app.command()
def init(
    league_file: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="The league file (TOML).")
    ],
    db: DbOption = DEFAULT_DB,
) -> None:
    """Create a league database from LEAGUE_FILE and open season 1."""
    try:
        spec = load_league(league_file)
    except ArenaError as e:
        _fail(f"invalid league file: {e}")
    if db.exists():
        _fail(f"{db} exists already; a league database is created once")
    db.parent.mkdir(parents=True, exist_ok=True)
    with _league(db, create=True) as store:
        store.init_league(spec)
    console.print(
        f"league {spec.name!r}: season 1 of {spec.season_rounds} rounds in {db}; "
        f"add bots with: arena league submit BOT.toml --db {db}",
        highlight=False,
    )


@app.command("submit")
def submit_command(
    manifest: Annotated[
        str,
        typer.Argument(
            help="The bot's manifest (bot.toml) or its folder, or a built-in bot's name.",
            show_default=False,
        ),
    ],
    db: DbOption = DEFAULT_DB,
    owner: Annotated[str | None, typer.Option(help="Who owns the bot.")] = None,
    gate: Annotated[
        bool,
        typer.Option(
            help="Run the non-regression gate against the previous version (always, when the"
            " league file's [gate] says required = true)."
        ),
    ] = False,
    server: Annotated[
        str | None, typer.Option(help="A league service's URL: upload the folder there.")
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="ARENA_TOKEN",
            show_default=False,
            help="Your token (--server); prefer ARENA_TOKEN or --token-file: an option shows"
            " in the process list.",
        ),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(dir_okay=False, show_default=False, help="A file holding your token."),
    ] = None,
) -> None:
    """Register a bot or a new version of it (its folder is hashed and copied); with
    --server, upload it to a league service and wait for its verdict."""
    if server is not None:
        if token_file is not None:
            token = league_service.read_token(token_file)
        league_service.submit_to_server(Path(manifest), server, token, gate)
        return
    again = ["arena", "league", "submit", manifest, "--db", str(db)]
    again += [*(["--owner", owner] if owner is not None else []), *(["--gate"] if gate else [])]
    with _league(db) as store:
        try:
            result = submit(store, manifest, owner=owner, gate=gate, on_gate=_gate_line())
        except GateRefused as e:
            _fail(str(e), code=1)
        except GateInterrupted as e:
            _interrupted(f"{e}; continue with: {shlex.join(again)}", e.signum)
        except KeyboardInterrupt:  # Ctrl-C outside the gate's run (which stops on its own)
            # the gate's event loop may not have started: its coroutine is dropped unawaited
            warnings.filterwarnings("ignore", "coroutine .* was never awaited")
            _interrupted(
                f"interrupted: nothing registered; continue with: {shlex.join(again)}",
                signal.SIGINT,
            )
        v = result.version
        if not result.new:
            console.print(f"{v.bot}: unchanged, still version {v.number} ({v.hash[:12]})")
            return
        what = "registered" if v.number == 1 else f"version {v.number} (after v{v.number - 1})"
        console.print(
            f"{v.bot}: {what}, hash {v.hash[:12]}, owner {v.owner or '-'}; plays from the "
            "next round",
            highlight=False,
        )
        if result.gate is not None:
            console.print(f"  gate: {result.gate_line()}", highlight=False)


def _interrupted(message: str, signum: int) -> None:
    """Says what an interrupted command left and how to continue; exits 128 + the signal."""
    console.print(escape(message), soft_wrap=True, highlight=False)
    raise typer.Exit(128 + signum)


@app.command()
def retire(
    name: Annotated[str, typer.Argument(help="The bot.")], db: DbOption = DEFAULT_DB
) -> None:
    """Retire a bot: it plays no further round; its results stay in the tables."""
    with _league(db) as store:
        if store.retire(name):
            console.print(f"{name}: retired from the next round on", highlight=False)
        else:
            console.print(f"{name}: already retired", highlight=False)


@app.command("round")
def round_command(
    db: DbOption = DEFAULT_DB,
    jobs: JobsOption = None,
    out: OutOption = DEFAULT_OUT,
    quiet: QuietOption = False,
    cluster: ClusterOption = None,
    allow_unsandboxed: AllowUnsandboxedOpt = False,
) -> None:
    """Play the next round (or finish an interrupted one) with the active versions."""
    _run(db, 1, jobs, out, quiet, cluster, allow_unsandboxed)


@app.command()
def run(
    db: DbOption = DEFAULT_DB,
    rounds: Annotated[
        int, typer.Option(min=1, help="Rounds to play (an unfinished one counts).")
    ] = 1,
    jobs: JobsOption = None,
    out: OutOption = DEFAULT_OUT,
    quiet: QuietOption = False,
    cluster: ClusterOption = None,
    allow_unsandboxed: AllowUnsandboxedOpt = False,
) -> None:
    """Play several rounds in a row; Ctrl-C stops cleanly and the next run continues."""
    _run(db, rounds, jobs, out, quiet, cluster, allow_unsandboxed)


def _run(
    db: Path,
    rounds: int,
    jobs: int | None,
    out: Path,
    quiet: bool,
    cluster: str | None = None,
    allow_unsandboxed: bool = False,
) -> None:
    tune_gc()
    with _league(db) as store, round_lock(store):
        for played in range(rounds):
            if season_complete(store):
                season = store.current_season().number
                message = f"season {season} has played all its rounds; close it with "
                message += f"arena league season close --db {db}"
                if not played:
                    _fail(message)
                console.print(message, highlight=False)
                return
            round_ = next_round(store)
            plays = sum(len(store.plays(name)) for _, name, _ in round_.events)
            done = sum(sum(p.done for p in store.plays(name)) for _, name, _ in round_.events)
            field = len(round_.entries)
            _say_divisions(store, round_)
            if not quiet:
                console.print(
                    f"season {round_.season} round {round_.number}: {plural(field, 'bot')}, "
                    f"{plural(plays, 'play')} ({done} recorded before)",
                    highlight=False,
                )
            on_play = None if quiet else _progress_line()
            result = play_round(
                store,
                round_,
                jobs=jobs,
                on_play=on_play,
                cluster=cluster,
                allow_unsandboxed=allow_unsandboxed,
                on_connected=lambda who: say_scheduler(who, console),
            )
            if not result.finished and not result.stopped:
                # Nobody stopped it, yet plays are left: their tables could not play (no
                # bot could start or connect). Never a success; the next run retries them.
                for _, name, _ in round_.events:
                    print_failures(bot_failures(store.hands(name)))
                left = sum(sum(not p.done for p in store.plays(n)) for _, n, _ in round_.events)
                _fail(
                    f"round {round_.number}: {plural(left, 'play')} could not be played and "
                    f"{'is' if left == 1 else 'are'} not recorded; see the bots' logs in "
                    f"{result.logs}; arena league run tries them again",
                    code=1,
                )
            if not result.finished:
                words = ["arena", "league", "run", "--rounds", str(rounds - played), "--db"]
                words += [str(db), *(["--jobs", str(jobs)] if jobs is not None else [])]
                words += ["--cluster", cluster] if cluster is not None else []
                words += ["--out", str(out)] if out != DEFAULT_OUT else []
                words += ["--allow-unsandboxed"] if allow_unsandboxed else []
                console.print(
                    f"interrupted in round {round_.number}; continue with: {shlex.join(words)}",
                    highlight=False,
                )
                raise typer.Exit(130)
            paths = write_league(league_board(store), out)
            # A league plays on when a bot fails (one stranger's broken bot must not stop
            # everyone's round); each failing bot is named with its failures and its log,
            # and the line above them counts those same failures (the whole round's).
            failed = [bot_failures(store.hands(name)) for _, name, _ in round_.events]
            if not quiet:
                total = sum(row.total for rows in failed for row in rows)
                console.print(
                    f"  finished: {plural(result.hands, 'hand')} played now,"
                    f" {plural(total, 'failure')} in the round"
                    f"{arena_faults(result.arena_faults)}; leaderboard: {paths[2]}",
                    highlight=False,
                )
            for rows in failed:
                print_failures(rows)
                _print_table(table_json(season_table(store, round_.season)))


def _gate_line() -> Callable[[str], None]:
    """Prints the gate's live line at most every two seconds."""
    last = [0.0]

    def show(line: str) -> None:
        now = time.monotonic()
        if now - last[0] >= 2.0:
            last[0] = now
            console.print(f"  gate: {line}", highlight=False, soft_wrap=True)

    return show


def _say_divisions(store: LeagueStore, round_: RoundInfo) -> None:
    """Says so when a round plays fewer divisions than the league file asks for."""
    divisions = store.league().divisions
    if divisions is not None and len(round_.events) < divisions.count:
        console.print(
            f"note: the league file asks for {divisions.count} divisions; with"
            f" {plural(len(round_.entries), 'active bot')} (at least {MIN_DIVISION} a division)"
            f" round {round_.number} plays {len(round_.events)}",
            highlight=False,
        )


def _progress_line() -> Callable[[Progress, object], None]:
    """Progress lines about every 10 s and at the last play, with the pace and an ETA."""
    lines = PlainProgress(console)

    def on_play(progress: Progress, _play: object) -> None:
        lines(progress, lambda: "", time.monotonic())

    return on_play


@app.command()
def standings(
    db: DbOption = DEFAULT_DB,
    season: Annotated[int | None, typer.Option(help="Season (default: the open one).")] = None,
) -> None:
    """Print a season's table: rank, bot (version), rating with interval, pts/hand, failures."""
    with _league(db) as store:
        seasons = {s.number: s for s in store.seasons()}
        number = season if season is not None else store.current_season().number
        if number not in seasons:
            _fail(f"no season {number} (seasons: {', '.join(map(str, seasons))})")
        frozen = seasons[number].final_table
        data = frozen if frozen is not None else table_json(season_table(store, number))
        console.print(
            f"season {number}"
            + (" (closed, frozen table)" if frozen is not None else "")
            + f": {plural(data['rounds'], 'round')}, {plural(data['hands'], 'hand')}",
            highlight=False,
        )
        _print_table(data)


def _print_table(data: dict[str, Any]) -> None:
    for division in data["divisions"]:
        title = f"division {division['division']}" if len(data["divisions"]) > 1 else None
        table = Table(title=title)
        for column in (
            "#",
            "bot (version)",
            "rating [95 %]",
            "pts/hand",
            "hands",
            "failures",
            "move",
        ):
            table.add_column(column, justify="left" if column.startswith("bot") else "right")
        for row in division["rows"]:
            table.add_row(
                str(row["rank"]),
                escape(_label(row)),
                _rating_text(row),
                "-" if row["points_per_hand"] is None else f"{row['points_per_hand']:+.1f}",
                str(row["hands"]),
                ", ".join(f"{k} {n}" for k, n in row["failures"].items()) or "-",
                _movement(row["movement"]),
            )
        console.print(table)
        if division["note"]:
            console.print(f"  ratings: {escape(division['note'])}", highlight=False)


def _label(row: dict[str, Any]) -> str:
    status = "" if row["status"] == "active" else f" [{row['status']}]"
    return f"{row['bot']} (v{row['version']}){status}"


def _rating_text(row: dict[str, Any]) -> str:
    if row["rating"] is None:
        return "-"
    return rating_text(row["rating"], row["ci_low"], row["ci_high"])


def _movement(value: int | None) -> str:
    if value is None:
        return "new"
    return "=" if value == 0 else f"{value:+d}"


@app.command("history")
def history_command(
    bot: Annotated[str, typer.Argument(help="The bot.")], db: DbOption = DEFAULT_DB
) -> None:
    """Print a bot's rating after every round, every version, every season."""
    with _league(db) as store:
        rows = history(store, bot)
        versions = store.versions(bot)
        table = Table(title=f"{bot}: rating per round")
        for column in ("season", "round", "version", "rank", "rating [95 %]", "hands"):
            table.add_column(column, justify="right")
        for season, number, row in rows:
            data = _rating_fields(row)
            table.add_row(
                str(season),
                str(number),
                f"v{row.version}",
                str(row.rank),
                _rating_text(data),
                str(row.hands),
            )
        console.print(table)
        for v in versions:
            after = f", after v{v.number - 1}" if v.predecessor is not None else ""
            console.print(
                f"v{v.number}: {v.hash[:12]}, owner {v.owner or '-'}, submitted {v.submitted}"
                f"{after}",
                highlight=False,
            )


def _rating_fields(row: Any) -> dict[str, Any]:
    """The rating fields of one table row as the table's JSON has them."""
    interval = row.interval
    return {
        "rating": row.rating,
        "ci_low": None if interval is None else interval[0],
        "ci_high": None if interval is None else interval[1],
    }


@season_app.command("close")
def season_close(db: DbOption = DEFAULT_DB) -> None:
    """Freeze the open season's table and start the next (ratings carried, widened)."""
    with _league(db) as store:
        planned = store.league().season_rounds
        rounds = store.rounds(store.current_season().number)
        played = sum(r.finished for r in rounds)
        if played < planned:
            console.print(
                f"note: closing season {store.current_season().number} after {played} of its"
                f" {planned} rounds (season_rounds in the league file)",
                highlight=False,
            )
        table = close_season(store)
        console.print(
            f"season {table.season} closed after {table.rounds} round(s); season "
            f"{table.season + 1} is open",
            highlight=False,
        )


@app.command()
def leaderboard(
    db: DbOption = DEFAULT_DB,
    out: OutOption = DEFAULT_OUT,
    season: Annotated[
        int | None, typer.Option(help="A past season: <league>.s<S>.* (default: the open one).")
    ] = None,
) -> None:
    """Write the league's leaderboards (Markdown, JSON, HTML) from the database."""
    with _league(db) as store:
        if season is not None and season not in {s.number for s in store.seasons()}:
            _fail(f"no season {season}")
        board = league_board(store, season)
        name = None if season is None else f"{board['league']['name']}.s{season}"
        paths = write_league(board, out, name)
    console.print(f"leaderboard: {paths[2]}  ({paths[0].name}, {paths[1].name})", highlight=False)


# The league as a service (arena/cli/league_service.py), after the organiser's own commands.
app.command("serve")(league_service.serve_command)
app.add_typer(league_service.owner_app, name="owner")
app.command("backup")(league_service.backup_command)
