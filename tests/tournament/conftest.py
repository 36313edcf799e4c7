"""Fixtures for the event tests; the synthetic-event model lives in ``synthetic_events``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from synthetic_events import MakeEvent, SyntheticEvent, make_spec, synthetic_rows

from arena.tournament.model import plan_event
from arena.tournament.store import EventStore


@pytest.fixture
def make_event(tmp_path: Path) -> MakeEvent:
    """Returns a factory: an event database filled with ``fraction`` of its plays."""

    def make(
        strengths: Mapping[str, float],
        *,
        fraction: float = 1.0,
        db: str = "events.db",
        data_seed: int = 3,
        created: str = "2026-01-02T03:04:05Z",
        **fields: Any,
    ) -> SyntheticEvent:
        fillers = fields.get("fillers", ())
        spec = make_spec([bot for bot in strengths if bot not in fillers], **fields)
        plan = plan_event(spec)
        path = tmp_path / db
        rng = np.random.default_rng(data_seed)
        with EventStore(path) as store:
            event_id = store.create_event(spec, plan, created=created)
            count = round(fraction * len(plan.plays))
            for stored in store.pending_plays(event_id)[:count]:
                rows = synthetic_rows(stored.play, spec, strengths, rng)
                store.record_play(stored.id, rows, f"replays/{stored.play.ordinal}.json")
        return SyntheticEvent(path, spec, plan, event_id, dict(strengths))

    return make
