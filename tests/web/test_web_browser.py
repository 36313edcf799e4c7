"""The pages in Debian's Chromium, driven by Playwright: what they show against the replay."""

from __future__ import annotations

import contextlib
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena.referee.replay import load
from arena.rules import Match, card_name, cards_of
from arena.rules.notation import action_from_json
from arena.tournament.live import live_path
from arena.tournament.store import EventStore
from arena.web.app import create_app, running
from arena.web.uploads import MAX_UPLOAD_BYTES
from tests.web.served import ARENA, ARGS, BOTS, CHROMIUM, Bypassing, Served, event_toml, serve

pytestmark = pytest.mark.slow

if not CHROMIUM.exists():
    pytest.skip(
        f"no browser: {CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True
    )
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    """One headless Chromium page (Playwright downloads no browser: Debian's is used)."""
    with sync_api.sync_playwright() as pw:
        browser = Bypassing(pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS))
        p = browser.new_page(viewport={"width": 1280, "height": 900})
        yield p
        browser.close()


def state_at(path: Path, step: int) -> Match:
    replay = load(path)
    m = Match(replay.options, replay.seed, replay.deals)
    for entry in (replay.recorded or [])[:step]:
        m.apply(action_from_json({k: v for k, v in entry.items() if k != "seat"}, m.top))
    return m


def test_event_and_game_pages(web: Served, page: Any) -> None:
    page.goto(web.url + "/")
    page.get_by_role("link", name="webtest").first.click()
    page.wait_for_selector("table.stats")
    bots = page.locator("table.stats tbody td.name").all_inner_texts()
    assert sorted(bots) == ["greedy", "greedy-b", "logbot", "random"]
    # Six hands may not identify the ratings (a bot that won them all): the page says so.
    ratings = httpx.get(web.url + "/api/event").json()["leaderboard"]["ratings"]
    assert page.locator("table.leaderboard tbody tr").count() == len(ratings["rows"])
    assert page.locator("svg.chart circle").count() == len(ratings["rows"])
    if not ratings["rows"]:
        assert ratings["note"] in page.locator("#main").inner_text()
    assert page.locator("table.crosstable tbody tr").count() == 4
    assert page.locator("table.against tbody tr").count() == 4
    page.goto(web.url + "/games?event=webtest")
    page.wait_for_selector("#games tbody tr")
    assert page.locator("#games tbody tr").count() == 6
    page.goto(web.url + "/games?event=webtest&round=1")
    page.wait_for_selector("#games tbody tr")
    assert page.locator("#games tbody tr").count() == 2


def test_replay_steps_match_the_replay_file(web: Served, page: Any) -> None:
    with EventStore(web.db, create=False) as store:
        play = store.plays()[1]
        path = store.resolve_replay(str(play.replay_path))
    ordinal = play.play.ordinal
    replay = load(path)
    logbot = replay.seats.index("logbot")
    page.goto(web.url + f"/replay?event=webtest&play={ordinal}&step=0&view=all")
    page.wait_for_selector("body[data-ready='1']")
    logs: list[str] = []
    for step in range(1, 41):
        page.keyboard.press("ArrowRight")
        # One key press, one step: wait until the page shows it (its fetch is asynchronous).
        page.wait_for_function(f"document.getElementById('stepno').value === '{step}'")
        page.wait_for_selector(f"#where:text-matches('^step {step} ')")
        m = state_at(path, step)
        for s in range(4):
            shown = [
                c.get_attribute("data-card") for c in page.locator(f".seat-{s} .hand .card").all()
            ]
            assert shown == [card_name(c) for c in cards_of(m.hands[s])], (step, s)
        assert page.locator("#status .scores").inner_text() == (
            f"score A {m.scores[0]} : {m.scores[1]} B"
        )
        seat, _ = m.actions[step - 1]
        assert f"seat {seat}" in page.locator("#decision h2").inner_text()
        think = [t for t in replay.meta["think"] if t[0] == step - 1]
        if think:
            assert f"{think[0][2]:.2f} ms" in page.locator("#decision .think").inner_text()
        if seat == logbot and think and page.locator("#decision pre.log").count():
            logs.append(page.locator("#decision pre.log").inner_text())
    # A bot's output reaches its log through the sandbox's pipe, so a line may land with the
    # next decision (docs/web.md): some decision of the log-writing bot shows its lines.
    assert any("logbot hand 1" in text for text in logs), logs
    # The last state against the recorded result, via the End key.
    page.keyboard.press("End")
    page.wait_for_selector(f"#where:text-matches('^step {len(replay.recorded or [])} ')")
    final = replay.result["scores"] if replay.result else None
    assert page.locator("#status .scores").inner_text() == f"score A {final[0]} : {final[1]} B"
    # The same board's other play is listed beside it.
    assert page.locator("#compare .table-col").count() == 2


