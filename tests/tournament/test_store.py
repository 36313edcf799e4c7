"""Tests for the event store: schema, idempotent events, atomic plays and resume bookkeeping."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from synthetic_events import MakeEvent, make_spec, synthetic_rows

from arena.ratings import HandOutcome, TurnierHand
from arena.rules import Match, Options
from arena.rules.state import deal_from_seed
from arena.tournament import store as store_module
from arena.tournament.model import deal_to_json, parse_event, plan_event
from arena.tournament.store import (
    SCHEMA_VERSION,
    EventStatus,
    EventStore,
    FailureRow,
    HandRow,
    StoreError,
)
from tests.helpers import random_answer

BOTS = ["north", "east", "south", "west", "fifth"]
STRENGTHS = dict.fromkeys(BOTS, 0.0)


def dump(path: Path) -> list[str]:
    """Returns the whole database as SQL text, to compare states."""
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def row(hand: int = 0, a: int = 60) -> HandRow:
    return HandRow(hand, a, 100 - a, (a, 100 - a), (0, 0), None, (0, 1, 2), "----", (2, 0))


def test_new_database_has_schema_wal_and_foreign_keys(tmp_path: Path) -> None:
    path = tmp_path / "e.db"
    with EventStore(path) as store:
        conn = store._conn
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        assert meta == {"application": "tichu-arena-events", "schema_version": str(SCHEMA_VERSION)}
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(
                "INSERT INTO bots (event_id, name, source) VALUES (99, 'ghost', 'builtin:random')"
            )
        assert store.events() == ()


def test_schema_version_mismatch_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "e.db"
    EventStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=r"schema version 99, but this arena reads version 2"):
        EventStore(path)


def test_foreign_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no event database here"):
        EventStore(tmp_path / "missing.db", create=False)
    assert not (tmp_path / "missing.db").exists()
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE things (x)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not a Tichu Arena event database"):
        EventStore(other)
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not an event database"):
        EventStore(garbage)


def test_create_event_is_idempotent(tmp_path: Path) -> None:
    spec = make_spec(BOTS, boards_per_round=2)
    plan = plan_event(spec)
    path = tmp_path / "e.db"
    with EventStore(path) as store:
        first = store.create_event(spec, plan, created="2026-01-01T00:00:00Z")
        before = dump(path)
        again = store.create_event(spec, plan, created="2027-01-01T00:00:00Z")
        faster = spec.model_copy(update={"jobs": 16})
        assert store.create_event(faster, plan) == first == again
        settings = 'INSERT INTO "event_settings" VALUES(1,'
        assert [line for line in dump(path) if not line.startswith(settings)] == [
            line for line in before if not line.startswith(settings)
        ]  # only the settings that do not change results (jobs) follow the latest file
        assert store.event(first).created == "2026-01-01T00:00:00Z"
        assert len(store.plays(first)) == len(plan.plays) == 5 * 2 * 2
        assert [p.play for p in store.plays(first)] == list(plan.plays)


def test_an_event_secret_is_drawn_once_stored_and_reused(tmp_path: Path) -> None:
    spec = make_spec(BOTS, seed=None)
    path = tmp_path / "e.db"
    with EventStore(path) as store:
        plan = store.plan(spec)
        assert plan.secret is not None and len(plan.secret) == 16
        event = store.create_event(spec, plan)
        again = store.plan(spec)  # a re-run of the same file: the stored secret
        assert again.secret == plan.secret and again.digest() == plan.digest()
        assert store.create_event(spec, again) == event
    conn = sqlite3.connect(path)
    (stored,) = conn.execute("SELECT secret FROM events").fetchone()
    conn.close()
    assert bytes.fromhex(stored) == plan.secret
    with EventStore(tmp_path / "seeded.db") as store:
        seeded = make_spec(BOTS)
        assert store.plan(seeded).secret is None  # a public seed: no secret


def test_a_version_1_database_is_upgraded_with_no_secret(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    spec = make_spec(BOTS)
    with EventStore(path) as store:
        store.create_event(spec, plan_event(spec))
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE events DROP COLUMN secret")
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with EventStore(path) as store:
        assert store.plan(spec).digest() == plan_event(spec).digest()
        assert len(store.plays()) == len(plan_event(spec).plays)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("2",)
    assert conn.execute("SELECT secret FROM events").fetchall() == [(None,)]
    conn.close()


def test_create_event_refuses_a_changed_event_file(tmp_path: Path) -> None:
    spec = make_spec(BOTS)
    with EventStore(tmp_path / "e.db") as store:
        store.create_event(spec, plan_event(spec))
        changed = make_spec(BOTS, seed=99, rotations=4)
        with pytest.raises(StoreError, match=r"different event file \(changed: rotations, seed\)"):
            store.create_event(changed, plan_event(changed))


def test_stored_plays_and_spec_round_trip_with_an_explicit_deal_book(tmp_path: Path) -> None:
    deals = [deal_from_seed(4, k) for k in range(12)]
    (tmp_path / "deals.json").write_text(json.dumps([deal_to_json(d) for d in deals]))
    spec = parse_event(
        {
            "name": "book",
            "bots": ["random", "greedy", "heuristic", "search"],
            "hands_per_board": 2,
            "deal_book": "deals.json",
        },
        base_dir=tmp_path,
    )
    plan = plan_event(spec)
    with EventStore(tmp_path / "e.db") as store:
        store.create_event(spec, plan)
        assert store.event_spec("book") == spec
        assert [p.play for p in store.pending_plays("book")] == list(plan.plays)
        assert store.plays()[0].play.book_deals == (deals[0], deals[1])


def test_pending_plays_after_partial_completion(tmp_path: Path) -> None:
    spec = make_spec(BOTS, boards_per_round=2)
    path = tmp_path / "e.db"
    with EventStore(path) as store:
        event = store.create_event(spec, plan_event(spec))
        plays = store.pending_plays(event)
        assert store.event(event).status is EventStatus.PLANNED
        # Complete plays out of order, as concurrent tables finish.
        done = [plays[i] for i in (5, 0, 17, 3)]
        for stored in done:
            store.record_play(stored.id, [row()], f"replays/{stored.play.ordinal}.json")
        left = store.pending_plays(event)
        assert [p.id for p in left] == [p.id for p in plays if p not in done]
        assert [p.play.ordinal for p in left] == sorted(p.play.ordinal for p in left)
        assert store.event(event).status is EventStatus.RUNNING
        summary = store.event_summary(event)
        assert (summary.plays_done, summary.plays_total, summary.hands) == (4, 20, 4)
        assert summary.boards_total == 10 and summary.boards_done == 0
        # Board 0 is finished once both rotations are in.
        partner = next(p for p in left if p.play.board == plays[0].play.board)
        store.record_play(partner.id, [row()])
        assert store.event_summary(event).boards_done == 1
        assert store.set_status(event, EventStatus.INTERRUPTED)
        assert store.event(event).status is EventStatus.INTERRUPTED
        for stored in store.pending_plays(event):
            store.record_play(stored.id, [row()])
        assert store.pending_plays(event) == ()
        assert store.event(event).status is EventStatus.FINISHED
        assert store.event_summary(event).finished


def test_rerunning_a_finished_event_changes_nothing(make_event: MakeEvent) -> None:
    event = make_event(dict.fromkeys(BOTS, 0.0))
    before = dump(event.path)
    with EventStore(event.path) as store:
        assert store.create_event(event.spec, event.plan) == event.event_id
        assert store.pending_plays() == ()
        assert not store.set_status(event.event_id, EventStatus.RUNNING)
        assert store.event().status is EventStatus.FINISHED
    assert dump(event.path) == before


def test_recording_a_play_twice_is_refused(make_event: MakeEvent) -> None:
    event = make_event(STRENGTHS, fraction=0.5)
    with EventStore(event.path) as store:
        recorded = next(p for p in store.plays() if p.done)
        with pytest.raises(StoreError, match=r"is already recorded"):
            store.record_play(recorded.id, [row()])
        with pytest.raises(StoreError, match="no play with id 9999"):
            store.record_play(9999, [row()])
        pending = store.pending_plays()[0]
        with pytest.raises(StoreError, match="at least one hand"):
            store.record_play(pending.id, [])
        with pytest.raises(StoreError, match="hand numbers repeat"):
            store.record_play(pending.id, [row(0), row(0)])
        with pytest.raises(StoreError, match="still has pending plays"):
            store.set_status(event.event_id, EventStatus.FINISHED)


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_a_failure_inside_the_transaction_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: type[BaseException]
) -> None:
    spec = make_spec(BOTS, hands_per_board=3)
    path = tmp_path / "e.db"
    with EventStore(path) as store:
        store.create_event(spec, plan_event(spec))
        play = store.pending_plays()[0]
        before = dump(path)
        real = store_module._hand_params
        calls = []

        def failing(*args: object) -> object:
            calls.append(args)
            if len(calls) == 3:  # the third hand of the play
                raise error("interrupted mid-play")
            return real(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(store_module, "_hand_params", failing)
        with pytest.raises(error):
            store.record_play(play.id, [row(0), row(1), row(2)], "r.json")
        monkeypatch.setattr(store_module, "_hand_params", real)
        assert dump(path) == before
        assert store.pending_plays()[0] == play
        store.record_play(play.id, [row(0), row(1), row(2)], "r.json")
        assert len(store.hands()) == 3


KILLED_WRITER = r"""
import sys, time
from pathlib import Path
from arena.tournament.store import EventStore, HandRow

