"""Ctrl-C and SIGTERM end the long-running commands with the README's exit codes, 130 and
143, after their graceful stop (they exited 0 before; issue 51)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from arena.cli.common import interrupted_exits
from arena.tournament.model import parse_event, plan_event
from arena.tournament.store import EventStore
from tests.helpers import ROOT


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_within_exits_128_plus_it(sig: signal.Signals, code: int) -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(typer.Exit) as stopped, interrupted_exits() as caught:
        signal.raise_signal(sig)  # as uvicorn hands it back once stopped
        assert caught == [sig]
    assert stopped.value.exit_code == code
    assert signal.getsignal(signal.SIGTERM) is before  # the handlers are put back


def test_a_second_signal_stops_the_body_at_once() -> None:
    with pytest.raises(typer.Exit) as stopped, interrupted_exits():
        signal.raise_signal(signal.SIGTERM)
        signal.raise_signal(signal.SIGINT)
        pytest.fail("the second signal did not stop the body")
    assert stopped.value.exit_code == 143


def test_a_body_that_ends_on_its_own_exits_as_it_would() -> None:
    with interrupted_exits() as caught:
        pass
    assert caught == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stopped_by(argv: list[str], cwd: Path, sig: signal.Signals, ready: str) -> tuple[int, str]:
    """Starts ``arena argv``, waits for the line holding ``ready``, sends ``sig``; the exit
    code and the output."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli.main", *argv],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # waits for the line, however slow the machine
            lines.append(line)
            if ready in line:
                break
        else:
            pytest.fail(f"{argv[0]} ended before it was ready: {''.join(lines)}")
        proc.send_signal(sig)
        rest, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, "".join(lines) + rest


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_web_exits_130_or_143(tmp_path: Path, sig: signal.Signals, code: int) -> None:
    db = tmp_path / "e.sqlite"
    with EventStore(db) as store:
        spec = parse_event(
            {"name": "e", "seed": 1, "bots": [{"bot": "random", "name": f"r{i}"} for i in range(4)]}
        )
        store.create_event(spec, plan_event(spec))
    argv = ["web", "--db", str(db), "--port", str(_free_port())]
    got, out = _stopped_by(argv, tmp_path, sig, "open http://")
    assert got == code, out
    assert "Traceback" not in out


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_league_serve_exits_130_or_143(tmp_path: Path, sig: signal.Signals, code: int) -> None:
    db = tmp_path / "l.sqlite"
    init = ["league", "init", str(ROOT / "docs" / "league-example.toml"), "--db", str(db)]
    subprocess.run([sys.executable, "-m", "arena.cli.main", *init], cwd=tmp_path, check=True)
    argv = ["league", "serve", "--db", str(db), "--port", str(_free_port())]
    got, out = _stopped_by(argv, tmp_path, sig, "open http://")
    assert got == code, out
    assert "Traceback" not in out


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_table_exits_130(tmp_path: Path) -> None:
    argv = ["table", "--port", "0", "--out", str(tmp_path / "t.json"), "--allow-unsandboxed"]
    got, out = _stopped_by(argv, tmp_path, signal.SIGINT, "table open:")
    assert got == 130, out
    assert "Traceback" not in out
