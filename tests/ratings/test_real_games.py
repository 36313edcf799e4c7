"""Intervals and the gate on real in-process games of the reference bots (the fast half).

``scripts/calibrate_real.py`` plays tens of events per field for docs/ratings.md and the gate
pairs for docs/gate.md; these tests play a few seconds of the cheapest field and pairs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.ratings import RatingError, fit_margins, fit_ratings, pentanomial_counts
from arena.ratings.gate_calibration import PRESETS, simulate
from example_bots.common.field import gate_pairs, play_event
from scripts.calibrate_real import FIELDS, GATE_SEED, HIGH, LOW, Z, coverage, outcomes


def test_copies_of_a_deterministic_bot_mirror_every_board() -> None:
    """Issue 24: four greedy copies; each board's second play undoes the first, and the fits
    say that the hands hold no evidence instead of giving [+0, +0]."""
    hands = outcomes(play_event(["greedy", "greedy#2", "greedy#3", "greedy#4"], 3, 4, 5), 0)
    assert len(hands) == 24
    assert all(a.margin == -b.margin for a, b in zip(hands[::2], hands[1::2], strict=True))
    assert any(hand.margin != 0 for hand in hands)
    for fit in (fit_ratings, fit_margins):
        with pytest.raises(RatingError, match="no evidence of a difference"):
            fit(hands)


def test_the_greedy_field_covers_within_its_band() -> None:
    """Row 1 of the real-game table, 10 events: each coverage within the band 93–97 % up to
    1.96 Monte Carlo errors (the script's --check rule), and the widths finite."""
    for c in coverage(FIELDS[0], events=10, seed=1):
        assert c.events == 10 and c.intervals == 40
        assert c.rate + Z * c.error >= LOW, (c.scenario.kind, c.rate, c.error)
        assert c.rate - Z * c.error <= HIGH, (c.scenario.kind, c.rate, c.error)
        assert math.isfinite(c.mean_width) and c.mean_width > 0


def test_a_variant_without_calls_plays_almost_alike_and_the_gate_holds_on_it() -> None:
    """Greedy against greedy without calls, 300 real gate boards: nearly every pair is ½,
    the shape on which the old gate had 84 % power for gain at +10 Elo; simulated gain
    gates on it pass at +10 Elo within three Monte Carlo errors of 95 % or more. (300
    boards hold about one won and no lost pair, so only the upward tilt is possible here;
    scripts/calibrate_gate.py runs both on 3,000 boards.)"""
    hands = outcomes(gate_pairs("greedy", "greedy-no-calls", 300, GATE_SEED), 0)
    counts = pentanomial_counts(hands, "greedy")
    assert sum(counts) == 300 and counts[2] >= 0.97 * 300, counts
    elo0, elo1 = PRESETS["gain"]
    runs = simulate(counts, elo1, elo0=elo0, elo1=elo1, runs=600, rng=np.random.default_rng(3))
    assert runs.passed >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / 600), runs.passed
