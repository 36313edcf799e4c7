"""Synthetic events for the event tests: hands drawn from known bot strengths.

The model: each deal gives team A (seats 0 and 2) a card-luck term u ~ N(0, 60) points in
rotations 0 and 2 and −u in rotations 1 and 3 (the teams swap hands), and the team gap in
strength adds 0.4 points per Elo of mean rating. A hand's margin is skill + luck + N(0, 40)
noise, turned into card points that sum to 100, or a double victory for big margins.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from arena.tournament.model import EventPlan, EventSpec, PlannedPlay, parse_event
from arena.tournament.store import HandRow

POINTS_PER_ELO = 0.4
LUCK_SD = 60.0
NOISE_SD = 40.0


def synthetic_hand(
    play: PlannedPlay, hand: int, strengths: Mapping[str, float], rng: np.random.Generator
) -> HandRow:
    """Draws one hand of ``play`` from the known-strength model."""
    luck_rng = np.random.default_rng([play.board, hand, 7])
    luck = luck_rng.normal(0.0, LUCK_SD) * (1.0 if play.rotation % 2 == 0 else -1.0)
    n, e, s, w = (strengths[bot] for bot in play.seats)
    skill = POINTS_PER_ELO * ((n + s) / 2 - (e + w) / 2)
    margin = skill + luck + rng.normal(0.0, NOISE_SD)
    if margin > 160:
        return HandRow(hand, 200, 0, (200, 0), (0, 0), "A", (0, 2), "----", (3, 0))
    if margin < -160:
        return HandRow(hand, 0, 200, (0, 200), (0, 0), "B", (1, 3), "----", (0, 3))
    cards_a = int(np.clip(5 * round((50 + margin / 2) / 5), -25, 125))
    cards_b = 100 - cards_a
    out = (0, 1, 2) if cards_a >= cards_b else (1, 0, 3)
    vp = (2, 0) if cards_a > cards_b else (0, 2) if cards_b > cards_a else (1, 1)
    return HandRow(hand, cards_a, cards_b, (cards_a, cards_b), (0, 0), None, out, "----", vp)


def synthetic_rows(
    play: PlannedPlay, spec: EventSpec, strengths: Mapping[str, float], rng: np.random.Generator
) -> list[HandRow]:
    """Draws every hand of one play."""
    return [synthetic_hand(play, k, strengths, rng) for k in range(spec.deals_per_board or 1)]


@dataclass
class SyntheticEvent:
    """A database holding one synthetic event."""

    path: Path
    spec: EventSpec
    plan: EventPlan
    event_id: int
    strengths: dict[str, float]


def make_spec(bots: Sequence[str], **fields: Any) -> EventSpec:
    """Builds a spec whose bots are built-in ``random`` bots with the given display names."""
    data: dict[str, Any] = {"name": "synthetic", "seed": 11, **fields}
    data["bots"] = [{"bot": "random", "name": name} for name in bots]
    if "fillers" in fields:
        data["fillers"] = [{"bot": "random", "name": name} for name in fields["fillers"]]
    return parse_event(data)


MakeEvent = Callable[..., SyntheticEvent]
"""``make_event(strengths, *, fraction=1.0, db=..., data_seed=..., created=..., **spec fields)``."""
