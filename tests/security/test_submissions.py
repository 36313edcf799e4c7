"""Submissions a hostile author makes too large, too many, linked out, special or strange:
refused at once, with one line, leaving nothing in the league's store (``arena league
submit``), in an event (``arena event run``) or in a worker's bundle cache."""

from __future__ import annotations

import os
import resource
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from arena.server.folder import DEFAULT_CAPS, MAX_MANIFEST_BYTES
from arena.tournament.league.season import (
    MAX_SUBMISSION_BYTES,
    MAX_SUBMISSION_FILES,
    LeagueError,
    bot_digest,
    submit,
)
from arena.tournament.league.spec import parse_league
from arena.tournament.league.store import LeagueStore
from tests.security.hostile import ARENA, BOTS, arena

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

LEAGUE = 'name = "caps"\n'
DB = ("--db", "runs/league.sqlite")


def author_bot(root: Path, name: str = "bot") -> Path:
    folder = root / name
    folder.mkdir()
    manifest = (BOTS / "predictor" / "bot.toml").read_text().replace("predictor", name)
    (folder / "bot.toml").write_text(manifest)
    (folder / "bot.py").write_text((BOTS / "predictor" / "bot.py").read_text())
    return folder


def bounded_arena(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` with its memory and file sizes capped: a read or a copy without bound
    (a device node, ``/dev/zero``) fails there, not the host."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
        resource.setrlimit(resource.RLIMIT_FSIZE, (256 << 20, 256 << 20))

    env = {**os.environ, "COLUMNS": "400"}
    return subprocess.run(
        [*ARENA, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        preexec_fn=cap,
    )


def refused(done: subprocess.CompletedProcess[str], why: str) -> None:
    """Exit code 2 (bad input), one line of output, no traceback, the reason given."""
    out = (done.stdout + done.stderr).strip()
    assert done.returncode == 2 and "Traceback" not in out, out
    assert len(out.splitlines()) == 1, out
    assert why in out, out


def store_is_empty(root: Path) -> None:
    store = root / "runs" / "league.sqlite.bots"
    left = list(store.rglob("*")) if store.exists() else []
    assert not left, left[:5]


def init_league(root: Path) -> None:
    (root / "league.toml").write_text(LEAGUE)
    assert arena("league", "init", "league.toml", *DB, cwd=root).returncode == 0


@contextmanager
def inside(folder: Path) -> Iterator[None]:
    """Works in ``folder`` (relative names reach where no path of PATH_MAX could)."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def nest(folder: Path, depth: int) -> None:
    with inside(folder):
        for _ in range(depth):
            os.mkdir("d")
            os.chdir("d")


def unnest(folder: Path, depth: int) -> None:
    """Removes what ``nest`` made without recursion (``shutil.rmtree`` recurses)."""
    with inside(folder):
        for _ in range(depth):
            os.chdir("d")
        for _ in range(depth):
            os.chdir("..")
            os.rmdir("d")


@pytest.mark.parametrize("attack", ["bytes", "files", "link"])
def test_an_oversized_or_linked_submission_is_refused(tmp_path: Path, attack: str) -> None:
    folder = author_bot(tmp_path)
    if attack == "bytes":  # sparse: a size that would take seconds and GiBs to hash twice
        with (folder / "weights.bin").open("wb") as f:
            f.truncate(16 * MAX_SUBMISSION_BYTES)
    elif attack == "files":
        data = folder / "data"
        data.mkdir()
        for k in range(MAX_SUBMISSION_FILES + 1):
            (data / f"{k}.txt").write_text("x")
    else:
        (folder / "league.sqlite").symlink_to(tmp_path / "runs" / "league.sqlite")
    init_league(tmp_path)
    done = arena("league", "submit", "bot", *DB, cwd=tmp_path, timeout=120)
    why = {
        "bytes": "at most 4096 files and 64 MiB",
        "files": "at most 4096 files and 64 MiB",
        "link": "league.sqlite is a symbolic link",
    }[attack]
    refused(done, why)
    store_is_empty(tmp_path)


MANIFEST_ATTACKS = ["link to another bot", "fifo", "link to /dev/zero", "folder", "huge"]


def hostile_manifest(tmp_path: Path, attack: str) -> Path:
    """A bot folder whose ``bot.toml`` is not a small regular file of its own."""
    victim = author_bot(tmp_path, "victim")
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.py").write_text("print('mine')\n")
    manifest = folder / "bot.toml"
    if attack == "link to another bot":
        manifest.symlink_to(victim / "bot.toml")
    elif attack == "fifo":
        os.mkfifo(manifest)
    elif attack == "link to /dev/zero":
        manifest.symlink_to("/dev/zero")
    elif attack == "folder":
        manifest.mkdir()
    else:
        manifest.write_text('name = "bot"\ncommand = ["{python}", "bot.py"]\n#' + "x" * (1 << 20))
    return folder


MANIFEST_WHY = {
    "link to another bot": "the manifest is a symbolic link",
    "fifo": "the manifest is a FIFO",
    "link to /dev/zero": "the manifest is a symbolic link",
    "folder": "is a folder",
    "huge": f"over the {MAX_MANIFEST_BYTES} allowed",
}


@pytest.mark.parametrize("attack", MANIFEST_ATTACKS)
def test_a_manifest_that_is_not_a_small_regular_file_is_refused_by_submit(
    tmp_path: Path, attack: str
) -> None:
    """A link would register another entrant's folder under the submitter's name; a FIFO
    would hang the command and /dev/zero read until memory ran out."""
    hostile_manifest(tmp_path, attack)
    init_league(tmp_path)
    target = "bot/bot.toml" if attack != "folder" else "bot"
    done = bounded_arena("league", "submit", target, *DB, cwd=tmp_path)
    refused(done, "bot.toml" if attack == "folder" else MANIFEST_WHY[attack])
    store_is_empty(tmp_path)


@pytest.mark.parametrize("attack", ["link to another bot", "fifo", "link to /dev/zero", "huge"])
def test_a_manifest_that_is_not_a_small_regular_file_is_refused_by_event_run(
    tmp_path: Path, attack: str
) -> None:
    hostile_manifest(tmp_path, attack)
    (tmp_path / "event.toml").write_text(
        'name = "e"\nbots = ["random", "greedy", "heuristic",'
        ' { bot = "bot/bot.toml", name = "b" }]\n'
    )
    done = bounded_arena("event", "run", "event.toml", "--db", "e.sqlite", cwd=tmp_path)
    refused(done, MANIFEST_WHY[attack])
    assert not (tmp_path / "e.sqlite").exists()  # refused before anything is written


def special_entry(folder: Path, attack: str) -> str:
    """Puts an entry a bot folder may not hold in ``folder``; returns the expected reason."""
    if attack == "fifo":
        os.mkfifo(folder / "data.pipe")
        return "data.pipe is a FIFO"
    if attack == "device":
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(folder / "zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))  # /dev/zero
        return "zero is a character device"
    if attack == "socket":
        import socket

        with inside(folder), socket.socket(socket.AF_UNIX) as s:
            s.bind("bot.sock")
        return "bot.sock is a socket"
    if attack == "dirs":
        data = folder / "data"
        data.mkdir()
        for k in range(20_000):
            (data / str(k)).mkdir()
        return f"{DEFAULT_CAPS.dirs} folders"
    if attack == "deep":
        nest(folder, 2_000)
        return f"{DEFAULT_CAPS.depth} levels of folders"
    if attack == "not utf-8":
        with inside(folder), open(b"weights-\xff\xfe.bin", "wb") as f:
            f.write(b"x")
        return "'weights-\\xff\\xfe.bin' is not valid UTF-8"
    raise AssertionError(attack)


@pytest.mark.parametrize("attack", ["fifo", "device", "socket", "dirs", "deep", "not utf-8"])
def test_a_folder_entry_a_bot_folder_may_not_hold_is_refused(tmp_path: Path, attack: str) -> None:
    """Refused with one line naming it, before anything is copied: no ``.partial`` folder,
    no device read without bound, no traceback (``RecursionError``, ``UnicodeEncodeError``)."""
    folder = author_bot(tmp_path)
    why = special_entry(folder, attack)
    init_league(tmp_path)
    try:
        done = bounded_arena("league", "submit", "bot", *DB, cwd=tmp_path)
        refused(done, why)
        store_is_empty(tmp_path)
    finally:
        if attack == "deep":
            unnest(folder, 2_000)


def test_folder_names_and_exec_bits_are_in_the_version_hash(tmp_path: Path) -> None:
    folder = author_bot(tmp_path)
    manifest = folder / "bot.toml"
    first = bot_digest(folder, manifest)
    (folder / "data").mkdir()
    with_folder = bot_digest(folder, manifest)
    (folder / "bot.py").chmod(0o755)
    with_exec = bot_digest(folder, manifest)
    assert len({first, with_folder, with_exec}) == 3


def test_a_submission_interrupted_while_copying_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C in the middle of the copy: no version, no folder, no ``.partial``."""
    import arena.server.folder as folder_module

    folder = author_bot(tmp_path)
    for k in range(8):
        (folder / f"part{k}.txt").write_text("x" * 1000)
    written: list[Path] = []
    real = folder_module._write_file

    def interrupted(target: Path, *args: object, **kwargs: object) -> None:
        if len(written) == 3:
            raise KeyboardInterrupt
        written.append(target)
        real(target, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(folder_module, "_write_file", interrupted)
    db = tmp_path / "runs" / "league.sqlite"
    db.parent.mkdir()
    with LeagueStore(db, create=True) as store:
        store.init_league(parse_league({"name": "caps"}, source="test"))
        with pytest.raises(KeyboardInterrupt):
            submit(store, folder)
        assert written and not store.versions()
    store_is_empty(tmp_path)


def test_a_refusal_in_process_is_a_league_error(tmp_path: Path) -> None:
    """What the CLI prints comes from a ``LeagueError``, not an ``OSError`` or worse."""
    folder = author_bot(tmp_path)
    os.mkfifo(folder / "pipe")
    db = tmp_path / "runs" / "league.sqlite"
    db.parent.mkdir()
    with LeagueStore(db, create=True) as store:
        store.init_league(parse_league({"name": "caps"}, source="test"))
        with pytest.raises(LeagueError, match="pipe is a FIFO"):
            submit(store, folder)
    store_is_empty(tmp_path)