def test_replay_at_420_px_steps_with_the_file_and_its_move_list(web: Served, page: Any) -> None:
    """The narrow layout: no sideways scrolling, the board and move list in step with the file."""
    with EventStore(web.db, create=False) as store:
        play = store.plays()[0]
        path = store.resolve_replay(str(play.replay_path))
    page.set_viewport_size({"width": 420, "height": 900})
    try:
        page.goto(web.url + f"/replay?event=webtest&play={play.play.ordinal}&step=0&view=all")
        page.wait_for_selector("body[data-ready='1']")
        for step in range(1, 25):
            page.get_by_role("button", name="step forward").click()
            page.wait_for_function(f"document.getElementById('stepno').value === '{step}'")
            page.wait_for_selector(f"#where:text-matches('^step {step} ')")
            m = state_at(path, step)
            for s in range(4):
                shown = [
                    c.get_attribute("data-card")
                    for c in page.locator(f".seat-{s} .hand .card").all()
                ]
                assert shown == [card_name(c) for c in cards_of(m.hands[s])], (step, s)
            assert page.locator("#movelist li.here").get_attribute("data-step") == str(step)
            assert page.evaluate("document.documentElement.scrollWidth") <= 420, step
        # A row of the move list jumps there; the hand list follows the step.
        page.locator("#movelist li[data-step='5'] button").click()
        page.wait_for_function("document.getElementById('stepno').value === '5'")
        assert page.locator("#hand").input_value() == "0"
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


def test_spectator_view_shows_no_hidden_card(web: Served, page: Any) -> None:
    with EventStore(web.db, create=False) as store:
        ordinal = store.plays()[0].play.ordinal
    page.goto(web.url + f"/replay?event=webtest&play={ordinal}&step=30&view=all")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator(".seat .hand .card:not(.back)").count() > 0
    page.select_option("#view", "spectator")
    page.wait_for_function("document.location.search.includes('view=spectator')")
    page.wait_for_function("document.querySelectorAll('.seat .hand .card:not(.back)').length === 0")
    assert page.locator(".seat .card.back").count() > 0
    assert page.locator("#decision ul.legal").count() == 0
    page.select_option("#view", "1")
    page.wait_for_function("document.querySelectorAll('.seat-1 .hand .card:not(.back)').length > 0")
    for s in (0, 2, 3):
        assert page.locator(f".seat-{s} .hand .card:not(.back)").count() == 0


