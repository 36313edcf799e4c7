"""Point margins per bot and how much card luck duplicate boards remove (§2.4, §3.5).

The margin fit is least squares on the same design as the rating fit: a hand's score
margin ``d = x·θ + ε``, where θ_i is the points per hand by which two copies of bot i beat
two average bots. Errors are cluster-robust by board, like the ratings, with the residuals
corrected for each board's leverage (Bell & McCaffrey's CR2; docs/ratings.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from arena.ratings._design import (
    board_clusters,
    cluster_sums,
    design,
    leverage_corrected,
    pseudo_inverse,
    require_evidence,
    require_identified,
    t_quantile,
)
from arena.ratings.hands import HandOutcome, RatingError, board_pairs


@dataclass(frozen=True)
class MarginFit:
    """Points-per-hand margin of each bot against an average field, with errors.

    Attributes:
        bots: Bot names, sorted.
        margins: θ per bot in points per hand (one play of a board), mean 0.
        covariance: Covariance of ``margins`` in points², cluster-robust by board unless
            model-based errors were asked for.
        residual_sd: Residual standard deviation σ_h of a hand's margin, in points.
        hands: Number of hands each bot played.
        boards: Number of distinct boards.
    """

    bots: tuple[str, ...]
    margins: tuple[float, ...]
    covariance: tuple[tuple[float, ...], ...]
    residual_sd: float
    hands: tuple[int, ...]
    boards: int

    def margin(self, bot: str) -> float:
        """Returns θ for ``bot`` in points per hand."""
        return self.margins[self._index(bot)]

    def stderr(self, bot: str) -> float:
        """Returns the standard error of ``bot``'s margin in points per hand."""
        i = self._index(bot)
        return math.sqrt(max(self.covariance[i][i], 0.0))

    def interval(self, bot: str, level: float = 0.95) -> tuple[float, float]:
        """Returns the two-sided confidence interval of ``bot``'s margin.

        Student's t with boards less free margins degrees of freedom, as for the ratings.
        """
        if not 0.0 < level < 1.0:
            raise ValueError(f"confidence level must be in (0, 1), got {level!r}")
        freedom = max(self.boards - (len(self.bots) - 1), 1)
        half = t_quantile(0.5 + 0.5 * level, freedom) * self.stderr(bot)
        return self.margin(bot) - half, self.margin(bot) + half

    def _index(self, bot: str) -> int:
        try:
            return self.bots.index(bot)
        except ValueError:
            raise KeyError(f"no margin for {bot!r}") from None


def fit_margins(hands: Iterable[HandOutcome], *, robust: bool = True) -> MarginFit:
    """Fits each bot's points-per-hand margin by least squares with team = mean of members.

    Raises:
        RatingError: Fewer than 2 bots, rank-deficient or disconnected hands, or no
            residual degrees of freedom.
    """
    played = list(hands)
    bots, rows = design(played)
    require_identified(bots, rows, played)
    require_evidence(played)
    freedom = len(played) - (len(bots) - 1)
    if freedom <= 0:
        raise RatingError(f"{len(played)} hands leave no residual freedom for {len(bots)} bots")
    margins = np.array([float(hand.margin) for hand in played])
    bread = pseudo_inverse(rows.T @ rows)
    theta = bread @ (rows.T @ margins)
    residuals = margins - rows @ theta
    variance = float(residuals @ residuals) / freedom
    if robust:
        clusters, boards = board_clusters(played)
        weights = np.ones(len(played))
        corrected = leverage_corrected(rows, residuals, weights, clusters, bread, 0.5)
        scores = cluster_sums(corrected[:, None] * rows, clusters, boards)
        covariance = bread @ (scores.T @ scores) @ bread
    else:
        boards = board_clusters(played)[1]
        covariance = variance * bread
    return MarginFit(
        bots=bots,
        margins=tuple(float(t) for t in theta),
        covariance=tuple(tuple(float(x) for x in row) for row in 0.5 * (covariance + covariance.T)),
        residual_sd=math.sqrt(variance),
        hands=tuple(sum(bot in hand.seats for hand in played) for bot in bots),
        boards=boards,
    )


def _centred(values: list[float]) -> npt.NDArray[np.float64]:
    array = np.array(values)
    centred: npt.NDArray[np.float64] = array - array.mean()
    return centred


