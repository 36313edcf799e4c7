"""The event page says when replays cannot be read (issue 23, finding 1: its statistics were
silently zero when the viewer looked for the replays in the wrong folder)."""

from __future__ import annotations

from pathlib import Path

from arena.tournament.model import parse_event, plan_event
from arena.tournament.store import EventStore, HandRow
from arena.web.data import EventData


def test_unreadable_replays_are_counted_not_shown_as_zeros(tmp_path: Path) -> None:
    db = tmp_path / "e.sqlite"
    bots = [{"bot": "random", "name": f"r{i}"} for i in range(4)]
    spec = parse_event({"name": "e", "seed": 1, "bots": bots, "boards_per_round": 1})
    row = HandRow(0, 60, 40, (60, 40), (0, 0), None, (0, 1, 2), "----", (2, 0))
    with EventStore(db) as store:
        store.create_event(spec, plan_event(spec))
        first, second = store.pending_plays()[:2]
        store.record_play(first.id, [row], tmp_path / "gone-1.json")  # never written
        store.record_play(second.id, [row], tmp_path / "gone-2.json")
    page = EventData(db).event_page("e")
    assert page["replays_unreadable"] == 2
