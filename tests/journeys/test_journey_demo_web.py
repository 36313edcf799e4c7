"""Journey: a new user runs the demo, then opens it in the viewer, as the README says.

Issue 23 found every replay answering 422 (``runs/runs/demo.sqlite.replays/...``) and the
event page's statistics silently zero when ``arena web --db runs/demo.sqlite`` ran where the
README runs it. This journey opens every page of the demo in Chromium, every replay through
the requests its page makes (every twelfth in Chromium itself: each costs a page load), from
the README's folder and from another working folder.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT
from tests.journeys.journey import (
    CHROMIUM,
    CHROMIUM_ARGS,
    VENV_BIN,
    doc_command,
    doc_commands,
    scratch_copy,
    serving,
    sh,
    user_env,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

README = ROOT / "README.md"


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as reply:
        return json.load(reply)


def test_the_demo_opens_in_the_viewer(tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"no browser: {CHROMIUM} is missing (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    repo = scratch_copy(tmp_path)
    env = user_env(tmp_path / "home")
    # `make demo`, as written; the Makefile's install step is the test's own .venv.
    assert "make demo" in doc_commands(README)
    stamp = VENV_BIN.parent / ".installed"
    out = sh(["make", "-o", str(stamp), "demo", f"VENV={VENV_BIN.parent}"], repo, env)
    assert "results in runs/demo.sqlite" in out
    assert len([line for line in out.splitlines() if line.startswith("plays ")]) >= 1
    web = doc_command(README, "arena web")
    assert web == "arena web --db runs/demo.sqlite"
    with (
        serving(web, repo, env) as url,
        serving("arena web --db ../runs/demo.sqlite", repo / "docs", env) as elsewhere,
        sync_api.sync_playwright() as pw,
    ):
        (db,) = get(url + "/api/dbs")
        assert [(e["name"], e["plays_done"]) for e in db["events"]] == [("demo", 144)]
        plays = sorted({row["play"] for row in get(url + "/api/games?event=demo")["rows"]})
        assert len(plays) == 144
        page_data = get(url + "/api/event?event=demo")
        stats = {s["bot"]: s for s in page_data["stats"]}
        assert sum(s["bombs"] for s in stats.values()) > 0, stats
        assert sum(s["wishes"] for s in stats.values()) > 0, stats
        assert all(s["decisions"] > 0 and s["think_mean_ms"] for s in stats.values()), stats
        assert page_data["replays_unreadable"] == 0
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/")
        page.wait_for_selector("header.top a")
        assert page.locator("header.top").inner_text().strip() == "Tichu Arena"  # not "nullnull"
        page.get_by_role("link", name="demo").first.click()
        page.wait_for_selector("table.stats")
        assert "nullnull" not in page.locator("header.top").inner_text()
        assert page.locator("p.replays-unreadable").count() == 0
        rows = page.locator("table.stats tbody tr").all_inner_texts()
        assert len(rows) == len(stats)
        page.goto(url + "/games?event=demo")
        page.wait_for_selector("#games tbody tr")
        assert page.locator("#games tbody tr").count() == 144
        for play in plays:  # every replay, through the requests its page makes
            outline = get(f"{url}/api/replay?event=demo&play={play}")
            assert outline["steps"] > 0 and outline["board"], play
            assert get(f"{url}/api/step?event=demo&play={play}&step=1")["step"] == 1
        for play in plays[::12]:  # and every twelfth in Chromium, as the game list links it
            page.goto(f"{url}/replay?event=demo&play={play}")
            page.wait_for_selector("#where:has-text('step 0 of')")
            assert page.locator("p.error").count() == 0, page.locator("p.error").inner_text()
        for base in (url, elsewhere):  # the viewer started from another folder reads it too
            page.goto(f"{base}/replay?event=demo&play={plays[-1]}")
            page.wait_for_selector("#where:has-text('step 0 of')")
            page.goto(f"{base}/event?event=demo")
            page.wait_for_selector("table.stats")
        assert get(elsewhere + "/api/event?event=demo")["stats"] == page_data["stats"]
        browser.close()
        assert errors == []