def test_a_replay_uploaded_on_the_start_page_opens_in_the_viewer(
    played: Path, page: Any, tmp_path: Path
) -> None:
    replay = load(played)
    with running(create_app([])) as url:
        # A file that is no replay: its reason on the page, its content never as markup.
        notes = tmp_path / "notes.json"
        notes.write_text('<img src=x onerror="document.body.dataset.owned=1">', encoding="utf-8")
        page.goto(url + "/")
        page.set_input_files("#upload-file", str(notes))
        page.get_by_role("button", name="open").click()
        page.wait_for_selector("#upload-said.error")
        assert page.locator("#upload-said").inner_text().startswith("notes.json: not valid JSON")
        assert page.locator("#main img").count() == 0 and page.url == url + "/"
        # One over the cap: refused from its declared size, and the page says so.
        big = tmp_path / "big.json"
        big.write_bytes(b" " * (MAX_UPLOAD_BYTES + 1))
        page.set_input_files("#upload-file", str(big))
        page.get_by_role("button", name="open").click()
        page.wait_for_selector("#upload-said.error:text-matches('^big.json: over the 4 MiB')")
        # A replay written by arena play opens on the board.
        page.set_input_files("#upload-file", str(played))
        page.get_by_role("button", name="open").click()
        page.wait_for_url(re.compile(r"/replay\?db=0&event=[\w-]{24}&play=0"))
        page.wait_for_selector("body[data-ready='1']")
        names = [page.locator(f".seat-{s} h3 .team-{'AB'[s % 2]}").inner_text() for s in range(4)]
        assert names == replay.seats
        assert page.locator(".seat .hand .card").count() == 32  # eight each before Grand Tichu
        page.keyboard.press("End")
        final = replay.result["scores"] if replay.result else None
        page.wait_for_selector(f"#status .scores:text-is('score A {final[0]} : {final[1]} B')")


