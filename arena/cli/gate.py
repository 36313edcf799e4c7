"""``arena gate``: a CI gate for bot authors, an SPRT on duplicate boards against a baseline.

Exit codes: 0 = H1 accepted (pass), 1 = H0 accepted, 2 = inconclusive at the cap, 3 = error
(including a bad command line, which click would otherwise report with 2), 130 = stopped by
Ctrl-C before a decision (143 for SIGTERM), with the command that continues it.
"""

from __future__ import annotations

import enum
import json
import os
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from typer._click.exceptions import ClickException
from typer.core import TyperCommand

from arena.cli.common import (
    AllowUnsandboxedOpt,
    make_console,
    plural,
    print_failures,
    say_scheduler,
)
from arena.ratings.sprt import DEFAULT_MIN_PAIRS
from arena.runtime.aio import tune_gc
from arena.server.manifest import ManifestError, resolve_bot
from arena.server.runs import runs_folder
from arena.server.sandbox import require_sandbox
from arena.tournament.gate import (
    DEFAULT_MAX_BOARDS,
    PRESETS,
    GateConfig,
    GateLook,
    GateReport,
    junit_xml,
    look_line,
    run_gate,
)
from arena.tournament.leaderboard_render import seed_text

ERROR_EXIT = 3
LOG_EVERY_S = 10.0
"""Seconds between live lines when stderr is not a terminal (CI logs)."""


class Preset(enum.StrEnum):
    """Named Elo bounds (``arena.tournament.gate.PRESETS``)."""

    GAIN = "gain"
    NONREG = "nonreg"


class GateCommand(TyperCommand):
    """The ``gate`` command, with command-line mistakes exiting 3 rather than click's 2."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: Any = None,  # click's Context, which typer vendors privately
        **extra: Any,
    ) -> Any:
        """Parses the arguments; a usage error keeps its message but exits with 3."""
        try:
            return super().make_context(info_name, args, parent, **extra)
        except ClickException as e:  # click's UsageError and BadParameter (exit 2)
            e.exit_code = ERROR_EXIT
            raise


class _LiveLine:
    """Prints looks to stderr: rewritten in place on a terminal, every few seconds otherwise."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.last_print = 0.0
        self.pending: str | None = None
        self.width = 0

    def __call__(self, look: GateLook) -> None:
        if self.quiet:
            return
        line = look_line(look)
        if self.tty:
            sys.stderr.write("\r" + line.ljust(self.width))
            sys.stderr.flush()
            self.width = len(line)
            return
        now = time.monotonic()
        if now - self.last_print >= LOG_EVERY_S:
            print(line, file=sys.stderr, flush=True)
            self.last_print = now
            self.pending = None
        else:
            self.pending = line

    def close(self) -> None:
        """Ends the live line (and prints the last look if it was held back)."""
        if self.quiet:
            return
        if self.tty and self.width:
            sys.stderr.write("\n")
        elif self.pending is not None:
            print(self.pending, file=sys.stderr)
        sys.stderr.flush()


