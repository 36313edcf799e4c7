"""SPRT gate on duplicate board pairs with fishtest's pentanomial model (§4).

The two plays of a board (rotations 0 and 1, same line-up) form a *pair*, scored
``(s⁽⁰⁾ + s⁽¹⁾)/2 ∈ {0, ¼, ½, ¾, 1}`` for the tested team; the counts n0..n4 of the five
scores are the pentanomial. Elo here is **logistic hand-Elo**: a pair's expected score is
``L(elo)``, the same scale as the batch ratings. With the gate's line-up candidate+candidate
against reference+reference, the team gap equals the individual gap (§4.3).

The gate's statistic, :func:`llr`, is fishtest's GSPRT approximation with the variance
replaced by its maximum-likelihood value under each tested score, ``(n/2)·ln(r0/r1)`` with
``r_j = v̂ + (ŝ − s_j)²``, computed on the counts plus :data:`PRIOR_PAIRS` pseudo-pairs (one
lost and one won board pair, weighted to the midpoint of the two scores). The pseudo-pairs
keep the variance from collapsing when nearly every pair is ½ (bots that play almost alike),
so the test needs no pair floor; they leave the evidence about the mean untouched.

Beside the SPRT runs a *clear-answer* test (:func:`log_wealth`): a bettor against each
hypothesis, whose wealth can reach ``1/(share·α)`` under that hypothesis with probability at
most ``share·α`` at any look (Ville's inequality). It stops a far-off candidate in a few pairs,
where the SPRT, built to tell two close hypotheses apart, would take dozens.

:func:`llr_approx` (``n(s1 − s0)(2ŝ − s0 − s1)/(2v̂)``) and :func:`llr_exact` (the constrained
multinomial MLE) are the reference forms, with zero cells replaced by 0.001 as in fishtest.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from arena.ratings.elo import elo_from_score, expected_score
from arena.ratings.hands import HandOutcome, board_pairs

Pentanomial: TypeAlias = tuple[int, int, int, int, int]

PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""Pair score of each pentanomial cell: [LL], [LD, DL], [LW, WL, DD], [WD, DW], [WW]."""

REGULARIZATION = 1e-3
"""Stand-in for an empty cell, as in fishtest."""

DEFAULT_MIN_PAIRS = 1
"""Pairs before the SPRT may stop: none needed, since the pseudo-pairs keep the variance
from collapsing (docs/gate.md gives the simulated error rates)."""

PRIOR_PAIRS = 2.5
"""Pseudo-pairs added to the counts of the gate's LLR and the estimate's variance. Like the
rule of three, they bound what a run of all-½ pairs can prove: with none, the variance of
a handful of equal pairs is about 0 and the LLR leaves the bounds after a few pairs. The
weight is the one that holds the gate's error rates on the near-identical shape
(docs/gate.md); more makes the test slower and conservative, less lets false passes in."""

BET_FRACTIONS = (0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.9)
"""Fractions of the largest safe stake the clear-answer bettor spreads its wealth over: small
ones win on a modest steady edge, large ones on a one-sided record."""

CLEAR_SHARE = 0.2
"""Share of α (and of β) the clear-answer test may spend: its bettor's threshold is
``1/(CLEAR_SHARE·α)``, so it adds at most that share to each error rate."""

_SCORES = np.array(PAIR_SCORES)


class SprtVerdict(enum.Enum):
    """State of a sequential test."""

    CONTINUE = "continue"
    ACCEPT_H0 = "H0"
    ACCEPT_H1 = "H1"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class EloEstimate:
    """Logistic hand-Elo from pentanomial counts with a normal confidence interval."""

    elo: float
    lower: float
    upper: float
    pairs: int


@dataclass(frozen=True)
class SprtResult:
    """One look at the SPRT: the statistic, its stopping bounds and the verdict."""

    pairs: int
    llr: float
    lower_bound: float
    upper_bound: float
    verdict: SprtVerdict
    estimate: EloEstimate
    clear: bool = False
    """Whether the clear-answer test, not the LLR, decided."""


def pentanomial_index(first: float, second: float) -> int:
    """Returns the pentanomial cell (0..4) of a pair from its two hand outcomes (1, ½, 0)."""
    for outcome in (first, second):
        if outcome not in (0.0, 0.5, 1.0):
            raise ValueError(f"hand outcome must be 0, 0.5 or 1, got {outcome!r}")
    return round(2.0 * (first + second))


