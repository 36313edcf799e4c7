"""Tests of the batch Bradley–Terry hand-Elo fit."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ratings import ELO_PER_NAT, HandOutcome, RatingError, fit_margins, fit_ratings
from arena.ratings.bradley_terry import _Likelihood

# Wh(8) from §1.3: Z7 + ∞ (label 7), base round (∞ 3 2 0) (1 4 6 5), seats N E S W.
WH8_BASE = ((7, 3, 2, 0), (1, 4, 6, 5))
SPLITS = (("A", "B", "C", "D"), ("A", "C", "B", "D"), ("A", "D", "B", "C"))


def line_up(names: Iterable[str]) -> tuple[str, str, str, str]:
    """Returns four bot names as a seats tuple (seat 0 first)."""
    north, east, south, west = names
    return north, east, south, west


def wh8_rounds() -> list[list[tuple[int, ...]]]:
    """Returns the 7 rounds of Wh(8): every pair partners once and opposes twice."""
    return [
        [tuple(x if x == 7 else (x + r) % 7 for x in table) for table in WH8_BASE] for r in range(7)
    ]


def split_hands(split: int, wins: int, ties: int, losses: int, tag: str) -> list[HandOutcome]:
    """Hands of one partnership split: team A = first two bots of ``SPLITS[split]``."""
    a1, a2, b1, b2 = SPLITS[split]
    scores = [(100, 0)] * wins + [(50, 50)] * ties + [(0, 100)] * losses
    return [
        HandOutcome(f"{tag}{i}", (a1, b1, a2, b2), score_a, score_b)
        for i, (score_a, score_b) in enumerate(scores)
    ]


def worked_example() -> list[HandOutcome]:
    """§3.2: AB beat CD 7/10, AC beat BD 6/10, AD tied BC 5/10 (one board per hand)."""
    return (
        split_hands(0, 7, 0, 3, "ab")
        + split_hands(1, 6, 0, 4, "ac")
        + split_hands(2, 5, 0, 5, "ad")
    )


def test_worked_example_gives_published_ratings() -> None:
    fit = fit_ratings(worked_example(), prior_precision=0.0)
    published = {"A": 108.8, "B": 38.4, "C": -38.4, "D": -108.8}
    for bot, rating in published.items():
        assert fit.rating(bot) == pytest.approx(rating, abs=0.05)
    # The team gaps are exact: 400·log10(7/3) and 400·log10(6/4).
    assert fit.rating("A") + fit.rating("B") == pytest.approx(400 * math.log10(7 / 3), abs=1e-6)
    assert fit.rating("A") + fit.rating("C") == pytest.approx(400 * math.log10(6 / 4), abs=1e-6)
    assert fit.ranking() == ("A", "B", "C", "D")


def test_worked_example_standard_errors() -> None:
    fit = fit_ratings(worked_example(), prior_precision=0.0, robust=False)
    for bot in "ABCD":
        assert fit.stderr(bot) == pytest.approx(98.8, abs=0.05)
    assert fit.diff_stderr("A", "D") == pytest.approx(164.1, abs=0.05)
    # 30 hands cannot separate A from D at 95 %.
    assert 0.5 < fit.los("A", "D") < 0.975
    lower, upper = fit.interval("A")
    assert lower < 0.0 < upper
    # The profile-likelihood interval, pinned: asymmetric like the likelihood of 30 hands.
    assert (lower, upper) == pytest.approx((-90.7, 320.5), abs=0.05)


def test_prior_shrinks_the_worked_example_towards_zero() -> None:
    plain = fit_ratings(worked_example(), prior_precision=0.0)
    shrunk = fit_ratings(worked_example())
    for bot in "ABCD":
        assert abs(shrunk.rating(bot)) < abs(plain.rating(bot))
        assert shrunk.rating(bot) == pytest.approx(plain.rating(bot), rel=0.05)


def test_anchor_and_offset_shift_ratings_and_errors() -> None:
    centred = fit_ratings(worked_example(), prior_precision=0.0)
    anchored = fit_ratings(worked_example(), prior_precision=0.0, anchor="D", offset=1500.0)
    assert anchored.rating("D") == pytest.approx(1500.0)
    assert anchored.stderr("D") == pytest.approx(0.0, abs=1e-9)
    assert anchored.rating("A") - 1500.0 == pytest.approx(217.6, abs=0.1)
    assert anchored.stderr("A") == pytest.approx(centred.diff_stderr("A", "D"))
    assert anchored.los("A", "B") == pytest.approx(centred.los("A", "B"))


def simulate_population(
    rng: np.random.Generator, true: dict[str, float], boards_per_round: int, antithetic: float
) -> list[HandOutcome]:
    """Plays Wh(8) with duplicate boards where each play's win chance is exactly L(Δ).

    A board is a uniform U shared by both tables of its round. Rotation 0 of team A
    is decided by U; rotation 1 (A holds the other cards) by 1 − U with probability
    ``antithetic``, else by a fresh uniform. Each play keeps the exact marginal
    P(win) = L(Δ) − 2.5 % and P(tie) = 5 %, so E[s] = L(Δ) as the model says, while
    the two plays of a board are strongly anticorrelated.
    """
    names = sorted(true)
    tie = 0.05
    hands: list[HandOutcome] = []
    for r, tables in enumerate(wh8_rounds()):
        for b in range(boards_per_round):
            board = f"r{r}b{b}"
            luck = rng.random()
            second = 1.0 - luck if rng.random() < antithetic else rng.random()
            for table in tables:
                seats = line_up(names[x] for x in table)
                gap = (true[seats[0]] + true[seats[2]] - true[seats[1]] - true[seats[3]]) / 2
                p = 1.0 / (1.0 + 10.0 ** (-gap / 400.0))
                for rotation, u in enumerate((luck, second)):
                    if u < p - tie / 2:
                        score = (100, 0)
                    elif u < p + tie / 2:
                        score = (50, 50)
                    else:
                        score = (0, 100)
                    hands.append(HandOutcome(board, seats, *score, rotation=rotation))
    return hands


TRUE_RATINGS = {name: 50.0 * (i - 3.5) for i, name in enumerate("abcdefgh")}


def test_simulated_population_recovered_within_95_percent() -> None:
    rng = np.random.default_rng(20240601)
    hands = simulate_population(rng, TRUE_RATINGS, boards_per_round=150, antithetic=0.8)
    fit = fit_ratings(hands)
    assert fit.boards == 7 * 150
    assert all(n == 7 * 150 * 2 for n in fit.hands)
    for bot, true in TRUE_RATINGS.items():
        lower, upper = fit.interval(bot)
        assert lower <= true <= upper, (bot, true, fit.rating(bot), fit.stderr(bot))
    assert fit.ranking() == tuple("hgfedcba")
    assert sum(fit.ratings) == pytest.approx(0.0, abs=1e-9)


def test_robust_errors_are_calibrated_under_duplicate_anticorrelation() -> None:
    """Over 30 seeded events the robust SE matches the spread of the estimates, the
    95 % intervals cover about 95 %, and the model-based SE overstates the error (§3.3)."""
    rng = np.random.default_rng(7)
    errors, robust_var, model_var = [], [], []
    covered = 0
    for _ in range(30):
        fit = fit_ratings(simulate_population(rng, TRUE_RATINGS, 40, antithetic=0.9))
        for i, (bot, true) in enumerate(sorted(TRUE_RATINGS.items())):
            errors.append(fit.ratings[i] - true)
            robust_var.append(fit.covariance[i][i])
            model_var.append(fit.model_covariance[i][i])
            lower, upper = fit.interval(bot)
            covered += lower <= true <= upper
    spread = math.sqrt(float(np.mean(np.square(errors))))
    assert 0.8 < spread / math.sqrt(float(np.mean(robust_var))) < 1.25
    assert math.sqrt(float(np.mean(model_var))) > 1.3 * spread
    assert 0.89 <= covered / 240 <= 0.995


def test_fewer_than_two_bots_is_an_error() -> None:
    with pytest.raises(RatingError, match="at least 2 bots"):
        fit_ratings([])
    with pytest.raises(RatingError, match="at least 2 bots"):
        fit_ratings([HandOutcome("b", ("x", "x", "x", "x"), 10, 0)])


def test_bot_that_never_lost_gets_a_finite_top_rating_with_the_prior() -> None:
    hands = (
        split_hands(0, 10, 0, 0, "ab")  # A (with B) never loses ...
        + split_hands(1, 10, 0, 0, "ac")
        + split_hands(2, 10, 0, 0, "ad")
    )
    fit = fit_ratings(hands)
    assert fit.ranking()[0] == "A"
    assert 300.0 < fit.rating("A") < 2000.0
    assert math.isfinite(fit.stderr("A"))
    with pytest.raises(RatingError, match="prior_precision"):
        fit_ratings(hands, prior_precision=0.0)


def test_disconnected_groups_are_named() -> None:
    left = (
        split_hands(0, 6, 1, 3, "l") + split_hands(1, 5, 0, 5, "m") + split_hands(2, 4, 2, 4, "n")
    )
    right = [
        HandOutcome(h.board + "'", line_up(x.lower() for x in h.seats), h.score_a, h.score_b)
        for h in left
    ]
    with pytest.raises(RatingError, match=r"2 groups.*A, B, C, D; a, b, c, d"):
        fit_ratings(left + right)


def test_fixed_partnerships_identify_only_team_sums() -> None:
    with pytest.raises(RatingError, match="team sums"):
        fit_ratings(split_hands(0, 6, 1, 3, "f"))


def test_unknown_bot_and_bad_anchor() -> None:
    fit = fit_ratings(worked_example())
    with pytest.raises(KeyError):
        fit.rating("Z")
    with pytest.raises(RatingError, match="anchor"):
        fit_ratings(worked_example(), anchor="Z")
    with pytest.raises(ValueError, match="level"):
        fit.interval("A", level=1.0)


split_records = st.tuples(*[st.tuples(st.integers(0, 6), st.integers(0, 3), st.integers(0, 6))] * 3)


def records_to_hands(records: tuple[tuple[int, int, int], ...]) -> list[HandOutcome]:
    hands: list[HandOutcome] = []
    for split, (wins, ties, losses) in enumerate(records):
        if wins + ties + losses == 0:
            ties = 1  # every split must be played for the ratings to be identified
        hands += split_hands(split, wins, ties, losses, f"s{split}-")
    return hands


@settings(max_examples=60, deadline=None)
@given(records=split_records, order=st.permutations("ABCD"))
def test_fit_is_invariant_to_relabelling_bots(
    records: tuple[tuple[int, int, int], ...], order: list[str]
) -> None:
    hands = records_to_hands(records)
    rename = dict(zip("ABCD", order, strict=True))
    renamed = [
        HandOutcome(h.board, line_up(rename[x] for x in h.seats), h.score_a, h.score_b)
        for h in hands
    ]
    fit, refit = fit_ratings(hands), fit_ratings(renamed)
    for bot in "ABCD":
        assert refit.rating(rename[bot]) == pytest.approx(fit.rating(bot), abs=1e-6)
        assert refit.stderr(rename[bot]) == pytest.approx(fit.stderr(bot), abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(records=split_records)
def test_ratings_sum_to_zero_and_swapping_sides_changes_nothing(
    records: tuple[tuple[int, int, int], ...],
) -> None:
    hands = records_to_hands(records)
    fit = fit_ratings(hands)
    assert sum(fit.ratings) == pytest.approx(0.0, abs=1e-9)
    # Moving every bot one seat on swaps the teams; with the scores swapped it is the same hand.
    swapped = [
        HandOutcome(h.board, (h.seats[3], h.seats[0], h.seats[1], h.seats[2]), h.score_b, h.score_a)
        for h in hands
    ]
    refit = fit_ratings(swapped)
    assert refit.ratings == pytest.approx(fit.ratings, abs=1e-9)
    assert fit.los("A", "B") + fit.los("B", "A") == pytest.approx(1.0)


def test_elo_per_nat() -> None:
    assert pytest.approx(173.72, abs=0.01) == ELO_PER_NAT


def test_firth_penalty_shrinks_by_its_weight_and_zero_is_the_plain_fit() -> None:
    """τ·½·log det I(β): τ = 0 is the unpenalised fit, larger τ shrinks the ratings more."""
    plain = fit_ratings(worked_example(), prior_precision=0.0)
    assert fit_ratings(worked_example(), prior_precision=0.0, firth=0.0).ratings == plain.ratings
    half = fit_ratings(worked_example(), prior_precision=0.0, firth=0.5)
    full = fit_ratings(worked_example(), prior_precision=0.0, firth=1.0)
    assert abs(full.rating("A")) < abs(half.rating("A")) < abs(plain.rating("A"))
    assert sum(half.ratings) == pytest.approx(0.0, abs=1e-9)
    lower, upper = half.interval("A")
    assert lower < half.rating("A") < upper
    with pytest.raises(RatingError, match="firth"):
        fit_ratings(worked_example(), firth=-0.1)


def test_firth_score_is_the_gradient_of_the_penalised_likelihood() -> None:
    """The modified score (leverages h_r) against central differences of the objective."""
    rng = np.random.default_rng(11)
    rows = np.array([[0.5, -0.5, 0.5, -0.5], [0.5, 0.5, -0.5, -0.5], [0.5, -0.5, -0.5, 0.5]])
    counts = np.array([20.0, 30.0, 25.0])
    totals = np.array([12.5, 29.0, 10.0])
    beta = rng.normal(0.0, 1.0, 4)
    beta -= beta.mean()
    likelihood = _Likelihood(rows, counts, totals, prior=0.03, firth=0.4)
    gradient, _ = likelihood.score(beta)
    for j in range(4):
        step = np.zeros(4)
        step[j] = 1e-6
        numeric = (likelihood.objective(beta + step) - likelihood.objective(beta - step)) / 2e-6
        assert gradient[j] == pytest.approx(numeric, abs=1e-5)


def test_firth_penalty_keeps_a_perfect_record_finite_without_a_prior() -> None:
    hands = (
        split_hands(0, 10, 0, 0, "ab")
        + split_hands(1, 10, 0, 0, "ac")
        + split_hands(2, 10, 0, 0, "ad")
    )
    fit = fit_ratings(hands, prior_precision=0.0, firth=0.5)
    assert fit.ranking()[0] == "A"
    lower, upper = fit.interval("A")
    assert 0.0 < lower < fit.rating("A") < upper < 5000.0


def test_mirrored_boards_are_no_evidence_not_a_zero_width_interval() -> None:
    """Issue 24: copies of a deterministic bot mirror each board (the second play's margin is
    minus the first's); the fit gave [+0, +0] after 48 hands. It now says what they are."""
    seats = ("a", "b", "a", "b")
    hands = []
    for board in range(24):
        margin = (board * 37) % 400 - 200
        hands.append(HandOutcome(str(board), seats, 100 + margin, 100 - margin, 0))
        hands.append(HandOutcome(str(board), seats, 100 - margin, 100 + margin, 1))
    for fit in (fit_ratings, fit_margins):
        with pytest.raises(RatingError, match=r"all 24 boards mirrored.*no evidence"):
            fit(hands)
    # Boards that do not cancel are evidence, and the fit goes ahead.
    uneven = [*hands[:-3], hands[-2], HandOutcome("22", seats, 60, 140, 1)]
    uneven.append(HandOutcome("23", seats, 120, 80, 1))
    assert fit_ratings(uneven).interval("a")[1] > fit_ratings(uneven).interval("a")[0]
    assert fit_margins(uneven).stderr("a") > 0
