"""Tests of the pentanomial GSPRT gate on duplicate board pairs."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ratings import (
    DEFAULT_MIN_PAIRS,
    PAIR_SCORES,
    HandOutcome,
    RatingError,
    SprtVerdict,
    constrained_mle,
    elo_estimate,
    expected_score,
    llr_approx,
    llr_approx_array,
    llr_exact,
    pentanomial_counts,
    pentanomial_index,
    sprt,
    sprt_bounds,
    sprt_decision,
)

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
    for llr in (llr_approx, llr_exact):
        whole = llr(counts, e0, e2)
        assert whole == pytest.approx(llr(counts, e0, e1) + llr(counts, e1, e2), abs=1e-6)
        assert llr(mirrored, -e2, -e0) == pytest.approx(-whole, abs=1e-6)


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
    assert sprt([4, 10, 40, 11, 5], elo0=0.0, elo1=20.0).verdict is SprtVerdict.CONTINUE
    capped = sprt([4, 10, 40, 11, 5], elo0=0.0, elo1=20.0, max_pairs=70)
    assert capped.verdict is SprtVerdict.INCONCLUSIVE


def test_min_pairs_guards_against_a_near_zero_variance() -> None:
    """Three drawn pairs give v̂ ≈ 0 and an LLR far below the H0 bound."""
    assert llr_approx([0, 0, 3, 0, 0], 0.0, 20.0) < -5.0
    assert sprt([0, 0, 3, 0, 0], elo0=0.0, elo1=20.0).verdict is SprtVerdict.CONTINUE


def test_elo_estimate_pinned() -> None:
    """ŝ = ½, v̂ = 0.075, n = 100: ŝ ± 1.96·√(0.075/100) = ½ ± 0.05368 → ±37.44 Elo."""
    estimate = elo_estimate([10, 20, 40, 20, 10])
    assert estimate.elo == pytest.approx(0.0, abs=1e-9)
    assert (estimate.lower, estimate.upper) == pytest.approx((-37.44, 37.44), abs=0.01)
    assert estimate.pairs == 100
    skewed = elo_estimate([0, 10, 40, 30, 20])
    assert skewed.elo == pytest.approx(400 * math.log10(0.65 / 0.35), abs=0.05)
    assert skewed.lower < skewed.elo < skewed.upper


# A duplicate-like pair distribution: most pairs split (WL/LW), mean ½ before tilting.
BASE = np.array([0.05, 0.15, 0.6, 0.15, 0.05])


def tilted(score: float) -> npt.NDArray[np.float64]:
    """Exponentially tilts BASE to the given mean pair score."""
    low, high = -50.0, 50.0
    for _ in range(100):
        t = 0.5 * (low + high)
        weights = BASE * np.exp(t * SCORES)
        if weights @ SCORES / weights.sum() < score:
            low = t
        else:
            high = t
    result: npt.NDArray[np.float64] = weights / weights.sum()
    return result


def run_sprts(
    rng: np.random.Generator, elo: float, runs: int, cap: int = 5000, block: int = 100
) -> tuple[npt.NDArray[np.int_], npt.NDArray[np.int_], npt.NDArray[np.float64]]:
    """Simulates ``runs`` SPRTs [0, 20] at the true ``elo`` by drawing pair outcomes only.

    Returns each run's verdict (1 = H1, −1 = H0, 0 = none by ``cap``), its length and its
    final counts. The rule is the library's: bounds for α = β = 0.05, no stop before
    DEFAULT_MIN_PAIRS, checked after every pair.
    """
    lower, upper = sprt_bounds(0.05, 0.05)
    cdf = np.cumsum(tilted(expected_score(elo)))
    cdf[-1] = 1.0
    counts = np.zeros((runs, 5))
    verdicts = np.zeros(runs, dtype=int)
    lengths = np.zeros(runs, dtype=int)
    active = np.arange(runs)
    played = 0
    while active.size and played < cap:
        cells = np.searchsorted(cdf, rng.random((active.size, block)), side="right")
        running = counts[active][:, None, :] + np.cumsum(np.eye(5)[cells], axis=1)
        llr = llr_approx_array(running, 0.0, 20.0)
        pairs = played + np.arange(1, block + 1)
        crossed = ((llr >= upper) | (llr <= lower)) & (pairs >= DEFAULT_MIN_PAIRS)
        stopped = crossed.any(axis=1)
        first = crossed.argmax(axis=1)
        done = active[stopped]
        at = first[stopped]
        verdicts[done] = np.where(llr[stopped, at] >= upper, 1, -1)
        lengths[done] = played + at + 1
        counts[done] = running[stopped, at]
        counts[active[~stopped]] = running[~stopped, -1]
        active = active[~stopped]
        played += block
    return verdicts, lengths, counts


RUNS = 4000
MARGIN = 3 * math.sqrt(0.05 * 0.95 / RUNS)  # three binomial standard errors, ≈ 0.010


@pytest.mark.slow
def test_false_positive_rate_at_elo0_is_at_most_alpha() -> None:
    verdicts, _, counts = run_sprts(np.random.default_rng(2024), 0.0, RUNS)
    assert np.mean(verdicts == 1) <= 0.05 + MARGIN
    assert np.mean(verdicts == -1) >= 0.95 - MARGIN
    # The scalar gate agrees with the vectorised replay where the runs stopped.
    for i in range(20):
        final = [int(c) for c in counts[i]]
        expected = SprtVerdict.ACCEPT_H1 if verdicts[i] == 1 else SprtVerdict.ACCEPT_H0
        assert sprt(final, elo0=0.0, elo1=20.0).verdict is expected


@pytest.mark.slow
def test_power_at_elo1_is_about_one_minus_beta() -> None:
    verdicts, lengths, _ = run_sprts(np.random.default_rng(2025), 20.0, RUNS)
    assert 0.95 - MARGIN <= np.mean(verdicts == 1) <= 0.98
    # §4.2: expected pairs under H1 ≈ 2·2.944·v/(s1 − s0)², here about 314.
    pdf = tilted(expected_score(20.0))
    v = pdf @ (SCORES - pdf @ SCORES) ** 2
    predicted = 2 * 2.944 * v / (expected_score(20.0) - 0.5) ** 2
    assert 0.75 * predicted <= np.mean(lengths[verdicts != 0]) <= 1.25 * predicted