db, marker, play_id = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
store = EventStore(db)
inserted = 0

def pause_mid_play(sql):
    global inserted
    if sql.lstrip().startswith("INSERT INTO hands"):
        inserted += 1
        if inserted == 2:  # the first hand is written, the play marked done, not committed
            marker.write_text("mid-write")
            time.sleep(120)

store._conn.set_trace_callback(pause_mid_play)
rows = [HandRow(k, 60, 40, (60, 40), (0, 0), None, (0, 1, 2)) for k in range(3)]
store.record_play(play_id, rows, "replay.json")
"""


@pytest.mark.slow
def test_a_writer_killed_mid_play_leaves_nothing_partial(tmp_path: Path) -> None:
    spec = make_spec(BOTS, hands_per_board=3)
    path = tmp_path / "e.db"
    with EventStore(path) as store:
        store.create_event(spec, plan_event(spec))
        first, second = store.pending_plays()[:2]
        store.record_play(first.id, [row(0), row(1), row(2)])
    before = dump(path)
    marker = tmp_path / "marker"
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(path), str(marker), str(second.id)]
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert writer.poll() is None, "the writer exited before reaching the second hand"
            assert time.monotonic() < deadline, "the writer never reached the second hand"
            time.sleep(0.02)
        os.kill(writer.pid, signal.SIGKILL)
    finally:
        writer.wait(timeout=30)
    assert writer.returncode == -signal.SIGKILL
    with EventStore(path) as store:
        assert store._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert dump(path) == before
        assert store.pending_plays()[0] == second
        assert [h.play_id for h in store.hands()] == [first.id] * 3
        store.record_play(second.id, [row(0), row(1), row(2)])
        assert len(store.hands()) == 6


def test_hand_rows_round_trip(make_event: MakeEvent) -> None:
    event = make_event(STRENGTHS, fraction=0.0, hands_per_board=2)
    failures = (FailureRow(1, "timeout", "decision 12 took 1204 ms"), FailureRow(3, "crash"))
    first = HandRow(0, 215, -15, (100, 0), (115 - 0, -15), "A", (0, 2), "T-G-", (3, 0), failures)
    second = HandRow(1, 25, 75, (25, 75), (0, 0), None, (3, 1, 0), "-T--", (0, 2))
    with EventStore(event.path) as store:
        play = store.pending_plays()[0]
        store.record_play(play.id, [second, first], event.path.parent / "replays/0.json")
        hands = store.hands()
        assert [h.row for h in hands] == [first, second]
        assert all(h.replay_path == "replays/0.json" for h in hands)
        assert [h.board_label for h in hands] == [str(play.play.board), f"{play.play.board}.1"]
        assert store.hand_outcomes()[0] == HandOutcome(
            str(play.play.board), play.play.seats, 215, -15, play.play.rotation
        )
        # Seat 2 called Grand Tichu but seat 0 went out first: team A failed a bet.
        assert store.turnier_hands()[0] == TurnierHand(play.play.seats, 215, -15, "A", True, False)
        assert store.turnier_hands()[1].failed_bet_b  # seat 1 called, seat 3 went out first
        log = store._conn.execute(
            "SELECT event, first_out, out_order, failures FROM hand_log ORDER BY hand_no"
        ).fetchall()
        assert log[0][:3] == ("synthetic", 0, "02")
        assert json.loads(log[0][3])[0] == {
            "seat": 1,
            "kind": "timeout",
            "detail": "decision 12 took 1204 ms",
        }


def test_hand_row_from_a_real_hand() -> None:
    rng = random.Random(5)
    match = Match(Options(hands=4), seed=5)
    while not match.over:
        match.apply(random_answer(match, rng))
    for result in match.hand_results:
        hand = HandRow.from_result(result)
        assert (hand.score_a, hand.score_b) == result.score
        assert hand.card_points == result.card_points and hand.bets == result.bets
        assert hand.out == result.out and hand.first_out == result.out[0]
        assert hand.victory_points == result.victory_points
        assert hand.double_victory == {-1: None, 0: "A", 1: "B"}[result.double_victory]
        assert hand.calls == "----"  # random_answer never bets


def test_hand_row_rejects_impossible_values() -> None:
    with pytest.raises(ValueError, match="calls"):
        HandRow(0, 0, 0, (0, 0), (0, 0), calls="TT")
    with pytest.raises(ValueError, match="distinct seats"):
        HandRow(0, 0, 0, (0, 0), (0, 0), out=(0, 0))
    with pytest.raises(ValueError, match="start at 0"):
        HandRow(-1, 0, 0, (0, 0), (0, 0))


def test_events_are_chosen_by_name(tmp_path: Path) -> None:
    path = tmp_path / "e.db"
    with EventStore(path) as store:
        with pytest.raises(StoreError, match="no events yet"):
            store.event()
        for name in ("spring", "autumn"):
            spec = parse_event({"name": name, "bots": ["random", "greedy", "heuristic", "search"]})
            store.create_event(spec, plan_event(spec))
        with pytest.raises(StoreError, match=r"holds 2 events \(spring, autumn\); name one"):
            store.event()
        assert store.event("autumn").name == "autumn"
        with pytest.raises(StoreError, match=r"no event 'winter' \(events: spring, autumn\)"):
            store.event("winter")
        assert store.pending_plays("spring") != ()


def test_synthetic_fill_uses_every_planned_seat(make_event: MakeEvent) -> None:
    event = make_event(STRENGTHS)
    rng = np.random.default_rng(0)
    with EventStore(event.path) as store:
        hands = store.hands()
        assert [h.seats for h in hands] == [p.seats for p in event.plan.plays]
        assert len(synthetic_rows(event.plan.plays[0], event.spec, STRENGTHS, rng)) == 1


def test_replays_live_beside_the_database(make_event: MakeEvent, tmp_path: Path) -> None:
    event = make_event(STRENGTHS, fraction=0.0)
    with EventStore(event.path) as store:
        play = store.pending_plays()[0]
        path = store.replay_path("synthetic", play.play)
        assert path == tmp_path / "events.db.replays" / "synthetic" / "000000-b0-r0.json"
        store.record_play(play.id, [row()], path)
        stored = store.hands()[0].replay_path
        assert stored == "events.db.replays/synthetic/000000-b0-r0.json"
        assert stored is not None and store.resolve_replay(stored) == path
        other = store.pending_plays()[0]
        store.record_play(other.id, [row()], "/elsewhere/r.json")
        assert store.resolve_replay("/elsewhere/r.json") == Path("/elsewhere/r.json")


def test_stored_paths_are_relative_to_the_database_whatever_the_working_folder(
    make_event: MakeEvent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 23, finding 1: a database opened as ``runs/x.db`` stored its replay paths
    relative to the working folder, and every reader resolving them beside the database
    missed (``runs/runs/x.db.replays``). Paths are stored relative to the database's folder."""
    event = make_event(STRENGTHS, fraction=0.0)
    monkeypatch.chdir(tmp_path.parent)
    relative_db = Path(tmp_path.name) / event.path.name  # as `--db runs/demo.sqlite` gives it
    log = Path(tmp_path.name) / "events.db.logs" / "t0" / "0-north.log"
    with EventStore(relative_db) as store:
        play = store.pending_plays()[0]
        path = store.replay_path("synthetic", play.play)
        assert not path.is_absolute()
        path.parent.mkdir(parents=True)
        path.write_text("{}")
        failure = FailureRow(0, "crash", "exit 1", str(log))
        store.record_play(play.id, [replace(row(), failures=(failure,))], path)
        (stored,) = {h.replay_path for h in store.hands()}
        assert stored == "events.db.replays/synthetic/000000-b0-r0.json"
        assert store.resolve_replay(stored) == path
        assert store.hands()[0].row.failures[0].log == str(log)
    monkeypatch.chdir(tmp_path)  # another working folder reads the same files
    with EventStore(Path(event.path.name)) as store:
        assert store.resolve_replay(stored).read_text() == "{}"
        assert store.hands()[0].row.failures[0].log == str(Path("events.db.logs/t0/0-north.log"))


