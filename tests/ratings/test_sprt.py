"""Tests of the pentanomial GSPRT gate on duplicate board pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ratings import (
    PAIR_SCORES,
    PRIOR_PAIRS,
    HandOutcome,
    RatingError,
    SprtVerdict,
    clear_answer,
    constrained_mle,
    elo_estimate,
    expected_score,
    llr,
    llr_approx,
    llr_approx_array,
    llr_array,
    llr_exact,
    log_wealth,
    log_wealth_array,
    pentanomial_counts,
    pentanomial_index,
    prior_counts,
    sprt,
    sprt_bounds,
    sprt_decision,
)
from arena.ratings.gate_calibration import PRESETS, SHAPES, simulate, tilted
from arena.ratings.sprt import BET_FRACTIONS, CLEAR_SHARE

SCORES = np.array(PAIR_SCORES)


def test_bounds_match_fishtest() -> None:
    assert sprt_bounds(0.05, 0.05) == pytest.approx((-2.9444, 2.9444), abs=1e-4)
    assert sprt_bounds(0.05, 0.10) == pytest.approx((math.log(0.10 / 0.95), math.log(0.90 / 0.05)))
    with pytest.raises(ValueError):
        sprt_bounds(0.6, 0.5)


def test_pentanomial_index() -> None:
    assert [pentanomial_index(a, b) for a, b in [(0, 0), (0, 0.5), (1, 0), (0.5, 0.5)]] == [
        0,
        1,
        2,
        2,
    ]
    assert [pentanomial_index(a, b) for a, b in [(0.5, 1), (1, 0.5), (1, 1)]] == [3, 3, 4]
    with pytest.raises(ValueError):
        pentanomial_index(0.25, 1)


def test_pentanomial_counts_from_gate_hands() -> None:
    """Candidate+candidate vs reference+reference, the candidate at N/S or at E/W."""
    cc = ("cand", "ref", "cand", "ref")
    rr = ("ref", "cand", "ref", "cand")
    hands = [
        HandOutcome("b1", cc, 100, 0, 0),  # W
        HandOutcome("b1", cc, 0, 100, 1),  # L → [WL] = 2
        HandOutcome("b2", rr, 0, 100, 0),  # candidate is team B: W
        HandOutcome("b2", rr, 50, 50, 1),  # D → [WD] = 3
        HandOutcome("b3", cc, 20, 80, 0),  # L
        HandOutcome("b3", cc, 10, 90, 1),  # L → [LL] = 0
        HandOutcome("b4", cc, 100, 0, 0),  # unpaired: skipped
        HandOutcome("b5", ("x", "y", "x", "y"), 100, 0, 0),
        HandOutcome("b5", ("x", "y", "x", "y"), 100, 0, 1),  # candidate absent: skipped
    ]
    assert pentanomial_counts(hands, "cand") == (1, 0, 1, 1, 0)
    assert pentanomial_counts(hands, "ref") == (0, 1, 1, 0, 1)
    mixed = [HandOutcome("b", ("cand", "cand", "r", "r"), 1, 0, r) for r in (0, 1)]
    with pytest.raises(RatingError, match="both teams"):
        pentanomial_counts(mixed, "cand")


def test_approximate_llr_pinned() -> None:
    """n = 332, Σ n_k·a_k = 169.5, Σ n_k·a_k² = 98.875, worked by hand from §4.2."""
    counts = [10, 50, 200, 60, 12]
    mean = 169.5 / 332
    variance = 98.875 / 332 - mean**2
    s1 = 1 / (1 + 10 ** (-20 / 400))
    by_hand = 332 * (s1 - 0.5) * (2 * mean - 0.5 - s1) / (2 * variance)
    assert llr_approx(counts, 0.0, 20.0) == pytest.approx(by_hand, rel=1e-12)
    assert by_hand == pytest.approx(-0.98452, abs=1e-5)
    # The vectorised form gives the same numbers row by row.
    rows = [counts, [0, 20, 100, 30, 5], [0, 0, 0, 0, 0]]
    expected = [llr_approx(row, 0.0, 20.0) for row in rows]
    assert llr_approx_array(rows, 0.0, 20.0).tolist() == pytest.approx(expected)
    assert expected[2] == 0.0


@pytest.mark.parametrize("counts", [[10, 50, 200, 60, 12], [0, 20, 100, 30, 5], [3, 1, 0, 9, 2]])
@pytest.mark.parametrize("score", [0.3, 0.5, 0.53])
def test_constrained_mle_is_the_constrained_maximum(counts: list[int], score: float) -> None:
    fitted = np.array(constrained_mle(counts, score))
    assert fitted.sum() == pytest.approx(1.0, abs=1e-12)
    assert fitted @ SCORES == pytest.approx(score, abs=1e-12)
    cells = np.where(np.array(counts) == 0, 1e-3, np.array(counts, dtype=float))
    freq = cells / cells.sum()
    # Lagrange form: p̂_i / p_i = 1 + θ(a_i − s) for one θ.
    ratio = freq / fitted - 1.0
    theta = ratio[-1] / (1.0 - score)
    assert ratio == pytest.approx(theta * (SCORES - score), abs=1e-9)
    # No feasible move (keeping the sum and the mean) raises the likelihood.
    rng = np.random.default_rng(0)
    constraints = np.vstack([np.ones(5), SCORES])
    basis = np.linalg.svd(constraints)[2][2:]  # directions keeping sum and mean fixed
    best = freq @ np.log(fitted)
    for _ in range(200):
        trial = fitted + 1e-3 * (rng.normal(size=3) @ basis)
        if np.all(trial > 0):
            assert freq @ np.log(trial) <= best + 1e-15


def expansion_terms(counts: list[int], elo0: float, elo1: float) -> tuple[float, float, float]:
    """Returns (n·(3rd + 4th order terms), n·ε⁵, ε) of the profile log-likelihood expansion.

    For the multinomial constrained to mean s, with d = ŝ − s and central moments v, m3, m4
    of the pair score, expanding the secular equation in d gives the profile
    ℓ(s)/n = −[d²/(2v) + m3·d³/(3v³) + d⁴·(m3²/(2v⁵) + 1/(2v²) − m4/(4v⁴))] + O(d⁵).
    The GSPRT approximation keeps only the d² term, so exact − approx should equal the
    d³ and d⁴ terms up to a fifth-order remainder, of size n·ε⁵ with ε = max|d_j|/√v.
    """
    cells = np.where(np.array(counts) == 0, 1e-3, np.array(counts, dtype=float))
    n = cells.sum()
    freq = cells / n
    mean = freq @ SCORES
    v, m3, m4 = (freq @ (SCORES - mean) ** k for k in (2, 3, 4))

    def higher(d: float) -> float:
        quartic = m3**2 / (2 * v**5) + 1 / (2 * v**2) - m4 / (4 * v**4)
        return float(m3 * d**3 / (3 * v**3) + quartic * d**4)

    d0, d1 = mean - expected_score(elo0), mean - expected_score(elo1)
    eps = max(abs(d0), abs(d1)) / math.sqrt(v)
    return n * (higher(d0) - higher(d1)), n * eps**5, eps


GATE_COUNTS = [
    ([10, 50, 200, 60, 12], (0.0, 20.0)),
    ([0, 20, 100, 30, 5], (0.0, 20.0)),
    ([30, 120, 500, 140, 40], (-10.0, 0.0)),
    ([21, 90, 560, 101, 28], (0.0, 10.0)),
    ([40, 180, 1200, 205, 45], (0.0, 20.0)),
    ([12, 61, 240, 70, 17], (-5.0, 15.0)),
]


@pytest.mark.parametrize(("counts", "elos"), GATE_COUNTS)
def test_approximate_llr_error_is_the_neglected_expansion_terms(
    counts: list[int], elos: tuple[float, float]
) -> None:
    """Tolerance: a fifth-order remainder of at most 5·n·ε⁵ (over 300 random pentanomials
    with n = 100..3000 the largest remainder seen was 2.75·n·ε⁵)."""
    exact, approx = llr_exact(counts, *elos), llr_approx(counts, *elos)
    predicted, remainder, eps = expansion_terms(counts, *elos)
    assert eps < 0.3  # hypotheses near the data, where the gate decides
    assert exact - approx == pytest.approx(predicted, abs=5 * remainder + 1e-9)
    # In this range the two statistics agree to within 5 % (or 0.05 in LLR).
    assert approx == pytest.approx(exact, rel=0.05, abs=0.05)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(
    counts=st.lists(st.integers(0, 300), min_size=5, max_size=5),
    elos=st.tuples(st.floats(-60, 60), st.floats(1, 40), st.floats(1, 40)),
)
def test_llr_is_additive_and_mirror_symmetric(
    counts: list[int], elos: tuple[float, float, float]
) -> None:
    """Both LLRs telescope over a middle hypothesis, and mirroring the pair scores
    (a → 1 − a) with negated bounds flips the sign."""
    e0, e1, e2 = elos[0], elos[0] + elos[1], elos[0] + elos[1] + elos[2]
    mirrored = counts[::-1]
    for statistic in (llr_approx, llr_exact):
        whole = statistic(counts, e0, e2)
        middle = statistic(counts, e0, e1) + statistic(counts, e1, e2)
        assert whole == pytest.approx(middle, abs=1e-6)
        assert statistic(mirrored, -e2, -e0) == pytest.approx(-whole, abs=1e-6)


def test_decision_rule_and_caps() -> None:
    assert sprt_decision(2.95) is SprtVerdict.ACCEPT_H1
    assert sprt_decision(-2.95) is SprtVerdict.ACCEPT_H0
    assert sprt_decision(2.9) is SprtVerdict.CONTINUE
    strong = [5, 30, 300, 90, 40]
    assert sprt(strong, elo0=0.0, elo1=20.0).verdict is SprtVerdict.ACCEPT_H1
    assert sprt(strong, elo0=0.0, elo1=20.0, min_pairs=1000).verdict is SprtVerdict.CONTINUE
    level = [40, 100, 420, 100, 40]
    result = sprt(level, elo0=0.0, elo1=20.0)
    assert result.verdict is SprtVerdict.ACCEPT_H0 and result.pairs == 700
    assert not result.clear
    assert sprt([4, 10, 40, 11, 5], elo0=0.0, elo1=20.0).verdict is SprtVerdict.CONTINUE
    capped = sprt([4, 10, 40, 11, 5], elo0=0.0, elo1=20.0, max_pairs=70)
    assert capped.verdict is SprtVerdict.INCONCLUSIVE


def fishtest_llr(cells: list[float], s0: float, s1: float) -> float:
    """fishtest's ``N·LLR_alt2`` written out: (N/2)·ln(r0/r1), r_j = Σp(a − s_j)²."""
    n = sum(cells)
    pairs = list(zip(cells, PAIR_SCORES, strict=True))
    r0, r1 = (sum(c * (a - s) ** 2 for c, a in pairs) / n for s in (s0, s1))
    return n / 2 * math.log(r0 / r1)