def pentanomial_counts(hands: Iterable[HandOutcome], bot: str) -> Pentanomial:
    """Counts the duplicate pairs by pair score, from the side of the team ``bot`` plays on.

    Pairs are formed by :func:`~arena.ratings.hands.board_pairs`; pairs without ``bot`` and
    plays whose partner rotation is missing are skipped.

    Raises:
        RatingError: If ``bot`` sits on both teams in a hand.
    """
    counts = [0, 0, 0, 0, 0]
    for first, second in board_pairs(hands):
        team = first.team_of(bot)
        if team is None:
            continue
        counts[pentanomial_index(first.outcome_for(team), second.outcome_for(team))] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Returns the LLR stopping bounds (ln(β/(1 − α)), ln((1 − β)/α)): ±2.944 at 5 %/5 %."""
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta < 1.0):
        raise ValueError(f"need 0 < alpha, beta and alpha + beta < 1, got {alpha!r}, {beta!r}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def sprt_decision(llr: float, *, alpha: float = 0.05, beta: float = 0.05) -> SprtVerdict:
    """Returns H1 at or above the upper bound, H0 at or below the lower one, else continue."""
    lower, upper = sprt_bounds(alpha, beta)
    if llr >= upper:
        return SprtVerdict.ACCEPT_H1
    if llr <= lower:
        return SprtVerdict.ACCEPT_H0
    return SprtVerdict.CONTINUE


def llr_approx_array(counts: npt.ArrayLike, elo0: float, elo1: float) -> npt.NDArray[np.float64]:
    """Returns the approximate GSPRT LLR for pentanomial counts along the last axis.

    Vectorised form of :func:`llr_approx`; rows with no pairs give 0.
    """
    _check_elos(elo0, elo1)
    raw = np.asarray(counts, dtype=np.float64)
    if raw.shape[-1] != 5 or np.any(raw < 0):
        raise ValueError("pentanomial counts need 5 non-negative cells on the last axis")
    cells = np.where(raw == 0.0, REGULARIZATION, raw)
    n = cells.sum(axis=-1)
    mean = (cells @ _SCORES) / n
    variance = (cells * (_SCORES - mean[..., None]) ** 2).sum(axis=-1) / n
    s0, s1 = expected_score(elo0), expected_score(elo1)
    llr = n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * variance)
    result: npt.NDArray[np.float64] = np.where(raw.sum(axis=-1) > 0, llr, 0.0)
    return result


def llr_approx(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """Returns the GSPRT log-likelihood ratio ≈ n(s1 − s0)(2ŝ − s0 − s1)/(2v̂).

    ``s_j = L(elo_j)``; ŝ and v̂ are the mean and variance of the pair score.
    """
    return float(llr_approx_array(counts, elo0, elo1))


def prior_counts(elo0: float, elo1: float, pairs: float = PRIOR_PAIRS) -> npt.NDArray[np.float64]:
    """Returns the pseudo-pairs of the gate's LLR: ``pairs`` split between a lost pair (LL)
    and a won pair (WW) so that their mean is the midpoint of ``L(elo0)`` and ``L(elo1)``.

    At the midpoint they add nothing to ``Σ(2a − s0 − s1)``, the evidence about the mean, and
    a quarter per pseudo-pair to the sum of squares, the variance.
    """
    _check_elos(elo0, elo1)
    if pairs < 0.0:
        raise ValueError(f"prior pairs must be at least 0, got {pairs!r}")
    middle = 0.5 * (expected_score(elo0) + expected_score(elo1))
    return np.array([pairs * (1.0 - middle), 0.0, 0.0, 0.0, pairs * middle])


def llr_array(
    counts: npt.ArrayLike, elo0: float, elo1: float, prior: float = PRIOR_PAIRS
) -> npt.NDArray[np.float64]:
    """Returns the gate's LLR, ``(N/2)·ln(r0/r1)`` with ``r_j = v + (m − s_j)²``, for
    pentanomial counts along the last axis.

    ``m``, ``v`` and ``N`` are the mean, variance and size of the counts plus
    :func:`prior_counts`; no pairs give 0.
    """
    raw = np.asarray(counts, dtype=np.float64)
    if raw.shape[-1] != 5 or np.any(raw < 0):
        raise ValueError("pentanomial counts need 5 non-negative cells on the last axis")
    cells = raw + prior_counts(elo0, elo1, prior)
    n = cells.sum(axis=-1)
    safe = np.where(n > 0.0, n, 1.0)
    mean = (cells @ _SCORES) / safe
    variance = (cells * (_SCORES - mean[..., None]) ** 2).sum(axis=-1) / safe
    s0, s1 = expected_score(elo0), expected_score(elo1)
    with np.errstate(divide="ignore", invalid="ignore"):
        llr = 0.5 * n * np.log((variance + (mean - s0) ** 2) / (variance + (mean - s1) ** 2))
    result: npt.NDArray[np.float64] = np.where(raw.sum(axis=-1) > 0, llr, 0.0)
    return result


def llr(counts: Sequence[int], elo0: float, elo1: float, prior: float = PRIOR_PAIRS) -> float:
    """Returns the gate's LLR for one set of counts (see :func:`llr_array`)."""
    return float(llr_array(counts, elo0, elo1, prior))