def test_old_databases_with_paths_relative_to_the_run_still_resolve(
    make_event: MakeEvent, tmp_path: Path
) -> None:
    """Databases written before the rule hold ``runs/<db>.replays/...`` (the run's working
    folder); such a path is found in the database's own replays folder."""
    event = make_event(STRENGTHS, fraction=0.0)
    replay = tmp_path / "events.db.replays" / "synthetic" / "000000-b0-r0.json"
    replay.parent.mkdir(parents=True)
    replay.write_text("{}")
    with EventStore(event.path) as store:
        old = "runs/events.db.replays/synthetic/000000-b0-r0.json"
        assert store.resolve_replay(old) == replay
        assert store_module.resolve_stored(event.path, "elsewhere/r.json") == (
            tmp_path / "elsewhere/r.json"
        )


def test_raising_cycles_continues_the_event_as_planned_from_scratch(tmp_path: Path) -> None:
    spec = make_spec(BOTS[:4], boards_per_round=2)
    with EventStore(tmp_path / "e.db") as store:
        event = store.create_event(spec, plan_event(spec))
        first = store.plays(event)
        for sp in first[:5]:
            store.record_play(sp.id, [row()])
        first = store.plays(event)
        longer = make_spec(BOTS[:4], boards_per_round=2, cycles=3)
        plan = plan_event(longer)
        assert store.create_event(longer, plan) == event
        plays = store.plays(event)
        assert [sp.play for sp in plays] == list(plan.plays)  # same as a fresh event of 3 cycles
        assert plays[: len(first)] == first and len(plays) == 3 * len(first) == 36
        assert [sp.done for sp in plays].count(True) == 5
        assert store.event(event).status is EventStatus.INTERRUPTED
        before = dump(tmp_path / "e.db")
        assert store.create_event(longer, plan) == event  # the extended file again: no change
        assert dump(tmp_path / "e.db") == before
        with pytest.raises(StoreError, match="cycles can only rise"):
            store.create_event(spec, plan_event(spec))


