"""Events on a real Dask cluster: a ``dask scheduler`` and two ``dask worker`` processes on
127.0.0.1, the same results as the local runner, a worker killed mid-event, a driver killed
and resumed, and bot bundles that a worker refuses when their files do not match."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.server.bundle import BundleError, bundle_hash, bundle_of, folder_hash, unpack
from arena.server.manifest import load_manifest, resolve_bot
from arena.tournament.cluster import DaskExecutor
from arena.tournament.model import load_event, plan_event
from arena.tournament.runner import EventRunner
from arena.tournament.store import EventStore
from tests.dask_cluster import Cluster

pytest.importorskip("distributed")


# One worker runs this module, so its tests share one cluster (see ``cluster``).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("dask-cluster")]

ARENA = str(Path(sys.executable).parent / "arena")
ROOT = Path(__file__).resolve().parents[2]

EVENT = """
name = "cluster"
bots = [
  "greedy", "heuristic",
  {{ bot = "greedy", name = "greedy-b" }}, {{ bot = "heuristic", name = "heuristic-b" }},
]
schedule = "round_robin"
format = "board"
hands_per_board = 1
rotations = 2
boards_per_round = {boards}
seed = 11
jobs = 2

[time_control]
decision_ms = 5000
"""


def _event(tmp: Path, boards: int) -> Path:
    path = tmp / f"event-{boards}.toml"
    path.write_text(EVENT.format(boards=boards), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One cluster for the tests that leave its workers alive (starting one takes seconds)."""
    c = Cluster(tmp_path_factory.mktemp("dask"))
    try:
        yield c
    finally:
        c.close()


def _hands(db: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        return sorted(
            conn.execute(
                "SELECT board, rotation, hand_no, seat_n, seat_e, seat_s, seat_w, score_a,"
                " score_b, card_points_a, card_points_b, out_order, calls FROM hands"
            ).fetchall()
        )


def _counts(db: Path) -> tuple[int, int, int, int]:
    """Plays done, plays in all, hands, distinct (play, hand) pairs."""
    with sqlite3.connect(db) as conn:
        done, total = conn.execute("SELECT SUM(status = 'done'), COUNT(*) FROM plays").fetchone()
        hands, distinct = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT play_id || ':' || hand_no) FROM hands"
        ).fetchone()
    return int(done or 0), int(total), int(hands), int(distinct)


def _run(db: Path, event_file: Path, executor: DaskExecutor | None = None) -> None:
    spec = load_event(event_file)
    with EventStore(db) as store:
        store.create_event(spec, plan_event(spec))
        EventRunner(store, spec.name, spec, executor=executor).run()


def test_an_event_on_the_cluster_matches_the_same_event_run_locally(
    cluster: Cluster, tmp_path: Path
) -> None:
    event_file = _event(tmp_path, boards=2)
    _run(tmp_path / "local.sqlite", event_file)
    _run(tmp_path / "dask.sqlite", event_file, DaskExecutor(cluster.address))
    local, remote = _hands(tmp_path / "local.sqlite"), _hands(tmp_path / "dask.sqlite")
    assert len(local) == 12  # 3 rounds x 2 boards x 2 rotations x 1 hand
    assert remote == local
    replays = sorted((tmp_path / "dask.sqlite.replays" / "cluster").glob("*.json"))
    assert len(replays) == 12
    assert json.loads(replays[0].read_text())["deals"]


