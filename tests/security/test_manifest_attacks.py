"""Manifests that try to steer their own sandbox: each is refused, at load and at start.

A manifest's ``command`` runs ``{python}``, an interpreter on the sandbox's ``PATH`` or a file
in the bot's own folder; its ``env`` (and an event's per-bot ``env``) sets plain variables
only. These tests try each way out: absolute, relative, ``..`` and symlinked programs, and
each family of loader, shell and interpreter hooks.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from arena.server.bots import BotProcess, BotStartError
from arena.server.manifest import (
    CommandError,
    Manifest,
    ManifestError,
    check_env,
    load_manifest,
    resolve_program,
)
from arena.server.sandbox import (
    SandboxError,
    SandboxLevel,
    host_sandbox,
    runtime_paths,
    unsandboxed,
)
from arena.tournament.runner import _check_private
from tests.security.hostile import arena

HOOKS = [
    "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GCONV_PATH", "GLIBC_TUNABLES",
    "MALLOC_CHECK_", "LC_ALL", "BASH_ENV", "ENV", "SHELLOPTS", "PS4", "PROMPT_COMMAND", "IFS",
    "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONWARNINGS", "PYTHONINSPECT",
    "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "RUBYOPT", "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS", "GRPC_EXPERIMENTS", "OPENSSL_CONF", "LOCPATH", "TZDIR", "HOSTALIASES",
]  # fmt: skip


def bot_folder(root: Path, command: str, env: str = "") -> Path:
    """A bot folder holding an executable ``run.sh`` and a manifest with ``command``."""
    folder = root / "bot"
    folder.mkdir(parents=True)
    run = folder / "run.sh"
    run.write_text("#!/bin/sh\nexec true\n")
    run.chmod(0o755)
    (folder / "bot.toml").write_text(f'name = "hostile"\ncommand = {command}\n{env}')
    return folder


@pytest.mark.parametrize(
    "command",
    [
        '["/bin/sh", "-c", "cat /etc/shadow"]',  # absolute, outside
        '["../outside/run.sh"]',  # relative, leaving the folder
        '["./sub/../../outside/run.sh"]',  # .. inside the path
        '["link/run.sh"]',  # a symbolic link out of the folder
        '["./escape.sh"]',  # a symlinked program
    ],
    ids=["absolute", "relative", "dotdot", "symlinked-folder", "symlinked-file"],
)
def test_a_command_outside_the_bot_s_folder_is_refused_at_load(
    tmp_path: Path, command: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "run.sh").write_text("#!/bin/sh\necho stolen\n")
    (outside / "run.sh").chmod(0o755)
    folder = bot_folder(tmp_path, command)
    (folder / "sub").mkdir()
    (folder / "link").symlink_to(outside)
    (folder / "escape.sh").symlink_to(outside / "run.sh")
    with pytest.raises(ManifestError, match=r"field 'command': .*outside the bot's folder"):
        load_manifest(folder / "bot.toml")


@pytest.mark.parametrize(
    "command",
    [
        '["env", "LD_PRELOAD=/tmp/x.so", "bash", "-c", "id"]',
        '["bash", "-c", "id"]',
        '["prlimit", "--as=0", "node", "bot.js"]',
    ],
    ids=["env", "shell", "prlimit"],
)
def test_a_program_that_runs_another_is_refused_at_load(tmp_path: Path, command: str) -> None:
    """``env LD_PRELOAD=... bash`` would pass the env allow-list by the command line."""
    folder = bot_folder(tmp_path, command)
    with pytest.raises(ManifestError, match=r"field 'command': .*runs another program"):
        load_manifest(folder / "bot.toml")


def test_a_command_in_the_folder_or_the_runtime_is_accepted(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, '["./run.sh", "--x"]')
    m = load_manifest(folder / "bot.toml")
    assert m.launch_argv() == [str((folder / "run.sh").resolve()), "--x"]
    assert resolve_program("{python}", folder, folder) == sys.executable
    assert resolve_program("node", folder, folder) == "node"  # looked up on the sandbox PATH
    with pytest.raises(CommandError, match="not a program name"):
        resolve_program("{python}x", folder, folder)


def test_a_manifest_made_in_code_is_checked_again_at_start(tmp_path: Path) -> None:
    """The checks hold for a manifest that never went through ``load_manifest``."""
    folder = bot_folder(tmp_path, '["./run.sh"]')
    m = Manifest(name="x", command=["/bin/sh"], path=folder / "bot.toml")
    with pytest.raises(CommandError, match="outside the bot's folder"):
        m.launch_argv()


def test_a_manifest_without_a_path_is_refused_at_start(tmp_path: Path) -> None:
    """Made in code without a path it has no folder: its sandbox would show the working one."""
    m = Manifest(name="x", command=["{python}", "-c", "pass"])
    bot = BotProcess(m, {}, sandbox=unsandboxed(), socket=tmp_path / "referee.sock")
    with pytest.raises(BotStartError, match="a manifest needs a path"):
        asyncio.run(bot.start())
    assert bot.proc is None


def test_a_host_program_the_sandbox_lacks_is_refused_at_start(tmp_path: Path) -> None:
    """``true`` is on the host's PATH, not in the sealed runtime: a clear error, not a crash."""
    sb = host_sandbox()
    if sb.level is not SandboxLevel.FULL:
        pytest.skip(f"this host makes no full sandbox: {'; '.join(sb.reasons)}")
    folder = bot_folder(tmp_path, '["true"]')
    bot = BotProcess(load_manifest(folder / "bot.toml"), {}, sandbox=sb, socket=tmp_path / "s")
    with pytest.raises(BotStartError, match=r"'true' is /\S+ on this host, which the sandbox"):
        asyncio.run(bot.start())
    assert bot.proc is None


