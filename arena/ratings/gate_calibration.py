"""Simulated gates on pentanomial shapes from real play, to measure their error rates.

A *shape* is a pentanomial measured on real duplicate play of two bots. A simulated gate
draws board pairs from the shape exponentially tilted to a true Elo (the tilt keeps the
shape's empty cells empty, so a near-identical pair stays near-identical), and looks at the
gate after every pair with the same rule as :func:`arena.ratings.sprt.sprt`: the LLR against
its bounds, then the clear-answer test. Pairs are drawn in blocks and the looks vectorised.

Used by ``scripts/calibrate_gate.py`` and its fast test; the table is in docs/gate.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from arena.ratings.elo import expected_score
from arena.ratings.sprt import (
    CLEAR_SHARE,
    PAIR_SCORES,
    Pentanomial,
    llr_array,
    log_wealth_array,
    sprt_bounds,
)

_SCORES = np.array(PAIR_SCORES)


@dataclass(frozen=True)
class Shape:
    """A pentanomial from real play: who played whom, and the counts."""

    name: str
    counts: Pentanomial


SHAPES = (
    Shape("near-identical: greedy vs greedy without calls (issue 24)", (2, 0, 2791, 0, 7)),
    Shape("near-identical: greedy vs greedy without calls", (5, 5, 2976, 0, 14)),
    Shape("near-identical: heuristic vs heuristic without calls", (44, 4, 484, 14, 54)),
    Shape("distinct: heuristic vs greedy", (100, 20, 308, 24, 148)),
    Shape("distinct: random vs random (docs/gate.md)", (25, 8, 55, 3, 29)),
)
"""The shapes of the gate's table (docs/gate.md): the first from issue 24, the last from the
gate's first runs, the others from the gate boards of ``scripts/calibrate_real.py`` (3,000
boards for greedy, 600 for the heuristic pairs). Greedy against random, nearly every pair
won, cannot be tilted to ±10 Elo."""

PRESETS = {"nonreg": (-10.0, 0.0), "gain": (0.0, 10.0)}
"""The gate's presets (``arena.tournament.gate.PRESETS``, which this layer cannot import)."""


@dataclass(frozen=True)
class Runs:
    """Simulated gates at one true Elo: each run's verdict, length and counts.

    ``verdicts`` holds 1 for H1, −1 for H0 and 0 for none by the cap; ``lengths`` the pairs
    at the decision (the cap when none); ``counts`` the pentanomial there.
    """

    verdicts: npt.NDArray[np.int_]
    lengths: npt.NDArray[np.int_]
    counts: npt.NDArray[np.float64]

    @property
    def passed(self) -> float:
        """Share of runs that accepted H1."""
        return float(np.mean(self.verdicts == 1))

    @property
    def error(self) -> float:
        """Monte Carlo (binomial) standard error of :attr:`passed`."""
        p = self.passed
        return math.sqrt(p * (1.0 - p) / self.verdicts.size)

    @property
    def median_length(self) -> float:
        """Median pairs to the decision (or the cap)."""
        return float(np.median(self.lengths))


def tilted(counts: Pentanomial, score: float) -> npt.NDArray[np.float64]:
    """Returns the shape's frequencies times ``exp(t·a)`` for the ``t`` giving mean ``score``.

    Raises:
        ValueError: If the shape's occupied cells cannot reach ``score`` (all in one cell).
    """
    base = np.asarray(counts, dtype=np.float64)
    occupied = _SCORES[base > 0]
    if base.sum() <= 0 or not occupied.min() < score < occupied.max():
        raise ValueError(f"shape {counts!r} cannot be tilted to a mean pair score of {score!r}")
    base = base / base.sum()
    low, high = -500.0, 500.0
    for _ in range(200):
        t = 0.5 * (low + high)
        weights = base * np.exp(t * (_SCORES - 0.5))
        if weights @ _SCORES / weights.sum() < score:
            low = t
        else:
            high = t
    result: npt.NDArray[np.float64] = weights / weights.sum()
    return result


def simulate(
    counts: Pentanomial,
    elo: float,
    *,
    elo0: float,
    elo1: float,
    runs: int,
    rng: np.random.Generator,
    alpha: float = 0.05,
    beta: float = 0.05,
    cap: int = 20_000,
    block: int = 100,
) -> Runs:
    """Simulates ``runs`` gates ``[elo0, elo1]`` on pairs drawn from the shape tilted to
    ``elo``, looking after every pair, up to ``cap`` pairs."""
    lower, upper = sprt_bounds(alpha, beta)
    clear_h1, clear_h0 = -math.log(CLEAR_SHARE * alpha), -math.log(CLEAR_SHARE * beta)
    s0, s1 = expected_score(elo0), expected_score(elo1)
    cdf = np.cumsum(tilted(counts, expected_score(elo)))
    cdf[-1] = 1.0
    totals = np.zeros((runs, 5))
    verdicts = np.zeros(runs, dtype=np.int_)
    lengths = np.full(runs, cap, dtype=np.int_)
    active = np.arange(runs)
    played = 0
    while active.size and played < cap:
        size = min(block, cap - played)
        cells = np.searchsorted(cdf, rng.random((active.size, size)), side="right")
        running = totals[active][:, None, :] + np.cumsum(np.eye(5)[cells], axis=1)
        statistic = llr_array(running, elo0, elo1)
        verdict = np.where(statistic >= upper, 1, np.where(statistic <= lower, -1, 0))
        for_h1 = log_wealth_array(running, s0, +1) >= clear_h1
        for_h0 = log_wealth_array(running, s1, -1) >= clear_h0
        verdict = np.where(verdict != 0, verdict, np.where(for_h1, 1, np.where(for_h0, -1, 0)))
        stopped = (verdict != 0).any(axis=1)
        first = (verdict != 0).argmax(axis=1)
        done = active[stopped]
        verdicts[done] = verdict[stopped, first[stopped]]
        lengths[done] = played + first[stopped] + 1
        totals[done] = running[stopped, first[stopped]]
        totals[active[~stopped]] = running[~stopped, -1]
        active = active[~stopped]
        played += size
    return Runs(verdicts=verdicts, lengths=lengths, counts=totals)
