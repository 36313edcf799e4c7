"""A version is admitted only on a finished verdict: ``arena league submit --gate`` stopped
before the first pair, mid-run or during the write registers nothing it should not, and an
inconclusive gate follows the league's policy."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.tournament.league.season import submit
from arena.tournament.league.spec import load_league
from arena.tournament.league.store import LeagueStore
from tests.helpers import ROOT
from tests.tournament.test_league import ARENA, arena, arena_env, make_bot

pytestmark = pytest.mark.slow

# Equal bots and a floor of 1,000 pairs: the gate runs on until it is stopped.
ENDLESS = 'name = "g"\n[gate]\nmin_pairs = 1000\nmax_boards = 2000\ndecision_ms = 10000\n'
# greedy against random: H1 within a few boards.
QUICK = 'name = "g"\n[gate]\nmin_pairs = 2\nmax_boards = 40\ndecision_ms = 10000\n'


class Cli:
    """``arena league submit`` as a process, its output read line by line as it comes."""

    def __init__(self, *args: str, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [*ARENA, "league", "submit", *args],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def wait_for(self, what: str, ready: Callable[[], bool], limit: float = 600) -> None:
        deadline = time.monotonic() + limit
        while not ready():
            assert self.proc.poll() is None, f"exited before {what}: {self.output()}"
            assert time.monotonic() < deadline, f"no {what}: {self.output()}"
            time.sleep(0.1)

    def finish(self) -> int:
        code = self.proc.wait(600)
        self._reader.join(60)
        return code

    def output(self) -> str:
        return "".join(self.lines)

    def plays(self) -> int:
        """The plays the last gate line counted (-1 before the first)."""
        lines = [line for line in self.lines if "plays " in line]
        counts = [int(line.split("plays ")[1].split()[0]) for line in lines]
        return counts[-1] if counts else -1

    def holding_signals(self) -> bool:
        """Whether the process catches SIGTERM, which it does after its gate's run only while
        it writes the version (otherwise SIGTERM keeps its default action)."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        caught = next(x for x in status.splitlines() if x.startswith("SigCgt:")).split()[1]
        return bool(int(caught, 16) & (1 << (signal.SIGTERM - 1)))


def league_with(tmp_path: Path, text: str, v2: str) -> tuple[Path, Path]:
    """A league whose bot ``bob`` has v1 (random) and a folder holding v2 (``v2``'s play)."""
    (tmp_path / "g.toml").write_text(text)
    db = tmp_path / "g.sqlite"
    with LeagueStore(db, create=True) as store:
        store.init_league(load_league(tmp_path / "g.toml"))
        submit(store, make_bot(tmp_path / "v1", "bob", "random"))
    folder = make_bot(tmp_path / "v2", "bob", v2)
    (folder / "bot.py").write_text((folder / "bot.py").read_text() + "# v2\n")
    return db, folder


def versions(db: Path) -> list[tuple[int, str | None]]:
    with LeagueStore(db) as store:
        return [
            (v.number, None if v.gate is None else v.gate["verdict"]) for v in store.versions("bob")
        ]


def stored_copies(db: Path) -> int:
    return len(list((db.parent / f"{db.name}.bots" / "bob").iterdir()))


