"""The web app's JSON and server-sent events over a real event, checked against the store."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena.referee.replay import load
from arena.rules import Match, Play, card_name, cards_of
from arena.rules.notation import action_from_json
from arena.tournament.store import EventStore
from tests.web.served import Served, serve

pytestmark = pytest.mark.slow  # plays an event and serves it

CARD = re.compile(r"\b(?:[2-9TJQKA][jspt]|Dg|Mj|Dr|Ph)\b")


_CLIENT = httpx.Client(timeout=30)
"""One client for the module: a bare ``httpx.get`` loads the system's certificates each time."""


def get(web: Served, path: str, **params: Any) -> Any:
    r = _CLIENT.get(web.url + path, params=params)
    assert r.status_code == 200, r.text
    return r.json()


def sse(web: Served, path: str, headers: dict[str, str] | None = None, **params: Any) -> list[dict]:
    """Reads a stream to its end: each message's event, id and decoded data."""
    out: list[dict[str, Any]] = []
    with httpx.stream("GET", web.url + path, params=params, headers=headers, timeout=30) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        msg: dict[str, Any] = {}
        for line in r.iter_lines():
            if not line:
                if msg:
                    out.append(msg)
                msg = {}
                continue
            key, _, value = line.partition(":")
            if key in ("event", "id"):
                msg[key] = value.strip()
            elif key == "data":
                msg["data"] = json.loads(value)
    return out


def test_game_list_matches_the_store_and_filters(web: Served) -> None:
    with EventStore(web.db, create=False) as store:
        hands = store.hands()
    games = get(web, "/api/games")
    assert games["total"] == len(hands) == 6
    assert [r["score"] for r in games["rows"]] == [[h.row.score_a, h.row.score_b] for h in hands]
    logbot = get(web, "/api/games", bot="logbot")
    assert logbot["total"] == sum("logbot" in h.seats for h in hands) == 6
    won_a = get(web, "/api/games", result="A")
    assert won_a["total"] == sum(h.row.score_a > h.row.score_b for h in hands)
    assert get(web, "/api/games", round=0)["total"] == 2
    assert httpx.get(web.url + "/api/games", params={"result": "x"}).status_code == 422


def test_event_page_counts_calls_and_think_times(web: Served) -> None:
    page = get(web, "/api/event")
    stats = {s["bot"]: s for s in page["stats"]}
    assert set(stats) == {"logbot", "random", "greedy", "greedy-b"}
    assert all(s["hands"] == 6 for s in stats.values())
    # Every asked decision of the replays is timed once.
    with EventStore(web.db, create=False) as store:
        paths = {h.replay_path for h in store.hands()}
        think = [t for p in paths for t in load(store.resolve_replay(str(p))).meta["think"]]
    assert sum(s["decisions"] for s in stats.values()) == len(think)
    ratings = page["leaderboard"]["ratings"]
    assert len(ratings["rows"]) == 4 or ratings["note"]  # six hands may not identify them
    # Calls and their success, from the store's hands.
    with EventStore(web.db, create=False) as store:
        hands = store.hands()
    calls = [(h.seats[s], h.row.calls[s], h.row.first_out == s) for h in hands for s in range(4)]
    for bot, row in stats.items():
        tichus = [made for b, c, made in calls if b == bot and c == "T"]
        assert row["tichu_calls"] == len(tichus)
        assert row["tichu_success"] == (round(sum(tichus) / len(tichus), 4) if tichus else None)


def test_crosstable_margins_come_from_the_hands(web: Served) -> None:
    ct = get(web, "/api/event")["crosstable"]
    with EventStore(web.db, create=False) as store:
        hands = store.hands()
    bots = ct["bots"]
    i, j = bots.index("logbot"), bots.index("random")
    together = [
        (h.row.score_a - h.row.score_b) * (1 if h.seats.index("logbot") % 2 == 0 else -1)
        for h in hands
        if abs(h.seats.index("logbot") - h.seats.index("random")) == 2
    ]
    assert ct["partner"][i][j] == {
        "hands": len(together),
        "margin": round(sum(together) / len(together), 2),
    }
    assert ct["partner"][i][i] is None
    assert sum(c["hands"] for c in ct["against"][i] if c) == 2 * len(hands)


