"""Defaults keep the arena's own files out of a bot's folder (its sandbox shows that folder)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from arena.kit.scaffold import new_bot
from arena.server.manifest import load_manifest, resolve_bot
from arena.server.runs import RUNS, runs_folder, state_runs_folder
from tests.helpers import ROOT


def test_runs_is_here_unless_here_is_a_bot_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    bot = load_manifest(new_bot(tmp_path, "mine") / "bot.toml")
    (bot.folder / "sub").mkdir()
    other = load_manifest(new_bot(tmp_path / "elsewhere", "other") / "bot.toml")
    monkeypatch.chdir(tmp_path)
    assert runs_folder([bot]) == RUNS
    monkeypatch.chdir(bot.folder)
    assert runs_folder([other, bot]) == state_runs_folder()
    assert state_runs_folder() == tmp_path / "state" / "tichu-arena" / "runs"
    monkeypatch.chdir(bot.folder / "sub")
    assert runs_folder([bot]) == state_runs_folder()
    # A bot that runs in the folder above its own (workdir = ".."): that folder is its too.
    (bot.folder / "bot.toml").write_text(
        (bot.folder / "bot.toml").read_text().replace('workdir = "."', 'workdir = ".."')
    )
    upward = load_manifest(bot.folder / "bot.toml")
    assert upward.cwd == tmp_path.resolve()
    monkeypatch.chdir(tmp_path)
    assert runs_folder([upward]) == state_runs_folder()


def test_the_project_root_is_no_built_in_bots_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Built-ins run in the project's root (workdir = "../.."), which their sandbox does not
    show: the README's commands from there write ./runs (issue 49)."""
    builtins = [resolve_bot(name) for name in ("random", "greedy", "heuristic")]
    assert {m.cwd for m in builtins} == {ROOT.resolve()}
    monkeypatch.chdir(ROOT)
    assert runs_folder(builtins) == RUNS
    monkeypatch.chdir(ROOT / "example_bots" / "greedy")
    assert runs_folder(builtins) == state_runs_folder()


@pytest.mark.slow
def test_play_from_the_bots_folder_writes_nothing_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 23, finding 2: ``arena play bot.toml ...`` run in the bot's folder wrote
    ``runs/`` there (which a league then hashed with the bot)."""
    made = CliRunner().invoke(app, ["new-bot", "mybot", "--into", str(tmp_path)])
    assert made.exit_code == 0, made.output
    bot = tmp_path / "mybot"
    before = sorted(p.relative_to(bot) for p in bot.rglob("*"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRPC_")}
    env |= {"XDG_STATE_HOME": str(tmp_path / "state"), "COLUMNS": "400"}
    result = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "play", "bot.toml", "random", "random",
         "random", "--hands", "1", "--quiet"],
        cwd=bot, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    after = sorted(p.relative_to(bot) for p in bot.rglob("*") if "__pycache__" not in p.parts)
    assert after == [p for p in before if "__pycache__" not in p.parts]
    replays = list((tmp_path / "state" / "tichu-arena" / "runs" / "play").glob("*.json"))
    assert len(replays) == 1
    assert f"replay written to {replays[0]}" in result.stdout
