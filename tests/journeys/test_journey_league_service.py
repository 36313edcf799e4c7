"""Journey: a league that runs itself, as docs/league.md section 9 tells organiser and authors.

The organiser starts ``arena league serve`` and issues tokens; two authors submit their bots
over HTTP from their own folders; the schedule plays round 1 and the standings show both;
hostile uploads (a wrong or revoked token, another owner's bot, an oversized body, a ``..``
path, a link, an archive bomb, too many files, a broken manifest, a flood) are each refused
with a one-line reason and leave nothing behind; the service is killed with SIGKILL in
round 2 and restarted, and the round completes with every play recorded once. Then the gate
refuses a regressing version, an author logs in and uploads in Chromium, the CI template's
submit step sends another version, and failed logins past the limit are refused.
"""

from __future__ import annotations

import fcntl
import gzip
import io
import json
import os
import re
import shlex
import signal
import sqlite3
import subprocess
import tarfile
import urllib.error
import urllib.request
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from arena.service.client import pack
from tests.helpers import ROOT
from tests.journeys.journey import (
    CHROMIUM,
    CHROMIUM_ARGS,
    doc_command,
    doc_commands,
    free_port,
    http_ok,
    scratch_copy,
    sh,
    user_env,
    wait_for,
)
from tests.journeys.test_journey_bot_author import WORKFLOW, workflow_steps

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]

LEAGUE = ROOT / "docs" / "league.md"
DB = "runs/spring.sqlite"
LEAGUE_FILE = """\
name = "spring"
season_rounds = 4
seed = 11

[round]
boards_per_round = 2
rotations = 2
hands_per_board = 1

[schedule]
after_versions = 1
max_rounds = 2

[gate]
min_pairs = 10
max_boards = 60
decision_ms = 10000
"""
QUOTA = 8  # mallory's uploads a day: the hostile ones below are more, refused, not counted


def request(url: str, token: str | None = None, data: bytes | None = None) -> tuple[int, Any]:
    """An HTTP request as any client sends it; (status, JSON answer)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    req = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=120) as reply:
            return reply.status, json.load(reply)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def serve(repo: Path, env: dict[str, str], port: int) -> subprocess.Popen[str]:
    command = doc_command(LEAGUE, "arena league serve").replace("8000", str(port))
    argv = [*shlex.split(command), "--daily-submissions", str(QUOTA), "--max-upload-kb", "64"]
    proc = subprocess.Popen(
        argv, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    wait_for(lambda: http_ok(f"http://127.0.0.1:{port}/service"), "the service to serve", proc)
    return proc


def archive(members: list[tuple[tarfile.TarInfo, bytes]], raw_tail: bytes = b"") -> bytes:
    """A gzipped tar of these members, written as a hostile client would."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data else None)
    return gzip.compress(buffer.getvalue() + raw_tail)


def member(
    name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE
) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, len(data) if kind == tarfile.REGTYPE else 0
    if kind == tarfile.SYMTYPE:
        info.linkname = "/etc/passwd"
    return info, data


def verdict(url: str, token: str, body: bytes) -> dict[str, Any]:
    status, answer = request(f"{url}/api/service/submissions", token, body)
    assert status == 202, answer
    found: dict[str, Any] = {}

    def done() -> bool:
        found.update(request(f"{url}/api/service/submissions/{answer['id']}", token)[1])
        return found["status"] in ("accepted", "refused", "interrupted")

    wait_for(done, f"the verdict of submission {answer['id']}")
    return found


def status(url: str) -> dict[str, Any]:
    data: dict[str, Any] = request(f"{url}/api/service/status")[1]
    return data


