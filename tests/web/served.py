"""What the web tests share: the event they play, the app serving it, an ``arena table``
process, and the browser's flags (a module of its own, so no test imports a conftest)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.tournament.live import live_path
from arena.tournament.model import load_event, plan_event
from arena.tournament.runner import EventRunner
from arena.tournament.store import EventStore, StoredPlay
from arena.web.app import create_app, running

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
BOTS = Path(__file__).parent / "bots"


class Bypassing:
    """A browser whose new pages and contexts bypass the pages' Content-Security-Policy.

    Playwright's ``wait_for_function`` evaluates its predicate with ``eval``, which the
    arena's policy (``script-src 'self'``) refuses; the pages themselves are checked under
    the policy in ``tests/web/test_csp.py``.
    """

    def __init__(self, browser: Any) -> None:
        self.browser = browser

    def new_page(self, **options: Any) -> Any:
        return self.browser.new_page(bypass_csp=True, **options)

    def new_context(self, **options: Any) -> Any:
        return self.browser.new_context(bypass_csp=True, **options)

    def close(self) -> None:
        self.browser.close()


ARENA = [sys.executable, "-m", "arena.cli.main"]


def event_toml(folder: Path, name: str, first: str, boards: int, jobs: int = 2) -> Path:
    """A round robin of four bots on ``boards`` boards a round, both rotations, ``jobs``
    tables at a time."""
    path = folder / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\n'
        f'bots = [{{ bot = "{BOTS / first}" }}, "random", "greedy",'
        ' { bot = "greedy", name = "greedy-b" }]\n'
        'schedule = "round_robin"\nformat = "board"\nhands_per_board = 1\nrotations = 2\n'
        f"boards_per_round = {boards}\nseed = 11\njobs = {jobs}\n"
        "[time_control]\ndecision_ms = 2000\n",
        encoding="utf-8",
    )
    return path


class FeedKeeper(EventRunner):
    """A runner that leaves each play's live feed in place once it is recorded (the runner
    removes it): the live stream's tests read the feeds of a finished event."""

    def record_play(self, sp: StoredPlay, *args: Any, **kwargs: Any) -> None:
        feed = live_path(self.store.path, self.event, sp.play.ordinal)
        kept = feed.with_name(feed.name + ".kept")
        if feed.exists():
            os.link(feed, kept)
        super().record_play(sp, *args, **kwargs)
        if kept.exists():
            kept.replace(feed)


def play_event(toml: Path, db: Path) -> None:
    """Plans and plays the event to the end, with bot logs beside the database, and keeps
    its live feeds."""
    spec = load_event(toml)
    with EventStore(db) as store:
        store.create_event(spec, plan_event(spec))
        FeedKeeper(store, spec.name, spec, log_dir=db.parent / f"{db.name}.logs").run()


@dataclass
class Served:
    """A running web app: its base address and what it serves."""

    url: str
    db: Path


def serve(dbs: list[Path]) -> Iterator[str]:
    """The app over ``dbs`` on a free loopback port (polling fast); yields the base URL."""
    with running(create_app(dbs, poll_s=0.1)) as url:
        yield url


def start_table(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], str, list[str]]:
    """``arena table`` on a free port; its address and the four seat links."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena.cli.main",
            "table",
            "--port",
            "0",
            "--linger",
            "30",
            "--out",
            str(tmp_path / "table.json"),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
    )
    assert proc.stdout is not None
    links: list[str] = []
    base = ""
    deadline = time.monotonic() + 120
    while len(links) < 4 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("table open: "):
            base = line.split()[2].rstrip("/")
        links += re.findall(r"(http://\S+/seat\?token=\S+)", line)
    assert base and len(links) == 4, "arena table did not print its links"
    return proc, base, links


def seat_asks(page: Any) -> list[dict[str, Any]]:
    """The decisions a person's page is sent, in order (kept from its state responses)."""
    asks: list[dict[str, Any]] = []

    def keep(response: Any) -> None:
        if "/api/seat/state" in response.url and response.ok:
            ask = response.json().get("ask")
            if ask:
                asks.append(ask)

    page.on("response", keep)
    return asks


def open_asks(page: Any, asks: list[dict[str, Any]], limit_s: float = 600) -> Iterator[Any]:
    """Each new decision the page shows, once, until the game is over (``limit_s`` at most)."""
    done: set[int] = set()
    deadline = time.monotonic() + limit_s
    while page.evaluate("document.body.dataset.over") != "1":
        assert time.monotonic() < deadline, "the game did not end"
        phase = page.evaluate("document.body.dataset.phase || ''")
        if not (asks and phase and asks[-1]["number"] not in done):
            page.wait_for_timeout(50)
            continue
        done.add(asks[-1]["number"])
        yield asks[-1]
