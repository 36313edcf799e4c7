"""Journey: an organiser runs a league as the README and docs/league.md say.

A league from ``docs/league-example.toml`` with two built-in bots (by name and by folder)
and two submitted ones, two rounds with a Ctrl-C and a second run to continue, then the
standings, a bot's history and the league page in Chromium. Issue 23 found built-in bots
refused by ``league submit`` ("does not exist", "workdir ../.. leaves the bot's folder").
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT
from tests.journeys.journey import (
    CHROMIUM,
    CHROMIUM_ARGS,
    doc_command,
    scratch_copy,
    serving,
    sh,
    user_env,
    wait_for,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

README = ROOT / "README.md"
LEAGUE = ROOT / "docs" / "league.md"


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as reply:
        return json.load(reply)


def plays_done(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=30) as conn:
            return int(
                conn.execute("SELECT COUNT(*) FROM plays WHERE status = 'done'").fetchone()[0]
            )
    except sqlite3.OperationalError:  # not created yet
        return 0


def test_an_organiser_runs_a_league(tmp_path: Path) -> None:
    repo = scratch_copy(tmp_path)
    env = user_env(tmp_path / "home")
    for bot in ("alice", "bob"):
        sh(["arena", "new-bot", bot], repo, env)
    init = doc_command(README, "arena league init")
    assert "league 'spring'" in sh(init, repo, env)
    submit = doc_command(README, "arena league submit alice/ --db runs/spring.sqlite --owner")
    assert "alice: registered" in sh(submit, repo, env)
    assert "bob: registered" in sh(submit.replace("alice", "bob"), repo, env)
    builtin = doc_command(LEAGUE, "arena league submit heuristic")
    assert "heuristic: registered" in sh(builtin, repo, env)
    assert "random: registered" in sh(
        builtin.replace("heuristic", "example_bots/random"), repo, env
    )
    run = doc_command(README, "arena league run").replace("--rounds 4", "--rounds 2")
    db = repo / "runs" / "spring.sqlite"
    proc = subprocess.Popen(
        run.split(), cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    wait_for(lambda: plays_done(db) >= 2, "the first plays of round 1", proc)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 130, out
    assert "continue with: " in out, out
    again = out.split("continue with: ")[1].splitlines()[0]
    assert again == run  # the same command: the round was cut short, none finished
    interrupted = plays_done(db)
    out = sh(again, repo, env)
    assert f"({interrupted} recorded before)" in out, out
    assert out.count("finished: ") == 2, out
    standings = sh(doc_command(README, "arena league standings"), repo, env)
    assert "season 1: 2 rounds" in standings, standings
    for entry in ("alice (v1)", "bob (v1)", "heuristic (v1)", "random (v1)"):
        assert entry in standings, standings
    history = sh(doc_command(README, "arena league history alice"), repo, env)
    assert "v1: " in history and "owner alice" in history, history
    if not CHROMIUM.exists():
        pytest.skip(f"no browser: {CHROMIUM} is missing (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    web = doc_command(README, "arena web").replace("runs/demo.sqlite", "runs/spring.sqlite")
    with serving(web, repo, env) as url, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(url + "/")
        page.get_by_role("link", name="league table").click()
        page.wait_for_selector("table.league tbody tr")
        names = page.locator("table.league td.name").all_inner_texts()
        assert sorted(names) == ["alice v1", "bob v1", "heuristic v1", "random v1"]
        assert page.locator("svg.chart").count() == 4
        assert page.locator("p.error").count() == 0
        page.goto(url + "/")
        page.get_by_role("link", name="spring.s1.r2.d1").first.click()
        page.wait_for_selector("table.stats")
        # A replay's decision panel shows the bot's log, kept per round in a league.
        steps = [
            get(f"{url}/api/step?event=spring.s1.r2.d1&play=0&step={k}&view=all")
            for k in range(1, 9)
        ]
        assert any(s["decision"] and s["decision"]["log"] is not None for s in steps), steps
        browser.close()