@pytest.mark.parametrize(
    ("signum", "stage"),
    [
        (signal.SIGINT, "before the first pair"),
        (signal.SIGTERM, "mid-run"),
        (signal.SIGKILL, "mid-run"),
    ],
)
def test_a_gate_stopped_before_its_verdict_registers_nothing(
    tmp_path: Path, signum: int, stage: str
) -> None:
    db, folder = league_with(tmp_path, ENDLESS, "random")
    cli = Cli(str(folder), "--db", str(db), "--gate", env=arena_env())
    least = 0 if stage == "before the first pair" else 2
    cli.wait_for(f"a gate line with {least}+ plays", lambda: cli.plays() >= least)
    cli.proc.send_signal(signum)
    code = cli.finish()
    out = cli.output()
    assert versions(db) == [(1, None)], out
    assert "plays from the next round" not in out and "Traceback" not in out, out
    if signum == signal.SIGKILL:
        assert code == -signal.SIGKILL
        assert stored_copies(db) == 2  # v1's, and the staging copy the kill left
        with LeagueStore(db) as store:  # the bot's next submission sweeps it
            (folder / "bot.py").write_text((folder / "bot.py").read_text() + "# v3\n")
            assert submit(store, folder).version.number == 2
        assert stored_copies(db) == 2 and versions(db) == [(1, None), (2, None)]
        return
    assert code == 128 + signum, out
    again = f"nothing registered; continue with: arena league submit {folder} --db {db} --gate"
    assert again in " ".join(out.split()) and "Warning" not in out, out
    assert stored_copies(db) == 1, out  # the copy of the stopped version is gone


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL])
def test_a_version_being_written_is_written_whole_or_not_at_all(
    tmp_path: Path, signum: int
) -> None:
    """The test holds the league database's write lock, so the CLI waits in the write of its
    gated version; Ctrl-C there comes too late to stop it (the version is registered with
    its verdict, exit 0), a kill -9 leaves nothing, and submitting again works."""
    db, folder = league_with(tmp_path, QUICK, "greedy")
    temp = Path(tempfile.mkdtemp(prefix="g"))  # the gate's database while it runs (a short
    # path: the bots' sockets are made there too)
    cli = Cli(str(folder), "--db", str(db), "--gate", env={**arena_env(), "TMPDIR": str(temp)})
    cli.wait_for("the gate's first line", lambda: cli.plays() >= 0)
    lock = sqlite3.connect(db, timeout=60, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    try:
        cli.wait_for("the gate's end", lambda: not list(temp.glob("arena-gate-*")))
        # within the write's patience (SQLite's 30 s)
        cli.wait_for("the write of version 2", cli.holding_signals, limit=20)
        cli.proc.send_signal(signum)
        if signum == signal.SIGKILL:
            cli.finish()
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    code = cli.finish()
    out = cli.output()
    shutil.rmtree(temp, ignore_errors=True)
    if signum == signal.SIGINT:
        assert code == 0, out
        assert "bob: version 2" in out and "gate: PASS: H1 accepted" in out, out
        assert versions(db) == [(1, None), (2, "H1")]
        return
    assert code == -signal.SIGKILL and versions(db) == [(1, None)], out
    done = arena("league", "submit", str(folder), "--db", str(db), "--gate")
    assert done.returncode == 0, done.stdout + done.stderr
    assert versions(db) == [(1, None), (2, "H1")]


@pytest.mark.parametrize("policy", ["", 'inconclusive = "admit"\n'])
def test_an_inconclusive_gate_follows_the_leagues_policy(tmp_path: Path, policy: str) -> None:
    """Two boards at most, a floor above them: the gate ends inconclusive at its cap."""
    text = f'name = "g"\n[gate]\nmin_pairs = 2\nmax_boards = 2\ndecision_ms = 10000\n{policy}'
    db, folder = league_with(tmp_path, text, "random")
    done = arena("league", "submit", str(folder), "--db", str(db), "--gate")
    out = " ".join((done.stdout + done.stderr).split())
    assert "inconclusive after 2 boards" in out, out
    if policy:
        assert done.returncode == 0, out
        assert 'admitted: the league admits an inconclusive gate (inconclusive = "admit")' in out
        assert versions(db) == [(1, None), (2, "inconclusive")]
    else:
        assert done.returncode == 1, out
        assert 'the league refuses an inconclusive gate ([gate] inconclusive = "refuse")' in out
        assert versions(db) == [(1, None)] and stored_copies(db) == 1


def test_the_policy_is_checked_in_the_league_file(tmp_path: Path) -> None:
    (tmp_path / "g.toml").write_text('name = "g"\n[gate]\ninconclusive = "maybe"\n')
    done = arena("league", "init", str(tmp_path / "g.toml"), "--db", str(tmp_path / "g.sqlite"))
    assert done.returncode == 2 and "gate.inconclusive" in done.stdout, done.stdout
    assert not os.path.exists(tmp_path / "g.sqlite")
