"""A gated upload is never admitted without its verdict: the service stopped (Ctrl-C, as a
service manager restarts it) or killed (kill -9) while the upload is checked or gated keeps
it pending, registers nothing, and checks it again, gate included, when it starts again."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
from pathlib import Path

import httpx
import pytest

from arena.service.client import pack
from arena.tournament.league.season import submit
from arena.tournament.league.spec import load_league
from arena.tournament.league.store import LeagueStore
from tests.journeys.journey import free_port, sh, user_env, wait_for
from tests.service.test_service_restart import serve
from tests.tournament.test_league import make_bot

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

# greedy against random: H1 within a few boards, once the gate is let run.
LEAGUE = 'name = "g"\nseed = 3\n[gate]\nrequired = true\nmin_pairs = 2\nmax_boards = 40\n'


def status(db: Path, number: int) -> tuple[str, str]:
    with sqlite3.connect(db, timeout=30) as conn:
        row = conn.execute(
            "SELECT status, progress FROM service_submissions WHERE id = ?", (number,)
        ).fetchone()
    return ("", "") if row is None else (str(row[0]), str(row[1]))


def versions(db: Path) -> list[tuple[int, str | None]]:
    with LeagueStore(db) as store:
        return [(v.number, v.gate and v.gate["verdict"]) for v in store.versions("bob")]


@pytest.mark.parametrize(
    ("signum", "stage"),
    [
        (signal.SIGKILL, "check"),
        (signal.SIGINT, "check"),
        (signal.SIGINT, "gate: LLR"),  # docs/deploy.md's KillSignal
        (signal.SIGTERM, "gate: LLR"),  # a service manager's default
        (signal.SIGKILL, "gate: LLR"),
    ],
)
def test_a_stopped_service_checks_a_pending_upload_again(
    tmp_path: Path, signum: int, stage: str, request: pytest.FixtureRequest
) -> None:
    env = user_env(tmp_path / "home")
    (tmp_path / "g.toml").write_text(LEAGUE)
    db = tmp_path / "g.sqlite"
    with LeagueStore(db, create=True) as store:
        store.init_league(load_league(tmp_path / "g.toml"))
        submit(store, make_bot(tmp_path / "v1", "bob", "random"), owner="ann")
    token = sh(f"arena league owner add ann --db {db}", tmp_path, env).strip()
    folder = make_bot(tmp_path / "v2", "bob", "greedy")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    service = serve(db, env, port)
    # The author's client waits for the verdict through the service's restart.
    author = subprocess.Popen(
        ["arena", "league", "submit", str(folder), "--server", url],
        cwd=tmp_path, env={**env, "ARENA_TOKEN": token}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    request.addfinalizer(lambda: author.kill() if author.poll() is None else None)
    number = 1
    try:
        wait_for(lambda: stage in status(db, number)[1], f"the upload's {stage}", service)
        service.send_signal(signum)
        out, _ = service.communicate(timeout=300)
    finally:
        if service.poll() is None:
            service.kill()
            service.communicate()
    assert "Traceback" not in (out or ""), out
    assert status(db, number)[0] in ("queued", "running"), status(db, number)
    assert versions(db) == [(1, None)]  # nothing admitted without a verdict

    service = serve(db, env, port)
    try:
        wait_for(lambda: status(db, number)[0] not in ("queued", "running"), "a verdict", service)
        with httpx.Client(base_url=url, timeout=120) as client:
            found = client.get(
                f"/api/service/submissions/{number}", headers={"Authorization": f"Bearer {token}"}
            ).json()
        assert found["status"] == "accepted", found
        assert "gate: PASS: H1 accepted" in found["reason"], found
        assert found["report"]["gate"]["verdict"] == "H1", found
        assert versions(db) == [(1, None), (2, "H1")]
        assert not list((tmp_path / "g.sqlite.uploads").iterdir())  # emptied after the verdict
        said, _ = author.communicate(timeout=300)
        assert author.returncode == 0, said
        assert "does not answer (restarting?); waiting for the verdict" in said, said
        assert "accepted: bob: version 2" in " ".join(said.split()), said
    finally:
        service.send_signal(signal.SIGINT)
        out, _ = service.communicate(timeout=300)
    assert "Traceback" not in out, out


def test_a_check_stopped_by_a_signal_of_its_own_is_checked_again(tmp_path: Path) -> None:
    """A worker stopped by a signal that is not the service's stop (an operator's, a service
    manager's) leaves its upload queued, and the running service checks it again (a gate
    that runs on until stopped: the test sees the second worker's gate start)."""
    env = user_env(tmp_path / "home")
    endless = LEAGUE.replace("min_pairs = 2", "min_pairs = 1000").replace("= 40", "= 2000")
    (tmp_path / "g.toml").write_text(endless)
    db = tmp_path / "g.sqlite"
    with LeagueStore(db, create=True) as store:
        store.init_league(load_league(tmp_path / "g.toml"))
        submit(store, make_bot(tmp_path / "v1", "bob", "random"), owner="ann")
    token = sh(f"arena league owner add ann --db {db}", tmp_path, env).strip()
    _, packed = pack(make_bot(tmp_path / "v2", "bob", "greedy"))
    port = free_port()
    service = serve(db, env, port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
            posted = client.post(
                "/api/service/submissions",
                content=packed,
                headers={"Authorization": f"Bearer {token}"},
            )
            assert posted.status_code == 202, posted.text
        number = int(posted.json()["id"])
        wait_for(lambda: "gate: LLR" in status(db, number)[1], "the upload's gate", service)
        workers = [  # this service's (another test's may run beside it)
            int(p.name)
            for p in Path("/proc").iterdir()
            if p.name.isdigit()
            and b"arena.service.worker\0submission" in _cmdline(p)
            and str(db.resolve()).encode() in _cmdline(p)
        ]
        assert len(workers) == 1, workers
        os.kill(workers[0], signal.SIGINT)
        wait_for(lambda: "checked again" in status(db, number)[1], "a second check", service)
        wait_for(lambda: "gate: LLR" in status(db, number)[1], "the second gate", service)
        assert status(db, number)[0] == "running" and versions(db) == [(1, None)]
    finally:
        service.send_signal(signal.SIGINT)
        out, _ = service.communicate(timeout=300)
    assert "Traceback" not in out, out


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""
