"""The event runner end to end: real bot processes over gRPC, SQLite, kill and resume."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.tournament.model import parse_event, plan_event
from arena.tournament.runner import sessions_of
from arena.tournament.store import EventStore, StoredPlay
from tests.helpers import ROOT

pytestmark = pytest.mark.slow  # events over gRPC with real bot processes

ARENA = [sys.executable, "-m", "arena.cli.main"]

EVENT = """\
name = "{name}"
bots = ["random", "greedy", "heuristic", {{ bot = "random", name = "random-b" }}]
schedule = "round_robin"
format = "board"
hands_per_board = {hands}
rotations = 2
boards_per_round = {boards}
seed = 11
jobs = 2

[time_control]
decision_ms = 10000  # ten times the default: a loaded machine makes no timeouts of its own
"""


def write_event(tmp: Path, name: str, boards: int, hands: int = 1) -> Path:
    path = tmp / f"{name}.toml"
    path.write_text(EVENT.format(name=name, boards=boards, hands=hands))
    return path


def run_arena(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """Runs the CLI with the gRPC settings it makes itself (none inherited from this test), on
    a console wide enough that no path it prints is wrapped."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRPC_")}
    env["COLUMNS"] = "400"
    return subprocess.run(
        [*ARENA, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def hand_rows(db: Path) -> list[tuple[int, int, int, int]]:
    """Every stored hand as (play ordinal, hand, score A, score B), sorted."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT p.ordinal, h.hand_no, h.score_a, h.score_b FROM hands h"
            " JOIN plays p ON p.id = h.play_id ORDER BY p.ordinal, h.hand_no"
        ).fetchall()
    return [tuple(r) for r in rows]


def plays_done(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            return int(
                conn.execute("SELECT COUNT(*) FROM plays WHERE status = 'done'").fetchone()[0]
            )
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
def test_event_runs_over_grpc_and_writes_the_leaderboard(tmp_path: Path) -> None:
    """Four bots, 3 rounds x 2 boards x 2 rotations: every play recorded, leaderboard written."""
    event = write_event(tmp_path, "e2e", boards=2)
    db = tmp_path / "e2e.sqlite"
    out = tmp_path / "boards"
    done = run_arena(
        "event", "run", str(event), "--db", str(db), "--out", str(out), "--quiet", cwd=ROOT
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = hand_rows(db)
    assert [r[:2] for r in rows] == [(k, 0) for k in range(12)]  # 12 plays of one hand each
    with EventStore(db, create=False) as store:
        summary = store.event_summary("e2e")
        assert (summary.plays_done, summary.boards_done, summary.boards_total) == (12, 6, 6)
        for sp in store.plays("e2e"):
            assert sp.replay_path is not None
            replay = json.loads(store.resolve_replay(sp.replay_path).read_text())
            assert replay["seats"] == list(sp.play.seats)
    for suffix in ("md", "json", "html"):
        assert (out / f"e2e.{suffix}").exists()
    assert "e2e.html" in done.stdout
    # No gRPC log lines (such as "skipping fork() handlers" at every bot start).
    assert not re.search(r"^[IWE]\d{4} ", done.stderr, re.M), done.stderr
    # Running a finished event again plays nothing and changes nothing.
    again = run_arena(
        "event", "run", str(event), "--db", str(db), "--out", str(out), "--quiet", cwd=ROOT
    )
    assert again.returncode == 0, again.stderr
    assert hand_rows(db) == rows


def test_a_board_is_never_played_twice_on_one_process() -> None:
    """Sessions split by rotation: the two plays of a board are in different sessions."""
    data = {
        "name": "s",
        "bots": ["random", "greedy", "heuristic", {"bot": "random", "name": "random-b"}],
        "boards_per_round": 3,
    }
    plan = plan_event(parse_event(data, source="test"))
    stored = [StoredPlay(k, p, False, None) for k, p in enumerate(plan.plays)]
    sessions = sessions_of(stored)
    seen: dict[int, int] = {}
    for index, session in enumerate(sessions):
        assert {sp.play.rotation for sp in session.plays} == {session.rotation}
        assert {sp.play.seats for sp in session.plays} == {session.seats}
        for sp in session.plays:
            assert seen.setdefault(sp.play.board * 10 + sp.play.rotation, index) == index
    boards = {sp.play.board for s in sessions for sp in s.plays}
    for board in boards:
        holders = {i for i, s in enumerate(sessions) for sp in s.plays if sp.play.board == board}
        assert len(holders) == 2  # rotation 0 and rotation 1, never the same processes


@pytest.mark.slow
@pytest.mark.parametrize("how", ["sigkill", "sigint", "sigterm"])
def test_killed_event_resumes_without_losing_or_repeating_a_hand(tmp_path: Path, how: str) -> None:
    """Kill the runner (and its bots) mid-event; resume; every hand is there exactly once."""
    event = write_event(tmp_path, "kill", boards=2, hands=2)
    db = tmp_path / "kill.sqlite"
    proc = subprocess.Popen(
        [*ARENA, "event", "run", str(event), "--db", str(db), "--out", str(tmp_path), "--quiet"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while plays_done(db) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the event finished before it could be interrupted"
    if how == "sigkill":
        os.killpg(proc.pid, signal.SIGKILL)  # the runner and every bot process, at once
    else:
        proc.send_signal(signal.SIGINT if how == "sigint" else signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    if how != "sigkill":
        assert proc.returncode == {"sigint": 130, "sigterm": 143}[how], out + err
        assert "arena event resume" in out
    before = hand_rows(db)
    partial = plays_done(db)
    assert 3 <= partial < 12
    assert len(before) == 2 * partial  # no half-written play
    resumed = run_arena("event", "resume", str(db), "--out", str(tmp_path), "--quiet", cwd=ROOT)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    after = hand_rows(db)
    assert set(before) <= set(after)  # what was recorded before the kill is untouched
    keys = [(r[0], r[1]) for r in after]
    assert keys == sorted(set(keys)) and len(keys) == 2 * 12  # 12 plays x 2 hands, each once
    with EventStore(db, create=False) as store:
        assert store.event("kill").status.value == "finished"


def test_restart_every_play_gives_each_play_its_own_processes() -> None:
    """``restart = "play"``: one session (one set of bot processes) per play."""
    data = {
        "name": "r",
        "bots": ["random", "greedy", "heuristic", {"bot": "random", "name": "random-b"}],
        "boards_per_round": 3,
        "restart": "play",
    }
    spec = parse_event(data, source="test")
    plan = plan_event(spec)
    stored = [StoredPlay(k, p, False, None) for k, p in enumerate(plan.plays)]
    sessions = sessions_of(stored, spec.restart)
    assert len(sessions) == len(plan.plays) == 18
    assert all(len(s.plays) == 1 for s in sessions)
    assert len(sessions_of(stored)) == 6  # by default: 3 rounds x 2 rotations


def every_hand(db: Path) -> dict[tuple[int, int], tuple[object, ...]]:
    """Every stored hand, all its columns but the row ids, by (play ordinal, hand)."""
    with sqlite3.connect(db) as conn:
        cursor = conn.execute(
            "SELECT p.ordinal, p.seat_seeds, h.* FROM hands h JOIN plays p ON p.id = h.play_id"
        )
        names = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
    keep = [k for k, name in enumerate(names) if name not in ("id", "play_id")]
    hand = names.index("hand_no")
    return {(r[0], r[hand]): tuple(r[k] for k in keep) for r in rows}


def test_the_same_event_file_replays_the_same_database(tmp_path: Path) -> None:
    """The demo line-up (two random bots), twice with two tables at once: every hand equal.

    A generous clock (``EVENT``'s): a timeout on a loaded machine would change a hand.
    """
    event = write_event(tmp_path, "twice", boards=2)
    runs = []
    for k in (1, 2):
        db = tmp_path / f"run{k}.sqlite"
        quiet = ["--quiet"] if k == 2 else []
        done = run_arena(
            "event", "run", str(event), "--db", str(db), "--out", str(tmp_path), *quiet,
            cwd=ROOT,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        runs.append(every_hand(db))
        if k == 1:  # not a terminal: plain progress lines instead of a bar
            assert re.search(
                r"^plays \d+/12, boards \d+ \(\d+ half-played\), [\d.]+ hands/s, ETA [\d:?]+",
                done.stdout,
                re.M,
            )
    first, second = runs
    assert len(first) == 3 * 2 * 2
    assert first == second


def test_an_event_counts_a_bots_own_failures_with_its_log(tmp_path: Path) -> None:
    """A bot that raises on every follow: the summary and the database name it and its log."""
    manifest = tmp_path / "faulty" / "bot.toml"
    manifest.parent.mkdir()
    # The sandbox shows a bot its own folder alone: the bot's module goes in it.
    shutil.copy(ROOT / "tests" / "server" / "bots" / "faulty_bots.py", manifest.parent)
    command = '["{python}", "-m", "sdk", "faulty_bots:FollowRaises"]'
    manifest.write_text(f'name = "faulty"\ncommand = {command}\n', encoding="utf-8")
    event = tmp_path / "faulty.toml"
    event.write_text(
        EVENT.format(name="faulty", boards=1, hands=1).replace(
            '{ bot = "random", name = "random-b" }', f'{{ bot = "{manifest}", name = "faulty" }}'
        ),
        encoding="utf-8",
    )
    db = tmp_path / "faulty.sqlite"
    done = run_arena(
        "event", "run", str(event), "--db", str(db), "--out", str(tmp_path), "--quiet", cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    with EventStore(db, create=False) as store:
        failures = [(h.seats[f.seat], f) for h in store.hands("faulty") for f in h.row.failures]
    assert failures and {(bot, f.kind) for bot, f in failures} == {("faulty", "exception")}
    logs = {f.log for _, f in failures}
    assert all(
        Path(log).is_file() and "KeyError: 'follow'" in Path(log).read_text() for log in logs
    )
    flat = " ".join(done.stdout.split())
    assert f"faulty: {len(failures)} failures (exception {len(failures)})" in flat
    assert "## Bot failures" in (tmp_path / "faulty.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "cluster",
    [
        pytest.param([], id="local"),
        pytest.param(["--cluster", "local:1"], marks=pytest.mark.slow, id="dask"),
    ],
)
def test_an_event_gives_a_bot_its_env_and_args_and_refuses_a_changed_env(
    tmp_path: Path, cluster: list[str]
) -> None:
    """``env`` and ``args`` in the event file reach the bot's process (it writes what it got
    to its log), here and on a Dask worker (the bot's bundle carries them); the event's env
    over the manifest's, its args after the manifest's command. An event whose file then
    changes a bot's env is refused, naming the bot."""
    if cluster:
        pytest.importorskip("distributed")
    manifest = ROOT / "tests" / "tournament" / "bots" / "envbot" / "bot.toml"
    entry = (
        f'{{ bot = "{manifest}", name = "alice", args = ["--level", "2"],'
        ' env = { ENVBOT_LEVEL = "2", ENVBOT_OVERRIDDEN = "event" } }'
    )
    event = tmp_path / "envs.toml"
    event.write_text(
        EVENT.format(name="envs", boards=1, hands=1).replace(
            '{ bot = "random", name = "random-b" }', entry
        ),
        encoding="utf-8",
    )
    db = tmp_path / "envs.sqlite"
    done = run_arena(
        "event", "run", str(event), "--db", str(db), "--out", str(tmp_path), "--quiet",
        *cluster, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    logs = sorted((tmp_path / "envs.sqlite.logs").glob("*/seat*-envbot.log"))
    assert len(logs) == 6  # 3 rounds x 2 rotations, one process each
    for log in logs:
        line = next(x for x in log.read_text().splitlines() if x.startswith("envbot started: "))
        seen = json.loads(line.removeprefix("envbot started: "))
        assert seen == {
            "argv": ["--from-manifest", "--level", "2"],
            "env": {
                "ENVBOT_LEVEL": "2",
                "ENVBOT_MANIFEST": "kept",
                "ENVBOT_OVERRIDDEN": "event",
            },
        }
    rows = hand_rows(db)
    event.write_text(event.read_text().replace('ENVBOT_LEVEL = "2"', 'ENVBOT_LEVEL = "3"'))
    again = run_arena(
        "event", "run", str(event), "--db", str(db), "--out", str(tmp_path), "--quiet", cwd=ROOT
    )
    assert again.returncode == 2
    flat = " ".join(again.stdout.split())
    assert "cannot be extended" in flat and "changed or removed: alice" in flat, flat
    assert hand_rows(db) == rows


@pytest.mark.slow
def test_an_event_stops_when_a_bot_cannot_start(tmp_path: Path) -> None:
    """Issue 23, finding 5: an event with a bot whose import fails finished with exit 0 and
    rated the bot; it now stops after the bot's first hands, naming the reason and the log,
    and ``--keep-going`` plays on."""
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "bot.toml").write_text(
        'name = "broken"\ncommand = ["{python}", "-m", "sdk", "no_such_module:Bot"]\n'
        'workdir = "."\n'
    )
    event = tmp_path / "broken.toml"
    event.write_text(
        EVENT.format(name="broken", boards=4, hands=1).replace('"heuristic"', '"broken/bot.toml"')
    )
    db = tmp_path / "broken.sqlite"
    result = run_arena("event", "run", str(event), "--db", str(db), "--out", str(tmp_path),
                       cwd=tmp_path, timeout=600)  # fmt: skip
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "bot 'broken' cannot start" in out and "its log: " in out, out
    log = Path(out.split("its log: ")[1].split(")")[0].split(";")[0].split()[0])
    assert (tmp_path / log).is_file() or log.is_file(), out
    assert f"arena event resume {db}" in out and "--keep-going" in out, out
    with EventStore(db, create=False) as store:
        summary = store.event_summary("broken")
        assert summary.plays_done < summary.plays_total
    resumed = run_arena("event", "resume", str(db), "--out", str(tmp_path), "--keep-going",
                        cwd=tmp_path, timeout=600)  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