@pytest.mark.parametrize("name", HOOKS)
def test_each_hook_variable_is_refused(name: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="plain variable"):
        check_env({name: "x"})
    folder = bot_folder(tmp_path, '["./run.sh"]', f'env = {{ {name} = "x" }}\n')
    with pytest.raises(ManifestError, match=rf"field 'env': .*{name}"):
        load_manifest(folder / "bot.toml")


@pytest.mark.parametrize(
    ("env", "why"),
    [
        ({"lower": "x"}, "not a plain variable name"),
        ({"PATH": "/x"}, "set by the arena"),
        ({"TICHU_ARENA_TOKEN": "t"}, "set by the arena"),
        ({"LEVEL": "a\0b"}, "without NUL"),
        ({"LEVEL": "x" * 5000}, "at most 4096"),
        ({f"V{k}": "1" for k in range(65)}, "at most 64 variables"),
    ],
)
def test_env_values_and_names_are_bounded(env: dict[str, str], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        check_env(env)
    assert check_env({"LEVEL": "2", "MYBOT_DEPTH": "3"}) == {"LEVEL": "2", "MYBOT_DEPTH": "3"}


@pytest.mark.slow
def test_the_cli_refuses_a_hostile_manifest_with_one_line(tmp_path: Path) -> None:
    """``arena play`` and an event name the file and field; no traceback, exit 2."""
    bot_folder(tmp_path, '["/bin/sh", "-c", "id"]')
    done = arena("play", "bot", "random", "random", "random", "--hands", "1", cwd=tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode == 2 and "Traceback" not in out, out  # bad input
    assert "outside the bot's folder" in out and "bot/bot.toml: field 'command'" in out, out
    event = tmp_path / "event.toml"
    event.write_text(
        'name = "e"\nbots = ["random", "greedy", "heuristic",'
        ' { bot = "random", name = "r2", env = { LD_PRELOAD = "/tmp/x.so" } }]\n'
    )
    done = arena("event", "run", "event.toml", "--db", "e.sqlite", cwd=tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode == 2 and "Traceback" not in out, out  # bad input
    assert "LD_PRELOAD" in out and "plain variables only" in out, out
    assert not (tmp_path / "e.sqlite").exists()  # refused before anything is written


def test_results_in_the_runtime_are_refused(tmp_path: Path) -> None:
    """The runtime is in every bot's view: no database, log or live feed may lie there."""
    for inside in (Path(sys.prefix), *runtime_paths()[-1:]):
        with pytest.raises(SandboxError, match="inside the arena's runtime"):
            _check_private({}, [inside / "results.sqlite"])
    _check_private({}, [tmp_path / "results.sqlite"])  # anywhere else is fine
