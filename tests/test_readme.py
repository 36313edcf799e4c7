"""The README's shell commands, run as written in a fresh folder laid out like a user's checkout.

Every command of every ``sh`` block of README.md is classified in ``COMMANDS``: run as written
(with a line its output must show), run in a stated stand-in form, or skipped with the reason.
A README command the table does not know, or a table entry the README no longer has, fails the
test, so the table follows the README. The commands run in README order, in two lanes at once:
``make demo`` and the commands that read its results, and all the others.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc  # type: ignore[import-untyped]

from tests.helpers import ROOT
from tests.journeys.journey import doc_commands

README = ROOT / "README.md"
DEMO_DB = "runs/demo.sqlite"
#: A 6-hand event of the example event's name: its database stands in for the example's.
STAND_IN_EVENT = """\
name = "example-2026"
bots = ["random", "greedy", { bot = "random", name = "random-2" },
        { bot = "greedy", name = "greedy-2" }]
schedule = "round_robin"
"""


@dataclass(frozen=True)
class Run:
    """Run the command (``argv`` replaces it, for ``why``) and find ``expect`` in its output.

    ``serves``: the command serves until stopped; it is probed (``"grpc"`` or ``"http"``) and
    stopped with Ctrl-C.
    """

    expect: str
    argv: tuple[str, ...] = ()
    why: str = ""
    serves: str = ""


@dataclass(frozen=True)
class Skip:
    """Not run, for ``why``."""

    why: str


COMMANDS: dict[str, Run | Skip] = {
    "make demo": Run(
        "results in runs/demo.sqlite",
        ("arena", "demo"),
        "what make demo runs once make install has made .venv (the test runs from that .venv)",
    ),
    "make test": Skip("this test is part of make test"),
    "arena new-bot mybot": Run("created ./mybot/"),
    "arena play mybot random random random --hands 8": Run(r"final: play, 8 hands"),
    "arena check-bot mybot/bot.toml": Run(r"verdict: PASS"),
    "arena event run example_bots/events/ladder-greedy-random.toml"
    " --db runs/ladder-greedy-random.sqlite": Skip("a ladder rung: minutes (make ladder)"),
    "arena event run example_bots/events/ladder-heuristic-greedy.toml"
    " --db runs/ladder-heuristic-greedy.sqlite": Skip("a ladder rung: minutes (make ladder)"),
    "arena event run example_bots/events/ladder-search-heuristic.toml"
    " --db runs/ladder-search-heuristic.sqlite": Skip("a ladder rung: about 25 minutes"),
    "arena event run example_bots/events/ladder-quick-heuristic.toml"
    " --db runs/ladder-quick-heuristic.sqlite": Skip("a ladder rung: minutes (make ladder)"),
    "arena event run example_bots/events/ladder-strong-heuristic.toml"
    " --db runs/ladder-strong-heuristic.sqlite": Skip("a ladder rung: about half an hour"),
    "arena event run example_bots/events/ladder-strong-search.toml"
    " --db runs/ladder-strong-search.sqlite": Skip("a ladder rung: about half an hour"),
    "arena event run example_bots/events/ladder-learned-greedy.toml"
    " --db runs/ladder-learned-greedy.sqlite": Skip("a ladder rung: minutes (make ladder)"),
    "arena event run example_bots/events/ladder-heuristic-learned.toml"
    " --db runs/ladder-heuristic-learned.sqlite": Skip("a ladder rung: minutes (make ladder)"),
    "arena ladder leaderboards/ladder-greedy-random.json leaderboards/ladder-heuristic-greedy.json"
    " leaderboards/ladder-quick-heuristic.json leaderboards/ladder-search-heuristic.json"
    " leaderboards/ladder-strong-heuristic.json leaderboards/ladder-strong-search.json"
    " leaderboards/ladder-learned-greedy.json leaderboards/ladder-heuristic-learned.json": Run(
        r"leaderboards/reference\.md"
    ),
    "arena play greedy heuristic greedy heuristic": Run(r"team [AB] wins \d+ : \d+"),
    "arena serve --port 50051 --tables 1 --tokens runs/tokens.txt": Run(
        "referee listening on 127.0.0.1:",
        ("arena", "serve", "--port", "0", "--tables", "1", "--tokens", "runs/tokens.txt"),
        "port 0 for 50051: tests listen on ports the system chooses",
        serves="grpc",
    ),
    "arena event run docs/event-example.toml": Run(
        "results in runs/example-2026.sqlite",
        ("arena", "event", "run", "stand-in.toml"),
        "the example event plays the search bot, 1 s a decision, for many minutes: a 6-hand"
        " event of the same name makes runs/example-2026.sqlite for the commands that read it",
    ),
    "arena event resume runs/example-2026.sqlite": Run("results in runs/example-2026.sqlite"),
    "arena ratings runs/example-2026.sqlite": Run("hand-Elo"),
    "arena leaderboard runs/example-2026.sqlite": Run(r"leaderboards/example-2026\.md"),
    "arena replay verify runs/demo.sqlite.replays/demo/000000-b0-r0.json": Run("match finished"),
    "arena replay show runs/demo.sqlite.replays/demo/000000-b0-r0.json": Run("final score"),
    "arena web --db runs/demo.sqlite": Run(
        "serving 1 database",
        ("arena", "web", "--db", DEMO_DB, "--port", "{port}"),
        "a port the system chose for the default 8000: tests never take a fixed port",
        serves="http",
    ),
    "arena table --sit You": Skip(
        "serves a table until stopped, waiting for a person: tests/journeys/test_journey_table.py"
        " plays a hand at it in Chromium"
    ),
    "dask scheduler --port 8786 --no-dashboard": Skip("serves until stopped, on a fixed port"),
    "dask worker tcp://SCHEDULER:8786 --host WORKER --nthreads 1 --nworkers 2": Skip(
        "SCHEDULER is the user's scheduler host, WORKER the playing machine's address;"
        " tests/tournament/test_cluster_by_hand.py starts workers so"
    ),
    "arena event run docs/event-example.toml --cluster tcp://SCHEDULER:8786": Skip(
        "SCHEDULER is the user's scheduler host"
    ),
    "arena event run docs/event-example.toml --cluster local:2": Skip(
        "the example event (minutes, see above) on a Dask cluster; tests/tournament/test_cluster.py"
        " runs events on a local cluster"
    ),
    "arena league init docs/league-example.toml --db runs/spring.sqlite": Run("league 'spring'"),
    "arena league submit alice/ --db runs/spring.sqlite --owner alice": Run("alice: registered"),
    "arena league submit alice/ --db runs/spring.sqlite --gate": Run("alice: unchanged"),
    "arena league retire eve --db runs/spring.sqlite": Skip(
        "eve stands for a bot of the league; the README submits only alice"
    ),
    "arena league run --rounds 4 --db runs/spring.sqlite": Skip(
        "needs 4 active bots per division and plays for minutes; tests/tournament/test_league.py"
        " plays rounds"
    ),
    "arena league standings --db runs/spring.sqlite": Run("season 1: 0 round"),
    "arena league history alice --db runs/spring.sqlite": Run("v1: .* owner alice"),
    "arena league season close --db runs/spring.sqlite": Run("season 1 closed"),
    "arena gate --candidate bot.toml --baseline heuristic --preset nonreg --junit gate.xml"
    " --json gate.json": Skip(
        "bot.toml is the user's bot; a gate plays hundreds of board pairs (tests/tournament/"
        "test_gate.py)"
    ),
}


def test_every_readme_command_is_classified() -> None:
    commands = doc_commands(README)
    assert len(commands) == len(set(commands)), "a README command is listed twice"
    assert [c for c in commands if c not in COMMANDS] == [], "classify these in COMMANDS"
    assert [c for c in COMMANDS if c not in commands] == [], "the README no longer has these"
    unexplained = [
        c for c, e in COMMANDS.items() if isinstance(e, Run) and bool(e.argv) != bool(e.why)
    ]
    assert unexplained == [], "a command run in another form says why, and only then"


def checkout(folder: Path, env: dict[str, str]) -> None:
    """Lays ``folder`` out like a user's checkout: the docs and bots the commands read, the
    committed leaderboards (copied: commands write there) and the league's bot ``alice/``, made
    as the README makes a bot."""
    for name in ("docs", "example_bots"):
        (folder / name).symlink_to(ROOT / name)
    (folder / "leaderboards").mkdir()
    for board in (ROOT / "leaderboards").iterdir():
        (folder / "leaderboards" / board.name).write_bytes(board.read_bytes())
    (folder / "stand-in.toml").write_text(STAND_IN_EVENT)
    (folder / "tmp").mkdir()
    subprocess.run(
        ["arena", "new-bot", "alice"], cwd=folder, env=env, check=True, capture_output=True
    )


def environment(folder: Path) -> dict[str, str]:
    """A user's shell after ``source .venv/bin/activate``, in a terminal 120 columns wide."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env["VIRTUAL_ENV"] = str(Path(sys.executable).parents[1])
    env["COLUMNS"] = "120"
    env["TMPDIR"] = str(folder / "tmp")
    env.pop("PYTHONPATH", None)
    return env