def margin_to_elo(margin: float, residual_sd: float) -> float:
    """Converts a points margin to hand-Elo under Gaussian margins: 400·log10(Φ/(1 − Φ)).

    Only a cross-check of the fitted hand-Elo (Tichu margins are lumpy); about
    ``277·margin/residual_sd`` for small gaps (§3.5).
    """
    if residual_sd <= 0.0:
        raise ValueError(f"residual_sd must be positive, got {residual_sd!r}")
    z = margin / residual_sd
    # 1 − Φ(z) is taken as Φ(−z), which keeps its precision in the tail.
    win, loss = NormalDist().cdf(z), NormalDist().cdf(-z)
    if loss == 0.0 or win == 0.0:
        return math.copysign(math.inf, z)
    return 400.0 * math.log10(win / loss)


@dataclass(frozen=True)
class DuplicateStats:
    """Measured luck removal of duplicate pairs (the two plays of a board at one table).

    The margin statistics are taken *within line-ups*: each play's margins are centred on
    their mean over the pairs of the same four bots in the same seats, so that ρ̂ measures
    card luck rather than the differences between line-ups (pooled over a mixed field, a
    strong line-up's two big margins would count as positive correlation).

    Attributes:
        pairs: Number of duplicate pairs used (line-ups with at least two pairs).
        correlation: ρ̂ = corr(d⁽⁰⁾, d⁽¹⁾) of team A's margins in the two plays, within
            line-ups.
        effective_sample_multiplier: 1/(1 + ρ̂): how many independent hands one duplicate
            hand is worth for the margin's precision (infinite at ρ̂ = −1).
        margin_sd: Standard deviation σ̂ of a single play's margin about its line-up's mean
            (both plays pooled).
        pair_margin_variance: Var(D), D = d⁽⁰⁾ + d⁽¹⁾, within line-ups, against 2σ̂² for
            independent deals.
        pair_score_variance: v_pair, the variance of the pair score (s⁽⁰⁾ + s⁽¹⁾)/2.
        independent_pair_score_variance: (Var s⁽⁰⁾ + Var s⁽¹⁾)/4, v_pair if the plays
            were independent.
    """

    pairs: int
    correlation: float
    effective_sample_multiplier: float
    margin_sd: float
    pair_margin_variance: float
    pair_score_variance: float
    independent_pair_score_variance: float


def duplicate_stats(hands: Iterable[HandOutcome]) -> DuplicateStats:
    """Measures ρ̂ between the two plays of each board, within line-ups, and the gain.

    Raises:
        RatingError: With fewer than 2 duplicate pairs in line-ups that played at least
            two, or if either play's centred margins are all 0 (ρ̂ undefined).
    """
    by_line_up: dict[tuple[str, ...], list[tuple[HandOutcome, HandOutcome]]] = {}
    for pair in board_pairs(hands):
        by_line_up.setdefault(pair[0].seats, []).append(pair)
    groups = [group for group in by_line_up.values() if len(group) >= 2]
    pairs = [pair for group in groups for pair in group]
    if len(pairs) < 2:
        raise RatingError(f"need at least 2 duplicate pairs of one line-up, got {len(pairs)}")
    first, second = (
        np.concatenate([_centred([float(p[k].margin) for p in group]) for group in groups])
        for k in (0, 1)
    )
    if not first.any() or not second.any():
        raise RatingError("a play's margins are constant within line-ups; ρ̂ is undefined")
    rho = float(np.clip(first @ second / math.sqrt((first @ first) * (second @ second)), -1, 1))
    multiplier = math.inf if rho <= -1.0 else 1.0 / (1.0 + rho)
    freedom = len(pairs) - len(groups)
    both = np.concatenate([first, second])
    scores_first = np.array([a.outcome for a, _ in pairs])
    scores_second = np.array([b.outcome for _, b in pairs])
    return DuplicateStats(
        pairs=len(pairs),
        correlation=rho,
        effective_sample_multiplier=multiplier,
        margin_sd=math.sqrt(float(both @ both) / (2 * freedom)),
        pair_margin_variance=float((first + second) @ (first + second)) / freedom,
        pair_score_variance=float(np.var((scores_first + scores_second) / 2.0, ddof=1)),
        independent_pair_score_variance=float(
            (np.var(scores_first, ddof=1) + np.var(scores_second, ddof=1)) / 4.0
        ),
    )
