"""``arena new-bot`` and ``arena check-bot``: the bot author's kit (docs/bot-kit.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from arena.cli.common import AllowUnsandboxedOpt, make_console
from arena.kit.check import CheckResult, CheckSettings, print_report, run_check
from arena.kit.scaffold import ScaffoldError, class_name, new_bot
from arena.server.manifest import ManifestError, resolve_bot
from arena.server.sandbox import SandboxError, require_sandbox

console = make_console(soft_wrap=True)


def new_bot_command(
    name: Annotated[
        str, typer.Argument(help="The bot's name, e.g. my_bot: its folder and manifest name.")
    ],
    into: Annotated[
        Path, typer.Option("--into", help="The folder to create the bot folder in.")
    ] = Path("."),
) -> None:
    """Create a bot folder (manifest, starter bot, test, README) that plays out of the box."""
    try:
        folder = new_bot(into, name)
    except ScaffoldError as e:
        console.print(f"[red]error[/red]: {escape(str(e))}", highlight=False)
        raise typer.Exit(2) from None
    shown = str(folder) if folder.is_absolute() else f"./{folder}"
    console.print(
        f"created {shown}/ with bot.toml, bot.py ({class_name(name)}), test_bot.py, README.md",
        highlight=False,
    )
    console.print(
        "next:\n"
        f"  arena play {shown} random random random\n"
        f"  arena check-bot {shown}/bot.toml\n"
        f"  pytest {shown}",
        highlight=False,
    )


def check_bot_command(
    manifest: Annotated[
        str,
        typer.Argument(help="The bot: its bot.toml, its folder, or a built-in name."),
    ],
    decision_ms: Annotated[
        int, typer.Option("--decision-ms", min=1, help="Time allowed per decision (ms).")
    ] = 1000,
    hands: Annotated[
        int, typer.Option("--hands", min=1, max=20, help="Hands of the full-match check.")
    ] = 3,
    seed: Annotated[int, typer.Option(help="Seed of the matches.")] = 1,
    logs: Annotated[
        Path | None,
        typer.Option("--logs", help="Folder for the bots' logs (default: a new temp folder)."),
    ] = None,
    allow_unsandboxed: AllowUnsandboxedOpt = False,
) -> None:
    """Run the compliance checks on a bot and print a PASS/FAIL report (exit 0 on PASS)."""
    try:
        bot = resolve_bot(manifest)
        sandbox = require_sandbox(allow_unsandboxed)
    except (ManifestError, SandboxError) as e:
        console.print(f"[red]error[/red]: {escape(str(e))}", highlight=False)
        raise typer.Exit(2) from None
    console.print(
        f"checking {escape(bot.name)} ({escape(str(bot.path))}): four processes per table,"
        f" {decision_ms} ms per decision, sandboxed: {sandbox.summary()}",
        highlight=False,
    )
    if sandbox.no_cgroup:  # the bot's processes are bounded one by one (docs/security.md)
        console.print(f"no cgroup per bot: {escape(sandbox.no_cgroup)}", highlight=False)

    def progress(r: CheckResult) -> None:
        mark = "[green]PASS[/green]" if r.passed else "[bold red]FAIL[/bold red]"
        console.print(f"  {mark} {escape(r.name)}", highlight=False)

    settings = CheckSettings(decision_ms=decision_ms, hands=hands, seed=seed, sandbox=sandbox)
    report = run_check(bot, settings, logs, progress)
    print_report(report, console)
    raise typer.Exit(0 if report.passed else 1)
