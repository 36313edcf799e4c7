"""The arena's pages work under their own Content-Security-Policy (issue 46).

``arena web`` and ``arena table`` send the league service's policy (``script-src 'self'``,
no framing). Every other browser test bypasses it, because Playwright's ``wait_for_function``
evaluates with ``eval``; here a plain Chromium context opens the viewer's pages and the
table's, and no page breaks the policy or throws.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.web.app import create_app, running
from tests.web.served import start_table

pytestmark = pytest.mark.slow


def complaints(browser: Any, urls: list[str], ready: str) -> list[str]:
    """What the console and the page errors said of each page, once ``ready`` shows."""
    said: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.on("console", lambda m: said.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: said.append(str(e)))
    for url in urls:
        page.goto(url)
        page.wait_for_selector(ready, state="attached", timeout=60_000)
    page.close()
    return said


def test_the_viewers_pages_keep_their_policy(chromium: Any, played: Path) -> None:
    with running(create_app([], files=[played])) as url:
        replay = f"{url}/replay?event=files&play=0"
        said = complaints(chromium, [url + "/", replay], "main *")
    assert said == []


def test_the_tables_pages_keep_their_policy(chromium: Any, tmp_path: Path) -> None:
    proc, base, links = start_table(tmp_path, "--sit", "Ann", "--hands", "1")
    try:
        said = complaints(chromium, [base + "/", links[0], base + "/live"], "main *")
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert said == []
