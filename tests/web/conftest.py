"""A real event played over gRPC by the runner, and the web app serving it on loopback."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed")
from tests.web.served import (
    ARENA,
    ARGS,
    CHROMIUM,
    Bypassing,
    Served,
    event_toml,
    play_event,
    serve,
)


@pytest.fixture(scope="session")
def event_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished event of 6 plays (a log-writing random bot, random and two greedy bots)."""
    folder = tmp_path_factory.mktemp("web-event")
    db = folder / "events.sqlite"
    play_event(event_toml(folder, "webtest", "logbot.toml", 1), db)
    return db


@pytest.fixture(scope="session")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A replay file written by ``arena play`` (two hands, bots in the process)."""
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


@pytest.fixture(scope="session")
def web(event_db: Path) -> Iterator[Served]:
    """The web app over the finished event."""
    for url in serve([event_db]):
        yield Served(url, event_db)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One headless Chromium for a module (Debian's), its pages under the sites' policies;
    each test opens its own pages."""
    if not CHROMIUM.exists():
        pytest.skip(f"no browser: {CHROMIUM} is missing (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def browser(chromium: Any) -> Any:
    """The module's Chromium, its pages bypassing the sites' policies (``Bypassing``)."""
    return Bypassing(chromium)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Runs every test of the played event on one xdist worker, so it is played once."""
    for item in items:
        if "event_db" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("web-event"))