def free_port() -> int:
    """A port the system chooses (bound and released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def probe_referee(folder: Path, proc: subprocess.Popen[str]) -> None:
    """Waits for the seat tokens, then asks the referee's health service over gRPC."""
    tokens = folder / "runs" / "tokens.txt"
    deadline = time.monotonic() + 600
    while not tokens.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    written = json.loads(tokens.read_text())
    assert len(written["tables"]) == 1 and len(written["tables"][0]["tokens"]) == 4
    with grpc.insecure_channel(written["server"]) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service="tichu.arena.v1.Referee"), timeout=10
        )
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


def probe_viewer(port: int, proc: subprocess.Popen[str]) -> None:
    """Waits for the viewer's front page, then asks its API for the events: the demo, done."""
    deadline = time.monotonic() + 600
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as page:
                assert "Tichu Arena" in page.read().decode()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/dbs", timeout=10) as reply:
        (db,) = json.load(reply)
    assert [(e["name"], e["plays_done"]) for e in db["events"]] == [("demo", 144)]


def serve(
    argv: list[str],
    folder: Path,
    env: dict[str, str],
    probe: Callable[[subprocess.Popen[str]], None],
) -> str:
    """Starts a serving command, probes it, stops it with Ctrl-C; returns its output."""
    proc = subprocess.Popen(
        argv, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        probe(proc)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
    assert proc.returncode in (0, 130), f"{argv} exited {proc.returncode}:\n{out}"
    return out


def run(command: str, folder: Path, env: dict[str, str]) -> str:
    """Runs one README command by its table entry; returns what went wrong, or ''."""
    entry = COMMANDS[command]
    assert isinstance(entry, Run)
    argv = list(entry.argv or shlex.split(command))
    if entry.serves:
        port = free_port()
        argv = [a.replace("{port}", str(port)) for a in argv]
        probe: Callable[[subprocess.Popen[str]], None] = (
            (lambda proc: probe_referee(folder, proc))
            if entry.serves == "grpc"
            else (lambda proc: probe_viewer(port, proc))
        )
        try:
            out = serve(argv, folder, env, probe)
        except (AssertionError, OSError) as e:  # reported with the other lane's errors
            return f"{command!r} failed its probe: {e}"
    else:
        done = subprocess.run(
            argv,
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=1200,
            check=False,
        )
        out = done.stdout
        if done.returncode != 0:
            return f"{command!r} exited {done.returncode}:\n{out}"
    if not re.search(entry.expect, out):
        return f"{command!r} did not print {entry.expect!r}:\n{out}"
    return ""


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_readme_commands_work_as_written(tmp_path: Path) -> None:
    env = environment(tmp_path)
    checkout(tmp_path, env)
    commands = [c for c in doc_commands(README) if isinstance(COMMANDS[c], Run)]
    # make demo and the commands that read its results; all the others beside them.
    demo = [c for c in commands if c == "make demo" or DEMO_DB in c]
    others = [c for c in commands if c not in demo]

    def lane(lane_commands: list[str]) -> list[str]:
        return [error for c in lane_commands if (error := run(c, tmp_path, env))]

    with ThreadPoolExecutor(2) as pool:
        errors = [e for errs in pool.map(lane, (demo, others)) for e in errs]
    assert not errors, "\n\n".join(errors)