def _wait_for_plays(db: Path, at_least: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 300
    while True:
        if db.exists():
            try:
                if _counts(db)[0] >= at_least:
                    return
            except sqlite3.OperationalError:
                pass  # the driver is still creating the database
        assert proc.poll() is None, "the driver ended before the plays were recorded"
        assert time.monotonic() < deadline, "no plays were recorded in time"
        time.sleep(0.2)


def _driver(cluster: Cluster, args: list[str], tmp: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [ARENA, "event", *args, "--cluster", cluster.address, "--quiet",
         "--out", str(tmp / "leaderboards")],
        cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip


def _recorded_at(db: Path, seen: dict[int, float], stop: threading.Event) -> None:
    """Notes when each play is first seen recorded (within a poll of its record)."""
    while not stop.is_set():
        with contextlib.suppress(sqlite3.Error):
            with sqlite3.connect(db, timeout=30) as conn:
                rows = conn.execute("SELECT id FROM plays WHERE status = 'done'").fetchall()
            now = time.time()
            for (play_id,) in rows:
                seen.setdefault(play_id, now)
        stop.wait(0.05)


def test_a_worker_killed_mid_event_loses_and_doubles_nothing(
    own_cluster: Cluster, tmp_path: Path
) -> None:
    """kill -9 of a worker while it plays a task: its task runs again elsewhere, every play is
    recorded once, and no task whose plays were recorded ever runs again (issue 50: the
    cluster recomputed 12 finished tasks, 100 plays, that the driver had recorded and held)."""
    from tests.tournament import task_log  # the cluster extra: after the importorskip

    cluster = own_cluster
    log = tmp_path / "tasks.jsonl"
    task_log.install(cluster.address, log)
    pids = {w.pid: w for w in cluster.workers}
    db = tmp_path / "event.sqlite"
    recorded: dict[int, float] = {}
    stop = threading.Event()
    poller = threading.Thread(target=_recorded_at, args=(db, recorded, stop), daemon=True)
    driver = _driver(cluster, ["run", str(_event(tmp_path, boards=16)), "--db", str(db)], tmp_path)
    poller.start()
    try:
        _wait_for_plays(db, 16, driver)  # two tasks recorded, and their results let go of
        deadline = time.monotonic() + 300
        while True:  # a worker in the middle of a task: what it plays is lost with it
            last: dict[int, task_log.TaskRun] = {}
            for run in task_log.runs(log):
                last[run.pid] = run
            busy = [r for pid, r in last.items() if pid in pids and r.state == "executing"]
            if busy:
                break
            assert time.monotonic() < deadline and driver.poll() is None, "no task to cut"
            time.sleep(0.02)
        pids[busy[0].pid].send_signal(signal.SIGKILL)
        out, _ = driver.communicate(timeout=600)
    finally:
        stop.set()
        poller.join(30)
    assert driver.returncode == 0, out.decode()
    done, total, hands, distinct = _counts(db)
    assert (done, total) == (96, 96)
    assert hands == distinct == 96
    started: dict[str, list[float]] = {}
    for run in task_log.runs(log):
        if run.state == "executing":
            started.setdefault(run.key, []).append(run.at)
            # Never a run of a task after one of its plays was seen recorded.
            for play_id in run.plays:
                assert run.at < recorded.get(play_id, math.inf), (run, recorded.get(play_id))
    assert len(started[busy[0].key]) == 2  # the cut task ran again, once


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_a_stopped_driver_resumes_on_the_cluster(
    cluster: Cluster, tmp_path: Path, how: signal.Signals
) -> None:
    db = tmp_path / "event.sqlite"
    driver = _driver(cluster, ["run", str(_event(tmp_path, boards=3)), "--db", str(db)], tmp_path)
    _wait_for_plays(db, 2, driver)
    os.kill(driver.pid, how)
    out, _ = driver.communicate(timeout=120)
    if how is signal.SIGINT:  # as with the local pool: exit 130 and the resume hint
        assert driver.returncode == 130, out.decode()
        unwrapped = "".join(out.decode().split())  # the console wraps long lines
        assert "".join(f"continue with: arena event resume {db}".split()) in unwrapped
    assert _counts(db)[0] < 18
    resumed = _driver(cluster, ["resume", str(db)], tmp_path)
    out, _ = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, out.decode()
    done, total, hands, distinct = _counts(db)
    assert (done, total) == (18, 18)
    assert hands == distinct == 18


def test_a_bundle_whose_files_differ_from_its_hash_is_refused(tmp_path: Path) -> None:
    bot = tmp_path / "mine"
    bot.mkdir()
    (bot / "bot.py").write_text("print('hello')\n", encoding="utf-8")
    (bot / "bot.toml").write_text('name = "mine"\ncommand = ["{python}", "bot.py"]\n')
    bundle = bundle_of(load_manifest(bot / "bot.toml"))
    assert bundle.files_hash == folder_hash(bot) and not bundle.builtin
    manifest = unpack(bundle, tmp_path / "cache")
    assert manifest.cwd == (tmp_path / "cache" / bundle.files_hash).resolve()
    assert (manifest.cwd / "bot.py").read_text() == "print('hello')\n"
    (bot / "bot.py").write_text("print('changed')\n", encoding="utf-8")
    changed = bundle_of(load_manifest(bot / "bot.toml"))
    assert changed.hash != bundle.hash
    forged = dataclasses.replace(bundle, files=changed.files)
    with pytest.raises(BundleError, match="refused"):
        unpack(forged, tmp_path / "other-cache")


def test_a_bundle_hash_covers_the_command_and_environment(tmp_path: Path) -> None:
    bot = tmp_path / "mine"
    bot.mkdir()
    (bot / "bot.py").write_text("print('hello')\n", encoding="utf-8")
    (bot / "bot.toml").write_text('name = "mine"\ncommand = ["{python}", "bot.py"]\n')
    bundle = bundle_of(load_manifest(bot / "bot.toml").configured({"LEVEL": "2"}, ["--x"]))
    assert bundle.command == ("{python}", "bot.py", "--x") and bundle.env == (("LEVEL", "2"),)
    # The same files with another command or environment: another bundle, refused as sent.
    for change in ({"command": ("/bin/sh", "-c", "id")}, {"env": (("LEVEL", "3"),)}):
        with pytest.raises(BundleError, match="differ from what its hash covers"):
            unpack(dataclasses.replace(bundle, **change), tmp_path / "cache")  # type: ignore[arg-type]
    # A sender that hashes a hook variable or a program outside the folder is refused too.
    hooked = (("LD_PRELOAD", "/tmp/x.so"),)
    outside = ("/bin/sh", "-c", "id")
    for command, env in ((bundle.command, hooked), (outside, bundle.env)):
        forged = dataclasses.replace(
            bundle,
            command=command,
            env=env,
            hash=bundle_hash(bundle.files_hash, bundle.manifest, command, env),
        )
        with pytest.raises(BundleError, match="refused"):
            unpack(forged, tmp_path / "cache")


def test_a_built_in_bot_travels_by_hash_alone() -> None:
    bundle = bundle_of(resolve_bot("greedy"))
    assert bundle.builtin and bundle.files is None and len(bundle.files_hash) == 64
    other = "0" * 64
    forged = dataclasses.replace(
        bundle,
        files_hash=other,
        hash=bundle_hash(other, bundle.manifest, bundle.command, bundle.env),
    )
    with pytest.raises(BundleError, match="another arena version"):
        unpack(forged, Path("/nonexistent"))


def test_the_built_in_bots_hash_is_that_of_their_sources_alone(tmp_path: Path) -> None:
    """What ``npm ci`` makes in the Node bot's folder (on each machine, at any moment; the
    Node bot's test runs it mid-suite) does not count: a driver and a worker agree."""
    if not (ROOT / ".git").exists():
        pytest.skip("needs the repository's list of tracked files")
    tracked = (
        subprocess.run(
            ["git", "ls-files", "-z", "example_bots"], cwd=ROOT, capture_output=True, check=True
        )
        .stdout.decode()
        .split("\0")
    )
    sources = tmp_path / "example_bots"
    for rel in filter(None, tracked):
        target = sources / Path(rel).relative_to("example_bots")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / rel).read_bytes())
    assert bundle_of(resolve_bot("greedy")).files_hash == folder_hash(sources)


