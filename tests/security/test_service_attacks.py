"""``arena league serve`` attacked over HTTP by clients with only its address (or an owner's
token): the real service as a process on loopback, a league with a finished round whose bots
wrote private log lines, and requests built to read private data, to cost the service memory,
disk or time, or to lock an owner out. Each test names the attack it holds off.

Clients take distinct loopback addresses (``127.0.0.N``): the failed-login limit is per
address, so one test's wrong tokens do not refuse another's logins.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import select
import shutil
import signal
import socket
import sqlite3
import subprocess
import tarfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.journeys.journey import free_port, http_ok, wait_for
from tests.security.hostile import ARENA

pytest.importorskip("fastapi", reason="the web extra is not installed")
from arena.web.app import create_app, running

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

LEAGUE = """\
name = "hostile"
seed = 7
season_rounds = 2

[round]
boards_per_round = 1
rotations = 2
hands_per_board = 1

[schedule]
every = "1h"
max_rounds = 1
"""
SECRET = "CHATTY-SECRET"
CHATTY = f"""\
import sys

import sdk
from sdk.testing import RandomBot


class Chatty(RandomBot):
    def act(self, obs):
        print("{SECRET} thinking", file=sys.stderr, flush=True)
        return super().act(obs)


if __name__ == "__main__":
    raise SystemExit(sdk.run(Chatty()))
"""
UPLOAD_KB = 1024


@dataclass
class Service:
    """The service under attack: its URL, process, folder and owners' tokens."""

    url: str
    proc: subprocess.Popen[str]
    root: Path
    db: Path
    tokens: dict[str, str]

    def client(self, address: str = "127.0.0.1", **kwargs: Any) -> httpx.Client:
        """A client whose connections come from ``address`` (a loopback address)."""
        transport = httpx.HTTPTransport(local_address=address)
        return httpx.Client(base_url=self.url, transport=transport, timeout=120, **kwargs)

    def bearer(self, owner: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[owner]}"}

    def status(self, key: str) -> int:
        """A line of ``/proc/<pid>/status`` of the service process, in KiB (VmHWM, VmRSS)."""
        text = Path(f"/proc/{self.proc.pid}/status").read_text()
        found = re.search(rf"^{key}:\s+(\d+) kB", text, re.M)
        assert found is not None, text
        return int(found[1])

    def written(self) -> int:
        """The bytes the service process has passed to ``write`` so far."""
        text = Path(f"/proc/{self.proc.pid}/io").read_text()
        found = re.search(r"^wchar: (\d+)", text, re.M)
        assert found is not None, text
        return int(found[1])


