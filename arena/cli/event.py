"""``arena event``: run and resume events; results go to SQLite, leaderboards to files."""

from __future__ import annotations

import shlex
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)

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
from arena.cli.ratings import _ratings_table
from arena.runtime.aio import tune_gc
from arena.server.bundle import BundleError
from arena.server.manifest import ManifestError
from arena.server.runs import RUNS, runs_folder
from arena.server.sandbox import SandboxError, require_sandbox
from arena.tournament.cluster import ClusterError, executor_for
from arena.tournament.leaderboard import Leaders, build_leaderboard, leaders_text
from arena.tournament.leaderboard_render import (
    other_event,
    seed_text,
    write_leaderboard,
)
from arena.tournament.model import EventFileError, EventSpec, load_event
from arena.tournament.runner import BotCannotStart, EventRunner, Stalled, manifests_for
from arena.tournament.runner import Progress as RunProgress
from arena.tournament.store import EventStore, StoreError

app = typer.Typer(help="Run round-robin events, gauntlets and leagues.", no_args_is_help=True)
console = make_console()

JobsOption = Annotated[
    int | None, typer.Option(min=1, help="Tables at once (default: the event file's jobs).")
]
OutOption = Annotated[Path, typer.Option(help="Folder for the leaderboard files.")]
QuietOption = Annotated[bool, typer.Option(help="No progress bar.")]
KeepGoingOption = Annotated[
    bool,
    typer.Option(
        "--keep-going",
        help="Play on when a bot cannot start (the referee answers for it) instead of stopping.",
    ),
]


@app.command()
def run(
    event_file: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="The event file (TOML).")
    ],
    db: Annotated[
        Path | None,
        typer.Option(
            help="SQLite results file (default: runs/<event>.sqlite, outside the bots' folders)."
        ),
    ] = None,
    jobs: JobsOption = None,
    out: OutOption = Path("leaderboards"),
    quiet: QuietOption = False,
    cluster: ClusterOption = None,
    allow_unsandboxed: AllowUnsandboxedOpt = False,
    keep_going: KeepGoingOption = False,
) -> None:
    """Run EVENT_FILE: plan it, play every pending board, print and write the leaderboard.

    Running a finished event again changes nothing; an interrupted one continues.
    """
    try:
        spec = load_event(event_file)
    except (EventFileError, ManifestError) as e:
        console.print(f"[red]invalid event[/red]: {escape(str(e))}", soft_wrap=True)
        raise typer.Exit(2) from None
    path = db or _runs(spec) / f"{spec.name}.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with EventStore(path) as store:
            try:
                plan = store.plan(spec)
            except EventFileError as e:
                console.print(f"[red]invalid event[/red]: {escape(str(e))}", soft_wrap=True)
                raise typer.Exit(2) from None
            existed = any(info.name == spec.name for info in store.events())
            store.create_event(spec, plan)
            if existed:
                before = store.event_summary(spec.name)
                console.print(
                    f"continuing event {spec.name!r} in {path}: {before.plays_done}/"
                    f"{before.plays_total} plays recorded before (--db FILE for a new one)",
                    highlight=False,
                    soft_wrap=True,
                )
            else:
                console.print(f"results: {path}", highlight=False, soft_wrap=True)
            _play(
                store,
                spec.name,
                spec,
                jobs,
                out,
                quiet,
                path,
                allow_unsandboxed,
                cluster,
                keep_going,
            )
    except (StoreError, SandboxError, ClusterError, BundleError) as e:
        console.print(f"[red]error[/red]: {escape(str(e))}", soft_wrap=True)
        raise typer.Exit(2) from None


@app.command()
def resume(
    db: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="An event database.")],
    event: Annotated[str | None, typer.Option(help="Event name (if several).")] = None,
    jobs: JobsOption = None,
    out: OutOption = Path("leaderboards"),
    quiet: QuietOption = False,
    cluster: ClusterOption = None,
    allow_unsandboxed: AllowUnsandboxedOpt = False,
    keep_going: KeepGoingOption = False,
) -> None:
    """Continue an interrupted event from its database: no hand lost, none played twice."""
    try:
        with EventStore(db, create=False) as store:
            info = store.event(event)
            spec = store.event_spec(info.id)
            _play(
                store, info.name, spec, jobs, out, quiet, db, allow_unsandboxed, cluster, keep_going
            )
    except (StoreError, ManifestError, SandboxError, ClusterError, BundleError) as e:
        console.print(f"[red]error[/red]: {escape(str(e))}", soft_wrap=True)
        raise typer.Exit(2) from None


