"""A person plays a whole hand against three sandboxed bots by clicking, in Chromium.

``arena table`` runs as a process on loopback; the test clicks the person's cards and
buttons (exchange, the Mah Jong's wish, a bomb out of turn, the Dragon's gift, as the deal of
seed 1664 allows: seat 0 holds the Mah Jong, the Dragon, the Phoenix and four 8s) and checks
every response the person's page received for another seat's cards against the replay.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from arena.referee.replay import load
from arena.rules import Match, card_name, cards_of
from arena.rules.notation import action_from_json
from tests.web.served import CHROMIUM, open_asks, seat_asks, start_table

pytestmark = pytest.mark.slow

if not CHROMIUM.exists():
    pytest.skip(
        f"no browser: {CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True
    )
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

SEED = 1664
CARD = re.compile(r"\b(?:[2-9TJQKA][jspt]|Mj|Dr|Ph|Dg)\b")


def click_cards(page: Any, cards: list[str]) -> None:
    for c in cards:
        page.locator(f"#hand .hand.mine button[data-card='{c}']").click()


def play_one(page: Any, ask: dict[str, Any], seen: dict[str, int]) -> None:
    """Answers the open decision by clicking, choosing what shows the table's features."""
    phase = ask["phase"]
    legal = ask["legal"]
    box = page.locator("#ask")
    if phase == "grand_tichu":
        box.get_by_role("button", name="no Grand Tichu").click()
    elif phase == "exchange":
        click_cards(page, ["2s", "3p", "3s"])
        box.get_by_role("button", name="pass these three cards").click()
    elif phase == "wish":
        box.get_by_role("button", name="A", exact=True).click()
        seen["wish"] += 1
    elif phase == "dragon_gift":
        box.locator("button.act").first.click()
        seen["gift"] += 1
    elif phase == "bomb_window":
        bomb = next(item for item in legal if item.get("bomb"))
        box.locator("button.act.bomb").first.click()
        seen["bomb"] += 1
        assert bomb
    else:
        plays = [item for item in legal if item.get("cards")]
        pick = next((p for p in plays if p["cards"] == ["Mj"]), None)
        pick = pick or next((p for p in plays if p["cards"] == ["Dr"]), None)
        pick = pick or next((p for p in plays if not p.get("bomb")), None)
        if pick is None:
            box.get_by_role("button", name="pass", exact=True).click()
            return
        click_cards(page, pick["cards"])
        box.locator("button.act.go").first.click()


def hand_cards(replay_path: Path, seat: int) -> tuple[set[str], dict[int, set[str]]]:
    """The seat's cards in hand 1 (dealt and received) and the cards each seat played."""
    replay = load(replay_path)
    m = Match(replay.options, replay.seed, replay.deals)
    mine = {card_name(c) for c in cards_of(m.hands[seat])}
    played: dict[int, set[str]] = {s: set() for s in range(4)}
    for entry in replay.recorded or []:
        seat_of = m.seat
        action = action_from_json({k: v for k, v in entry.items() if k != "seat"}, m.top)
        before = m.hands[seat_of] if m.hand_no == 0 else 0
        m.apply(action)
        if m.hand_no == 0:
            mine |= {card_name(c) for c in cards_of(m.hands[seat])}
            played[seat_of] |= {card_name(c) for c in cards_of(before & ~m.hands[seat_of])}
    return mine, played


def public_turns(view: dict[str, Any]) -> list[dict[str, Any]]:
    """Every turn a view shows: the running trick, the trick just taken, the last trick, the
    Dog's lead (plays are public once played: the scan checks them against the record)."""
    turns = [t for key in ("trick", "entries") for t in view[key]]
    for key in ("collected", "last_trick"):
        if view.get(key):
            turns += view[key]["entries"]
    return turns + ([view["played"]] if view.get("played") else [])


