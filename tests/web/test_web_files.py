"""``arena web FILE.json``: replays written by ``arena play`` open in the viewer, and download."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from arena.referee.replay import load
from arena.web.app import create_app, running

pytestmark = pytest.mark.slow  # plays a match in a process

ARENA = [sys.executable, "-m", "arena.cli.main"]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("files") / "match.json"
    run = subprocess.run(
        [
            *ARENA,
            "play",
            "heuristic",
            "greedy",
            "random",
            "heuristic",
            "--in-process",
            "--seed",
            "5",
            "--hands",
            "2",
            "--quiet",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    return out


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


def test_the_command_needs_something_to_serve(tmp_path: Path) -> None:
    run = subprocess.run([*ARENA, "web"], capture_output=True, text=True)
    assert run.returncode == 2 and "give replay files" in run.stderr
    bad = tmp_path / "x.json"
    bad.write_text("{}", encoding="utf-8")
    run = subprocess.run([*ARENA, "web", str(bad)], capture_output=True, text=True)
    assert run.returncode == 2 and "Traceback" not in run.stderr and "error" in run.stderr
