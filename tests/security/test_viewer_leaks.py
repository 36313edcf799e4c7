"""The viewer never shows a refusal's detail or a private failure to anyone but the failing
seat and the all-cards view, and its public pages count nothing per play that the spectator
view hides.

A real event over gRPC: a buggy bot whose first play of every hand raises an exception that
quotes its hand, and whose every bomb window raises too (that a failure happened there says
the seat holds a bomb). The SDK reports each as a fault, which the referee tells the failing
seat alone; the referee's own public failures keep their seat, kind and outcome for all.
Every deal gives every seat bombs, so the bot's windows come.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena.rules import card_name
from arena.rules.cards import CARD_RANKS
from arena.tournament.model import load_event, plan_event
from arena.tournament.runner import EventRunner
from arena.tournament.store import EventStore
from tests.security.hostile import BOTS

pytest.importorskip("fastapi", reason="the web extra is not installed")
from arena.web.app import create_app, running

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

PUBLIC, PRIVATE = "PUBLIC-DETAIL", "PRIVATE-BOMB"


def bomb_deal() -> list[str]:
    """The deck in rank order, 14 cards a seat: every hand holds three or more bombs."""
    ordered = sorted(range(56), key=lambda c: (CARD_RANKS[c], c))
    return [" ".join(card_name(c) for c in ordered[k * 14 : (k + 1) * 14]) for k in range(4)]


@pytest.fixture(scope="module")
def event_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("leaks")
    (folder / "deals.json").write_text(json.dumps([bomb_deal()] * 12))
    toml = folder / "leaks.toml"
    toml.write_text(
        'name = "leaks"\n'
        f'bots = [{{ bot = "{BOTS / "leaky" / "bot.toml"}" }}, "random", "greedy",'
        ' { bot = "greedy", name = "greedy-b" }]\n'
        'schedule = "round_robin"\nformat = "board"\nhands_per_board = 2\nrotations = 2\n'
        'boards_per_round = 1\nseed = 5\njobs = 2\ndeal_book = "deals.json"\n'
        "[time_control]\ndecision_ms = 3000\n[policy]\nmax_strikes = 0\n",
        encoding="utf-8",
    )
    spec = load_event(toml)
    db = folder / "leaks.sqlite"
    with EventStore(db) as store:
        store.create_event(spec, plan_event(spec))
        EventRunner(store, spec.name, spec, log_dir=folder / "leaks.sqlite.logs").run()
    return db


@pytest.fixture(scope="module")
def url(event_db: Path) -> Iterator[str]:
    with running(create_app([event_db], poll_s=0.1)) as base:
        yield base


_CLIENT = httpx.Client(timeout=30)
"""One client for the module: each bare ``httpx.get`` loads the system's certificates anew,
which under load made a thousand requests outlast the test's deadline."""


def get(url: str, path: str, **params: Any) -> httpx.Response:
    r = _CLIENT.get(url + path, params=params)
    assert r.status_code == 200, r.text
    return r


def leaky_failures(url: str) -> dict[int, tuple[int, list[dict[str, Any]]]]:
    """Each play's leaky seat and its failures, as the all-cards view shows them."""
    out = {}
    for row in get(url, "/api/games").json()["rows"]:
        outline = get(url, "/api/replay", play=row["play"], view="all").json()
        seat = outline["seats"].index("leaky")
        out[row["play"]] = (seat, [f for f in outline["failures"] if f["seat"] == seat])
    return out


def test_the_bot_fails_publicly_and_privately(url: str) -> None:
    """The control: the all-cards view holds both kinds, with their details."""
    found = leaky_failures(url)
    details = [f.get("detail", "") for _, fs in found.values() for f in fs]
    assert any(PUBLIC in d for d in details), details
    assert any(PRIVATE in d for d in details), details


def test_no_spectator_or_other_seat_sees_a_detail_or_a_private_failure(url: str) -> None:
    for play, (seat, failures) in leaky_failures(url).items():
        public = [f for f in failures if not f.get("private")]
        own = get(url, "/api/replay", play=play, view=str(seat)).text
        for marker in (PUBLIC, PRIVATE):  # the failing seat sees all of its own failures
            assert (marker in own) == any(marker in f.get("detail", "") for f in failures)
        for view in ("spectator", str((seat + 1) % 4), str((seat + 2) % 4)):
            outline = get(url, "/api/replay", play=play, view=view)
            assert PUBLIC not in outline.text and PRIVATE not in outline.text, view
            shown = [f for f in outline.json()["failures"] if f["seat"] == seat]
            assert len(shown) == len(public), (view, shown)
            assert all(not f.get("detail") for f in shown), shown
            for step in range(outline.json()["steps"] + 1):
                text = get(url, "/api/step", play=play, step=step, view=view).text
                assert PUBLIC not in text and PRIVATE not in text, (view, step)


def test_the_game_list_and_event_page_carry_no_detail(url: str) -> None:
    found = leaky_failures(url)
    games = get(url, "/api/games")
    assert PUBLIC not in games.text and PRIVATE not in games.text
    for row in games.json()["rows"]:
        assert all(set(f) == {"seat", "kind"} for f in row["failures"]), row
    # The list shows a play's public failures only (the rows are hands; summed per play).
    listed: dict[int, int] = {}
    for row in games.json()["rows"]:
        listed[row["play"]] = listed.get(row["play"], 0) + sum(
            f["seat"] == found[row["play"]][0] for f in row["failures"]
        )
    for play, (_, failures) in found.items():
        assert listed[play] == sum(not f.get("private") for f in failures)
    page = get(url, "/api/event")
    assert PUBLIC not in page.text and PRIVATE not in page.text


def test_a_running_event_counts_nothing_of_its_boards_in_play(event_db: Path) -> None:
    """While a board is in play, no count on the event page moves with its finished plays:
    asked decisions, think times and failures count finished boards only."""
    db = event_db.parent / "in-play.sqlite"  # beside it: the same replays
    with sqlite3.connect(event_db) as source, sqlite3.connect(db) as target:
        source.backup(target)
    with EventStore(db, create=False) as store:
        plays = store.plays()
    pending = {}
    for p in plays:
        pending.setdefault(p.play.board, p.play.ordinal)  # one play of every board
    with sqlite3.connect(db) as conn:
        conn.executemany(
            "UPDATE plays SET status = 'pending' WHERE ordinal = ?",
            [(o,) for o in pending.values()],
        )
    with running(create_app([db], poll_s=0.1)) as base:
        page = get(base, "/api/event").json()
    assert page["stats"] == [] or all(
        s["decisions"] == 0 and not s["failures"] for s in page["stats"]
    ), page["stats"]
    assert not page["leaderboard"]["failures"], page["leaderboard"]["failures"]