def _play(
    store: EventStore,
    event: str,
    spec: EventSpec,
    jobs: int | None,
    out: Path,
    quiet: bool,
    db: Path,
    allow_unsandboxed: bool,
    cluster: str | None = None,
    keep_going: bool = False,
) -> None:
    sandbox = require_sandbox(allow_unsandboxed)
    console.print(f"bot processes sandboxed: {sandbox.summary()}", highlight=False)
    console.print(f"deals: {seed_text(spec.seed)}", highlight=False)
    tune_gc()
    summary = store.event_summary(event)
    boards_total = summary.boards_total
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=20),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[top]}"),
        console=console,
        disable=quiet or not console.is_terminal,
        transient=False,
    ) as bar:
        task = bar.add_task(
            event,
            total=summary.plays_total,
            completed=summary.plays_done,
            rate="",
            top="",
        )
        plain = None if quiet or console.is_terminal else PlainProgress(console)
        leaders = Leaders(db, event)  # fitted in a thread: never on the refereeing loop

        def on_play(progress: RunProgress, _play: object) -> None:
            now = time.monotonic()
            rate = (
                f"{progress.hands_per_second:.1f} hands/s, boards {progress.boards_done}"
                f" ({progress.boards_open} half-played)"
            )
            if plain is not None:
                plain(progress, leaders.text, now)
                return
            ended = progress.plays_done + progress.plays_ended
            bar.update(task, completed=ended, rate=rate, top=leaders.text())

        def on_ended(progress: RunProgress) -> None:
            """A play ended on a Dask worker (from Dask's thread): the bar moves play by
            play, its session's task records them when it returns."""
            if plain is None:
                bar.update(task, completed=progress.plays_done + progress.plays_ended)

        logs = db.parent / f"{db.name}.logs"
        runner = EventRunner(
            store,
            event,
            spec,
            jobs=jobs,
            log_dir=logs,
            on_play=on_play,
            on_ended=on_ended,
            executor=executor_for(
                cluster, allow_unsandboxed, on_connected=lambda who: say_scheduler(who, console)
            ),
            sandbox=sandbox,
            keep_going=keep_going,
        )
        try:
            progress = runner.run()
        except BotCannotStart as e:
            bar.stop()
            done = store.event_summary(event)
            again = resume_command(db, event, store, jobs, cluster, out, allow_unsandboxed)
            console.print(
                f"[red]error[/red]: {escape(str(e))}\nthe event stopped: {done.plays_done}/"
                f"{done.plays_total} plays recorded; fix the bot, then continue with: "
                f"{escape(again)} (or add --keep-going to play on without it)",
                soft_wrap=True,
                highlight=False,
            )
            raise typer.Exit(1) from None
        except Stalled as e:
            bar.stop()
            again = resume_command(db, event, store, jobs, cluster, out, allow_unsandboxed)
            console.print(
                f"[red]error[/red]: {escape(str(e))}; continue with: {escape(again)}",
                soft_wrap=True,
                highlight=False,
            )
            raise typer.Exit(1) from None
        bar.update(task, completed=progress.plays_done, top=leaders_text(store, event))
    summary = store.event_summary(event)
    if runner.stopping:
        again = resume_command(db, event, store, jobs, cluster, out, allow_unsandboxed)
        console.print(
            f"interrupted: {summary.plays_done}/{summary.plays_total} plays recorded; "
            f"continue with: {again}",
            highlight=False,
            soft_wrap=True,
        )
    board = build_leaderboard(store, event)
    if board.ratings:
        console.print(_ratings_table(board))
    finished = summary.plays_done == summary.plays_total
    if not finished:
        # A leaderboard of part of the event goes beside its database: the files in ``out``
        # (the committed ladder rungs, say) are replaced only by a finished event's.
        out = db.parent / f"{db.name}.partial"
    if finished and (created := other_event(board, out)) is not None:
        console.print(
            f"note: {out}/{board.event}.md, .json and .html held another event of this"
            f" name (created {created}, another database?); they are replaced",
            highlight=False,
        )
    paths = write_leaderboard(board, out)
    console.print(
        f"{summary.boards_done}/{boards_total} boards, {plural(board.hands, 'hand')}, "
        f"{plural(sum(row.total for row in board.failures), 'failure')}"
        f"{arena_faults(progress.arena_faults)};"
        f" results in {db}",
        highlight=False,
    )
    console.print(sandbox_line(store.sandbox_levels(event)), highlight=False)
    print_failures(board.failures)
    what = "leaderboard" if finished else "leaderboard so far (the event is unfinished)"
    console.print(f"{what}: {paths[2]}  ({paths[0].name}, {paths[1].name})", highlight=False)
    if runner.stopping:
        # The shell's convention: 128 + the signal (130 for Ctrl-C, 143 for SIGTERM).
        raise typer.Exit(128 + (runner.stopped_by or signal.SIGINT))
    if progress.hands == 0 and summary.plays_done < summary.plays_total:
        # Plays were pending and none was recorded: every table failed (a referee that
        # could take no bot, say). Never a success.
        console.print(
            f"[red]error[/red]: no play was recorded ({summary.plays_done}/"
            f"{summary.plays_total} done); see the failures above and the logs in {logs}",
            soft_wrap=True,
            highlight=False,
        )
        raise typer.Exit(1)


def _runs(spec: EventSpec) -> Path:
    """``runs`` here, unless that lies inside a bot's folder (then the user's state folder)."""
    try:
        manifests = manifests_for(spec)
    except ManifestError:
        return RUNS  # the run reports the bad manifest
    return runs_folder(manifests.values())


def resume_command(
    db: Path,
    event: str,
    store: EventStore,
    jobs: int | None,
    cluster: str | None,
    out: Path,
    allow_unsandboxed: bool = False,
) -> str:
    """The command that continues the event as this run played it: the event file's settings
    are kept by the database; what this command line changed is repeated."""
    words = ["arena", "event", "resume", str(db)]
    if len(store.events()) > 1:
        words += ["--event", event]
    if jobs is not None:
        words += ["--jobs", str(jobs)]
    if cluster is not None:
        words += ["--cluster", cluster]
    if out != Path("leaderboards"):
        words += ["--out", str(out)]
    if allow_unsandboxed:
        words.append("--allow-unsandboxed")
    return shlex.join(words)


def sandbox_line(levels: Mapping[str, int]) -> str:
    """``plays by sandbox level: 40 full, 2 partial`` (``none`` before any play)."""
    said = ", ".join(f"{n} {level}" for level, n in levels.items())
    return f"plays by sandbox level: {said or 'none'}"
