"""Rating intervals on simulated events with known strengths (the fast half of the table).

``scripts/calibrate_ratings.py`` runs 1,000 events per scenario for docs/ratings.md; these
tests run a few hundred of the lopsided demo field and check the width's 1/√n law and
perfect records.
"""

from __future__ import annotations

import math

import numpy as np

from arena.ratings import fit_ratings
from arena.ratings.calibration import DEMO, Scenario, measure, simulate_event


def test_demo_field_intervals_cover_the_truth() -> None:
    """Two strong bots and two random ones, 144 hands: the plain sandwich covered 54 %."""
    c = measure(Scenario("demo", 3, 24, DEMO), events=200, seed=1)
    assert c.intervals == 800
    # 800 intervals (four per event, not independent): a 95 % rate lands in 92.5-97.5 %.
    assert 0.925 <= c.rate <= 0.975, c.rate


def test_a_balanced_field_is_covered_too() -> None:
    c = measure(Scenario("8 bots", 14, 3, bots=8, spread=200.0), events=120, seed=2)
    assert 0.925 <= c.rate <= 0.975, c.rate


def test_width_shrinks_as_one_over_root_n() -> None:
    small = measure(Scenario("demo", 3, 24, DEMO), events=40, seed=3)
    large = measure(Scenario("demo", 3, 96, DEMO), events=40, seed=3)
    assert large.hands_per_bot == 4 * small.hands_per_bot
    assert math.isclose(small.mean_width / large.mean_width, 2.0, rel_tol=0.15)


def test_a_perfect_record_gives_a_finite_interval_that_says_at_least() -> None:
    """The strong pair never loses a hand: the interval is finite and wide, not ±0."""
    hands = simulate_event((3000.0, 3000.0, -3000.0, -3000.0), 3, 24, np.random.default_rng(4))
    fit = fit_ratings(hands)
    low, high = fit.interval("b00")
    assert math.isfinite(low) and math.isfinite(high)
    assert low > 0 and high - low > 500
    close = fit_ratings(simulate_event((30.0, 10.0, -10.0, -30.0), 3, 24, np.random.default_rng(4)))
    assert high - low > 2 * np.subtract(*reversed(close.interval("b00")))
