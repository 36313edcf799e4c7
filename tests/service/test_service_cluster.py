"""``arena league serve --cluster``: the service plays its scheduled rounds on a real Dask
cluster (a scheduler and two workers on 127.0.0.1), as ``arena league run --cluster`` does."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import urllib.request
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.dask_cluster import Cluster
from tests.journeys.journey import free_port, http_ok, sh, user_env, wait_for

pytest.importorskip("distributed", reason="the cluster extra is not installed")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200), pytest.mark.xdist_group("dask-cluster")]

LEAGUE_FILE = """\
name = "dask"
seed = 5
season_rounds = 1

[round]
boards_per_round = 2
rotations = 2
hands_per_board = 1

[schedule]
every = "1h"
"""
BUILT_IN = ("random", "greedy", "heuristic")


def status(url: str) -> dict[str, Any]:
    """The service's status page as JSON."""
    with urllib.request.urlopen(f"{url}/api/service/status", timeout=120) as reply:
        data: dict[str, Any] = json.load(reply)
    return data


def test_the_service_plays_its_scheduled_round_on_the_cluster(
    tmp_path: Path, own_cluster: Cluster
) -> None:
    env = user_env(tmp_path / "home")
    (tmp_path / "league.toml").write_text(LEAGUE_FILE)
    db = tmp_path / "league.sqlite"
    sh(f"arena league init league.toml --db {db}", tmp_path, env)
    sh(["arena", "new-bot", "alice"], tmp_path, env)  # an author's bot: it travels as a bundle
    for bot in (*BUILT_IN, "alice/"):
        sh(f"arena league submit {bot} --db {db}", tmp_path, env)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    argv = ["arena", "league", "serve", "--db", str(db), "--port", str(port)]
    service = subprocess.Popen(
        [*argv, "--cluster", own_cluster.address],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        wait_for(lambda: http_ok(f"{url}/service"), "the service to serve", service)
        wait_for(lambda: status(url)["standings"] is not None, "round 1's standings", service)
        rows = status(url)["standings"]["divisions"][0]["rows"]
        assert {f"{bot} v1" for bot in (*BUILT_IN, "alice")} == {r["entry"] for r in rows}, rows
        assert not any(row["failures"] for row in rows), rows  # alice's bundle played too
        assert own_cluster.executed() >= 1  # the plays ran on the cluster's workers
    finally:
        service.send_signal(signal.SIGINT)
        out, _ = service.communicate(timeout=120)
    assert "Traceback" not in out, out
    with closing(sqlite3.connect(db)) as conn:
        plays, done, hands = conn.execute(
            "SELECT COUNT(*), SUM(p.status = 'done'), (SELECT COUNT(*) FROM hands)"
            " FROM plays p JOIN events e ON e.id = p.event_id WHERE e.name = 'dask.s1.r1'"
        ).fetchone()
    assert plays > 0 and plays == done == hands, (plays, done, hands)
    log = (tmp_path / "league.sqlite.logs" / "service-workers.log").read_text()
    assert "Traceback" not in log and "error" not in log, log
