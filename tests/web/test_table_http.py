"""``arena table`` over HTTP: refusals in one line, and a person whose time runs out."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena.referee.replay import load
from arena.rules import card_name
from tests.web.served import start_table

pytestmark = pytest.mark.slow  # a table with three sandboxed bots in a process

CARD = re.compile(r"\b(?:[2-9TJQKA][jspt]|Mj|Dr|Ph|Dg)\b")


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
            # the table is guarded as the league service is (issue 46)
            assert "frame-ancestors 'none'" in taken.headers["content-security-policy"]
            foreign = http.post(
                "/api/sit", json={"seat": 1, "name": "Eve"}, headers={"Origin": "http://x.example"}
            )
            assert foreign.status_code == 403, foreign.text
            early = http.post("/api/again", json={"token": token})
            assert early.status_code == 409 and "not over" in early.json()["detail"], early.text
            invite = http.get("/api/invite", params={"token": links[1].split("token=")[1]})
            assert invite.json() == {
                "seat": 1,
                "team": "B",
                "partner": "heuristic-3",
                "taken": False,
                "state": "lobby",
            }, invite.text
            assert http.get("/api/invite", params={"token": "nobody"}).status_code == 409
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
            assert state["replay"] == "table.json", state  # its name: no server path
            lobby = http.get("/api/lobby").json()
            assert lobby["replay"] == "table.json", lobby
            again = http.get("/api/seat/state", params={"token": token}).json()
            # A spectator from the start to the end (the stream ends with the game).
            with http.stream("GET", "/api/live/stream") as stream:
                lines = [line for line in stream.iter_lines() if line.startswith("data:")]
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    replay = load(tmp_path / "table.json")
    assert replay.seats[0] == "Ann" and replay.result is not None
    # The seat's JSON at the end is the game's end, as the record has it: the last hand, the
    # final score, the winner; no play in progress, no decision.
    for end in (state, again):
        view = end["view"]
        assert end["ask"] is None and view["over"] and view["phase"] == "match_over", view
        assert view["scores"] == replay.result["scores"], (view["scores"], replay.result)
        assert view["winners"] == replay.meta["winners"], view
        assert len(view["hand_scores"]) == len(replay.result["hands"]), view
        assert view["hand_end"]["score"] == view["hand_scores"][-1], view
        assert view["last"]["text"].startswith("game over: team "), view["last"]
        assert view["trick"] == [] and view["to_act"] < 0, view
    # No hidden card in any spectator message: no seat's hand, and no card but those played
    # (passed cards, and the cards left in hands, are never public).
    # At the hand's end, the cards left in hand are laid down: those no seat played.
    played = {c for e in replay.recorded or [] for c in CARD.findall(str(e.get("play", "")))}
    kept = {card_name(c) for c in range(56)} - played
    assert len(lines) > 20
    laid: set[str] = set()
    for line in lines:
        message = json.loads(line.removeprefix("data:"))
        assert all(seat["cards"] is None for seat in message["view"]["seats"]), message
        left = json.dumps([(message["view"].get("hand_end") or {}).get("left")])
        left += json.dumps(message.get("event", {}).get("left"))
        laid |= set(CARD.findall(left))
        rest = {**message, "view": {**message["view"], "hand_end": None}}
        rest["event"] = {k: v for k, v in message.get("event", {}).items() if k != "left"}
        assert set(CARD.findall(json.dumps(rest))) <= played, message
    assert laid and laid <= kept, (laid, kept)
    assert view["hand_end"]["left"], view["hand_end"]  # the seat's page shows them too


EIGHTS = {"8j", "8s", "8p", "8t"}  # seat 0's bomb in the deal of seed 1664


def reply(ask: dict[str, Any], cards: list[str]) -> dict[str, Any]:
    """An answer that never bombs: no Grand Tichu, three cards but the 8s, no bomb in a
    window, a play that is no bomb where there is one."""
    if ask["phase"] == "exchange":
        return {"exchange": [c for c in cards if c not in EIGHTS][:3]}
    legal = ask["legal"]
    keep = [item for item in legal if not item.get("bomb")]
    quiet = [item for item in keep if item.get("cards")] or keep or legal
    if ask["phase"] == "bomb_window":
        quiet = [item for item in legal if not item.get("cards")]
    if ask["phase"] == "grand_tichu":
        quiet = [item for item in legal if item["label"] == "no Grand Tichu"]
    return {"index": quiet[0]["index"]}


def test_a_bomb_outside_the_window_is_refused_and_the_game_goes_on(tmp_path: Path) -> None:
    """A late bomb (the window closed by its time while the click was on its way) and a
    forged one (no decision open): refused in one line, nothing changes, the table goes on."""
    proc, base, links = start_table(
        tmp_path, "--sit", "Ann", "--seed", "1664", "--hands", "1", "--window-s", "1"
    )
    token = links[0].split("token=")[1]
    try:
        with httpx.Client(base_url=base, timeout=60) as http:

            def state(since: int = -1) -> dict[str, Any]:
                got = http.get("/api/seat/state", params={"token": token, "since": since})
                assert got.status_code == 200, got.text
                return dict(got.json())

            def send(number: int, body: dict[str, Any]) -> httpx.Response:
                return http.post(
                    "/api/seat/answer", json={"token": token, "number": number, **body}
                )

            early = send(1, {"index": 0})
            assert early.status_code == 409, early.text
            assert "no decision of yours is" in early.json()["detail"]
            assert http.post("/api/start", json={"token": token}).json()["state"] == "playing"
            now = state()
            late: dict[str, Any] | None = None
            deadline = time.monotonic() + 300
            while now["state"] != "over":
                assert time.monotonic() < deadline, "the hand did not end"
                ask = now["ask"]
                if ask is None:
                    now = state(now["version"])
                    continue
                if ask["phase"] == "bomb_window" and late is None:
                    late = ask  # left unanswered: its second runs out, and the seat passes
                    while now["ask"] is not None and now["ask"]["number"] == late["number"]:
                        now = state(now["version"])
                    bomb = next(item for item in late["legal"] if item.get("bomb"))
                    refused = send(late["number"], {"index": bomb["index"]})
                    detail = refused.json()["detail"]
                    assert refused.status_code == 409 and f"decision {late['number']}" in detail
                    assert "open" in detail and "\n" not in detail, detail
                    now = state()
                    # The page says why later plays pause (the pacing that hides bombs).
                    assert "nobody can tell who holds a bomb" in now["notice"], now["notice"]
                    assert set(now["view"]["seats"][0]["cards"]) >= EIGHTS, now["view"]
                    assert all(not e["bomb"] for e in now["view"]["entries"]), now["view"]
                    continue
                answered = send(ask["number"], reply(ask, now["view"]["seats"][0]["cards"]))
                assert answered.status_code == 200, answered.text
                now = state(now["version"])
            assert late is not None, "no bomb window was offered to seat 0"
            forged = send(late["number"] + 1000, {"index": 0})
            assert forged.status_code == 409, forged.text
            assert "no decision of yours is" in forged.json()["detail"]
            assert now["replay"] and not now["error"], now
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    replay = load(tmp_path / "table.json")
    assert replay.seats[0] == "Ann" and replay.result is not None
    assert replay.result["finished"], replay.result
