"""Bot manifests: validation errors name the file, the field and what is wrong."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from arena.server.manifest import BUILTIN_DIR, ManifestError, load_manifest, resolve_bot


def write(tmp_path: Path, text: str, name: str = "bot.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_manifest_resolves_paths_and_the_interpreter(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    path = write(
        tmp_path / "sub",
        'name = "mine"\ncommand = ["{python}", "-m", "sdk", "mybot:MyBot"]\n'
        'workdir = ".."\nenv = { LEVEL = "3" }\nstartup_timeout_s = 2.5\n',
    )
    m = load_manifest(path)
    assert m.name == "mine"
    assert m.cwd == tmp_path.resolve()
    assert m.argv() == [sys.executable, "-m", "sdk", "mybot:MyBot"]
    assert m.env == {"LEVEL": "3"}
    assert m.startup_timeout_s == 2.5
    assert m.entry == "mybot:MyBot"
    # Without workdir the bot runs in the manifest's folder.
    plain = load_manifest(write(tmp_path, 'name = "x"\ncommand = ["./run.sh"]\n', "p.toml"))
    assert plain.cwd == tmp_path.resolve()
    assert plain.entry is None


@pytest.mark.parametrize(
    ("text", "field", "problem"),
    [
        ('command = ["x"]\n', "'name'", "Field required"),
        ('name = ""\ncommand = ["x"]\n', "'name'", "at least 1 character"),
        ('name = "x"\ncommand = "python bot.py"\n', "'command'", "valid list"),
        ('name = "x"\ncommand = []\n', "'command'", "at least 1 item"),
        ('name = "x"\ncommand = ["a", ""]\n', "'command'", "non-empty"),
        ('name = "x"\ncommand = ["a"]\nstartup_timeout_s = 0\n', "'startup_timeout_s'", "greater"),
        ('name = "x"\ncommand = ["a"]\nenv = { A = 1 }\n', "'env.A'", "valid string"),
        ('name = "x"\ncommand = ["a"]\ncolour = "red"\n', "'colour'", "unknown field"),
    ],
)
def test_errors_name_the_file_the_field_and_the_problem(
    tmp_path: Path, text: str, field: str, problem: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ManifestError) as e:
        load_manifest(path)
    message = str(e.value)
    assert message.startswith(f"{path}: ")
    assert f"field {field}" in message
    assert problem in message


def test_unreadable_manifests_and_unknown_bots(tmp_path: Path) -> None:
    bad = write(tmp_path, 'name = "x\n')
    with pytest.raises(ManifestError, match="not valid TOML"):
        load_manifest(bad)
    with pytest.raises(ManifestError, match="cannot read"):
        load_manifest(tmp_path / "missing.toml")
    with pytest.raises(ManifestError, match="neither a manifest file nor a built-in bot"):
        resolve_bot("no-such-bot")


def test_built_in_names_and_folders_resolve_to_bot_toml(tmp_path: Path) -> None:
    greedy = resolve_bot("greedy")
    assert greedy.path == (BUILTIN_DIR / "greedy" / "bot.toml").resolve()
    write(tmp_path, 'name = "folder-bot"\ncommand = ["x"]\n')
    assert resolve_bot(str(tmp_path)).name == "folder-bot"