def test_gate_llr_is_fishtests_on_the_counts_plus_the_pseudo_pairs() -> None:
    """Three ½ pairs at [0, 20]: the pseudo-pairs are 2.5·(1 − m) lost and 2.5·m won pairs,
    m = (½ + L(20))/2; fishtest's statistic on the eight cells' worth of pairs."""
    s1 = 1 / (1 + 10 ** (-20 / 400))
    m = (0.5 + s1) / 2
    assert prior_counts(0.0, 20.0).tolist() == pytest.approx([2.5 * (1 - m), 0, 0, 0, 2.5 * m])
    by_hand = fishtest_llr([2.5 * (1 - m), 0, 3, 0, 2.5 * m], 0.5, s1)
    assert llr([0, 0, 3, 0, 0], 0.0, 20.0) == pytest.approx(by_hand, rel=1e-12)
    assert by_hand == pytest.approx(-0.0108895, abs=1e-6)
    # Without pseudo-pairs it is fishtest's statistic on the counts alone.
    counts = [10, 50, 200, 60, 12]
    assert llr(counts, 0.0, 20.0, prior=0.0) == pytest.approx(
        fishtest_llr([10, 50, 200, 60, 12], 0.5, s1), rel=1e-12
    )
    rows = [counts, [0, 0, 3, 0, 0], [0, 0, 0, 0, 0]]
    assert llr_array(rows, 0.0, 20.0).tolist() == pytest.approx(
        [llr(row, 0.0, 20.0) for row in rows]
    )
    assert llr([0, 0, 0, 0, 0], 0.0, 20.0) == 0.0