def test_adding_bots_continues_the_event_with_the_new_field(tmp_path: Path) -> None:
    spec = make_spec(BOTS[:4])
    with EventStore(tmp_path / "e.db") as store:
        event = store.create_event(spec, plan_event(spec))
        first = store.plays(event)
        for sp in first:
            store.record_play(sp.id, [row()])
        first = store.plays(event)
        assert store.event(event).status is EventStatus.FINISHED
        wider = make_spec(BOTS)
        with pytest.raises(StoreError, match="raise cycles too"):
            store.create_event(wider, plan_event(wider))
        wider = make_spec(BOTS, cycles=2)
        store.create_event(wider, plan_event(wider))
        plays = store.plays(event)
        assert plays[: len(first)] == first
        added = [sp.play for sp in plays[len(first) :]]
        assert len(added) == 5 * 2  # one cycle of Wh(5): 5 rounds, 1 board, 2 rotations
        assert [p.ordinal for p in added] == list(range(6, 16))
        assert min(p.round for p in added) == 3 and min(p.board for p in added) == 3
        assert len({(p.board, p.rotation) for sp in plays for p in [sp.play]}) == 16
        assert "fifth" in {seat for p in added for seat in p.seats}
        assert store.pending_plays(event) == plays[len(first) :]
        assert store.event_summary(event).bots == tuple(BOTS)
        assert store.event_spec(event) == wider
        dropped = make_spec(["north", "east", "south", "fifth"], cycles=3)
        with pytest.raises(StoreError, match="may only be added"):
            store.create_event(dropped, plan_event(dropped))


def test_the_stored_spec_keeps_the_event_files_jobs_for_resume(tmp_path: Path) -> None:
    """Issue 23, finding 3: ``arena event resume`` ran a ``jobs = 4`` event one table at a
    time, because ``jobs`` (left out of the event's identity) was not stored at all."""
    spec = make_spec(BOTS[:4], boards_per_round=2, jobs=4)
    with EventStore(tmp_path / "e.db") as store:
        store.create_event(spec, plan_event(spec))
        assert store.event_spec("synthetic").jobs == 4
        faster = spec.model_copy(update={"jobs": 6})  # the same event run with another file
        store.create_event(faster, plan_event(faster))
        assert store.event_spec("synthetic").jobs == 6
        assert store.event_spec("synthetic").identity() == spec.identity()
