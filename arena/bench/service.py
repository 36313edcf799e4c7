"""``arena bench service``: what the league service costs, measured from outside it.

In a fresh folder, as an organiser and an author would: a league of fast bots (``random``,
``greedy``, ``quick`` and the author's ``arena new-bot`` starter) on a schedule of a round a
second, ``arena league serve`` started as its own process on a loopback port. Measured:

* the first round played by hand (``arena league run --rounds 1``) on a copy of the league
  taken before the service starts, beside the same round (same versions, same deals: the
  copy holds the same secret) scheduled by the service as soon as the author's upload makes
  it due: the service's overhead over the command;
* upload to verdict of the author's folder (pack, upload, smoke check, store) with no round
  running, and, with ``gate``, of a regressing version that the gate must judge;
* the service process's resident memory at start and after every round of the season;
* requests per second of the standings page and its JSON (one client, sequential) after the
  season, when no round runs.

Figures are printed, never asserted; each step prints a progress line.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from arena.service.client import submit_remote

LEAGUE = """\
name = "bench"
season_rounds = {rounds}

[round]
boards_per_round = 1
rotations = 2
hands_per_board = 1

[schedule]
every = "1s"
max_rounds = {rounds}

[gate]
min_pairs = 10
max_boards = 60
decision_ms = 10000
"""
DB = "runs/bench.sqlite"
HOUSE_BOTS = ("random", "greedy", "quick")
REGRESSING = 'command = ["{python}", "-m", "sdk", "example_bots.random.bot:RandomBot"]'
"""The regressing version's command: random play in place of the starter's."""


@dataclass
class ServiceFigures:
    """What ``bench_service`` measured (seconds, MiB, requests per second)."""

    rounds: int
    cli_round_s: float = 0.0
    service_round_s: float = 0.0  # first seen in progress to finished (0.25 s polls)
    verdict_to_round_s: float = 0.0  # the upload's verdict to the round finished
    upload_s: float = 0.0
    gate_upload_s: float | None = None
    gate_status: str = ""
    rss_mib: list[float] = field(default_factory=list)  # at start, then after each round
    requests_per_s: dict[str, float] = field(default_factory=dict)


def _arena(*args: str, cwd: Path) -> str:
    """Runs ``arena ARGS`` in ``cwd``; its output (raises with it when the command fails)."""
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"arena {' '.join(args)} exited {done.returncode}: {done.stdout}")
    return done.stdout


def _status(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{url}/api/service/status", timeout=60) as reply:
        data: dict[str, Any] = json.load(reply)
    return data


def _rss_mib(pid: int) -> float:
    """The resident memory of process ``pid`` (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait(
    what: str, ready: Callable[[], bool], proc: subprocess.Popen[str], limit_s: float
) -> None:
    """Polls ``ready`` every 0.25 s (few enough requests not to weigh on the service) until it
    holds; raises if the service died or time ran out."""
    deadline = time.monotonic() + limit_s
    while not ready():
        if proc.poll() is not None:
            raise RuntimeError(f"the service exited ({proc.returncode}) waiting for {what}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"no {what} after {limit_s:.0f} s")
        time.sleep(0.25)


def _copy_league(root: Path, into: Path) -> None:
    """A copy of the league's database and bot store in ``into`` (same relative layout)."""
    db = root / DB
    (into / "runs").mkdir(parents=True)
    with sqlite3.connect(db) as source, sqlite3.connect(into / DB) as target:
        source.backup(target)
    store = db.parent / f"{db.name}.bots"
    if store.exists():
        shutil.copytree(store, into / "runs" / store.name, symlinks=True)


def _finished(url: str) -> int:
    return sum(1 for r in _status(url)["rounds"] if r["finished"])


def _reached(url: str, rounds: int) -> bool:
    return _finished(url) >= rounds


def _round_started(url: str) -> bool:
    """Whether the service shows a round in progress (or one already finished)."""
    status = _status(url)
    return status["in_progress"] is not None or any(r["finished"] for r in status["rounds"])


def bench_service(
    rounds: int = 20,
    requests: int = 200,
    gate: bool = True,
    on_line: Callable[[str], None] = print,
) -> ServiceFigures:
    """Plays a season of ``rounds`` rounds under the service and measures it (module doc)."""
    figures = ServiceFigures(rounds)
    with tempfile.TemporaryDirectory(prefix="tichu-bench-service-") as tmp:
        root = Path(tmp) / "league"
        root.mkdir()
        (root / "league.toml").write_text(LEAGUE.format(rounds=rounds))
        _arena("league", "init", "league.toml", "--db", DB, cwd=root)
        token = _arena("league", "owner", "add", "alice", "--db", DB, cwd=root).strip()
        _arena("new-bot", "alice", cwd=root)
        for bot in HOUSE_BOTS:
            _arena("league", "submit", bot, "--db", DB, cwd=root)

        on_line("round 1 by hand (arena league run --rounds 1) on a copy of the league")
        copy = Path(tmp) / "copy"
        _copy_league(root, copy)
        shutil.copytree(root / "alice", copy / "alice")
        _arena("league", "submit", "alice/", "--db", DB, "--owner", "alice", cwd=copy)
        t = time.perf_counter()
        _arena("league", "run", "--rounds", "1", "--db", DB, cwd=copy)
        figures.cli_round_s = time.perf_counter() - t

        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        argv = [sys.executable, "-m", "arena.cli.main", "league", "serve", "--db", DB]
        argv += ["--port", str(port), "--daily-submissions", "1000"]
        service = subprocess.Popen(
            argv,
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        try:
            _wait("answer from the service", lambda: _is_up(url), service, 120)
            figures.rss_mib.append(_rss_mib(service.pid))
            on_line(f"service up on {url}, {figures.rss_mib[0]:.0f} MiB; uploading alice")
            t = time.perf_counter()
            verdict = submit_remote(root / "alice", url, token, poll_s=0.1)
            figures.upload_s = time.perf_counter() - t
            decided = time.perf_counter()
            on_line(f"alice: {verdict['status']} in {figures.upload_s:.1f} s; round 1 is due")
            _wait("round 1", partial(_round_started, url), service, 120)
            started = time.perf_counter()
            _wait("round 1's end", lambda: _finished(url) >= 1, service, 3600)
            figures.service_round_s = time.perf_counter() - started
            figures.verdict_to_round_s = time.perf_counter() - decided
            figures.rss_mib.append(_rss_mib(service.pid))
            on_line(f"round 1: {figures.service_round_s:.1f} s, {figures.rss_mib[-1]:.0f} MiB")
            for k in range(2, rounds + 1):
                _wait(f"round {k}'s end", partial(_reached, url, k), service, 3600)
                figures.rss_mib.append(_rss_mib(service.pid))
                on_line(f"round {k} of {rounds}: {figures.rss_mib[-1]:.0f} MiB")

            for page in ("/service", "/api/service/status", "/service/bots/alice",
                         "/api/service/bots/alice"):  # fmt: skip
                t = time.perf_counter()
                for _ in range(requests):
                    with urllib.request.urlopen(url + page, timeout=60) as reply:
                        reply.read()
                figures.requests_per_s[page] = requests / (time.perf_counter() - t)
            on_line(
                "pages: " + ", ".join(f"{p} {r:.0f}/s" for p, r in figures.requests_per_s.items())
            )

            if gate:
                manifest = root / "alice" / "bot.toml"
                lines = manifest.read_text().splitlines()
                manifest.write_text(
                    "\n".join(REGRESSING if x.startswith("command") else x for x in lines) + "\n"
                )
                on_line("alice version 2 (random play) with the gate")
                t = time.perf_counter()
                verdict = submit_remote(root / "alice", url, token, gate=True, poll_s=0.1)
                figures.gate_upload_s = time.perf_counter() - t
                figures.gate_status = str(verdict["status"])
        finally:
            os.killpg(service.pid, signal.SIGTERM)
            try:
                service.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(service.pid, signal.SIGKILL)
                service.wait()
    return figures


def _is_up(url: str) -> bool:
    try:
        _status(url)
    except OSError:
        return False
    return True
