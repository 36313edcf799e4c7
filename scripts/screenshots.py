"""Writes docs/screenshots/<view>-<width>.png: each viewer page at 1280 and 420 px wide.

Plays a small event of the example bots over gRPC (or uses ``--db``), serves it with the web
app on loopback and photographs each page with Debian's Chromium through Playwright; then opens
``arena table`` and photographs a person's seat (``seat-*``: the exchange, then a turn).

    .venv/bin/python scripts/screenshots.py [--db runs/demo.sqlite] [--out FOLDER]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from arena.tournament.model import load_event, plan_event
from arena.tournament.runner import EventRunner
from arena.tournament.store import EventStore
from arena.web.app import create_app, running

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
EVENT = """name = "shots"
bots = ["random", "greedy", "heuristic", { bot = "greedy", name = "greedy-b" }]
schedule = "round_robin"
hands_per_board = 1
rotations = 2
boards_per_round = 2
seed = 5
"""


def play(folder: Path) -> Path:
    toml = folder / "shots.toml"
    toml.write_text(EVENT, encoding="utf-8")
    spec = load_event(toml)
    db = folder / "shots.sqlite"
    with EventStore(db) as store:
        store.create_event(spec, plan_event(spec))
        EventRunner(store, spec.name, spec, log_dir=folder / "shots.sqlite.logs").run()
    return db


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, help="an event database (default: play a small one)")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument(
        "--out", type=Path, default=OUT, help="the folder (default: docs/screenshots here)"
    )
    ns = parser.parse_args()
    out = ns.out.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        db = ns.db or play(Path(tmp))
        with EventStore(db, create=False) as store:
            event = store.events()[0].name
            ordinal = store.plays()[1].play.ordinal
        views = {
            "index": ("/", "table"),
            "event": (f"/event?event={event}", "table.stats"),
            "games": (f"/games?event={event}", "#games"),
            "replay": (
                f"/replay?event={event}&play={ordinal}&step=40&view=all",
                "body[data-ready='1']",
            ),
            "replay-spectator": (
                f"/replay?event={event}&play={ordinal}&step=40",
                "body[data-ready='1']",
            ),
            "replay-hand-end": (
                f"/replay?event={event}&play={ordinal}&step={{hand_end}}&view=all",
                "body[data-ready='1']",
            ),
            "live": (f"/live?event={event}&play={ordinal}", "body[data-ended='1']"),
        }
        out.mkdir(parents=True, exist_ok=True)
        with running(create_app([db])) as url, sync_playwright() as pw:
            import httpx

            outline = httpx.get(url + "/api/replay", params={"event": event, "play": ordinal})
            starts = outline.json()["hand_starts"]
            hand_end = starts[1] if len(starts) > 1 else outline.json()["steps"]
            browser = pw.chromium.launch(executable_path=ns.chromium, args=ARGS)
            for width in (1280, 420):
                page = browser.new_page(viewport={"width": width, "height": 900})
                for name, (path, ready) in views.items():
                    page.goto(url + path.replace("{hand_end}", str(hand_end)))
                    page.wait_for_selector(ready, timeout=60_000)
                    shot = out / f"{name}-{width}.png"
                    page.screenshot(path=str(shot))
                    print(f"{shot}  {shot.stat().st_size // 1024} KiB")
                page.close()
            seat_shots(browser, Path(tmp), out)
            browser.close()


def seat_shots(browser: Any, folder: Path, out: Path) -> None:
    """A person's seat at ``arena table`` (seed 1664), into ``out``: the exchange, then the
    first turn."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena.cli.main",
            "table",
            "--sit",
            "You",
            "--seed",
            "1664",
            "--port",
            "0",
            "--out",
            str(folder / "table.json"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=folder,
    )
    assert proc.stdout is not None
    try:
        link = ""
        while not link:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit("arena table did not start")
            link = next(iter(re.findall(r"(http://\S+/seat\?token=\S+)", line)), "")
        pages = {w: browser.new_page(viewport={"width": w, "height": 900}) for w in (1280, 420)}
        for page in pages.values():
            page.goto(link)
        pages[1280].get_by_role("button", name="start the game").click()
        steps = [
            ("grand_tichu", "no Grand Tichu", "seat-grand"),
            ("exchange", None, "seat-exchange"),
        ]
        for phase, button, name in steps:
            for page in pages.values():
                page.wait_for_selector(f"body[data-phase='{phase}']", timeout=120_000)
            if phase == "exchange":
                for card in ("2s", "3p", "3s"):
                    for page in pages.values():
                        page.locator(f".hand.mine button[data-card='{card}']").click()
            for width, page in pages.items():
                shot = out / f"{name}-{width}.png"
                page.screenshot(path=str(shot), full_page=width == 420)
                print(f"{shot}  {shot.stat().st_size // 1024} KiB")
            if button:
                pages[1280].get_by_role("button", name=button).click()
            else:
                pages[1280].get_by_role("button", name="pass these three cards").click()
        for page in pages.values():
            page.wait_for_selector("body[data-phase='play']", timeout=120_000)
            page.locator(".hand.mine button[data-card='Mj']").click()
            time.sleep(0.5)
        for width, page in pages.items():
            shot = out / f"seat-play-{width}.png"
            page.screenshot(path=str(shot), full_page=width == 420)
            print(f"{shot}  {shot.stat().st_size // 1024} KiB")
    finally:
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    main()
