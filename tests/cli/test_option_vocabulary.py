"""One option vocabulary across ``arena`` (issue 51): a duration's unit ends its name, one unit
a concept, and the old spellings still work, hidden."""

from __future__ import annotations

import signal
from collections.abc import Coroutine, Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from arena.cli import serve as serve_cli
from arena.cli.main import app

DURATION_WORDS = ("timeout", "grace", "linger", "decision", "bank", "window", "away")


def _options(command: Any, path: str = "arena") -> Iterator[tuple[str, str, bool]]:
    """(command path, option name, hidden) of every option of every command."""
    for name, sub in getattr(command, "commands", {}).items():
        yield from _options(sub, f"{path} {name}")
    for param in command.params:
        for opt in getattr(param, "opts", []):
            if opt.startswith("--"):
                yield path, opt, bool(getattr(param, "hidden", False))


def test_every_shown_duration_option_ends_in_its_unit() -> None:
    shown = [(p, o) for p, o, hidden in _options(typer.main.get_command(app)) if not hidden]
    durations = [(p, o) for p, o in shown if any(w in o for w in DURATION_WORDS)]
    assert ("arena serve", "--shutdown-grace-s") in durations  # the walk sees the commands
    wrong = [(p, o) for p, o in durations if not o.endswith(("-ms", "-s"))]
    assert wrong == []
    units: dict[str, set[str]] = {}
    for _, opt in durations:  # --decision-ms everywhere, not --decision-s at one table
        stem, _, unit = opt.rpartition("-")
        units.setdefault(stem, set()).add(unit)
    assert {stem: u for stem, u in units.items() if len(u) > 1} == {}


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """``arena serve``'s settings, caught before it listens."""
    seen: dict[str, Any] = {}

    def caught(main: Coroutine[Any, Any, int]) -> int:
        frame = main.cr_frame
        assert frame is not None
        seen.update(frame.f_locals)
        main.close()
        return signal.SIGINT

    monkeypatch.setattr(serve_cli, "run_loop", caught)
    return seen


@pytest.mark.parametrize(
    "argv",
    [
        ["--join-timeout-s", "5", "--shutdown-grace-s", "3"],
        ["--join-timeout", "5", "--grace", "3"],  # the old spellings
    ],
)
def test_serve_takes_the_new_names_and_the_old(served: dict[str, Any], argv: list[str]) -> None:
    result = CliRunner().invoke(app, ["serve", "--port", "0", *argv])
    assert result.exit_code == 130, result.output
    assert served["spec"].startup_timeout_s == 5
    assert served["grace"] == 3
    help_text = CliRunner().invoke(app, ["serve", "--help"]).output
    assert "--join-timeout-s" in help_text and "--join-timeout " not in help_text


def test_the_gate_synopsis_lists_every_option() -> None:
    from tests.helpers import ROOT

    text = (ROOT / "docs" / "gate.md").read_text()
    synopsis = text.split("```")[1]
    gate = typer.main.get_command(app).commands["gate"]  # type: ignore[attr-defined]
    shown = {o for _, o, hidden in _options(gate) if not hidden} - {"--help", "--no-quiet"}
    assert {o for o in shown if o not in synopsis} == set()


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The argument path of every command and group under ``command``."""
    yield path
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def test_every_help_screen_labels_values_the_classic_way() -> None:
    """Issue 51: help screens said ``{db}`` for an argument and ``--help <bool>``; every
    screen names an argument in capitals (``DB``), a value by its kind (``FILE``, ``TEXT``,
    ``INTEGER``) and a flag by nothing."""
    runner = CliRunner()
    paths = list(_commands(typer.main.get_command(app)))
    assert ("league", "submit") in paths and len(paths) > 30
    bad = {}
    for path in paths:
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        labels = [w for w in result.output.split() if w.startswith(("{", "<")) and w[-1] in "}>"]
        if labels:
            bad[" ".join(path)] = labels
    assert bad == {}
    usage = runner.invoke(app, ["ratings", "--help"], env={"COLUMNS": "200"}).output
    assert "ratings [OPTIONS] DB" in " ".join(usage.split())
