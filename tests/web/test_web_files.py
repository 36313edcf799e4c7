"""``arena web FILE.json``: replays written by ``arena play`` open in the viewer, and download."""

from __future__ import annotations

import http.client
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena.referee.replay import load
from arena.web.app import create_app, running
from arena.web.uploads import MAX_UPLOAD_ACTIONS, MAX_UPLOAD_BYTES, UPLOADS_KEPT
from tests.web.served import ARENA

pytestmark = pytest.mark.slow  # plays a match in a process


def test_a_replay_file_opens_steps_and_downloads(played: Path) -> None:
    replay = load(played)
    with running(create_app([], files=[played])) as url:
        dbs = httpx.get(url + "/api/dbs").json()
        assert dbs[0]["events"][0]["files"] == [str(played)]
        outline = httpx.get(url + "/api/replay", params={"event": "files", "play": 0}).json()
        assert outline["seats"] == replay.seats
        assert outline["steps"] == len(outline["moves"]) > 20
        last = httpx.get(
            url + "/api/step", params={"event": "files", "play": 0, "step": outline["steps"]}
        ).json()
        assert replay.result is not None and last["scores"] == replay.result["scores"]
        assert last["hand_end"]["hand"] == 2 and last["hand_end"]["total"] == last["scores"]
        record = httpx.get(url + "/api/replay/download", params={"event": "files", "play": 0})
        assert "attachment" in record.headers["content-disposition"]
        assert record.json() == json.loads(played.read_text(encoding="utf-8"))
        missing = httpx.get(url + "/api/replay", params={"event": "files", "play": 3})
        assert missing.status_code == 404 and "no replay file 3" in missing.json()["detail"]
        assert httpx.get(url + "/favicon.ico").status_code == 200


def test_the_viewer_is_guarded_as_the_league_service_is(played: Path) -> None:
    """Issue 46: ``arena web`` had none of the service's guard. Every answer carries the
    security headers, a post from another site's page is refused, and a connection that
    sends no request is closed."""
    with running(create_app([], files=[played]), header_s=0.5) as url:
        page = httpx.get(url + "/")
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert page.headers["x-content-type-options"] == "nosniff"
        foreign = upload(url, b"{}", origin="http://elsewhere.example")
        assert foreign.status_code == 403, foreign.text
        host, port = url.removeprefix("http://").split(":")
        idle = http.client.HTTPConnection(host, int(port), timeout=30)
        idle.connect()
        assert idle.sock is not None
        idle.sock.settimeout(30)
        assert idle.sock.recv(1) == b""  # closed by the server, well before our 30 s


def test_the_command_needs_something_to_serve(tmp_path: Path) -> None:
    run = subprocess.run([*ARENA, "web"], capture_output=True, text=True)
    assert run.returncode == 2 and "give replay files" in run.stderr
    bad = tmp_path / "x.json"
    bad.write_text("{}", encoding="utf-8")
    run = subprocess.run([*ARENA, "web", str(bad)], capture_output=True, text=True)
    assert run.returncode == 2 and "Traceback" not in run.stderr and "error" in run.stderr


def upload(url: str, content: Any, name: str = "match.json", **headers: str) -> httpx.Response:
    return httpx.post(
        url + "/api/replay/upload", params={"name": name}, content=content, headers=headers
    )


def test_an_uploaded_replay_opens_as_the_same_file_given_on_the_command_line(
    played: Path,
) -> None:
    body = played.read_bytes()
    with running(create_app([], files=[played])) as url:
        answer = upload(url, body, Origin=url)  # a browser sends its page's origin
        assert answer.status_code == 200, answer.text
        where = answer.json()
        assert (
            where["href"] == (f"/replay?db={where['db']}&event={where['event']}&play=0")
            and len(where["event"]) >= 24
        )
        given = httpx.get(url + "/api/replay", params={"event": "files"}).json()
        uploaded = httpx.get(url + "/api/replay", params=where).json()
        assert {k: v for k, v in uploaded.items() if k not in ("event", "board")} == {
            k: v for k, v in given.items() if k not in ("event", "board")
        }
        step = {"step": 40, "view": "all"}
        assert (
            httpx.get(url + "/api/step", params={**where, **step}).json()
            == httpx.get(url + "/api/step", params={"event": "files", **step}).json()
        )
        assert httpx.get(url + "/api/replay/download", params=where).content == body
        assert httpx.get(url + where["href"]).status_code == 200
        # Listed nowhere: only its id finds it.
        assert where["event"] not in httpx.get(url + "/api/dbs").text
        guessed = httpx.get(url + "/api/replay", params={**where, "event": "x" + where["event"]})
        assert guessed.status_code == 404 and "no event" in guessed.json()["detail"]
        assert httpx.get(url + "/api/replay", params={"db": where["db"]}).status_code == 404
        # Another site's page may make the browser post, not store a replay.
        forged = upload(url, body, Origin="http://evil.example")
        assert forged.status_code == 403, forged.text
        assert "this site's own pages" in forged.json()["detail"]


