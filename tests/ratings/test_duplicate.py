"""Tests of duplicate pairing, ρ̂ and margins per bot."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.ratings import (
    HandOutcome,
    RatingError,
    board_pairs,
    duplicate_stats,
    fit_margins,
    margin_to_elo,
)

SEATS = ("N1", "E1", "S1", "W1")


def pairs_with_margins(first: list[int], second: list[int]) -> list[HandOutcome]:
    """One line-up plays each board twice; team A's margins are ``first`` and ``second``."""
    hands = []
    for b, (d0, d1) in enumerate(zip(first, second, strict=True)):
        hands.append(HandOutcome(f"b{b}", SEATS, d0, 0, rotation=0))
        hands.append(HandOutcome(f"b{b}", SEATS, d1, 0, rotation=1))
    return hands


def test_board_pairs_match_rotations_of_one_line_up() -> None:
    other = ("E1", "N1", "W1", "S1")
    hands = [
        HandOutcome("b1", SEATS, 10, 0, rotation=1),  # second play logged first
        HandOutcome("b1", other, 30, 0, rotation=0),  # another table, no partner play
        HandOutcome("b1", SEATS, 20, 0, rotation=0),
        HandOutcome("b2", SEATS, 40, 0, rotation=2),
        HandOutcome("b2", SEATS, 50, 0, rotation=3),
    ]
    pairs = board_pairs(hands)
    assert [(a.score_a, b.score_a) for a, b in pairs] == [(20, 10), (40, 50)]
    with pytest.raises(RatingError, match="twice"):
        board_pairs([*hands, HandOutcome("b2", SEATS, 0, 0, rotation=3)])


@pytest.mark.parametrize(
    ("along", "across", "multiplier"), [(-60, 80, 2.5), (0, 100, 1.0), (60, 80, 0.625)]
)
def test_rho_on_constructed_pairs(along: int, across: int, multiplier: float) -> None:
    """z0 and z1 are centred, orthogonal and of equal length, so the second margins
    ``along·z0 + across·z1`` (with along² + across² = 100²) have correlation along/100."""
    z0 = np.array([1, -1, 1, -1])
    z1 = np.array([1, 1, -1, -1])
    first = (100 * z0).tolist()
    second = (along * z0 + across * z1).tolist()
    stats = duplicate_stats(pairs_with_margins(first, second))
    assert stats.pairs == 4
    assert stats.correlation == pytest.approx(along / 100, abs=1e-12)
    assert stats.effective_sample_multiplier == pytest.approx(multiplier, rel=1e-12)
    # Both plays have sample variance σ² = 4·100²/3, so Var(D) = 2σ²(1 + ρ) exactly.
    assert stats.pair_margin_variance == pytest.approx(2 * (40000 / 3) * (1 + along / 100))


def test_identical_line_ups_give_perfect_anticorrelation() -> None:
    """Two identical deterministic line-ups: D = 0 on every board, ρ̂ = −1 (§2.4)."""
    margins = [120, -40, 200, -100, 0, 35]
    stats = duplicate_stats(pairs_with_margins(margins, [-d for d in margins]))
    assert stats.correlation == pytest.approx(-1.0)
    assert stats.effective_sample_multiplier == math.inf
    assert stats.pair_margin_variance == 0.0
    assert stats.pair_score_variance == 0.0
    assert stats.independent_pair_score_variance > 0.0


def test_rho_and_variance_on_simulated_card_luck() -> None:
    """Margins with card luck c: d0 = t + c + e0, d1 = t − c + e1 (A holds the other cards).

    With sd(c) = 80 and sd(e) = 40, ρ = (−80²)/(80² + 40²) = −0.8 and Var(D) = 2σ²(1 + ρ).
    """
    rng = np.random.default_rng(11)
    n = 4000
    luck = rng.normal(0, 80, n)
    first = np.rint(5 + luck + rng.normal(0, 40, n)).astype(int).tolist()
    second = np.rint(5 - luck + rng.normal(0, 40, n)).astype(int).tolist()
    stats = duplicate_stats(pairs_with_margins(first, second))
    assert stats.correlation == pytest.approx(-0.8, abs=0.015)
    assert stats.effective_sample_multiplier == pytest.approx(5.0, rel=0.1)
    sigma2 = stats.margin_sd**2
    assert stats.pair_margin_variance == pytest.approx(
        2 * sigma2 * (1 + stats.correlation), rel=0.05
    )
    # Hand outcomes are anticorrelated too, so a pair's score varies less than if independent.
    assert stats.pair_score_variance < 0.5 * stats.independent_pair_score_variance