def test_equal_pairs_no_longer_decide_at_once() -> None:
    """Three ½ pairs: v̂ ≈ 0 sent fishtest's regularised LLR far below the H0 bound (the
    reason for the old 100-pair floor); with the pseudo-pairs it barely moves, and runs of
    ½ pairs pass nonreg only at pair 134, by when a 3 % rate of lost pairs (what −10 Elo
    needs on this shape) would have shown one with probability 98 %."""
    assert llr_approx([0, 0, 3, 0, 0], 0.0, 20.0) < -5.0
    assert abs(llr([0, 0, 3, 0, 0], 0.0, 20.0)) < 0.05
    assert sprt([0, 0, 3, 0, 0], elo0=0.0, elo1=20.0).verdict is SprtVerdict.CONTINUE
    first = next(
        n
        for n in range(1, 1000)
        if sprt([0, 0, n, 0, 0], elo0=-10, elo1=0).verdict is not SprtVerdict.CONTINUE
    )
    assert first == 134 and 1 - (1 - 0.0288) ** first > 0.98
    assert sprt([0, 0, first, 0, 0], elo0=-10, elo1=0).verdict is SprtVerdict.ACCEPT_H1


@settings(max_examples=100, deadline=None)
@given(
    counts=st.lists(st.integers(0, 300), min_size=5, max_size=5),
    elos=st.tuples(st.floats(-60, 60), st.floats(1, 40)),
)
def test_gate_llr_is_mirror_symmetric(counts: list[int], elos: tuple[float, float]) -> None:
    """Mirroring the pair scores (a → 1 − a) with negated bounds flips the sign: the
    pseudo-pairs favour neither hypothesis."""
    e0, e1 = elos[0], elos[0] + elos[1]
    assert llr(counts[::-1], -e1, -e0) == pytest.approx(-llr(counts, e0, e1), abs=1e-6)