def log_wealth_array(counts: npt.ArrayLike, score: float, side: int) -> npt.NDArray[np.float64]:
    """Returns the log wealth of a bettor who starts with 1 and bets, pair by pair, that the
    mean pair score is above ``score`` (``side`` +1) or below it (``side`` −1).

    The wealth is split evenly over :data:`BET_FRACTIONS` of the largest stake that cannot
    go broke; each part multiplies by ``1 + λ·side·(a − score)`` per pair scored ``a``. If
    the mean is ``score`` or beyond it on the other side, the wealth is a nonnegative
    supermartingale, so it ever reaches ``1/δ`` with probability at most δ. The product
    depends on the counts alone, not on the order of the pairs.
    """
    if side not in (-1, 1):
        raise ValueError(f"side must be +1 or -1, got {side!r}")
    if not 0.0 < score < 1.0:
        raise ValueError(f"score must be in (0, 1), got {score!r}")
    raw = np.asarray(counts, dtype=np.float64)
    if raw.shape[-1] != 5 or np.any(raw < 0):
        raise ValueError("pentanomial counts need 5 non-negative cells on the last axis")
    largest = 1.0 / (score if side > 0 else 1.0 - score)
    stakes = np.array(BET_FRACTIONS) * largest
    gains = np.log1p(stakes[:, None] * side * (_SCORES - score)[None, :])  # (bets, cells)
    logs = raw @ gains.T  # (..., bets)
    top = logs.max(axis=-1)
    result: npt.NDArray[np.float64] = top + np.log(np.exp(logs - top[..., None]).mean(axis=-1))
    return result


def log_wealth(counts: Sequence[int], score: float, side: int) -> float:
    """Returns the clear-answer bettor's log wealth for one set of counts."""
    return float(log_wealth_array(counts, score, side))


def clear_answer(
    counts: Sequence[int],
    *,
    elo0: float,
    elo1: float,
    alpha: float = 0.05,
    beta: float = 0.05,
) -> SprtVerdict:
    """Returns H1 when a bettor against a score of ``L(elo0)`` or below has grown its stake
    ``1/(CLEAR_SHARE·α)``-fold, H0 when one against ``L(elo1)`` or above has grown it
    ``1/(CLEAR_SHARE·β)``-fold, else continue."""
    _check_elos(elo0, elo1)
    if log_wealth(counts, expected_score(elo0), +1) >= -math.log(CLEAR_SHARE * alpha):
        return SprtVerdict.ACCEPT_H1
    if log_wealth(counts, expected_score(elo1), -1) >= -math.log(CLEAR_SHARE * beta):
        return SprtVerdict.ACCEPT_H0
    return SprtVerdict.CONTINUE


def constrained_mle(counts: Sequence[int], score: float) -> tuple[float, ...]:
    """Returns the multinomial maximising the likelihood of ``counts`` with mean ``score``.

    With p̂ the regularised frequencies and ``c_i = a_i − score``, the maximiser is
    ``p_i = p̂_i / (1 + θ c_i)`` where θ solves ``Σ p̂_i c_i / (1 + θ c_i) = 0`` on the
    interval that keeps every ``1 + θ c_i`` positive (a Lagrange multiplier). The left side
    falls strictly in θ, so bisection finds the root.
    """
    if not 0.0 < score < 1.0:
        raise ValueError(f"score must be in (0, 1), got {score!r}")
    freq = _frequencies(counts)
    centred = [a - score for a in PAIR_SCORES]

    def secular(theta: float) -> float:
        return sum(p * c / (1.0 + theta * c) for p, c in zip(freq, centred, strict=True))

    low, high = -1.0 / (1.0 - score), 1.0 / score
    for _ in range(200):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        if secular(middle) > 0.0:
            low = middle
        else:
            high = middle
    theta = 0.5 * (low + high)
    fitted = [p / (1.0 + theta * c) for p, c in zip(freq, centred, strict=True)]
    total = sum(fitted)
    return tuple(p / total for p in fitted)


