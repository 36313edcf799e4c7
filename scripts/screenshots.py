"""Writes docs/screenshots/<view>-<width>.png: each viewer page at 1280 and 420 px wide.

Plays a small event of the example bots over gRPC (or uses ``--db``), serves it with the web
app on loopback and photographs each page with Debian's Chromium through Playwright; then opens
``arena table`` and photographs a person's seat at 1280 and 360 px through a whole game
(``seat-*``: before the start, each kind of decision, the game's end) and its spectators' page
at the end (``table-live-*``: the live page, as an event's running play shows it; an event's
finished play has no live feed left to show).

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
                    page.wait_for_selector(ready, timeout=180_000)
                    shot = out / f"{name}-{width}.png"
                    page.screenshot(path=str(shot))
                    print(f"{shot}  {shot.stat().st_size // 1024} KiB")
                page.close()
            seat_shots(browser, Path(tmp), out)
            browser.close()


SEAT_WIDTHS = {1280: 900, 360: 740}
"""A person's seat is photographed on a desktop and on a phone (the hand in view, docked)."""
STAGES = ("grand_tichu", "exchange", "play", "bomb_window", "wish", "dragon_gift")
"""The decisions photographed, each the first time it is asked (seed 1664 asks them all)."""


def shoot(pages: dict[int, Any], out: Path, name: str) -> None:
    for width, page in pages.items():
        shot = out / f"{name}-{width}.png"
        page.screenshot(path=str(shot))
        print(f"{shot}  {shot.stat().st_size // 1024} KiB")


def answer(page: Any, ask: dict[str, Any]) -> None:
    """Clicks an answer that shows the table's features: no Grand Tichu, the Mah Jong and
    the Dragon first, a wish for an Ace, a bomb in a window, the gift to the first opponent."""
    box = page.locator("#ask")
    phase = ask["phase"]
    if phase == "grand_tichu":
        box.get_by_role("button", name="no Grand Tichu").click()
    elif phase == "exchange":
        box.get_by_role("button", name="pass these three cards").click()
    elif phase == "wish":
        box.get_by_role("button", name="A", exact=True).click()
    elif phase == "bomb_window":
        box.locator("button.act.bomb").first.click()
    elif phase == "dragon_gift":
        box.locator("button.act").first.click()
    elif box.locator("button.act.go").count():
        box.locator("button.act.go").first.click()
    else:
        box.get_by_role("button", name="pass", exact=True).click()


def select(pages: dict[int, Any], ask: dict[str, Any]) -> None:
    """Selects on every page the cards the answer will use (the exchange's, or a play's)."""
    if ask["phase"] == "exchange":
        cards = ["2s", "3p", "3s"]
    elif ask["phase"] == "play":
        plays = [item for item in ask["legal"] if item.get("cards")]
        pick = next((p for p in plays if p["cards"] == ["Mj"]), None)
        pick = pick or next((p for p in plays if p["cards"] == ["Dr"]), None)
        pick = pick or next((p for p in plays if not p.get("bomb")), None)
        cards = pick["cards"] if pick else []
    else:
        return
    for page in pages.values():
        for card in cards:
            page.locator(f"#hand button[data-card='{card}']").click()


def seat_shots(browser: Any, folder: Path, out: Path) -> None:
    """A person's seat at ``arena table`` (seed 1664), into ``out``: the seat before the game
    (its invite links), each kind of decision, the game's end; then the spectators' page."""
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
            "--hands",
            "1",
            "--window-s",
            "60",
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
        base = link.split("/seat?")[0]
        pages = {
            w: browser.new_page(viewport={"width": w, "height": h}) for w, h in SEAT_WIDTHS.items()
        }
        asks: list[dict[str, Any]] = []
        pages[1280].on(
            "response",
            lambda r: (
                asks.append(r.json()["ask"])
                if "/api/seat/state" in r.url and r.ok and r.json().get("ask")
                else None
            ),
        )
        for page in pages.values():
            page.goto(link)
            page.wait_for_selector("text=Waiting for the game to start")
        shoot(pages, out, "seat-lobby")
        pages[1280].get_by_role("button", name="start the game").click()
        done: set[int] = set()
        shot: set[str] = set()
        deadline = time.monotonic() + 600
        while pages[1280].evaluate("document.body.dataset.over") != "1":
            if time.monotonic() > deadline:
                raise SystemExit("the hand did not end")
            phase = pages[1280].evaluate("document.body.dataset.phase || ''")
            if not (asks and phase and asks[-1]["number"] not in done):
                pages[1280].wait_for_timeout(50)
                continue
            ask = asks[-1]
            done.add(ask["number"])
            select(pages, ask)
            if ask["phase"] in STAGES and ask["phase"] not in shot:
                shot.add(ask["phase"])
                for page in pages.values():
                    page.wait_for_selector(f"body[data-phase='{ask['phase']}']")
                shoot(pages, out, "seat-" + ask["phase"].replace("_", "-"))
            answer(pages[1280], ask)
        missing = set(STAGES) - shot
        if missing:
            raise SystemExit(f"the deal asked no {', '.join(sorted(missing))}")
        for page in pages.values():
            page.wait_for_selector("#end:not([hidden]) #winner", timeout=180_000)
        shoot(pages, out, "seat-end")
        for page in pages.values():
            page.goto(base + "/live")
            page.wait_for_selector("body[data-ended='1']", timeout=180_000)
        shoot(pages, out, "table-live")
    finally:
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    main()