def run(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        [*ARENA, *args], cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def chatty_bot(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(f'name = "{name}"\ncommand = ["{{python}}", "bot.py"]\n')
    (folder / "bot.py").write_text(CHATTY)
    return folder


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A league whose round 1 is played (``data+bot`` of ann and ``data_bot`` of bob among
    its four bots), served with a 1 MiB upload cap and short request timeouts."""
    root = tmp_path_factory.mktemp("service")
    (root / "league.toml").write_text(LEAGUE)
    db = root / "league.sqlite"
    run("league", "init", "league.toml", "--db", str(db), cwd=root)
    tokens = {}
    for owner in ("ann", "bob", "cy", "dee", "eve", "fay"):
        tokens[owner] = run("league", "owner", "add", owner, "--db", str(db), cwd=root).strip()
    tokens["org"] = run(
        "league", "owner", "add", "org", "--organiser", "--db", str(db), cwd=root
    ).strip()
    chatty_bot(root / "plus", "data+bot")
    chatty_bot(root / "under", "data_bot")
    for bot, owner in (("plus", "ann"), ("under", "bob"), ("random", "org"), ("greedy", "org")):
        run("league", "submit", bot, "--db", str(db), "--owner", owner, cwd=root)
    run("league", "round", "--db", str(db), "--allow-unsandboxed", "--quiet", cwd=root)
    port = free_port()
    log = (root / "service.log").open("w")
    proc = subprocess.Popen(
        [*ARENA, "league", "serve", "--db", str(db), "--port", str(port),
         "--max-upload-kb", str(UPLOAD_KB), "--daily-submissions", "3",
         "--header-timeout", "2", "--body-timeout", "4", "--allow-unsandboxed"],
        cwd=root, stdout=log, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: http_ok(f"{url}/service"), "the service to serve", proc)
        yield Service(url, proc, root, db, tokens)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
    out = (root / "service.log").read_text()
    assert "Traceback" not in out, out


def packed(files: dict[str, bytes], *, top: str = "") -> bytes:
    """A gzipped tar of ``files`` (under the folder ``top``, if given)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        if top:
            info = tarfile.TarInfo(top)
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
        for name, data in files.items():
            info = tarfile.TarInfo(f"{top}/{name}" if top else name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


BROKEN = packed({"bot.toml": b"name = ["})
"""A bundle refused at once (its manifest does not parse), before the smoke check."""


def latest(service: Service, owner: str) -> dict[str, Any]:
    with service.client() as http:
        mine = [s for s in http.get("/api/service/submissions").json() if s["owner"] == owner]
    assert mine, owner
    found: dict[str, Any] = mine[0]
    return found


def verdict(service: Service, number: int) -> dict[str, Any]:
    found: dict[str, Any] = {}

    def done() -> bool:
        with service.client() as http:
            found.update(http.get(f"/api/service/submissions/{number}").json())
        return found["status"] in ("accepted", "refused", "interrupted")

    wait_for(done, f"the verdict of submission {number}", service.proc)
    return found


def browser_login(http: httpx.Client, token: str) -> str:
    """Logs ``http`` in with the login form; returns the upload form's CSRF token."""
    form = http.get("/service/login").text
    found = re.search(r"name='csrf' value='([0-9a-f]{64})'", form)
    data = {"token": token, **({"csrf": found[1]} if found else {})}
    answer = http.post("/service/login", data=data)
    assert answer.status_code == 303, answer.text
    page = http.get("/service/login").text
    csrf = re.search(r"action='/service/upload'.*?name='csrf' value='([0-9a-f]{64})'", page)
    assert csrf is not None, page
    return csrf[1]


# ---------------------------------------------------------------------- private data


def test_every_answer_carries_the_security_headers(service: Service) -> None:
    with service.client() as http:
        for path in ("/service", "/", "/replay", "/api/service/status", "/service/login",
                     "/api/dbs", "/no/such/page", "/static/app.css"):  # fmt: skip
            headers = http.get(path).headers
            assert "frame-ancestors 'none'" in headers.get("content-security-policy", ""), path
            assert headers.get("x-frame-options") == "DENY", path
            assert headers.get("x-content-type-options") == "nosniff", path


def test_no_public_answer_names_a_server_path(service: Service) -> None:
    """``/api/dbs``, the pages, a 404's reason, the public submission log (with a refusal
    whose cause was an ``OSError`` on a server path)."""
    name_too_long = packed({"a" * 300: b"x"})
    with service.client("127.0.0.20", headers=service.bearer("fay")) as http:
        sent = http.post("/api/service/submissions", content=name_too_long)
        assert sent.status_code == 202, sent.text
        refused = verdict(service, sent.json()["id"])
    assert refused["status"] == "refused", refused
    with service.client() as http:
        answers = [
            http.get(path).text
            for path in ("/api/dbs", "/service", "/api/service/status", "/api/service/submissions",
                         "/service/submissions", "/api/event?event=nope", "/api/league")
        ]  # fmt: skip
    for text in answers:
        assert str(service.root) not in text and "[Errno" not in text, text[:2000]


@pytest.mark.parametrize("number", ["99999999999999999999", "9223372036854775808", "-1", "0"])
def test_a_submission_number_past_sqlite_is_no_submission(service: Service, number: str) -> None:
    with service.client() as http:
        for path in (f"/api/service/submissions/{number}", f"/service/submissions/{number}"):
            answer = http.get(path)
            assert answer.status_code in (404, 422), (path, answer.status_code, answer.text)
            assert "Traceback" not in answer.text


def test_a_stream_of_nothing_is_refused_before_it_starts(service: Service) -> None:
    with service.client() as http:
        for path in ("/api/live/stream?event=nope", "/api/event/stream?event=nope",
                     "/api/live/stream?db=7"):  # fmt: skip
            with http.stream("GET", path) as answer:
                assert answer.status_code == 404, (path, answer.status_code)


def test_no_bot_log_line_is_served_without_its_owner(service: Service) -> None:
    """The all-cards view of a finished round's plays holds no line a bot wrote to stderr."""
    with service.client() as http:
        event = http.get("/api/service/status").json()["rounds"][0]["events"][0]
        for play in (0, 1):
            steps = http.get("/api/replay", params={"event": event, "play": play, "view": "all"})
            assert steps.status_code == 200, steps.text
            for step in range(steps.json()["steps"] + 1):
                answer = http.get(
                    "/api/step", params={"event": event, "play": play, "step": step, "view": "all"}
                )
                assert answer.status_code == 200, answer.text
                assert SECRET not in answer.text, (play, step)
    logs = list((service.root / "league.sqlite.logs").rglob("seat*.log"))
    assert any(SECRET in p.read_text() for p in logs)  # the lines exist: they are kept back


def test_an_owner_reads_their_own_bots_seat_logs_only(service: Service) -> None:
    """ann owns ``data+bot``, bob ``data_bot``: once both named ``seatK-data_bot.log``."""
    theirs = sorted((service.root / "league.sqlite.logs").rglob("seat*-data_bot.log"))
    assert theirs
    with service.client(headers=service.bearer("ann")) as http:
        mine = http.get("/api/service/bots/data+bot").json()["logs"]
        assert mine and all(name.endswith("-data+bot.log") for name in mine), mine
        root = service.root / "league.sqlite.logs"
        for path in theirs:
            relative = path.relative_to(root).as_posix()
            answer = http.get(f"/service/bots/data+bot/logs/{relative}")
            assert answer.status_code in (403, 404), (relative, answer.status_code)
            assert SECRET not in answer.text
        page = http.get(f"/service/bots/data+bot/logs/{mine[0]}")
        assert page.status_code == 200 and SECRET in page.text


def test_a_round_in_progress_shows_nothing_in_the_viewer(service: Service, tmp_path: Path) -> None:
    """The viewer as the service mounts it (``public``), over a copy of the league whose round
    is marked in progress with one play of each board left: the league page counts none of
    its hands, the game list shows none, and no play of it is compared or replayed (not even
    in the spectator view: its other table holds the same cards)."""
    copy = tmp_path / "league.sqlite"
    with sqlite3.connect(service.db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    with sqlite3.connect(copy) as conn:
        conn.execute("UPDATE league_rounds SET status = 'planned'")
        conn.execute("UPDATE plays SET status = 'pending' WHERE ordinal % 2 = 1")
    (tmp_path / "league.sqlite.logs").symlink_to(service.root / "league.sqlite.logs")
    with running(create_app([copy], public=True)) as url, httpx.Client(timeout=120) as http:
        board = http.get(f"{url}/api/league").json()
        hands = [row["hands"] for d in board["table"]["divisions"] for row in d["rows"]]
        assert not any(hands) and not board["charts"], board
        event = http.get(f"{url}/api/dbs").json()[0]["events"][0]["name"]
        compared = http.get(f"{url}/api/compare", params={"event": event, "play": 0})
        assert compared.status_code == 403, compared.text
        games = http.get(f"{url}/api/games", params={"event": event}).json()
        assert games["total"] == 0 and not games["rows"], games
        for view in ("spectator", "all"):
            step = http.get(f"{url}/api/step", params={"event": event, "play": 0, "view": view})
            assert step.status_code == 403, (view, step.text)


# ---------------------------------------------------------------------- lock-outs


def test_wrong_tokens_naming_an_owner_never_lock_the_owner_out(service: Service) -> None:
    with service.client("127.0.0.2") as stranger:
        codes = [
            stranger.get(
                "/api/service/bots/data+bot", headers={"Authorization": f"Bearer ann.wrong{k}"}
            ).status_code
            for k in range(12)
        ]
    assert codes[0] == 401 and codes[-1] == 429, codes  # the stranger's address is limited
    with service.client("127.0.0.3", headers=service.bearer("ann")) as ann:
        answer = ann.get("/api/service/bots/data+bot")
        assert answer.status_code == 200 and answer.json()["logs"] is not None, answer.text


def test_x_forwarded_for_from_loopback_is_not_believed(service: Service) -> None:
    with service.client("127.0.0.1") as forger:
        answer = forger.get(
            "/api/service/bots/data+bot",
            headers={"Authorization": "Bearer bob.forged", "X-Forwarded-For": "203.0.113.9"},
        )
        assert answer.status_code == 401
    with service.client("127.0.0.6", headers=service.bearer("org")) as org:
        audit = org.get("/api/service/audit").json()
    refused = next(e for e in audit if e["action"] == "login refused" and e["actor"] == "bob")
    assert refused["address"] == "127.0.0.1", refused


def test_login_needs_its_forms_token_and_this_sites_origin(service: Service) -> None:
    """A foreign page cannot log a browser into the attacker's account (login CSRF)."""
    token = service.tokens["ann"]
    with service.client("127.0.0.7") as browser:
        bare = browser.post("/service/login", data={"token": token})
        assert bare.status_code == 403 and "arena_session" not in browser.cookies, bare.text
        form = browser.get("/service/login").text
        csrf = re.search(r"name='csrf' value='([0-9a-f]{64})'", form)
        assert csrf is not None, form
        foreign = browser.post(
            "/service/login",
            data={"token": token, "csrf": csrf[1]},
            headers={"Origin": "http://evil.example"},
        )
        assert foreign.status_code == 403 and "arena_session" not in browser.cookies
        wrong = browser.post("/service/login", data={"token": "ann.wrong", "csrf": csrf[1]})
        assert wrong.status_code == 401, wrong.text
        assert wrong.headers["content-type"].startswith("text/html"), wrong.text
        assert "wrong or revoked token" in wrong.text and "<form" in wrong.text
        again = re.search(r"name='csrf' value='([0-9a-f]{64})'", wrong.text)
        assert again is not None
        good = browser.post("/service/login", data={"token": token, "csrf": again[1]})
        assert good.status_code == 303 and "arena_session" in browser.cookies


def test_a_cut_upload_ends_at_once_and_its_owner_may_send_again(service: Service) -> None:
    with socket.create_connection(("127.0.0.1", int(service.url.rsplit(":", 1)[1]))) as raw:
        raw.sendall(
            b"POST /api/service/submissions HTTP/1.1\r\nHost: x\r\n"
            + f"Authorization: Bearer {service.tokens['cy']}\r\n".encode()
            + b"Content-Length: 100000\r\n\r\n"
            + b"\x1f\x8b" * 500
        )
        wait_for(lambda: latest(service, "cy")["status"] == "queued", "the upload to start")
    wait_for(lambda: latest(service, "cy")["status"] == "interrupted", "the cut upload to end")
    assert not list((service.root / "league.sqlite.uploads").glob("*.tar.gz"))
    with service.client(headers=service.bearer("cy")) as http:
        again = http.post("/api/service/submissions", content=BROKEN)
        assert again.status_code == 202, again.text
    verdict(service, again.json()["id"])


def _worker_of(number: int) -> int | None:
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"arena.service.worker" in argv and str(number).encode() in argv:
                return int(proc.name)
    return None


def test_a_worker_that_dies_ends_its_submission_with_its_files(service: Service) -> None:
    slow = packed({"bot.toml": b'name = "sleepy"\ncommand = ["{python}", "bot.py"]\n',
                   "bot.py": b"import time\ntime.sleep(600)\n"})  # fmt: skip
    with service.client(headers=service.bearer("dee")) as http:
        sent = http.post("/api/service/submissions", content=slow)
        assert sent.status_code == 202, sent.text
        number = sent.json()["id"]
        wait_for(lambda: _worker_of(number) is not None, "the submission's worker")
        pid = _worker_of(number)
        assert pid is not None
        wait_for(lambda: latest(service, "dee")["status"] == "running", "the check to start")
        os.kill(pid, signal.SIGKILL)
        ended = verdict(service, number)
        assert ended["status"] == "interrupted", ended
        area = service.root / "league.sqlite.uploads"
        assert not list(area.glob(f"{number}*")), list(area.iterdir())
        again = http.post("/api/service/submissions", content=BROKEN)
        assert again.status_code == 202, again.text
    verdict(service, again.json()["id"])


# ---------------------------------------------------------------------- costs


def test_a_file_part_in_a_login_or_logout_form_costs_nothing(service: Service) -> None:
    """64 MiB in the login form's token field (and logout's csrf) once took the service
    from about 100 to 650 MiB; its peak memory now grows by less than 48 MiB."""
    before = service.status("VmHWM")
    big = b"t" * (64 << 20)
    with service.client("127.0.0.21") as http:
        for path, field in (("/service/login", "token"), ("/service/logout", "csrf")):
            try:
                answer = http.post(path, files={field: ("t.bin", big, "text/plain")})
                assert answer.status_code in (403, 413, 415), (path, answer.status_code)
            except httpx.TransportError:
                pass  # refused before the body was read: the connection closed under it
    grown_mib = (service.status("VmHWM") - before) >> 10
    assert grown_mib < 48, grown_mib


def test_the_upload_form_is_refused_at_the_cap_not_after_spooling(service: Service) -> None:
    """A chunked form body (no ``Content-Length``) of 24 MiB against a 1 MiB cap: the
    service writes a little past the cap, not the body."""
    with service.client("127.0.0.8") as browser:
        csrf = browser_login(browser, service.tokens["ann"])
        boundary = "hostileboundary"
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n{csrf}\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="bundle";'
            ' filename="b.tar.gz"\r\nContent-Type: application/gzip\r\n\r\n'
        ).encode()

        def body() -> Iterator[bytes]:
            yield head
            for _ in range(24):
                yield b"\x1f" * (1 << 20)
            yield f"\r\n--{boundary}--\r\n".encode()

        before = service.written()
        try:
            answer = browser.post(
                "/service/upload",
                content=body(),
                headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
            )
            assert answer.status_code == 413, answer.text
        except httpx.TransportError:
            pass
        written_mib = (service.written() - before) >> 20
    assert written_mib < 6, written_mib


def test_slow_clients_are_cut_off(service: Service) -> None:
    """Eight connections trickling their headers, one trickling an upload's body: each is
    closed within the service's timeouts (2 s for headers, 4 s for a body), and the upload
    ends as interrupted."""
    port = int(service.url.rsplit(":", 1)[1])
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(8)]
    for s in socks:
        s.sendall(b"GET /service HTTP/1.1\r\nHo")
    body = socket.create_connection(("127.0.0.1", port))
    body.sendall(
        b"POST /api/service/submissions HTTP/1.1\r\nHost: x\r\n"
        + f"Authorization: Bearer {service.tokens['eve']}\r\n".encode()
        + b"Content-Length: 1000\r\n\r\n\x1f"
    )
    socks.append(body)
    open_ = set(socks)
    deadline = time.monotonic() + 60
    answers = b""
    while open_ and time.monotonic() < deadline:
        for s in list(open_):
            readable, _, _ = select.select([s], [], [], 0)
            if readable:
                try:
                    data = s.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    open_.discard(s)
                    s.close()
                    continue
                answers += data
            try:
                s.sendall(b"x")  # one more byte, as a trickling client sends
            except OSError:
                open_.discard(s)
                s.close()
        time.sleep(0.5)
    left = len(open_)
    for s in open_:
        s.close()
    assert left == 0, f"{left} slow connections still open after 60 s"
    wait_for(lambda: latest(service, "eve")["status"] == "interrupted", "the slow upload to end")


def test_hundreds_of_hostile_requests_leave_the_service_small(service: Service) -> None:
    """Wrong tokens from many addresses, huge numbers, unknown streams and events, forged
    forms, path tricks: every answer a clear 4xx, and the service's peak memory grows by
    less than 48 MiB."""
    before = service.status("VmHWM")
    paths = ["/api/service/submissions/1" + "9" * 30, "/api/live/stream?event=x&play=99",
             "/api/event?event=" + "x" * 5000, "/service/bots/" + "%2e%2e/" * 20 + "etc",
             "/api/step?event=nope&view=all", "/api/replay/download?play=" + "9" * 40,
             "/service/bots/data+bot/logs/../../league.sqlite", "/api/compare?play=-5"]  # fmt: skip
    codes = []
    for k in range(300):
        with service.client(f"127.0.1.{k % 200 + 1}") as http:
            if k % 3 == 0:
                answer = http.get(
                    "/api/service/bots/data+bot", headers={"Authorization": f"Bearer ann.{k}"}
                )
            elif k % 3 == 1:
                answer = http.get(paths[k % len(paths)])
            else:
                answer = http.post("/service/login", data={"token": "x" * 3000, "csrf": "y"})
            codes.append(answer.status_code)
            assert answer.status_code < 500 and "Traceback" not in answer.text, answer.text
    grown_mib = (service.status("VmHWM") - before) >> 10
    assert grown_mib < 48, grown_mib
    assert all(400 <= c < 500 for c in codes), sorted(set(codes))


# ---------------------------------------------------------------------- for users


def test_refused_uploads_explain_the_packing_and_do_not_count(
    service: Service, tmp_path: Path
) -> None:
    """A .zip is said to be one, with the command to use; ``tar czf bot.tar.gz -C bot .`` and
    ``tar czf bot.tar.gz bot`` are read (the bot name is then checked before any sandbox);
    none of these refusals counts toward the daily quota of 3."""
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "bad name"\ncommand = ["{python}", "bot.py"]\n')
    (bot / "bot.py").write_text("print('hi')\n")
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as z:
        z.write(bot / "bot.toml", "bot.toml")
    uploads = [zipped.getvalue()]
    for flags in (["-C", "bot", "."], ["bot"]):
        subprocess.run(["tar", "czf", "bot.tar.gz", *flags], cwd=tmp_path, check=True)
        uploads.append((tmp_path / "bot.tar.gz").read_bytes())
    uploads.append(b"plain text, no archive")
    reasons = []
    with service.client(headers=service.bearer("fay")) as http:
        for upload in uploads:
            sent = http.post("/api/service/submissions", content=upload)
            assert sent.status_code == 202, sent.text
            done = verdict(service, sent.json()["id"])
            assert done["status"] == "refused", done
            reasons.append(done["reason"])
    with service.client(headers=service.bearer("fay")) as http:
        report = http.get(f"/api/service/submissions/{sent.json()['id'] - 1}").json()["report"]
    assert "a .zip archive" in reasons[0] and "tar czf bot.tar.gz -C bot ." in reasons[0]
    for reason in reasons[1:3]:
        assert "'bad name' is not usable in a league" in reason, reason
    assert "check" not in report, report  # refused before the sandbox ran
    assert "not a gzipped tar" in reasons[3] and "tar czf" in reasons[3], reasons[3]


def test_a_browser_upload_page_reloads_until_its_verdict(service: Service) -> None:
    with service.client("127.0.0.9") as browser:
        csrf = browser_login(browser, service.tokens["bob"])
        posted = browser.post(
            "/service/upload",
            data={"csrf": csrf},
            files={"bundle": ("bot.tar.gz", BROKEN, "application/gzip")},
        )
        assert posted.status_code == 303, posted.text
        where = posted.headers["location"]
        assert re.fullmatch(r"/service/submissions/\d+", where), where
        first = browser.get(where)
        assert first.status_code == 200
        assert "refused" in first.text or first.headers.get("refresh") == "2", first.text

        def done() -> bool:
            return "refresh" not in browser.get(where).headers

        wait_for(done, "the page's verdict")
        page = browser.get(where).text
        assert "refused" in page and "bot.toml" in page, page


def test_a_checked_upload_leaves_no_image_in_memory(service: Service) -> None:
    """A bot that fails the smoke check: its folder's in-memory image (``/dev/shm``) is
    removed with its verdict, not kept for an hour."""
    from arena.server.image import images_folder
    from arena.server.sandbox import SandboxError, require_sandbox

    try:
        require_sandbox(False)
    except SandboxError:
        pytest.skip("no full sandbox here: the smoke check builds no image")
    failing = packed({"bot.toml": b'name = "quitter"\ncommand = ["{python}", "bot.py"]\n',
                      "bot.py": b"raise SystemExit(3)\n"})  # fmt: skip
    with service.client(headers=service.bearer("bob")) as http:
        sent = http.post("/api/service/submissions", content=failing)
        assert sent.status_code == 202, sent.text
        number = sent.json()["id"]
    done = verdict(service, number)
    assert done["status"] == "refused" and "smoke check" in done["reason"], done
    folder = (service.root / "league.sqlite.uploads" / str(number)).resolve()
    tag = hashlib.sha256(str(folder).encode()).hexdigest()[:8]
    assert not list(images_folder().glob(f"folder-*{tag}")), tag


def test_the_token_file_keeps_the_token_out_of_the_process_list(
    service: Service, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(service.tokens["eve"] + "\n")
    token_file.chmod(0o600)
    shutil.copytree(service.root / "plus", tmp_path / "eves")
    manifest = tmp_path / "eves" / "bot.toml"
    manifest.write_text(manifest.read_text().replace("data+bot", "eve-bot"))
    done = subprocess.run(
        [*ARENA, "league", "submit", "eves", "--server", service.url,
         "--token-file", str(token_file)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={k: v for k, v in os.environ.items() if k != "ARENA_TOKEN"},
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert "no token" not in out and "Traceback" not in out, out
    assert done.returncode in (0, 1), out  # accepted or refused by the check: authenticated


# ---------------------------------------------------------------------- every route


def test_every_route_of_the_schema_fuzzed_answers_without_a_server_error(
    service: Service, tmp_path: Path
) -> None:
    """Schemathesis draws requests for every operation of the service's OpenAPI schema
    (bounded: a few dozen each), valid and not, anonymous and as an owner, against the
    running service: no 5xx, every 2xx within its schema, no traceback in the service's
    log (the fixture checks it at the end)."""
    schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is not installed")
    from hypothesis import HealthCheck, given, settings
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
    )

    from arena.web.service import Limits, create_service_app

    copy = tmp_path / "league.sqlite"
    with sqlite3.connect(service.db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    raw = create_service_app(copy, Limits(max_upload_bytes=1 << 20)).openapi()
    schema = schemathesis.openapi.from_dict(raw)
    checks = [not_a_server_error, response_schema_conformance, content_type_conformance]
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 12, [op.label for op in operations]

    def fuzz(operation: Any, headers: dict[str, str]) -> None:
        @settings(
            max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        @given(case=operation.as_strategy())
        def one(case: Any) -> None:
            if case.method.upper() == "POST":
                case.body = b"\x1f\x8b" + os.urandom(64)  # an upload: refused at once
            case.call_and_validate(base_url=service.url, headers=headers, checks=checks)

        one()

    for operation in operations:
        for headers in ({}, service.bearer("fay")):
            fuzz(operation, headers)


def test_a_hostile_bot_name_is_shown_as_text_on_every_page(service: Service) -> None:
    """The pages are rendered from templates with autoescaping: a name (in a refusal's
    reason) that is HTML shows as text."""
    script = "<script>alert(1)</script>"
    hostile = packed({"bot.toml": f'name = "{script}"\ncommand = ["x"]\n'.encode()})
    with service.client(headers=service.bearer("fay")) as http:
        sent = http.post("/api/service/submissions", content=hostile)
        assert sent.status_code == 202, sent.text
        number = sent.json()["id"]
    assert script in verdict(service, number)["reason"]
    with service.client(headers=service.bearer("fay")) as http:
        for path in ("/service/submissions", f"/service/submissions/{number}"):
            page = http.get(path).text
            assert script not in page and "&lt;script&gt;" in page, page