@settings(max_examples=100, deadline=None)
@given(
    weights=st.lists(st.floats(0.0, 1.0), min_size=5, max_size=5).filter(lambda w: sum(w) > 0.1),
    side=st.sampled_from([-1, 1]),
)
def test_bettor_expects_no_gain_at_the_tested_score(weights: list[float], side: int) -> None:
    """For any pair-score distribution with mean s, each stake's factor 1 + λ·side·(a − s)
    averages exactly 1, so the wealth is a martingale there (Ville: P(ever ≥ 1/δ) ≤ δ)."""
    p = np.array(weights) / sum(weights)
    score = float(p @ SCORES)
    if not 0.01 < score < 0.99:
        return
    one_pair = np.exp(log_wealth_array(np.eye(5), score, side))
    assert p @ one_pair == pytest.approx(1.0, abs=1e-9)


def test_clear_answer_for_a_candidate_losing_every_pair() -> None:
    """All pairs lost at nonreg: the LLR falls by only about 0.03 a pair, but each stake of
    the bettor against a score of ½ grows (1 + f)-fold a pair. Worked by hand: the mean of
    (1 + f)^n over the seven fractions is 71.96 at n = 9 and 128.98 at n = 10, against 1/(0.2·0.05)
    = 100."""
    assert BET_FRACTIONS == (0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.9) and CLEAR_SHARE == 0.2
    nine, ten = [9, 0, 0, 0, 0], [10, 0, 0, 0, 0]
    assert math.exp(log_wealth(nine, 0.5, -1)) == pytest.approx(71.96, abs=0.01)
    assert math.exp(log_wealth(ten, 0.5, -1)) == pytest.approx(128.98, abs=0.01)
    assert -0.3 < llr(ten, -10.0, 0.0) < -0.25
    assert clear_answer(nine, elo0=-10.0, elo1=0.0) is SprtVerdict.CONTINUE
    result = sprt(ten, elo0=-10.0, elo1=0.0)
    assert result.verdict is SprtVerdict.ACCEPT_H0 and result.clear
    # The mirror image passes gain as clearly.
    assert sprt([0, 0, 0, 0, 10], elo0=0.0, elo1=10.0).verdict is SprtVerdict.ACCEPT_H1


