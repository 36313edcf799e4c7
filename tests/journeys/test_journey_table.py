"""Journey: a person plays against the bots, then opens the game in the viewer, as the docs say.

From a scratch copy, the two commands of docs/web.md's "Play against the bots" (the README's
``arena table --sit You`` is the first without ``--out``): the table opens, the person's link
is opened in Chromium at 1280 px, the game is started and played to its winner by clicking
(whatever the deal: the lowest legal play, no bomb, no wish); "play again" starts a second game
at the same table, played at 360 px (the hand in view at every turn, without scrolling); each
game's end screen names the winner and the score its record holds; then ``arena web`` serves
the first replay written.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from arena.referee.replay import load
from tests.helpers import ROOT
from tests.journeys.journey import (
    CHROMIUM,
    CHROMIUM_ARGS,
    PATIENCE_S,
    doc_command,
    scratch_copy,
    serving,
    user_env,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

WEB_DOC = ROOT / "docs" / "web.md"


def answer(page: Any, ask: dict[str, Any]) -> None:
    """Clicks an answer to the open decision: the first choice, or the lowest play."""
    box = page.locator("#ask")
    phase = ask["phase"]
    if phase == "exchange":
        for card in page.locator(".hand.mine button.card").all()[:3]:
            card.click()
        box.get_by_role("button", name="pass these three cards").click()
    elif phase == "play":
        plays = [item for item in ask["legal"] if item.get("cards")]
        if any(not item.get("cards") for item in ask["legal"]):
            box.get_by_role("button", name="pass", exact=True).click()
            return
        for card in plays[0]["cards"]:
            page.locator(f".hand.mine button[data-card='{card}']").click()
        box.locator("button.act").first.click()
    else:  # Grand Tichu, bomb window, wish, Dragon gift: the last button (no / no bomb / ...)
        box.locator("button.act").last.click()


def test_a_person_plays_a_hand_then_opens_it(tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"no browser: {CHROMIUM} is missing (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    repo = scratch_copy(tmp_path)
    env = user_env(tmp_path / "home")
    readme = doc_command(ROOT / "README.md", "arena table")
    table = doc_command(WEB_DOC, "arena table")
    assert table.startswith(readme)
    # One hand, a port the system chooses, and an end: the journey's only additions.
    argv = [*shlex.split(table), "--hands", "1", "--port", "0", "--linger", "5"]
    proc = subprocess.Popen(
        argv, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert proc.stdout is not None
    ends: list[str] = []
    try:
        link = ""
        while not link:
            line = proc.stdout.readline()
            assert line, "arena table exited before printing its links"
            found = re.findall(r"seat 0 \(team A\), you: (\S+)", line)
            link = found[0] if found else ""
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            for width, height in ((1280, 900), (360, 640)):
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(link)
                page.get_by_role("button", name="start the game").click()
                answered: set[int] = set()
                deadline = time.monotonic() + PATIENCE_S
                while page.evaluate("document.body.dataset.over") != "1":
                    assert time.monotonic() < deadline, "the game did not end"
                    # The decision the page shows (its own state: what it drew its buttons for).
                    ask = page.evaluate("st.data && st.data.ask")
                    if ask and ask["number"] not in answered:
                        answered.add(ask["number"])
                        box = page.locator("#hand").bounding_box()
                        assert box is not None and box["y"] + box["height"] <= height + 1, box
                        answer(page, ask)
                    page.wait_for_timeout(100)
                page.wait_for_selector("#end:not([hidden]) #winner")
                ends.append(page.locator("#end").inner_text())
                if width == 1280:  # the same people, a new deal, a new record
                    page.get_by_role("button", name="play again").click()
                    page.wait_for_selector("text=Waiting for the game to start")
                page.close()
            browser.close()
        out, _ = proc.communicate(timeout=PATIENCE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    assert "game over: replay written to runs/mine.json" in out
    assert "game over: replay written to runs/mine-2.json" in out
    for end, record in zip(ends, ("mine.json", "mine-2.json"), strict=True):
        replay = load(repo / "runs" / record)
        assert replay.result is not None
        a, b = replay.result["scores"]
        team = replay.meta["winners"][0] & 1
        score = f"{a} : {b}" if team == 0 else f"{b} : {a}"
        assert "Game over" in end and f"team {'AB'[team]} (" in end, end
        assert f"wins {score}" in end and "Hand 1 over" in end, end
    web = doc_command(WEB_DOC, "arena web runs/")
    with (
        serving(web, repo, env) as url,
        urllib.request.urlopen(url + "/api/replay?event=files&play=0", timeout=60) as r,
    ):
        outline = json.load(r)
    assert outline["seats"][0] == "You" and outline["result"]["hands"]