def llr_exact(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """Returns the GSPRT LLR from the constrained multinomial MLEs: n·Σ p̂_i ln(p1_i/p0_i)."""
    _check_elos(elo0, elo1)
    if sum(counts) == 0:
        return 0.0
    freq = _frequencies(counts)
    n = sum(c if c > 0 else REGULARIZATION for c in counts)
    null = constrained_mle(counts, expected_score(elo0))
    alternative = constrained_mle(counts, expected_score(elo1))
    return n * sum(p * math.log(p1 / p0) for p, p0, p1 in zip(freq, null, alternative, strict=True))


def elo_estimate(
    counts: Sequence[int], level: float = 0.95, prior: float = PRIOR_PAIRS
) -> EloEstimate:
    """Estimates logistic hand-Elo from pentanomial counts: L⁻¹(ŝ), with ŝ ± z·√(ṽ/n) mapped.

    ŝ uses the regularised counts, so a one-sided record still gives a finite estimate.
    ``ṽ = (n·v̂ + prior/4)/(n + prior)`` adds ``prior`` pseudo-pairs of the largest spread a
    pair score can have, so a run of equal pairs (bots that mirror each other) gives an
    interval that narrows with the pairs, about ±3/(2n) in score, not one of width 0.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level!r}")
    if prior < 0.0:
        raise ValueError(f"prior pairs must be at least 0, got {prior!r}")
    freq = _frequencies(counts)
    n = sum(c if c > 0 else REGULARIZATION for c in counts)
    mean = sum(p * a for p, a in zip(freq, PAIR_SCORES, strict=True))
    variance = sum(p * (a - mean) ** 2 for p, a in zip(freq, PAIR_SCORES, strict=True))
    variance = (n * variance + 0.25 * prior) / (n + prior)
    half = NormalDist().inv_cdf(0.5 + 0.5 * level) * math.sqrt(variance / n)
    return EloEstimate(
        elo=elo_from_score(mean),
        lower=_elo_or_limit(mean - half),
        upper=_elo_or_limit(mean + half),
        pairs=sum(counts),
    )


def sprt(
    counts: Sequence[int],
    *,
    elo0: float,
    elo1: float,
    alpha: float = 0.05,
    beta: float = 0.05,
    min_pairs: int = DEFAULT_MIN_PAIRS,
    max_pairs: int | None = None,
) -> SprtResult:
    """Runs one look of the gate on the counts so far: the pentanomial GSPRT (:func:`llr`),
    then the clear-answer test (:func:`clear_answer`) if the LLR is inside its bounds.

    The test continues below ``min_pairs`` pairs whatever the evidence, and is inconclusive
    when ``max_pairs`` pairs were played without a decision.
    """
    statistic = llr(counts, elo0, elo1)
    lower, upper = sprt_bounds(alpha, beta)
    pairs = sum(counts)
    verdict = sprt_decision(statistic, alpha=alpha, beta=beta)
    clear = False
    if verdict is SprtVerdict.CONTINUE and pairs > 0:
        verdict = clear_answer(counts, elo0=elo0, elo1=elo1, alpha=alpha, beta=beta)
        clear = verdict is not SprtVerdict.CONTINUE
    if pairs < min_pairs:
        verdict, clear = SprtVerdict.CONTINUE, False
    if verdict is SprtVerdict.CONTINUE and max_pairs is not None and pairs >= max_pairs:
        verdict = SprtVerdict.INCONCLUSIVE
    return SprtResult(
        pairs=pairs,
        llr=statistic,
        lower_bound=lower,
        upper_bound=upper,
        verdict=verdict,
        estimate=elo_estimate(counts),
        clear=clear,
    )


def _frequencies(counts: Sequence[int]) -> tuple[float, ...]:
    if len(counts) != 5 or any(c < 0 for c in counts):
        raise ValueError(f"pentanomial counts need 5 non-negative cells, got {counts!r}")
    cells = [c if c > 0 else REGULARIZATION for c in counts]
    total = sum(cells)
    return tuple(c / total for c in cells)


def _elo_or_limit(score: float) -> float:
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return elo_from_score(score)


def _check_elos(elo0: float, elo1: float) -> None:
    if not elo0 < elo1:
        raise ValueError(f"need elo0 < elo1, got {elo0!r} and {elo1!r}")
