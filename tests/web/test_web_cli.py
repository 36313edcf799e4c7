"""``arena web`` as a user runs it: a clear error for a bad file, pages for a good one."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ARENA = [sys.executable, "-m", "arena.cli.main"]


def test_a_file_that_is_not_an_event_database_is_refused_clearly(tmp_path: Path) -> None:
    bad = tmp_path / "notes.sqlite"
    bad.write_text("hello", encoding="utf-8")
    run = subprocess.run([*ARENA, "web", "--db", str(bad)], capture_output=True, text=True)
    assert run.returncode == 2
    assert "not an event database" in run.stderr and "Traceback" not in run.stderr
    run = subprocess.run(
        [*ARENA, "web", "--db", str(bad), "--delay", "soon"], capture_output=True, text=True
    )
    assert run.returncode == 2


def test_the_command_serves_the_pages(event_db: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [*ARENA, "web", "--db", str(event_db), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 600  # a condition waited for; the bound is for a hang
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/api/dbs", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and proc.poll() is None, "not serving"
                time.sleep(0.2)
        assert r.json()[0]["events"][0]["name"] == "webtest"
        assert "<script" in httpx.get(f"http://127.0.0.1:{port}/replay").text
    finally:
        proc.terminate()
        proc.wait(30)