def test_a_person_plays_a_hand_against_three_bots(browser: Any, tmp_path: Path) -> None:
    proc, base, links = start_table(
        tmp_path, "--sit", "Ann", "--seed", str(SEED), "--hands", "1", "--window-s", "60"
    )
    bodies: list[dict[str, Any]] = []
    seen = {"wish": 0, "bomb": 0, "gift": 0}
    page_errors: list[str] = []
    try:
        page = browser.new_page(viewport={"width": 360, "height": 640})

        def keep(response: Any) -> None:
            if "/api/" in response.url and response.status == 200:
                with contextlib.suppress(Exception):
                    bodies.append(response.json())

        page.on("response", keep)
        page.goto(links[0])
        page.get_by_role("button", name="start the game").click()
        # A spectator watches from the lobby's link (public events, trick delay).
        watcher = browser.new_context().new_page()
        for p in (page, watcher):
            p.on("pageerror", lambda e: page_errors.append(str(e)))
            p.on(
                "console",
                lambda m: page_errors.append(m.text) if m.type == "error" else None,
            )
        watcher.goto(base + "/")
        watcher.get_by_role("link", name="watch the table").click()
        done: set[int] = set()
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            page.wait_for_function(
                "document.body.dataset.over === '1' || (document.body.dataset.phase || '') !== ''",
                timeout=120_000,
            )
            if page.evaluate("document.body.dataset.over") == "1":
                break
            state = [b for b in bodies if "ask" in b and b.get("ask")]
            ask = state[-1]["ask"] if state else None
            if ask is None or ask["number"] in done:
                page.wait_for_timeout(100)
                continue
            done.add(ask["number"])
            if ask["phase"] == "play":  # at 360 px the hand is in view, no scrolling
                box = page.locator("#hand").bounding_box()
                assert box is not None and box["y"] + box["height"] <= 640 + 1, box
            play_one(page, ask, seen)
        assert page.evaluate("document.body.dataset.over") == "1", "the hand did not end"
        page.wait_for_selector("#end:not([hidden]) #winner")
        end_text = page.locator("#end").inner_text()
        watcher.wait_for_selector("body[data-ended='1']", timeout=120_000)
        assert int(watcher.evaluate("document.body.dataset.seen")) > 20
        assert watcher.locator(".hand .card:not(.back)").count() == 0
        spectated = watcher.locator("#over").inner_text()
        info = watcher.locator("#info").inner_text()
        watcher.locator("#over a", has_text="download the record").wait_for()
        # A free seat's invite link after the game: it says so, and offers no seat (its
        # state request is refused, 409, which the console logs: a page of its own).
        invited = watcher.context.new_page()
        invited.goto(links[1])
        invited.wait_for_selector("#invite")
        assert "has ended" in invited.locator("#invite").inner_text()
        assert invited.get_by_role("button", name="sit down").count() == 0
        page.close()
        watcher.context.close()
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=60)
    replay_path = tmp_path / "table.json"
    assert replay_path.is_file(), out
    assert seen == {"wish": 1, "bomb": 1, "gift": 1}, seen
    replay = load(replay_path)
    assert replay.seats[0] == "Ann"
    assert any("wish" in e for e in replay.recorded or [])
    # The end screen and the spectator's end say the record's winner and final score.
    a, b = replay.result["scores"]
    team = replay.meta["winners"][0] & 1
    score = f"{a} : {b}" if team == 0 else f"{b} : {a}"
    assert f"team {'AB'[team]} (" in end_text and f"wins {score}" in end_text, end_text
    assert "Game over" in end_text and "Hand 1 over" in end_text, end_text
    assert f"Game over: team {'AB'[team]}" in spectated and f"wins {score}" in spectated, spectated
    assert info.startswith("Ann, ") and "round -" not in info, info
    assert page_errors == [], page_errors
    # Every response to the person's page: no other seat's hand, and no card but the
    # person's own, except cards another seat played (in the plays that name them).
    mine, played = hand_cards(replay_path, 0)
    kept = {card_name(c) for c in range(56)} - set().union(*played.values())
    assert len(bodies) > 10
    for body in bodies:
        view = body.get("view")
        if view:
            assert all(s["cards"] is None for s in view["seats"][1:]), body
            for t in public_turns(view):
                named = set(CARD.findall(t["play"]))
                assert named <= played[t["seat"]] | (mine if t["seat"] == 0 else set()), t
            turns = ("trick", "entries", "collected", "last_trick", "played", "hand_end")
            rest = {k: v for k, v in view.items() if k not in turns}
            left = set(CARD.findall(json.dumps((view["hand_end"] or {}).get("left"))))
            assert left <= kept, (left, kept)  # the cards left when the hand is over
            summary = {**(view["hand_end"] or {}), "left": None}
            assert not set(CARD.findall(json.dumps(summary))) - mine, summary
            leaks = {k: v for k, v in rest.items() if set(CARD.findall(json.dumps(v))) - mine}
            assert not leaks, leaks
        ask = body.get("ask")
        if ask:
            assert set(CARD.findall(json.dumps(ask))) <= mine, ask


