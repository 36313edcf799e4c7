"""An event records the sandbox of every play, and reads databases written before it did."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena.server.sandbox import SandboxError, SandboxLevel, host_sandbox, unsandboxed
from arena.tournament.model import parse_event, plan_event
from arena.tournament.runner import EventRunner
from arena.tournament.store import EventStore
from tests.helpers import ROOT

pytestmark = pytest.mark.slow  # events with real, sandboxed bot processes

EVENT = """\
name = "boxed"
bots = ["random", "greedy", {{ bot = "random", name = "random-b" }}, "heuristic"]
boards_per_round = 1
seed = 5
jobs = 2

[limits]
memory_mb = {memory_mb}
"""


def run_event(event: Path, db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``arena event run`` with the gRPC settings it makes itself."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRPC_")}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "arena.cli.main",
            "event",
            "run",
            str(event),
            "--db",
            str(db),
            *args,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_every_play_records_its_sandbox_and_old_databases_stay_readable(tmp_path: Path) -> None:
    sb = host_sandbox()
    if sb.level is not SandboxLevel.FULL:
        pytest.skip(f"this host makes no full sandbox: {'; '.join(sb.reasons)}")
    event = tmp_path / "boxed.toml"
    event.write_text(EVENT.format(memory_mb=2048), encoding="utf-8")
    db = tmp_path / "boxed.sqlite"
    done = run_event(event, db, "--out", str(tmp_path), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"bot processes sandboxed: {sb.summary()}" in done.stdout
    with EventStore(db, create=False) as store:
        plays = len(store.plays("boxed"))
        assert plays > 0
        assert store.sandbox_levels("boxed") == {"full": plays}
    with sqlite3.connect(db) as conn:
        details = [json.loads(d) for (d,) in conn.execute("SELECT detail FROM play_sandbox")]
    assert len(details) == plays
    for detail in details:
        assert detail["level"] == "full" and detail["uid"] == sb.describe()["uid"]
        assert [lim["memory_mb"] for lim in detail["limits"]] == [2048] * 4  # the event's cap
    # A database from before the sandbox table: opened, it gains the table; its plays are
    # "unknown", and the event resumes as before.
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE play_sandbox")
    with EventStore(db, create=False) as store:
        assert store.sandbox_levels("boxed") == {"unknown": plays}
        assert store.pending_plays("boxed") == ()
    # Other limits make another event: the file no longer matches what the database holds.
    event.write_text(EVENT.format(memory_mb=1024), encoding="utf-8")
    again = run_event(event, db)
    assert again.returncode == 2, again.stdout + again.stderr
    assert "limits" in again.stdout


def test_an_event_refuses_a_database_inside_a_bots_folder(tmp_path: Path) -> None:
    folder = tmp_path / "mybot"
    folder.mkdir()
    (folder / "bot.toml").write_text(
        'name = "mine"\ncommand = ["{python}", "-m", "sdk", "example_bots.random.bot:RandomBot"]\n',
        encoding="utf-8",
    )
    data = {"name": "nosy", "bots": ["random", "greedy", "heuristic", str(folder / "bot.toml")]}
    spec = parse_event(data, base_dir=tmp_path)
    with EventStore(folder / "results.sqlite") as store:
        store.create_event(spec, plan_event(spec))
        with pytest.raises(SandboxError, match="inside the folder of bot 'mine'"):
            EventRunner(store, "nosy", spec, sandbox=unsandboxed())