def test_duplicate_stats_needs_two_varying_pairs() -> None:
    with pytest.raises(RatingError, match="at least 2"):
        duplicate_stats(pairs_with_margins([10], [-10]))
    with pytest.raises(RatingError, match="constant"):
        duplicate_stats(pairs_with_margins([10, 10, 10], [-10, 5, 0]))


TRUE_MARGINS = {"A": 30.0, "B": 10.0, "C": -10.0, "D": -30.0}
SPLITS = (("A", "B", "C", "D"), ("A", "C", "B", "D"), ("A", "D", "B", "C"))


def margin_hands(rng: np.random.Generator | None, boards: int) -> list[HandOutcome]:
    """All three partnership splits, each board played in rotations 0 and 1.

    The expected margin is x·θ; noise is card luck (±, cancelling over the pair) plus
    independent play noise, in whole points.
    """
    hands = []
    for split, (a1, a2, b1, b2) in enumerate(SPLITS):
        expected = (TRUE_MARGINS[a1] + TRUE_MARGINS[a2] - TRUE_MARGINS[b1] - TRUE_MARGINS[b2]) / 2
        for b in range(boards):
            luck = rng.normal(0, 90) if rng is not None else 0.0
            for rotation, sign in ((0, 1.0), (1, -1.0)):
                noise = rng.normal(0, 50) if rng is not None else 0.0
                margin = round(expected + sign * luck + noise)
                hands.append(HandOutcome(f"s{split}b{b}", (a1, b1, a2, b2), margin, 0, rotation))
    return hands


def test_margins_recovered_exactly_without_noise() -> None:
    fit = fit_margins(margin_hands(None, 3))
    assert fit.margins == pytest.approx(tuple(TRUE_MARGINS.values()), abs=1e-9)
    assert fit.residual_sd == pytest.approx(0.0, abs=1e-9)
    assert fit.boards == 9
    assert fit.hands == (18, 18, 18, 18)


def test_margins_recovered_within_their_errors() -> None:
    fit = fit_margins(margin_hands(np.random.default_rng(5), 400))
    model = fit_margins(margin_hands(np.random.default_rng(5), 400), robust=False)
    assert sum(fit.margins) == pytest.approx(0.0, abs=1e-9)
    for bot, true in TRUE_MARGINS.items():
        lower, upper = fit.interval(bot, level=0.997)
        assert lower <= true <= upper
        # Card luck cancels within a board, which only the robust errors see.
        assert fit.stderr(bot) < 0.7 * model.stderr(bot)
    assert fit.residual_sd == pytest.approx(math.hypot(90, 50), rel=0.05)


def test_margin_to_elo() -> None:
    """Small gaps: about 277·θ/σ_h; σ_h = 120 and θ = 10 give about 23 hand-Elo (§3.5)."""
    assert margin_to_elo(0.001, 1.0) / 0.001 == pytest.approx(277.2, abs=0.1)
    assert margin_to_elo(10.0, 120.0) == pytest.approx(23.1, abs=0.05)
    assert margin_to_elo(-10.0, 120.0) == pytest.approx(-23.1, abs=0.05)
    assert margin_to_elo(1e4, 1.0) == math.inf


def test_rho_is_measured_within_line_ups() -> None:
    """Two line-ups far apart in strength, card luck anticorrelated within each: ρ̂ < 0.

    Pooled over both line-ups the margins would correlate positively (+0.92 here): that
    measures the line-ups, not the cards.
    """
    other = ("E1", "N1", "W1", "S1")
    luck = [30, -10, 20, -40, 0, 10]
    hands = []
    for b, u in enumerate(luck):
        for seats, skill in ((SEATS, 150), (other, -150)):
            hands.append(HandOutcome(f"b{b}", seats, skill + u, 0, rotation=0))
            hands.append(HandOutcome(f"b{b}", seats, skill - u, 0, rotation=1))
    stats = duplicate_stats(hands)
    assert stats.pairs == 12
    assert stats.correlation == pytest.approx(-1.0)
    first = [h.margin for h in hands if h.rotation == 0]
    second = [h.margin for h in hands if h.rotation == 1]
    assert np.corrcoef(first, second)[0, 1] > 0.9
