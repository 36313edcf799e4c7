"""``arena table`` over HTTP: refusals in one line, and a person whose time runs out."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from arena.referee.replay import load
from tests.web.served import start_table

pytestmark = pytest.mark.slow  # a table with three sandboxed bots in a process


def test_refusals_and_the_stand_in_when_time_runs_out(tmp_path: Path) -> None:
    proc, base, links = start_table(
        tmp_path, "--sit", "Ann", "--seed", "1664", "--hands", "1", "--decision-s", "1",
        "--bank-s", "0",
    )  # fmt: skip
    token = links[0].split("token=")[1]
    try:
        with httpx.Client(base_url=base, timeout=60) as http:
            bad = http.get("/api/seat/state", params={"token": "nobody"})
            assert bad.status_code == 409 and "no seat has this token" in bad.json()["detail"]
            taken = http.post("/api/sit", json={"seat": 0, "name": "Eve"})
            assert taken.status_code == 409 and "seat 0 is taken" in taken.json()["detail"]
            assert http.post("/api/start", json={"token": token}).json()["state"] == "playing"
            again = http.post("/api/start", json={"token": token})
            assert again.status_code == 409 and "already started" in again.json()["detail"]
            state = http.get("/api/seat/state", params={"token": token}).json()
            deadline = time.monotonic() + 120
            while not state["ask"]:
                assert time.monotonic() < deadline
                since = state["version"]
                state = http.get("/api/seat/state", params={"token": token, "since": since}).json()
            ask = state["ask"]
            wrong = http.post(
                "/api/seat/answer", json={"token": token, "number": ask["number"], "index": 99}
            )
            assert wrong.status_code == 409 and "not one of the" in wrong.json()["detail"]
            stale = http.post(
                "/api/seat/answer", json={"token": token, "number": ask["number"] + 5, "index": 0}
            )
            assert stale.status_code == 409 and "no longer open" in stale.json()["detail"]
            # Ann answers nothing more: each decision's second runs out and the stand-in
            # answers, so the hand ends and the page says why.
            notices = set()
            while state["state"] != "over":
                assert time.monotonic() < deadline + 300, "the hand did not end"
                since = state["version"]
                state = http.get("/api/seat/state", params={"token": token, "since": since}).json()
                notices.add(state["notice"])
            assert "your time ran out: the stand-in bot answered for you" in notices, notices
            assert state["replay"], state
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    replay = load(tmp_path / "table.json")
    assert replay.seats[0] == "Ann" and replay.result is not None