def test_two_people_at_one_table_and_one_closes_the_tab(browser: Any, tmp_path: Path) -> None:
    """Two people in two browser contexts: one sits from the lobby, the other through an
    invite link; the second closes the tab after the Grand Tichu call and the stand-in bot
    plays their seat (``--leave bot``) while the first plays the hand to its end."""
    proc, base, links = start_table(
        tmp_path, "heuristic", "--seed", str(SEED), "--hands", "1", "--window-s", "60",
        "--away-s", "3", "--leave", "bot",
    )  # fmt: skip
    bodies: dict[int, list[dict[str, Any]]] = {0: [], 2: []}
    seen = {"wish": 0, "bomb": 0, "gift": 0}
    try:
        pages = {}
        for seat in (0, 2):
            page = browser.new_context().new_page()
            page.on(
                "response",
                lambda r, seat=seat: (
                    bodies[seat].append(r.json()) if "/api/seat/state" in r.url and r.ok else None
                ),
            )
            pages[seat] = page
        ann, bob = pages[0], pages[2]
        ann.goto(base + "/")
        ann.wait_for_selector("body[data-ready='1']")
        assert "null" not in ann.locator("main").inner_text()
        ann.locator(".lobby-seat[data-seat='0']").get_by_label("your name").fill("Ann")
        ann.locator("button.sit[data-seat='0']").click()
        ann.wait_for_url("**/seat?token=*")
        bob.goto(links[2])
        bob_invite = bob.locator("#invite").inner_text()
        bob.get_by_label("Your name").fill("Bob")
        bob.get_by_role("button", name="sit down").click()
        bob.wait_for_selector("text=Waiting for the game to start")
        assert "seat 2, team A, as partner of Ann" in bob_invite
        ann.get_by_role("button", name="start the game").click()
        bob.wait_for_selector("body[data-phase='grand_tichu']", timeout=120_000)
        bob.locator("#ask").get_by_role("button", name="no Grand Tichu").click()
        bob.wait_for_function("(document.body.dataset.phase || '') === ''")
        bob.context.close()  # Bob leaves: the stand-in plays seat 2 from now on
        done: set[int] = set()
        deadline = time.monotonic() + 600
        while ann.evaluate("document.body.dataset.over") != "1":
            assert time.monotonic() < deadline, "the hand did not end"
            asks = [b["ask"] for b in bodies[0] if b.get("ask")]
            phase = ann.evaluate("document.body.dataset.phase || ''")
            if asks and phase and asks[-1]["number"] not in done:
                done.add(asks[-1]["number"])
                play_one(ann, asks[-1], seen)
            ann.wait_for_timeout(100)
        ann.context.close()
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=60)
    replay = load(tmp_path / "table.json")
    assert replay.seats[0] == "Ann" and replay.seats[2] == "Bob", out
    assert replay.result is not None and replay.result["hands"], out
    # While Bob was asked (Grand Tichu), Ann's page showed his clock; no bomb window's.
    assert any("2" in (b.get("view") or {}).get("clocks", {}) for b in bodies[0])
    for seat, got in bodies.items():
        assert got, seat
        for body in got:
            if body.get("view"):
                others = [s for i, s in enumerate(body["view"]["seats"]) if i != seat]
                assert all(s["cards"] is None for s in others), body


def test_a_late_bomb_click_is_refused_on_the_page_and_the_hand_goes_on(
    browser: Any, tmp_path: Path
) -> None:
    """The bomb button of a window clicked after the window closed by its time (the click
    was on its way): the page says the decision is no longer open, nothing is played, and
    the person plays the hand to its end."""
    proc, _, links = start_table(
        tmp_path, "--sit", "Ann", "--seed", str(SEED), "--hands", "1", "--window-s", "4"
    )
    errors: list[str] = []
    seen = {"wish": 0, "bomb": 0, "gift": 0}
    late: int | None = None
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("pageerror", lambda e: errors.append(str(e)))
        asks = seat_asks(page)
        page.goto(links[0])
        page.get_by_role("button", name="start the game").click()
        for ask in open_asks(page, asks):
            if ask["phase"] != "bomb_window":
                play_one(page, ask, seen)
            elif late is not None:
                page.locator("#ask").get_by_role("button", name="no bomb").click()
            elif page.evaluate(
                "(n => { const b = document.querySelector('#ask button.act.bomb');"
                " if (!b || st.data.ask?.number !== n) return false;"
                " window.lateBomb = b; return true; })",
                ask["number"],
            ):
                late = ask["number"]  # the window closes by its time, then the click
                page.wait_for_function(
                    f"st.data.ask === null || st.data.ask.number !== {late}",
                    timeout=60_000,
                )
                with page.expect_response("**/api/seat/answer") as sent:
                    page.evaluate("window.lateBomb.click()")
                assert sent.value.status == 409, sent.value.text()
                page.wait_for_selector(f"#problem:text-matches('^decision {late} ')")
                assert "open" in page.locator("#problem").inner_text()
                for card in ("8j", "8s", "8p", "8t"):  # the bomb is still in the hand
                    assert page.locator(f".hand.mine button[data-card='{card}']").count()
        assert "Game over" in page.locator("#end").inner_text()
        page.close()
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=60)
    assert late is not None, "no bomb window was offered to seat 0"
    assert not errors, errors
    replay = load(tmp_path / "table.json")
    assert replay.seats[0] == "Ann" and replay.result is not None, out