def run_event(toml: Path, db: Path) -> subprocess.Popen[bytes]:
    """``arena event run`` in a process (stopped with SIGINT by the test)."""
    return subprocess.Popen(
        [
            *ARENA,
            "event",
            "run",
            str(toml),
            "--db",
            str(db),
            "--out",
            str(db.parent / "lb"),
            "--quiet",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stop_event(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)  # the runner stops cleanly; the rest stays pending
    proc.wait(120)


def running_play(db: Path, proc: subprocess.Popen[bytes], event: str = "livetest") -> int:
    """A play whose live feed has no ``match_end`` yet."""
    folder = live_path(db, event, 0).parent
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        for feed in sorted(folder.glob("*.jsonl")):
            with contextlib.suppress(FileNotFoundError):  # recorded since: removed
                if '"match_end"' not in feed.read_text(encoding="utf-8"):
                    return int(feed.stem)
        time.sleep(0.05)
    raise AssertionError("no running play found")


def test_follow_a_live_table_until_its_match_ends(
    tmp_path: Path, page: Any, event_db: Path
) -> None:
    # A copy of the bots' folder whose hold file keeps the slow bot at a second a decision in
    # the plays that start while it is there: no play can end, nor the event, unseen.
    bots = tmp_path / "bots"
    shutil.copytree(BOTS, bots)
    hold = bots / "hold"
    hold.touch()
    toml = event_toml(tmp_path, "livetest", str(bots / "slowbot.toml"), 2)
    db = tmp_path / "live.sqlite"
    proc = run_event(toml, db)
    try:
        deadline = time.monotonic() + 120
        while not live_path(db, "livetest", 0).exists():
            assert time.monotonic() < deadline and proc.poll() is None, "no live feed appeared"
            time.sleep(0.1)
        for url in serve([db]):
            ordinal = running_play(db, proc)
            page.goto(url + f"/live?event=livetest&play={ordinal}&follow=0")
            page.wait_for_selector("body[data-seen]", timeout=60_000)
            first = int(page.evaluate("document.body.dataset.seen"))
            # Events arrive while the page is open.
            page.wait_for_function(f"Number(document.body.dataset.seen) > {first}", timeout=60_000)
            # Without a spectator delay, a trick is seen while it is played (the feed is
            # written event by event); the page rewinds while live and follows again.
            with running(create_app([db], delay="none", poll_s=0.1)) as open_url:
                mid = Bypassing(page.context.browser).new_page(
                    viewport={"width": 420, "height": 900}
                )
                try:
                    mid.goto(open_url + f"/live?event=livetest&play={ordinal}&follow=0")
                    mid.wait_for_function(
                        "document.querySelector('.center .turn.top') !== null"
                        " && document.querySelector('.center .collected') === null",
                        timeout=120_000,
                    )
                    mid.get_by_role("button", name="step back").click()
                    mid.wait_for_selector("#where:text-matches('^rewound')")
                    mid.get_by_role("button", name="follow the newest event").click()
                    mid.wait_for_selector("#where:text-matches('^following')")
                finally:
                    mid.close()
            # The event page, in a second tab, follows the running event without a reload.
            event_page = Bypassing(page.context.browser).new_page(
                viewport={"width": 1280, "height": 900}
            )
            try:
                event_page.goto(url + "/event?event=livetest")
                event_page.wait_for_selector("table.stats")
                event_page.evaluate("window.notReloaded = true")
                before = event_page.locator("#progress").inner_text()
                assert proc.poll() is None, "the event ended before its page could be watched"
                hold.unlink()
                event_page.wait_for_function(
                    f"document.getElementById('progress').innerText !== {before!r}",
                    timeout=120_000,
                )
                assert event_page.evaluate("window.notReloaded === true")
            finally:
                event_page.close()
            # The live table's page saw its match to the end.
            page.wait_for_selector("body[data-ended='1']", timeout=120_000)
            assert page.locator(".seat .hand .card:not(.back)").count() == 0
            assert "Match over" in page.locator("#over").inner_text()
    finally:
        stop_event(proc)


def test_a_live_page_moves_on_to_the_next_play_when_its_play_ends(
    tmp_path: Path, page: Any
) -> None:
    """One table at a time: the next play starts only once the first is recorded. A page on
    the first play with "then the next play" ticked ends up on the second; one opened with
    ``follow=0`` stays."""
    bots = tmp_path / "bots"
    shutil.copytree(BOTS, bots)
    # 0.3 s a decision: the first play lasts a few seconds, so the pages open while it runs
    # (its live feed is removed once it is recorded: a page opened after that finds none)
    slowbot = bots / "slowbot.toml"
    slowbot.write_text(slowbot.read_text(encoding="utf-8").replace('"80"', '"300"'), "utf-8")
    db = tmp_path / "next.sqlite"
    proc = run_event(event_toml(tmp_path, "nexttest", str(slowbot), 1, jobs=1), db)
    try:
        first = running_play(db, proc, "nexttest")
        # Each play starts its bots afresh, from a copy of their folder taken then: with the
        # hold file there the plays after the first take a second a decision, so the second
        # play is still running when the page gets there.
        (bots / "hold").touch()
        for url in serve([db]):
            page.goto(url + f"/live?event=nexttest&play={first}")
            stay = Bypassing(page.context.browser).new_page(viewport={"width": 1280, "height": 900})
            try:
                stay.goto(url + f"/live?event=nexttest&play={first}&follow=0")
                assert page.locator("#follownext").is_checked()
                assert not stay.locator("#follownext").is_checked()
                # The first play ends; 5 s later the page opens the second.
                for p in (page, stay):
                    p.wait_for_selector("body[data-ended='1']", timeout=120_000)
                page.wait_for_url(re.compile(rf"[?&]play=(?!{first}\b)\d+"), timeout=120_000)
                second = int(re.findall(r"[?&]play=(\d+)", page.url)[0])
                page.wait_for_selector("body[data-seen]", timeout=120_000)
                assert page.locator("h1").inner_text().startswith(f"Play {second}")
                assert page.locator(".seat").count() == 4
                stay.wait_for_selector(f"body[data-next='{second}']", timeout=60_000)
                assert stay.url == url + f"/live?event=nexttest&play={first}&follow=0"
                assert stay.locator("#next").inner_text() == f"Next: play {second}"
            finally:
                stay.close()
    finally:
        stop_event(proc)