def gate(
    candidate: Annotated[
        str,
        typer.Option(help="The bot under test: a manifest (file or folder) or a built-in name."),
    ],
    baseline: Annotated[
        str, typer.Option(help="The reference bot: a manifest or a built-in name (heuristic).")
    ],
    preset: Annotated[
        Preset,
        typer.Option(
            help=f"Elo bounds: gain = {list(PRESETS['gain'])} (is it better?), nonreg = "
            f"{list(PRESETS['nonreg'])} (is it not worse?); --elo0/--elo1 override them."
        ),
    ] = Preset.GAIN,
    elo0: Annotated[
        float | None, typer.Option(help="H0: candidate's lead in logistic hand-Elo.")
    ] = None,
    elo1: Annotated[float | None, typer.Option(help="H1: the lead to detect (> elo0).")] = None,
    alpha: Annotated[float, typer.Option(help="False pass rate at elo0.")] = 0.05,
    beta: Annotated[float, typer.Option(help="False fail rate at elo1.")] = 0.05,
    max_boards: Annotated[
        int, typer.Option(min=1, help="Cap in board pairs; reaching it is inconclusive (2).")
    ] = DEFAULT_MAX_BOARDS,
    min_pairs: Annotated[
        int, typer.Option(min=1, help="Board pairs before the test may stop.")
    ] = DEFAULT_MIN_PAIRS,
    mixed: Annotated[
        bool,
        typer.Option(
            "--mixed", help="Candidate partnered with the baseline (C+B vs B+B): ~4x slower."
        ),
    ] = False,
    jobs: Annotated[
        int, typer.Option(min=1, help="Tables at once (default: CPU count).")
    ] = os.cpu_count() or 1,
    decision_ms: Annotated[
        int, typer.Option(min=1, help="Thinking time per decision (referee-enforced).")
    ] = 1000,
    seed: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Event seed: same seed, same boards, and guessable deals. Default: a secret"
            " (kept in --db, so a resumed gate plays the same boards).",
        ),
    ] = None,
    db: Annotated[
        Path | None,
        typer.Option(help="Keep the results in this SQLite file (resumable); default: temp."),
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option(help="Play on Dask: a scheduler (tcp://HOST:8786) or local:N workers."),
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the JSON report here.")
    ] = None,
    junit: Annotated[
        Path | None, typer.Option(help="Write a JUnit XML report (one test case) here.")
    ] = None,
    logs: Annotated[
        Path | None,
        typer.Option(
            help="Folder for the bots' logs (default: next to --db, else runs/gate/<time>-logs"
            " outside the bots' folders)."
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option(help="No live line.")] = False,
    allow_unsandboxed: AllowUnsandboxedOpt = False,
) -> None:
    """SPRT the candidate against the baseline on duplicate boards (C+C vs B+B).

    Exit 0 = H1 accepted (pass), 1 = H0 accepted, 2 = inconclusive at the cap, 3 = error,
    130 = interrupted (rerun the same command with its --db to continue).
    """
    live = _LiveLine(quiet)
    report: GateReport | None = None
    try:
        low, high = PRESETS[preset.value]
        config = GateConfig(
            candidate=candidate,
            baseline=baseline,
            elo0=low if elo0 is None else elo0,
            elo1=high if elo1 is None else elo1,
            alpha=alpha,
            beta=beta,
            max_boards=max_boards,
            min_pairs=min_pairs,
            mixed=mixed,
            jobs=jobs,
            decision_ms=decision_ms,
            seed=seed,
            db=db,
            cluster=cluster,
            allow_unsandboxed=allow_unsandboxed,
            logs=logs
            or (
                None
                if db
                else _runs(candidate, baseline) / "gate" / f"{time.strftime('%Y%m%d-%H%M%S')}-logs"
            ),
        )
        tune_gc()
        sandbox = require_sandbox(allow_unsandboxed)
        print(f"bot processes sandboxed: {sandbox.summary()}", file=sys.stderr)
        print(f"deals: {seed_text(seed)}", file=sys.stderr)
        kept = config.logs or (None if db is None else db.parent / f"{db.name}.logs")
        where = [f"results: {db or 'a temporary database'}", f"bots' logs: {kept}"]
        where += [f"reports: {', '.join(str(p) for p in (json_out, junit) if p is not None)}"]
        print("; ".join(w for w in where if not w.endswith(": ")), file=sys.stderr)
        try:
            report = run_gate(
                config,
                on_look=live,
                on_connected=lambda who: say_scheduler(who, make_console(stderr=True)),
            )
        finally:
            live.close()
        print(report.summary())
        print_failures(report.bot_failures, to=make_console(stderr=True))
        if json_out is not None:
            _write(json_out, json.dumps(report.to_json(), indent=2) + "\n")
        if junit is not None:
            _write(junit, junit_xml(report))
        if report.interrupted_by is not None:
            _resume_hint(db, report.plays)
    except KeyboardInterrupt:  # Ctrl-C outside the runner (which stops cleanly on its own)
        _resume_hint(db, None)
        raise typer.Exit(128 + signal.SIGINT) from None
    except Exception as e:  # any failure is exit 3, with the message on stderr
        message = str(e) or type(e).__name__
        print(f"error: {message}", file=sys.stderr)
        _error_reports(json_out, junit, message, candidate, baseline, report)
        raise typer.Exit(ERROR_EXIT) from None
    raise typer.Exit(report.exit_code)


def _runs(*bots: str) -> Path:
    """``runs`` here, unless that is inside a bot's folder (the CI workflow runs the gate from
    the bot's checkout); a bot that does not resolve leaves it to the gate to say why."""
    manifests = []
    for bot in bots:
        try:
            manifests.append(resolve_bot(bot))
        except ManifestError:
            continue
    return runs_folder(manifests)


def _resume_hint(db: Path | None, plays: int | None) -> None:
    """Says how to continue an interrupted gate: the same command, which needs its --db."""
    done = "" if plays is None else f"{plural(plays, 'play')} recorded; "
    if db is None:
        print(
            f"interrupted: {done}the results were in a temporary database and are gone;"
            " give --db FILE to make a gate resumable",
            file=sys.stderr,
        )
        return
    command = "arena " + shlex.join(sys.argv[1:])
    print(f"interrupted: {done}continue with: {command}", file=sys.stderr)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _error_reports(
    json_out: Path | None,
    junit: Path | None,
    message: str,
    candidate: str,
    baseline: str,
    report: GateReport | None,
) -> None:
    """Writes failing reports for an error, so CI shows it; errors writing them are ignored."""
    try:
        if json_out is not None and report is None:
            data = {
                "candidate": candidate,
                "baseline": baseline,
                "verdict": "error",
                "passed": False,
                "exit_code": ERROR_EXIT,
                "error": message,
            }
            _write(json_out, json.dumps(data, indent=2) + "\n")
        if junit is not None:
            _write(junit, junit_xml(None, error=message, name=f"{candidate} vs {baseline}"))
    except OSError:
        pass