def test_a_bot_whose_code_lies_outside_its_folder_cannot_travel(tmp_path: Path) -> None:
    bot = tmp_path / "mine"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "mine"\ncommand = ["{python}", "x.py"]\nworkdir = ".."\n')
    with pytest.raises(BundleError, match="outside the bot's folder"):
        bundle_of(load_manifest(bot / "bot.toml"))


LEAGUE = """
name = "dask-league"
season_rounds = 2
seed = 5

[round]
boards_per_round = 1
hands_per_board = 1
rotations = 2

[round.time_control]
decision_ms = 5000
"""


def test_a_league_round_plays_on_the_cluster(cluster: Cluster, tmp_path: Path) -> None:
    league, db = tmp_path / "league.toml", tmp_path / "league.sqlite"
    league.write_text(LEAGUE, encoding="utf-8")

    def league_cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [ARENA, "league", *args, "--db", str(db)],
            cwd=tmp_path, capture_output=True, text=True, timeout=600,
        )  # fmt: skip

    assert league_cli("init", str(league)).returncode == 0
    for bot in ("greedy", "heuristic", "random", "greedy"):
        folder = tmp_path / f"{bot}-{len(list(tmp_path.glob('*-bot')))}-bot"
        folder.mkdir()
        (folder / "bot.toml").write_text(
            f'name = "{folder.name}"\n'
            f'command = ["{{python}}", "-m", "sdk", "example_bots.{bot}.bot:{bot.title()}Bot"]\n',
            encoding="utf-8",
        )
        assert league_cli("submit", str(folder)).returncode == 0
    played = league_cli("round", "--cluster", cluster.address, "--quiet")
    assert played.returncode == 0, played.stdout + played.stderr
    with sqlite3.connect(db) as conn:
        (hands,) = conn.execute("SELECT COUNT(*) FROM hands").fetchone()
        (pending,) = conn.execute("SELECT COUNT(*) FROM plays WHERE status != 'done'").fetchone()
    assert hands == 6 and pending == 0  # 3 rounds of the design x 1 board x 2 rotations


