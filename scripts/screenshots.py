"""Writes docs/screenshots/<view>-<width>.png: each viewer page at 1280 and 420 px wide.

Plays a small event of the example bots over gRPC (or uses ``--db``), serves it with the web
app on loopback and photographs each page with Debian's Chromium through Playwright.

    .venv/bin/python scripts/screenshots.py [--db runs/demo.sqlite]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

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
    ns = parser.parse_args()
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
            "live": (f"/live?event={event}&play={ordinal}", "body[data-ended='1']"),
        }
        OUT.mkdir(parents=True, exist_ok=True)
        with running(create_app([db])) as url, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=ns.chromium, args=ARGS)
            for width in (1280, 420):
                page = browser.new_page(viewport={"width": width, "height": 900})
                for name, (path, ready) in views.items():
                    page.goto(url + path)
                    page.wait_for_selector(ready, timeout=60_000)
                    shot = OUT / f"{name}-{width}.png"
                    page.screenshot(path=str(shot))
                    print(f"{shot.relative_to(ROOT)}  {shot.stat().st_size // 1024} KiB")
                page.close()
            browser.close()


if __name__ == "__main__":
    main()