def test_a_league_runs_itself(tmp_path: Path) -> None:
    repo = scratch_copy(tmp_path)
    env = user_env(tmp_path / "home")
    (repo / "spring.toml").write_text(LEAGUE_FILE)
    sh(f"arena league init spring.toml --db {DB}", repo, env)
    db = repo / DB
    tokens = {}
    for name in ("alice", "bob", "carol", "mallory"):
        add = doc_command(LEAGUE, "arena league owner add alice").replace("alice", name)
        out = sh(add, repo, env)
        assert re.fullmatch(rf"{name}\.[A-Za-z0-9_-]{{43}}\n", out), out  # the token alone
        tokens[name] = out.strip()
    organiser = doc_command(LEAGUE, "arena league owner add org")
    tokens["org"] = sh(organiser, repo, env).strip()
    revoke = doc_command(LEAGUE, "arena league owner revoke").replace("alice", "carol")
    assert "carol: revoked" in sh(revoke, repo, env)
    listed = sh(doc_command(LEAGUE, "arena league owner list"), repo, env)
    assert "org (organiser)" in listed and "revoked" in listed, listed
    for bot in ("alice", "bob"):
        sh(["arena", "new-bot", bot], repo, env)

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    service = serve(repo, env, port)
    try:
        # Two authors submit over HTTP: alice with ARENA_TOKEN, bob with --token.
        submit = next(
            c for c in doc_commands(LEAGUE)
            if c.startswith("arena league submit alice/ --server") and "--gate" not in c
        ).replace("8000", str(port))  # fmt: skip
        out = sh(submit, repo, {**env, "ARENA_TOKEN": tokens["alice"]})
        assert "PASS full match" in out and "accepted: alice: version 1" in out, out
        out = sh(submit.replace("alice", "bob") + f" --token {tokens['bob']}", repo, env)
        assert "accepted: bob: version 1" in out, out
        wrong = sh(submit + " --token alice.nope", repo, env, ok=(2,))
        assert wrong.count("\n") == 2 and "wrong or revoked token" in wrong, wrong
        revoked = sh(submit + f" --token {tokens['carol']}", repo, env, ok=(2,))
        assert "wrong or revoked token" in revoked and "Traceback" not in revoked, revoked
        # The organiser fills the field with built-in bots: round 1 is due at once.
        for bot in ("random", "greedy"):
            sh(f"arena league submit {bot} --db {DB}", repo, env)

        # Hostile uploads, while round 1 plays, each refused with one line.
        manifest = (repo / "alice" / "bot.toml").read_bytes()
        theirs = repo / "mallory-bot"
        sh(["arena", "new-bot", "mallory-bot"], repo, env)
        (theirs / "bot.toml").write_text(
            (theirs / "bot.toml").read_text().replace('name = "mallory-bot"', 'name = "alice"')
        )
        out = sh(
            submit.replace("alice/", "mallory-bot/") + f" --token {tokens['mallory']}",
            repo, env, ok=(2,),
        )  # fmt: skip
        assert "the bot 'alice' belongs to another owner" in out, out
        hostile = {
            "a '..' path": (
                archive([member("bot.toml", manifest), member("../escape.txt", b"x")]),
                "'../escape.txt' is not a plain relative path",
            ),
            "an absolute path": (
                archive([member("bot.toml", manifest), member("/tmp/escape.txt", b"x")]),
                "is not a plain relative path",
            ),
            "a link": (
                archive([member("bot.toml", manifest), member("passwd", kind=tarfile.SYMTYPE)]),
                "'passwd' is not a regular file or a folder",
            ),
            "an archive bomb": (  # a member that declares 4 GiB: refused from its header
                gzip.compress(_bomb_header() + b"\0" * 4096),
                "would unpack past the caps",
            ),
            "too many files": (
                archive([member("bot.toml", manifest)] + [member(f"f{k}") for k in range(4200)]),
                "would unpack past the caps",
            ),
            "a broken manifest": (archive([member("bot.toml", b"name = [")]), "bot.toml"),
        }
        for what, (body, reason) in hostile.items():
            found = verdict(url, tokens["mallory"], body)
            assert found["status"] == "refused" and reason in found["reason"], (what, found)
            assert "\n" not in found["reason"], found
        status_code, answer = request(
            f"{url}/api/service/submissions", tokens["mallory"], os.urandom(100 * 1024)
        )
        assert status_code == 413 and "over the 64 KiB" in answer["detail"], answer
        # Past the quota of uploads, yet none of them reached the smoke check: none counts.
        again = verdict(url, tokens["mallory"], b"x")
        assert again["status"] == "refused" and "not a gzipped tar" in again["reason"], again
        uploads = db.parent / f"{db.name}.uploads"
        assert not any(uploads.iterdir()), list(uploads.iterdir())  # nothing left behind
        assert not list(tmp_path.rglob("escape.txt")) and not Path("/tmp/escape.txt").exists()
        assert not (db.parent / f"{db.name}.bots" / "mallory-bot").exists()

        # Round 1 plays by the schedule; the standings show both authors.
        wait_for(lambda: status(url)["standings"] is not None, "round 1's standings", service)
        rows = status(url)["standings"]["divisions"][0]["rows"]
        assert {"alice v1", "bob v1", "random v1", "greedy v1"} == {r["entry"] for r in rows}
        with urllib.request.urlopen(f"{url}/service", timeout=60) as reply:
            page = reply.read().decode()
        assert "alice v1" in page and "bob v1" in page and "spring.s1.r1" in page, page
        mine = request(f"{url}/api/service/bots/alice", tokens["alice"])[1]
        assert mine["logs"] and mine["history"][0]["round"] == 1, mine
        assert request(f"{url}/api/service/bots/alice", tokens["bob"])[1]["logs"] is None
        log = f"{url}/service/bots/alice/logs/{mine['logs'][0]}"
        assert request(log, tokens["bob"])[0] == 403

        # A new version makes round 2 due (after_versions = 1); SIGKILL the service in it.
        sh(f"arena league submit quick --db {DB}", repo, env)

        def round_2_under_way() -> bool:
            current = status(url)["in_progress"]
            return current is not None and current["round"] == 2 and current["plays_done"] >= 2

        wait_for(round_2_under_way, "round 2 under way", service)
        service.send_signal(signal.SIGKILL)
        service.communicate(timeout=60)
    finally:
        if service.poll() is None:
            service.kill()
            service.communicate()

    def lock_free() -> bool:  # the round's worker died with the service: its lock is free
        with open(f"{db}.lock", "a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            fcntl.flock(handle, fcntl.LOCK_UN)
            return True

    wait_for(lock_free, "the round worker to die with the service")
    with closing(sqlite3.connect(db)) as conn:
        before = conn.execute(
            "SELECT COUNT(*) FROM plays p JOIN events e ON e.id = p.event_id"
            " WHERE e.name = 'spring.s1.r2' AND p.status = 'done'"
        ).fetchone()[0]
    service = serve(repo, env, port)
    try:
        wait_for(lambda: status(url)["standings"]["rounds"] == 2, "round 2 to finish", service)
        audit = request(f"{url}/api/service/audit", tokens["org"])[1]
        actions = {entry["action"] for entry in audit}
        assert {"owner added", "owner revoked", "login refused", "round started",
                "round finished", "submission 1 accepted"} <= actions, actions  # fmt: skip
        assert any(e["action"].endswith("refused") and "past the caps" in e["detail"]
                   for e in audit), audit  # fmt: skip
        assert request(f"{url}/api/service/audit", tokens["alice"])[0] == 403

        # bob's version 2 plays at random: the gate against his version 1 refuses it.
        with (repo / "bob" / "bot.py").open("a") as bot:
            bot.write("\nfrom example_bots.random.bot import RandomBot as BobBot  # noqa\n")
        gated = next(c for c in doc_commands(LEAGUE) if "--server" in c and "--gate" in c)
        gated = gated.replace("alice", "bob").replace("8000", str(port))
        out = sh(f"{gated} --token {tokens['bob']}", repo, env, ok=(1,))
        assert "refused: the gate refused bob" in out and "H0 accepted" in out, out
        assert [v["version"] for v in request(f"{url}/api/service/bots/bob")[1]["versions"]] == [1]

        # alice logs in with her token in the browser and uploads version 2 by the form.
        with (repo / "alice" / "bot.py").open("a") as bot:
            bot.write("\n# version 2\n")
        (tmp_path / "alice.tar.gz").write_bytes(pack(repo / "alice")[1])
        browser_upload(url, tokens["alice"], tmp_path / "alice.tar.gz")

        # The CI template's last step submits version 3 from alice's checkout.
        with (repo / "alice" / "bot.py").open("a") as bot:
            bot.write("# version 3\n")
        steps = workflow_steps(WORKFLOW.read_text())
        step = steps["Submit to the league"]
        ci_env = {**env, "BOT_MANIFEST": "bot.toml", "ARENA_TOKEN": tokens["alice"],
                  "LEAGUE_URL": url}  # fmt: skip
        out = sh(["bash", "-e", "-c", step["run"]], repo / "alice", ci_env)
        assert "accepted: alice: version 3" in out, out

        # Failed logins past the limit: refused from this address, even with a good token.
        for _ in range(10):
            assert request(f"{url}/api/service/audit", "zed.wrong")[0] == 401
        assert request(f"{url}/api/service/audit", "zed.wrong")[0] == 429
        assert request(f"{url}/api/service/audit", tokens["org"])[0] == 429
    finally:
        service.send_signal(signal.SIGINT)
        out, _ = service.communicate(timeout=120)
    with closing(sqlite3.connect(db)) as conn:
        counts = {
            name: conn.execute(
                "SELECT COUNT(*), SUM(p.status = 'done'),"
                " (SELECT COUNT(*) FROM hands h JOIN plays q ON q.id = h.play_id"
                "  WHERE q.event_id = e.id),"
                " (SELECT COUNT(*) FROM (SELECT 1 FROM hands h JOIN plays q ON q.id = h.play_id"
                "  WHERE q.event_id = e.id GROUP BY h.play_id, h.hand_no HAVING COUNT(*) > 1))"
                " FROM plays p JOIN events e ON e.id = p.event_id WHERE e.name = ?",
                (name,),
            ).fetchone()
            for name in ("spring.s1.r1", "spring.s1.r2")
        }
    for plays, done, hands, doubled in counts.values():  # nothing lost, nothing doubled
        assert plays == done and hands == plays and doubled == 0, counts
    assert 2 <= before < counts["spring.s1.r2"][0], (before, counts)


def _bomb_header() -> bytes:
    """A tar header for a regular file that says it holds 4 GiB."""
    info = tarfile.TarInfo("bomb.bin")
    info.size = 4 << 30
    return info.tobuf(format=tarfile.PAX_FORMAT)


def browser_upload(url: str, token: str, bundle: Path) -> None:
    """Token login, then the upload form, in Chromium; a post without the form's CSRF token
    is refused."""
    if not CHROMIUM.exists():
        pytest.skip(f"no browser: {CHROMIUM} is missing (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(url + "/service/login")
        page.fill("input[name=token]", token)
        page.get_by_role("button", name="log in").click()
        page.wait_for_selector("input[type=file]")
        forged = page.request.post(
            url + "/service/upload",
            multipart={"csrf": "forged", "bundle": {"name": "b.tar.gz", "mimeType":
                       "application/gzip", "buffer": bundle.read_bytes()}},
        )  # fmt: skip
        assert forged.status == 403, forged.text()
        page.set_input_files("input[type=file]", str(bundle))
        page.get_by_role("button", name="submit").click()
        page.wait_for_url("**/service/submissions/**")

        def accepted() -> bool:
            latest = request(f"{url}/api/service/submissions")[1][0]
            assert latest["status"] in ("queued", "running", "accepted"), latest
            return bool(latest["status"] == "accepted" and latest["version"] == 2)

        wait_for(accepted, "alice's version 2 from the browser")
        browser.close()
