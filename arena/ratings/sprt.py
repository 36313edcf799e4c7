"""SPRT gate on duplicate board pairs with fishtest's pentanomial model (§4).

The two plays of a board (rotations 0 and 1, same line-up) form a *pair*, scored
``(s⁽⁰⁾ + s⁽¹⁾)/2 ∈ {0, ¼, ½, ¾, 1}`` for the tested team; the counts n0..n4 of the five
scores are the pentanomial. Elo here is **logistic hand-Elo**: a pair's expected score is
``L(elo)``, the same scale as the batch ratings. With the gate's line-up candidate+candidate
against reference+reference, the team gap equals the individual gap (§4.3).

The GSPRT replaces each hypothesis by the multinomial closest to the data whose mean is
``L(elo_j)``. :func:`llr_exact` computes that constrained MLE (the secular equation);
:func:`llr_approx` is its quadratic approximation ``n(s1 − s0)(2ŝ − s0 − s1)/(2v̂)``.
Zero cells are replaced by 0.001 before either (fishtest's regularisation).
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

DEFAULT_MIN_PAIRS = 100
"""Pairs before the SPRT may stop. With only a few pairs the empirical variance v̂ can be
nearly 0 (all pairs in one cell) and the LLR explodes; in simulation, stopping from the
first pair accepted H1 at elo0 about 23 % of the time against the designed 5 %, while a
100-pair minimum restores the design rates at a small cost in length."""

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


def elo_estimate(counts: Sequence[int], level: float = 0.95) -> EloEstimate:
    """Estimates logistic hand-Elo from pentanomial counts: L⁻¹(ŝ), with ŝ ± z·√(v̂/n) mapped.

    Uses the regularised counts, so a one-sided record still gives a finite estimate.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level!r}")
    freq = _frequencies(counts)
    n = sum(c if c > 0 else REGULARIZATION for c in counts)
    mean = sum(p * a for p, a in zip(freq, PAIR_SCORES, strict=True))
    variance = sum(p * (a - mean) ** 2 for p, a in zip(freq, PAIR_SCORES, strict=True))
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
    """Runs one look of the pentanomial GSPRT (approximate LLR) on the counts so far.

    The test continues below ``min_pairs`` pairs whatever the LLR, and is inconclusive
    when ``max_pairs`` pairs were played without a decision.
    """
    llr = llr_approx(counts, elo0, elo1)
    lower, upper = sprt_bounds(alpha, beta)
    pairs = sum(counts)
    verdict = sprt_decision(llr, alpha=alpha, beta=beta)
    if pairs < min_pairs:
        verdict = SprtVerdict.CONTINUE
    if verdict is SprtVerdict.CONTINUE and max_pairs is not None and pairs >= max_pairs:
        verdict = SprtVerdict.INCONCLUSIVE
    return SprtResult(
        pairs=pairs,
        llr=llr,
        lower_bound=lower,
        upper_bound=upper,
        verdict=verdict,
        estimate=elo_estimate(counts),
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
