"""A person's seat by keyboard alone, the stand-in's answer clearing a selection, and the
contrast of every text and control against WCAG AA, in one Chromium for the module.

``arena table`` runs as a process on loopback (seed 1664: seat 0 holds the Mah Jong, the
Dragon, the Phoenix and four 8s, so the hand asks every kind of decision).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.referee.replay import load
from tests.web.served import CHROMIUM, open_asks, seat_asks, start_table

pytestmark = pytest.mark.slow

if not CHROMIUM.exists():
    pytest.skip(
        f"no browser: {CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True
    )
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

SEED = 1664

CONTRAST = (Path(__file__).parent / "contrast.js").read_text(encoding="utf-8")
"""Every text against its background and the outlines that mark a state (WCAG AA)."""


def contrast(page: Any, where: str) -> None:
    bad = page.evaluate(CONTRAST)
    assert not bad, (where, bad)


def focused_card(page: Any) -> str:
    return str(page.evaluate("document.activeElement?.dataset?.card || ''"))


def key_select(page: Any, card: str) -> None:
    """Moves along the hand with the arrow keys to ``card`` and selects it with Space; the
    focus stays on it through the page's updates."""
    for _ in range(40):
        if focused_card(page) == card:
            break
        page.keyboard.press("ArrowRight")
    assert focused_card(page) == card, (card, focused_card(page))
    page.keyboard.press("Space")
    page.wait_for_function(f"st.sel.includes('{card}') || st.slots.includes('{card}')")
    page.wait_for_timeout(50)  # an update from the long poll may come meanwhile
    assert focused_card(page) == card, "the update took the focus off the card"
    outline = page.evaluate(
        "(s => s.outlineStyle + ' ' + s.outlineWidth)(getComputedStyle(document.activeElement))"
    )
    assert not outline.startswith("none") and float(outline.split()[1][:-2]) >= 2, outline


def by_keys(page: Any, ask: dict[str, Any], seen: dict[str, int]) -> None:
    """Answers the open decision with the keyboard alone."""
    phase = ask["phase"]
    if phase == "grand_tichu":
        page.keyboard.press("s")
    elif phase == "exchange":
        hand = page.evaluate("st.data.view.seats[st.data.seat].cards")
        wanted = [c for c in ("2s", "3p", "3s") if c in hand]
        for card in wanted + [c for c in hand if c not in wanted][: 3 - len(wanted)]:
            key_select(page, card)
        page.keyboard.press("p")
    elif phase == "wish":
        page.keyboard.press("a")
        seen["wish"] += 1
    elif phase == "dragon_gift":
        page.keyboard.press("p")
        seen["gift"] += 1
    elif phase == "bomb_window":
        page.keyboard.press("b")
        seen["bomb"] += 1
    else:
        if ask["may_call_tichu"] and not seen["tichu"]:
            page.keyboard.press("c")
            assert page.locator("#tichu").is_checked()
            seen["tichu"] += 1
        plays = [item for item in ask["legal"] if item.get("cards")]
        pick = next((p for p in plays if p["cards"] == ["Mj"]), None)
        pick = pick or next((p for p in plays if p["cards"] == ["Dr"]), None)
        pick = pick or next((p for p in plays if not p.get("bomb")), None)
        if pick is None:
            page.keyboard.press("s")
            return
        for card in pick["cards"]:
            key_select(page, card)
        page.keyboard.press("p")


def test_a_hand_by_keyboard_alone_with_visible_focus_and_aa_contrast(
    browser: Any, tmp_path: Path
) -> None:
    """A game of two hands by keys: every decision kind (Grand Tichu, the exchange, plays, a
    Tichu call, the wish, a bomb out of turn, the Dragon's gift); the focus stays on the card
    through the page's updates; the tab's title says when it is your move; the end screen
    gives the record's score; every text and mark passes AA on the lobby, the seat (playing,
    and the game's end) and the spectators' page."""
    proc, base, links = start_table(
        tmp_path, "--sit", "Ann", "--seed", str(SEED), "--hands", "2", "--window-s", "60"
    )
    seen = {"wish": 0, "bomb": 0, "gift": 0, "tichu": 0}
    titles: set[str] = set()
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        asks = seat_asks(page)
        page.goto(base + "/")
        page.wait_for_selector("body[data-ready='1']")
        contrast(page, "lobby")
        page.goto(links[0])
        page.wait_for_selector("text=Waiting for the game to start")
        page.keyboard.press("Tab")
        for _ in range(20):  # Tab to "start the game", Enter
            if page.evaluate("document.activeElement.textContent") == "start the game":
                break
            page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        checked = False
        for ask in open_asks(page, asks):
            titles.add(page.title())
            if ask["phase"] == "play" and not checked:
                key_select(page, ask["legal"][-1]["cards"][0])  # a card selected: its outline
                contrast(page, "seat, playing")
                page.keyboard.press("x")
                checked = True
            by_keys(page, ask, seen)
        page.wait_for_selector("#end:not([hidden]) #winner")
        end_text = page.locator("#end").inner_text()
        assert page.evaluate("document.body.dataset.staged") == "1", "no trick was built up"
        contrast(page, "seat, game over")
        assert page.title().startswith("Game over"), page.title()
        watcher = browser.new_page(viewport={"width": 360, "height": 640})
        watcher.goto(base + "/live")
        watcher.wait_for_selector("body[data-ended='1']", timeout=120_000)
        contrast(watcher, "live, 360 px")
        watcher.close()
        page.close()
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=60)
    assert min(seen.values()) >= 1 and seen["tichu"] == 1, (seen, out)
    assert any(t.startswith("▶ Your move") for t in titles), titles
    replay = load(tmp_path / "table.json")
    assert replay.seats[0] == "Ann" and replay.result is not None, out
    a, b = replay.result["scores"]
    assert len(replay.result["hands"]) == 2 and "Hand 2 over" in end_text, end_text
    assert f"{a} : {b}" in end_text or f"{b} : {a}" in end_text, (end_text, a, b)


def test_the_stand_in_clears_a_selection_when_the_time_runs_out(
    browser: Any, tmp_path: Path
) -> None:
    """Cards selected when the clock runs out are no longer selected once the stand-in has
    answered (one of them may have been played), so the next turn offers the plays again."""
    proc, _, links = start_table(
        tmp_path, "--sit", "Ann", "--seed", str(SEED), "--hands", "1", "--decision-ms", "4000",
        "--bank-ms", "0", "--window-s", "0.5",
    )  # fmt: skip
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(links[0])
        page.get_by_role("button", name="start the game").click()
        page.wait_for_selector("body[data-phase='play']", timeout=120_000)
        number = page.evaluate("st.data.ask.number")
        cards = page.locator("#hand button.card")
        for k in range(2):
            cards.nth(k).click()
        selected = page.evaluate("st.sel.length")
        assert selected == 2 or page.evaluate(f"st.data.ask?.number !== {number}"), selected
        page.wait_for_function(f"!st.data.ask || st.data.ask.number !== {number}")
        page.wait_for_function("document.querySelectorAll('#hand button.card.sel').length === 0")
        assert page.evaluate("st.sel") == []
        assert "stand-in" in page.locator("#notice").inner_text()
        page.close()
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