def test_clear_errors_for_bad_requests(web: Served) -> None:
    assert httpx.get(web.url + "/api/step", params={"view": "north"}).status_code == 422
    missing = httpx.get(web.url + "/api/replay", params={"play": 999})
    assert missing.status_code == 404 and "no recorded play 999" in missing.json()["detail"]
    assert httpx.get(web.url + "/api/event", params={"event": "nope"}).status_code == 404
    assert httpx.get(web.url + "/api/event", params={"db": 3}).status_code == 404
    league = httpx.get(web.url + "/api/league")
    assert league.status_code == 404 and "not a league database" in league.json()["detail"]
    assert get(web, "/api/dbs")[0]["league"] is False


def played_before(replay_path: Any, step: int) -> set[str]:
    """Cards played (public) in the first ``step`` actions of a replay."""
    replay = load(replay_path)
    m = Match(replay.options, replay.seed, replay.deals)
    seen: set[str] = set()
    for entry in (replay.recorded or [])[:step]:
        action = action_from_json({k: v for k, v in entry.items() if k != "seat"}, m.top)
        if isinstance(action, Play):
            seen |= {card_name(c) for c in cards_of(action.cards)}
        m.apply(action)
    return seen


def test_spectator_json_names_no_hidden_card(web: Served) -> None:
    with EventStore(web.db, create=False) as store:
        play = store.plays()[0]
        path = store.resolve_replay(str(play.replay_path))
    outline = get(web, "/api/replay", play=play.play.ordinal)
    total = get(web, "/api/replay", play=play.play.ordinal, view="all")["steps"]
    secret = total - outline["steps"]  # bomb-window declines only their seat sees
    assert outline["steps"] > 20 and secret >= 0
    for step in range(0, outline["steps"] + 1, max(1, outline["steps"] // 15)):
        view = get(web, "/api/step", play=play.play.ordinal, step=step, view="spectator")
        assert view["step"] == step
        assert all(s["cards"] is None for s in view["seats"])
        assert view["exchange"] is None
        assert view["decision"] is None or view["decision"]["legal"] is None
        named = set(CARD.findall(json.dumps(view)))
        assert named <= played_before(path, min(step + secret, total)), step
    seat = get(web, "/api/step", play=play.play.ordinal, step=outline["steps"] // 2, view="2")
    assert [s["cards"] is not None for s in seat["seats"]] == [False, False, True, False]


def test_event_stream_ends_with_an_explicit_end(web: Served) -> None:
    messages = sse(web, "/api/event/stream")
    assert [m["event"] for m in messages] == ["progress", "end"]
    assert messages[0]["id"] == "6" and messages[0]["data"]["status"] == "finished"
    resumed = sse(web, "/api/event/stream", headers={"Last-Event-ID": "6"})
    assert [m["event"] for m in resumed] == ["end"]


def test_live_stream_ids_resume_and_end(web: Served) -> None:
    messages = sse(web, "/api/live/stream", play=0)
    table = [m for m in messages if m["event"] == "table"]
    assert [m["id"] for m in table] == [str(i) for i in range(1, len(table) + 1)]
    assert messages[-1]["event"] == "end"
    assert table[-1]["data"]["event"]["type"] == "match_end"
    with EventStore(web.db, create=False) as store:
        hand = store.hands()[0]
    assert messages[-1]["data"]["view"]["scores"] == [hand.row.score_a, hand.row.score_b]
    assert all(s["cards"] is None for m in table for s in m["data"]["view"]["seats"])
    resumed = sse(web, "/api/live/stream", headers={"Last-Event-ID": "10"}, play=0)
    assert next(m["id"] for m in resumed if m["event"] == "table") == "11"
    assert resumed[-1]["event"] == "end"


@pytest.mark.parametrize(
    "path", ["/", "/event", "/games", "/replay", "/live", "/league", "/static/app.css"]
)
def test_pages_are_served(web: Served, path: str) -> None:
    r = httpx.get(web.url + path)
    assert r.status_code == 200
    assert "http://" not in r.text and "https://" not in r.text  # nothing fetched from elsewhere


def test_duplicate_comparison_aligns_the_dealt_hands(web: Served) -> None:
    with EventStore(web.db, create=False) as store:
        plays = store.plays()
        first = plays[0]
        deals = {
            p.play.ordinal: load(store.resolve_replay(str(p.replay_path))).deals[0]
            for p in plays
            if p.play.board == first.play.board
        }
    tables = get(web, "/api/compare", play=first.play.ordinal)["tables"]
    assert [t["play"] for t in tables] == sorted(deals, key=lambda o: o != first.play.ordinal)
    a, b = tables
    for s in range(4):  # the mapping the comparison uses holds for the replays' deals
        mate = next(t for t in range(4) if (t + b["rotation"]) % 4 == (s + a["rotation"]) % 4)
        assert deals[a["play"]][s] == deals[b["play"]][mate]
    # The first actions of the play phase (after the simultaneous ones) agree up to the
    # divergence, dealt hand by dealt hand; the divergence is a play-phase action.
    k = b["diverges"]
    plays_a = [(x["dealt"], x["key"]) for x in a["actions"] if not x["together"]]
    plays_b = [x for x in b["actions"] if not x["together"]]
    if k is None:
        assert plays_a == [(x["dealt"], x["key"]) for x in plays_b]
    elif any(x["step"] == k and x["together"] for x in b["actions"]):
        assert next(x for x in b["actions"] if x["step"] == k)["key"] == "tichu"
    else:
        at = next(i for i, x in enumerate(plays_b) if x["step"] == k)
        assert plays_a[:at] == [(x["dealt"], x["key"]) for x in plays_b[:at]]
        assert at == len(plays_a) or plays_a[at] != (plays_b[at]["dealt"], plays_b[at]["key"])


def test_spectators_see_no_difference_between_asked_and_forced_answers(web: Served) -> None:
    """Whether a seat was asked tells what it held (a forced pass: nothing that beats the
    trick, no bomb): its own view and the all-cards view alone show it."""
    steps = get(web, "/api/replay", play=0, view="all")["steps"]
    seen: dict[str, set[object]] = {"all": set(), "spectator": set(), "1": set()}
    for step in range(1, steps + 1):
        for view in seen:
            decision = get(web, "/api/step", play=0, step=step, view=view)["decision"]
            if decision is not None and (view != "1" or decision["seat"] != 1):
                seen[view].add((decision["asked"], decision["think_ms"] is None))
    assert seen["all"] >= {(True, False), (False, True)}  # both kinds happen in this play
    assert seen["spectator"] == seen["1"] == {(None, True)}


def test_a_board_in_play_shows_no_hand_of_its_finished_plays(web: Served, tmp_path: Path) -> None:
    """While another rotation of a board is unfinished (the same cards), its finished plays
    are served in no view, not even the spectator's (the cards played tell most of each
    hand), and not side by side (``/api/compare``)."""
    db = web.db.parent / f"in-play-{tmp_path.name}.sqlite"  # beside it: the same replays
    with sqlite3.connect(web.db) as source, sqlite3.connect(db) as target:
        source.backup(target)
    with EventStore(db, create=False) as store:
        plays = store.plays()
    first = plays[0].play
    other = next(p.play for p in plays if p.play.board == first.board and p.play != first)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE plays SET status = 'pending' WHERE ordinal = ?", (other.ordinal,))
    for url in serve([db]):
        for view in ("all", "0", "3", "spectator"):
            r = httpx.get(url + "/api/replay", params={"play": first.ordinal, "view": view})
            assert r.status_code == 403 and "still being played" in r.text, r.text
            r = httpx.get(url + "/api/step", params={"play": first.ordinal, "view": view})
            assert r.status_code == 403, r.text
        r = httpx.get(url + "/api/compare", params={"play": first.ordinal})
        assert r.status_code == 403 and "still being played" in r.text, r.text
        r = httpx.get(url + "/api/replay/download", params={"play": first.ordinal})
        assert r.status_code == 403, r.text
