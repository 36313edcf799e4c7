"""Rating and margin intervals on simulated events with known strengths (the fast half).

``scripts/calibrate_ratings.py`` runs thousands of events per scenario for docs/ratings.md;
these tests run a few hundred of the lopsided demo field, a sparse field and margins, and
check the width's 1/√n law and perfect records. Their bands allow for the sampling error of
a few hundred intervals (four to eight per event, not independent).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from arena.ratings import fit_ratings
from arena.ratings.calibration import DEMO, Coverage, Scenario, measure, simulate_event, table_rows


def test_demo_field_intervals_cover_the_truth() -> None:
    """Two strong bots and two random ones, 144 hands: the plain sandwich covered 54 %."""
    c = measure(Scenario("demo", 3, 24, DEMO), events=100, seed=1)
    assert c.intervals == 400
    assert 0.91 <= c.rate <= 0.995, c.rate


def test_near_perfect_records_are_not_over_covered() -> None:
    """The strong pair loses about one hand in a hundred: the prior's scale sets how far its
    interval reaches (a N(0, 1000 Elo) prior covered 98.8 % of 8,000 and 99.4 % of these)."""
    c = measure(Scenario("near-perfect", 3, 24, (500.0, 500.0, -500.0, -500.0)), 200, seed=6)
    assert c.intervals == 800
    assert 0.93 <= c.rate <= 0.98, c.rate


def test_a_sparse_field_is_covered_too() -> None:
    """8 bots, 28 hands each: the sandwich without the leverage correction fails this band."""
    c = measure(Scenario("8 bots", 7, 2, bots=8, spread=200.0), events=150, seed=2)
    assert c.intervals >= 1150
    assert 0.93 <= c.rate <= 0.99, c.rate


def test_margin_intervals_cover_the_truth_with_few_boards() -> None:
    """8 bots, 28 hands each: 14 boards per bot, where the uncorrected sandwich is too small."""
    margins = Scenario("8 bots", 7, 2, bots=8, spread=60.0, kind="margin")
    c = measure(margins, events=200, seed=5)
    assert c.intervals >= 1500
    assert 0.935 <= c.rate <= 0.99, c.rate


def test_width_shrinks_as_one_over_root_n() -> None:
    close = (60.0, 20.0, -20.0, -60.0)
    small = measure(Scenario("close", 3, 24, close), events=30, seed=3)
    large = measure(Scenario("close", 3, 96, close), events=30, seed=3)
    assert large.hands_per_bot == 4 * small.hands_per_bot
    assert math.isclose(small.mean_width / large.mean_width, 2.0, rel_tol=0.1)
    small = measure(Scenario("close", 3, 24, close, kind="margin"), events=30, seed=3)
    large = measure(Scenario("close", 3, 96, close, kind="margin"), events=30, seed=3)
    assert math.isclose(small.mean_width / large.mean_width, 2.0, rel_tol=0.1)


def test_a_perfect_record_gives_a_finite_interval_that_says_at_least() -> None:
    """The strong pair never loses a hand: the interval is finite and wide, not ±0."""
    hands = simulate_event((3000.0, 3000.0, -3000.0, -3000.0), 3, 24, np.random.default_rng(4))
    fit = fit_ratings(hands)
    low, high = fit.interval("b00")
    assert math.isfinite(low) and math.isfinite(high)
    assert low > 0 and high - low > 500
    close = fit_ratings(simulate_event((30.0, 10.0, -10.0, -30.0), 3, 24, np.random.default_rng(4)))
    assert high - low > 2 * np.subtract(*reversed(close.interval("b00")))


def test_the_monte_carlo_error_counts_events_as_clusters() -> None:
    """Two events of four intervals, 4 and 3 covered: p = 7/8, residuals ±½ per event, so
    the error is √(½ / (2·1)) / 4 = 1/8 (the intervals of an event are not independent)."""
    two = Coverage(Scenario("two", 3, 1), 2, 8, 7, 0.0, 0.0, 0, 4 * 4 + 3 * 3, 4 * 4 + 3 * 4, 32)
    assert two.rate == 7 / 8
    assert math.isclose(two.error, 1 / 8)
    one = Coverage(Scenario("one", 3, 1), 1, 4, 4, 0.0, 0.0, 0, 16, 16, 16)
    assert one.error == math.inf


def test_parts_add_up_to_the_whole_with_their_error() -> None:
    scenario = Scenario("demo", 3, 24, DEMO)
    whole = measure(scenario, 30, seed=3)
    parts = measure(scenario, 12, seed=3) + measure(scenario, 18, seed=3, first=12)
    assert math.isclose(parts.width, whole.width, rel_tol=1e-12)  # a float sum, in another order
    assert dataclasses.replace(parts, width=whole.width) == whole
    assert 0.0 < whole.error < 0.1


def test_table_rows_are_counted_from_one() -> None:
    assert table_rows("3,1,3", 4) == [0, 2]
    for bad, why in (("1,x", "like 1,3"), ("0", "numbered 1 to 4"), ("5", "numbered 1 to 4")):
        with pytest.raises(ValueError, match=why):
            table_rows(bad, 4)