def test_elo_estimate_pinned() -> None:
    """ŝ = ½, v̂ = 0.075, n = 100, 2.5 pseudo-pairs of spread ¼:
    ṽ = (7.5 + 0.625)/102.5, ½ ± 1.96·√(ṽ/100) = ½ ± 0.05518 → ±38.50 Elo."""
    assert PRIOR_PAIRS == 2.5
    estimate = elo_estimate([10, 20, 40, 20, 10])
    assert estimate.elo == pytest.approx(0.0, abs=1e-9)
    assert (estimate.lower, estimate.upper) == pytest.approx((-38.50, 38.50), abs=0.01)
    assert estimate.pairs == 100
    skewed = elo_estimate([0, 10, 40, 30, 20])
    assert skewed.elo == pytest.approx(400 * math.log10(0.65 / 0.35), abs=0.05)
    assert skewed.lower < skewed.elo < skewed.upper


def test_mirrored_pairs_give_an_interval_that_narrows_not_a_point() -> None:
    """100 pairs all ½ (a deterministic bot against its copy): ṽ = 0.625/102.5, so
    ½ ± 1.96·√(ṽ/100) = ½ ± 0.01531 → ±10.64 Elo, near the rule of three's 3/(2n)."""
    estimate = elo_estimate([0, 0, 100, 0, 0])
    assert (estimate.lower, estimate.upper) == pytest.approx((-10.64, 10.64), abs=0.01)


def test_tilted_shape_keeps_its_empty_cells() -> None:
    counts = SHAPES[0].counts
    p = tilted(counts, expected_score(-10.0))
    assert p @ SCORES == pytest.approx(expected_score(-10.0), abs=1e-12)
    assert p[1] == 0.0 and p[3] == 0.0
    with pytest.raises(ValueError):
        tilted((0, 0, 10, 5, 985), 0.4)


def test_simulated_stops_agree_with_the_scalar_gate() -> None:
    """The vectorised simulation stops with the verdict the library's gate gives there."""
    elo0, elo1 = PRESETS["nonreg"]
    runs = simulate(
        SHAPES[0].counts, elo0, elo0=elo0, elo1=elo1, runs=40, rng=np.random.default_rng(7)
    )
    for verdict, length, counts in zip(runs.verdicts, runs.lengths, runs.counts, strict=True):
        final = [int(c) for c in counts]
        assert sum(final) == length
        expected = SprtVerdict.ACCEPT_H1 if verdict == 1 else SprtVerdict.ACCEPT_H0
        assert sprt(final, elo0=elo0, elo1=elo1).verdict is expected
        assert verdict != 0


RUNS = 600
MARGIN = 3 * math.sqrt(0.05 * 0.95 / RUNS)  # three binomial standard errors, ≈ 0.027


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name.split(":")[0])
def test_gate_error_rates_hold_on_real_shapes(shape: object) -> None:
    """The fast version of scripts/calibrate_gate.py: false pass at elo0 and power at elo1
    of both presets within three Monte Carlo errors of 5 % and 95 % or better, and a
    candidate 200 Elo worse stopped in a median below 30 pairs."""
    from arena.ratings.gate_calibration import Shape

    assert isinstance(shape, Shape)
    rng = np.random.default_rng(2026)
    for elo0, elo1 in PRESETS.values():
        null = simulate(shape.counts, elo0, elo0=elo0, elo1=elo1, runs=RUNS, rng=rng)
        alternative = simulate(shape.counts, elo1, elo0=elo0, elo1=elo1, runs=RUNS, rng=rng)
        broken = simulate(shape.counts, elo0 - 200, elo0=elo0, elo1=elo1, runs=RUNS, rng=rng)
        assert null.passed <= 0.05 + MARGIN
        assert alternative.passed >= 0.95 - MARGIN
        assert broken.median_length < 30 and broken.passed == 0.0


@settings(max_examples=200, deadline=None)
@given(
    cells=st.lists(st.integers(0, 4), min_size=1, max_size=100),
    preset=st.sampled_from(list(PRESETS.values())),
)
def test_the_live_llr_moves_smoothly(cells: list[int], preset: tuple[float, float]) -> None:
    """Issue 24: the live LLR of a broken candidate went −2,838, −111, −28 as pairs came
    in. Over the first 100 pairs the gate's LLR now moves by at most 1.5 a pair on any
    sequence (the largest step, −1.27, is a lost pair after 99 ½ pairs), starting at 0."""
    path = np.cumsum(np.eye(5)[cells], axis=0)
    statistic = llr_array(path, *preset)
    steps = np.diff(np.concatenate([[0.0], statistic]))
    assert np.abs(steps).max() <= 1.5
    assert abs(statistic[0]) < 0.05  # one pair proves little