def test_a_cluster_run_writes_live_feeds_and_removes_each_once_recorded(
    cluster: Cluster, tmp_path: Path
) -> None:
    """The workers send each play's public events to the driver, which writes the feeds that
    ``arena web`` follows, as the local pool does (issue 50: cluster runs wrote none)."""
    db = tmp_path / "feeds.sqlite"
    folder = tmp_path / "feeds.sqlite.live" / "cluster"
    seen: dict[str, list[str]] = {}
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            for path in folder.glob("*.jsonl") if folder.is_dir() else ():
                with contextlib.suppress(OSError):
                    lines = path.read_text().splitlines()
                    if len(lines) > len(seen.get(path.name, [])):
                        seen[path.name] = lines
            stop.wait(0.02)

    ended: list[tuple[int, int]] = []  # (recorded, ended unrecorded) as the bar hears them
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    spec = load_event(_event(tmp_path, boards=2))
    try:
        with EventStore(db) as store:
            store.create_event(spec, plan_event(spec))
            EventRunner(
                store,
                spec.name,
                spec,
                executor=DaskExecutor(cluster.address),
                on_ended=lambda p: ended.append((p.plays_done, p.plays_ended)),
            ).run()
    finally:
        stop.set()
        watcher.join(30)
    # The bar moved as plays ended on the workers, before their sessions' tasks returned
    # (a task of 2 plays: the first is heard of while the second is played).
    assert len(ended) >= 6 and all(0 < e <= 2 * 2 for _, e in ended), ended
    assert any(done % 2 == 0 and e % 2 == 1 for done, e in ended), ended
    assert seen, "no live feed appeared during the run"
    for lines in seen.values():
        header = json.loads(lines[0])
        assert header["type"] == "header" and header["event"] == "cluster"
        assert all("seq" in json.loads(line) for line in lines[1:])
    assert any(json.loads(lines[-1])["type"] == "match_end" for lines in seen.values())
    assert list(folder.glob("*.jsonl")) == []  # each removed once its play was recorded
    assert _counts(db)[:2] == (12, 12)
