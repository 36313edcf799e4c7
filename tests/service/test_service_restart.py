"""A browser's login outlives a restart of the service: ``arena league serve`` as a real
process, killed with SIGKILL and started again on the same database, still knows the
session cookie and the CSRF token of the upload form loaded before the kill."""

from __future__ import annotations

import gzip
import io
import re
import signal
import subprocess
import tarfile
from pathlib import Path

import httpx
import pytest

from tests.journeys.journey import free_port, http_ok, sh, user_env, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

LEAGUE_FILE = 'name = "restart"\nseed = 3\n\n[gate]\nrequired = true\n'


def serve(db: Path, env: dict[str, str], port: int) -> subprocess.Popen[str]:
    """``arena league serve`` on ``port``, once it answers."""
    proc = subprocess.Popen(
        ["arena", "league", "serve", "--db", str(db), "--port", str(port)],
        cwd=db.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    wait_for(lambda: http_ok(f"http://127.0.0.1:{port}/service"), "the service to serve", proc)
    return proc


def form_csrf(page: str) -> str:
    """The CSRF token of the upload form on the owner's page."""
    found = re.search(r"action='/service/upload'.*?name='csrf' value='([0-9a-f]{64})'", page)
    assert found is not None, page
    return found.group(1)


def broken_bundle() -> bytes:
    """A packed folder whose manifest does not parse: a quick verdict (refused)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("bot.toml")
        info.size = 8
        tar.addfile(info, io.BytesIO(b"name = ["))
    return gzip.compress(buffer.getvalue())


def test_a_session_and_its_form_outlive_a_kill_and_restart(tmp_path: Path) -> None:
    env = user_env(tmp_path / "home")
    (tmp_path / "league.toml").write_text(LEAGUE_FILE)
    db = tmp_path / "league.sqlite"
    sh(f"arena league init league.toml --db {db}", tmp_path, env)
    token = sh(f"arena league owner add ann --db {db}", tmp_path, env).strip()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    service = serve(db, env, port)
    try:
        with httpx.Client(base_url=url, timeout=120) as browser:
            form = browser.get("/service/login").text
            found = re.search(r"name='csrf' value='([0-9a-f]{64})'", form)
            assert found is not None, form
            login = browser.post("/service/login", data={"token": token, "csrf": found[1]})
            assert login.status_code == 303, login.text
            session = browser.cookies["arena_session"]
            page = browser.get("/service/login").text
            assert "logged in as ann" in page, page
            csrf = form_csrf(page)
        service.send_signal(signal.SIGKILL)
        service.communicate(timeout=60)
    finally:
        if service.poll() is None:
            service.kill()
            service.communicate()
    assert session.encode() not in b"".join(p.read_bytes() for p in tmp_path.glob("league.sq*"))

    service = serve(db, env, port)
    try:
        with httpx.Client(base_url=url, timeout=120, cookies={"arena_session": session}) as again:
            page = again.get("/service/login").text
            assert "logged in as ann" in page and form_csrf(page) == csrf, page
            bundle = {"bundle": ("bot.tar.gz", broken_bundle(), "application/gzip")}
            forged = again.post("/service/upload", data={"csrf": "0" * 64}, files=bundle)
            assert forged.status_code == 403, forged.text
            posted = again.post("/service/upload", data={"csrf": csrf}, files=bundle)
            assert posted.status_code == 303, posted.text
            number = posted.headers["location"].rsplit("/", 1)[1]

            def verdict() -> bool:
                found = again.get(f"/api/service/submissions/{number}").json()
                assert found["owner"] == "ann" and found["gate"], found  # the league requires it
                return found["status"] in ("accepted", "refused", "interrupted")

            wait_for(verdict, "the verdict of the form's upload", service)
            logout = again.post("/service/logout", data={"csrf": csrf})
            assert logout.status_code == 303, logout.text
        with httpx.Client(base_url=url, timeout=120, cookies={"arena_session": session}) as old:
            assert "logged in as" not in old.get("/service/login").text  # logout ended it
    finally:
        service.send_signal(signal.SIGINT)
        out, _ = service.communicate(timeout=120)
    assert "Traceback" not in out, out