def test_an_upload_that_is_no_replay_is_refused_with_its_reason(
    played: Path, tmp_path: Path
) -> None:
    data = json.loads(played.read_text(encoding="utf-8"))
    illegal = {**data, "actions": [{"seat": 0, "play": "Dr"}, *data["actions"][1:]]}
    bad_meta = {**data, "meta": {**data["meta"], "think": [[0, "x"]]}}
    endless = {**data, "actions": [{"seat": 0, "play": "pass"}] * (MAX_UPLOAD_ACTIONS + 1)}

    def streamed() -> Iterator[bytes]:  # no Content-Length: the server counts as it reads
        for _ in range(MAX_UPLOAD_BYTES >> 16):
            yield b" " * (1 << 16)
        yield b" "

    refused = {
        "empty": (b"", 400, "match.json: the file is empty"),
        "over the cap, streamed": (streamed(), 413, "over the 4 MiB a replay upload may hold"),
        "not JSON": (b"PNG\r\n<script>", 422, "match.json: not valid JSON"),
        "not text": (b"\xff\xfe\x00", 422, "match.json: not a text file"),
        "JSON, no replay": (b'{"format": "x"}', 422, "not a tichu-arena-replay file"),
        "a huge number": (b'{"a": ' + b"9" * 5000 + b"}", 422, "match.json: not a replay"),
        "deeply nested": (b"[" * 100_000, 422, "JSON nested too deeply"),
        "an illegal action": (json.dumps(illegal).encode(), 422, "cannot re-play"),
        "malformed notes": (json.dumps(bad_meta).encode(), 422, "malformed referee notes"),
        "too long": (json.dumps(endless).encode(), 422, "more than any match"),
    }
    app = create_app([])
    with running(app) as url:
        for what, (content, status, reason) in refused.items():
            answer = upload(url, content)
            detail = answer.json().get("detail", "")
            assert answer.status_code == status and reason in detail, (what, answer.text)
            assert "\n" not in detail and "Traceback" not in detail, what
        # A declared size over the cap is refused before a byte of the body is sent.
        host, port = url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        conn.putrequest("POST", "/api/replay/upload?name=big.json")
        conn.putheader("Content-Length", str(MAX_UPLOAD_BYTES + 1))
        conn.endheaders()
        early = conn.getresponse()
        assert early.status == 413 and b"big.json: over the 4 MiB" in early.read()
        conn.close()
        folder = app.state.uploads.folder()
        assert not list(folder.iterdir())  # nothing refused is left behind


def test_the_server_keeps_its_newest_uploads_and_removes_them_when_it_stops(
    played: Path,
) -> None:
    body = played.read_bytes()
    app = create_app([])
    with running(app) as url:
        ids = [upload(url, body).json()["event"] for _ in range(UPLOADS_KEPT + 1)]
        dropped = httpx.get(url + "/api/replay", params={"event": ids[0]})
        assert dropped.status_code == 404, dropped.text
        for upload_id in ids[1:]:
            kept = httpx.get(url + "/api/replay", params={"event": upload_id})
            assert kept.status_code == 200, kept.text
        folder = app.state.uploads.folder()
        assert sorted(p.stem for p in folder.iterdir()) == sorted(ids[1:])
        assert folder.stat().st_mode & 0o777 == 0o700
    assert not folder.exists()


def test_an_uploaded_replay_cannot_have_the_viewer_read_another_file(
    played: Path, tmp_path: Path
) -> None:
    """The bots' log files a replay names are plain names in its logs folder: an upload that
    names another file of the server (an absolute path) shows no log, not that file."""
    secret = tmp_path / "secret.txt"
    secret.write_text("the organiser's secret\n", encoding="utf-8")
    data = json.loads(played.read_text(encoding="utf-8"))
    think = [[k, 0, 1.0, 0, 1000] for k in range(8)]
    data["meta"] |= {"log_files": [str(secret)] * 4, "think": think}
    with running(create_app([])) as url:
        where = upload(url, json.dumps(data).encode()).json()
        for step in range(1, 9):
            view = httpx.get(url + "/api/step", params={**where, "step": step, "view": "all"})
            assert view.status_code == 200 and "secret" not in view.text, view.text
            assert view.json()["decision"]["log"] is None, step
