"""Batch Bradley–Terry (logistic) fit of individual hand-Elo from team results (§3.2, §3.3).

A hand between team A and team B is won by A with probability ``L(Δ)``, where
``L(x) = 1/(1 + 10^(−x/400))`` and Δ is the mean rating of A's two seats minus that of B's.
The fit maximises the likelihood of the hand outcomes (1, ½ or 0 for team A) with a weak
Gaussian prior that keeps perfect records finite, by Newton's method in natural units
``β = r·ln10/400``. Standard errors are robust to the correlation of the plays of a board
by default (a sandwich whose meat takes each hand's variance from the model and the
covariance of a board's plays from the leverage-corrected residuals,
``_design.duplicate_meat``); intervals are profile-likelihood intervals scaled by each
bot's design effect, with Student's t on the boards. docs/ratings.md has the method and
its measured coverage.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from arena.ratings._design import (
    FloatArray,
    board_clusters,
    design,
    duplicate_meat,
    pseudo_inverse,
    require_evidence,
    require_identified,
    t_quantile,
)
from arena.ratings.hands import HandOutcome, RatingError

ELO_PER_NAT = 400.0 / math.log(10.0)
"""Elo points per natural (log-odds) unit: 173.7."""

PRIOR_SD_ELO = 700.0
"""Standard deviation of the Gaussian prior on each bot's rating, in Elo: weakly informative
(wider than the spread of real fields), it keeps perfect records finite and sets how far a
near-perfect record's rating is believed; docs/ratings.md says how it was chosen."""

DEFAULT_PRIOR_PRECISION = (ELO_PER_NAT / PRIOR_SD_ELO) ** 2
"""Ridge λ in natural units: the N(0, ``PRIOR_SD_ELO``) prior per bot."""

DEFAULT_FIRTH = 0.0
"""Weight τ of Firth's penalty ``τ·½·log det I(β)``: 0, none (1 is Firth's). docs/ratings.md
says why the weakened penalty (0 < τ < 1) was measured but not adopted."""

_NEGLIGIBLE = 1e-9
"""Elo differences and errors below this are treated as exactly zero."""

SEPARATION_LIMIT = 30.0
"""Largest |β| in natural units (≈ 5200 Elo) before an unpenalised fit is declared separated."""


@dataclass(frozen=True)
class RatingFit:
    """Fitted hand-Elo ratings with their covariance.

    Attributes:
        bots: Bot names, sorted.
        ratings: Elo rating per bot, in the order of ``bots``, on the chosen anchor.
        covariance: Covariance of ``ratings`` in Elo², the one standard errors use
            (duplicate-robust unless the fit was asked for model-based errors).
        model_covariance: Inverse-information covariance in Elo², which assumes
            independent hands.
        hands: Number of hands each bot played.
        boards: Number of distinct boards (clusters).
        log_likelihood: Log-likelihood of the hand outcomes at the fit, without the prior
            or penalty.
        iterations: Newton iterations used.
        anchor: The anchored bot (None: the mean is fixed).
    """

    bots: tuple[str, ...]
    ratings: tuple[float, ...]
    covariance: tuple[tuple[float, ...], ...]
    model_covariance: tuple[tuple[float, ...], ...]
    hands: tuple[int, ...]
    boards: int
    log_likelihood: float
    iterations: int
    anchor: str | None = None
    _profile: _Profile | None = field(default=None, repr=False, compare=False)

    def index(self, bot: str) -> int:
        """Returns the position of ``bot`` in ``bots``."""
        try:
            return self.bots.index(bot)
        except ValueError:
            raise KeyError(f"no rating for {bot!r}") from None

    def rating(self, bot: str) -> float:
        """Returns the Elo rating of ``bot``."""
        return self.ratings[self.index(bot)]

    def stderr(self, bot: str) -> float:
        """Returns the standard error of ``bot``'s rating in Elo."""
        i = self.index(bot)
        return math.sqrt(max(self.covariance[i][i], 0.0))

    @property
    def freedom(self) -> int:
        """Degrees of freedom of the intervals: boards less the free ratings (at least 1)."""
        return max(self.boards - (len(self.bots) - 1), 1)

    def interval(self, bot: str, level: float = 0.95) -> tuple[float, float]:
        """Returns the two-sided confidence interval of ``bot``'s rating (docs/ratings.md).

        A profile-likelihood interval corrected for duplicate boards: the ratings at which
        the penalised log-likelihood, maximised over the other bots, has dropped by
        ``t²/2`` times the bot's design effect (its robust over its model-based variance),
        with Student's t on ``freedom`` degrees of freedom. It is asymmetric where the
        likelihood is (near-perfect records). A fit without its data (none made here)
        gives rating ± t·s.e.
        """
        _z(level)
        t = t_quantile(0.5 + 0.5 * level, self.freedom)
        rating = self.rating(bot)
        profile = self._profile
        if profile is None:
            half = t * self.stderr(bot)
            return rating - half, rating + half
        contrast = np.zeros(len(self.bots))
        contrast[self.index(bot)] = 1.0
        if self.anchor is not None:
            contrast[self.index(self.anchor)] -= 1.0
        low, high = profile.bounds(contrast, t)
        return rating + ELO_PER_NAT * low, rating + ELO_PER_NAT * high

    def diff_stderr(self, first: str, second: str) -> float:
        """Returns the standard error of ``rating(first) − rating(second)`` in Elo."""
        i, j = self.index(first), self.index(second)
        c = self.covariance
        return math.sqrt(max(c[i][i] + c[j][j] - 2.0 * c[i][j], 0.0))

    def los(self, first: str, second: str) -> float:
        """Returns the likelihood of superiority Φ((r_first − r_second)/SE) of ``first``."""
        diff = self.rating(first) - self.rating(second)
        se = self.diff_stderr(first, second)
        if se < _NEGLIGIBLE:
            # No measurable uncertainty (the same bot, an anchor pair, or a degenerate
            # sandwich): superiority is decided by the sign alone.
            return 0.5 if abs(diff) < _NEGLIGIBLE else float(diff > 0.0)
        return NormalDist().cdf(diff / se)

    def ranking(self) -> tuple[str, ...]:
        """Returns the bots from highest to lowest rating (ties by name)."""
        return tuple(sorted(self.bots, key=lambda bot: (-self.rating(bot), bot)))


@dataclass(frozen=True)
class _Likelihood:
    """The penalised log-likelihood of a fit's hands (natural units).

    The hands are collapsed to their distinct design rows (line-ups and sides): the
    likelihood depends on a row's hands only through their count and summed outcome. The
    penalty is the prior's ½λ|β|² and, with ``firth`` τ > 0, Firth's τ·½·log det I(β).
    """

    rows: FloatArray
    counts: FloatArray
    totals: FloatArray
    prior: float
    firth: float

    def objective(self, beta: FloatArray) -> float:
        """ℓ(β) − ½λ|β|² + τ·½·log det I(β): what the fit maximises."""
        z = self.rows @ beta
        value = _grouped_log_likelihood(z, self.counts, self.totals)
        value -= 0.5 * self.prior * float(beta @ beta)
        if self.firth > 0.0:
            p = _logistic(z)
            _, logdet = np.linalg.slogdet(self._fisher(self.counts * p * (1.0 - p)))
            value += 0.5 * self.firth * float(logdet)
        return value

    def score(self, beta: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The gradient of ``objective`` and the information ``XᵀWX + λI`` (Fisher scoring).

        Firth's part of the gradient is ``τ·Σ_r h_r (½ − p_r) x_r``, with h_r the leverage
        of design row r (Firth 1993's modified score).
        """
        rows = self.rows
        p = _logistic(rows @ beta)
        weights = self.counts * p * (1.0 - p)
        residual = self.totals - self.counts * p
        information = rows.T @ (weights[:, None] * rows) + self.prior * np.eye(rows.shape[1])
        if self.firth > 0.0:
            inverse = np.linalg.inv(self._fisher(weights))
            leverage = weights * np.einsum("ij,jk,ik->i", rows, inverse, rows)
            residual = residual + self.firth * leverage * (0.5 - p)
        gradient: FloatArray = rows.T @ residual - self.prior * beta
        return gradient, information

    def _fisher(self, weights: FloatArray) -> FloatArray:
        """``XᵀWX + 11ᵀ/N``: the Fisher information, made invertible along the all-ones
        direction that no design row has (its determinant is that of the mean-0 subspace)."""
        size = self.rows.shape[1]
        result: FloatArray = self.rows.T @ (weights[:, None] * self.rows)
        result += np.full((size, size), 1.0 / size)
        return result


@dataclass(frozen=True)
class _Profile:
    """A fit, for profile-likelihood intervals (natural units)."""

    likelihood: _Likelihood
    beta: FloatArray
    model: FloatArray
    robust: FloatArray

    def constrained(
        self, contrast: FloatArray, value: float, start: FloatArray
    ) -> tuple[FloatArray, float]:
        """The penalised MLE with ``contrast·β = value`` and mean 0 (Newton, Lagrange).

        Also returns the Lagrange multiplier of the contrast: the slope of the profile
        log-likelihood at ``value``.
        """
        size = len(start)
        constraints = np.vstack([contrast, np.ones(size)])
        system = np.zeros((size + 2, size + 2))
        system[:size, size:] = constraints.T
        system[size:, :size] = constraints
        beta = start  # the constraints are linear: Newton meets them from the first step
        slope = 0.0
        for _ in range(50):
            gradient, system[:size, :size] = self.likelihood.score(beta)
            rhs = np.r_[gradient, value - float(contrast @ beta), -float(beta.sum())]
            solution = np.linalg.solve(system, rhs)
            step, slope = solution[:size], float(solution[size])
            beta = beta + step
            if float(np.max(np.abs(step))) < 1e-7:
                break
        return beta, slope

    def bounds(self, contrast: FloatArray, t: float) -> tuple[float, float]:
        """Where the profile of ``contrast·β`` drops by ``t²/2`` × the design effect."""
        model_var = float(contrast @ self.model @ contrast)
        robust_var = float(contrast @ self.robust @ contrast)
        if model_var < _NEGLIGIBLE or robust_var < _NEGLIGIBLE:
            return 0.0, 0.0
        drop = 0.5 * t * t * robust_var / model_var
        top = self.likelihood.objective(self.beta)
        centre = float(contrast @ self.beta)
        ends = []
        for sign in (-1.0, 1.0):
            ends.append(self._crossing(contrast, centre, top - drop, sign, t * robust_var**0.5))
        return ends[0], ends[1]

    def _crossing(
        self, contrast: FloatArray, centre: float, level: float, sign: float, guess: float
    ) -> float:
        """The offset on the ``sign`` side where the profile falls to ``level``.

        Safeguarded Newton on the profile, whose slope is the constraint's multiplier:
        bisection within the bracket whenever a Newton step would leave it.
        """
        inner, outer = 0.0, math.inf
        offset, start = guess, self.beta
        for _ in range(60):
            start, slope = self.constrained(contrast, centre + sign * offset, start)
            excess = level - self.likelihood.objective(start)  # < 0 inside the interval
            if abs(excess) < 1e-9:
                return sign * offset
            if excess < 0.0:
                inner = offset
            else:
                outer = offset
            if outer - inner < 1e-7 or inner >= SEPARATION_LIMIT:
                break
            # The profile falls by |slope| per unit outwards: a Newton step on the excess.
            outwards = -sign * slope
            step = -excess / outwards if outwards > _NEGLIGIBLE else math.inf
            offset += step
            if not inner < offset < outer:
                offset = 0.5 * (inner + outer) if math.isfinite(outer) else 2.0 * max(inner, guess)
            offset = min(offset, SEPARATION_LIMIT)
        return sign * 0.5 * (inner + min(outer, SEPARATION_LIMIT))


def fit_ratings(
    hands: Iterable[HandOutcome],
    *,
    prior_precision: float = DEFAULT_PRIOR_PRECISION,
    firth: float = DEFAULT_FIRTH,
    robust: bool = True,
    anchor: str | None = None,
    offset: float = 0.0,
    tol: float = 1e-9,
    max_iter: int = 100,
) -> RatingFit:
    """Fits individual hand-Elo ratings to hand outcomes, with team rating = mean of members.

    Args:
        hands: The played hands; each board id is one cluster for the robust errors.
        prior_precision: Ridge λ in natural units (0, with ``firth`` 0, gives the plain MLE).
        firth: Weight τ of Firth's penalty ``τ·½·log det I(β)``: 1 is Firth's (1993)
            bias-reduced estimate, 0 < τ < 1 the weakened penalty of Elgmati et al. (2015);
            the profile intervals use the same penalised likelihood.
        robust: Report duplicate-robust (by board) errors rather than model-based ones.
        anchor: Bot whose rating is fixed at ``offset``; None fixes the mean at ``offset``.
        offset: Value of the anchor (for example 1500 for display).
        tol: Newton stops when the largest step is below this (natural units).
        max_iter: Newton iteration cap.

    Raises:
        RatingError: Fewer than 2 bots, rank-deficient or disconnected hands, an unknown
            anchor, separation without a prior, or no convergence.
    """
    played = list(hands)
    bots, rows = design(played)
    if anchor is not None and anchor not in bots:
        raise RatingError(f"anchor {anchor!r} did not play")
    if prior_precision < 0.0:
        raise RatingError(f"prior_precision must be >= 0, got {prior_precision!r}")
    if firth < 0.0:
        raise RatingError(f"firth must be >= 0, got {firth!r}")
    require_identified(bots, rows, played)
    require_evidence(played)
    outcomes = np.array([hand.outcome for hand in played])
    distinct, which = np.unique(rows, axis=0, return_inverse=True)
    which = which.reshape(-1)
    counts: FloatArray = np.bincount(which, minlength=len(distinct)).astype(float)
    totals: FloatArray = np.bincount(which, weights=outcomes, minlength=len(distinct)).astype(float)
    likelihood = _Likelihood(distinct, counts, totals, prior_precision, firth)
    beta, iterations = _newton(likelihood, tol, max_iter)

    z = distinct @ beta
    _, information = likelihood.score(beta)
    p = _logistic(z)[which]
    model = pseudo_inverse(information)
    clusters, boards = board_clusters(played)
    sandwich = model @ duplicate_meat(rows, outcomes - p, p * (1.0 - p), clusters, model) @ model

    shift = _anchoring(bots, anchor)
    scale = ELO_PER_NAT**2
    chosen = sandwich if robust else model
    ratings = ELO_PER_NAT * (shift @ beta) + offset
    return RatingFit(
        bots=bots,
        ratings=tuple(float(r) for r in ratings),
        covariance=_as_tuples(scale * (shift @ chosen @ shift.T)),
        model_covariance=_as_tuples(scale * (shift @ model @ shift.T)),
        hands=tuple(sum(bot in hand.seats for hand in played) for bot in bots),
        boards=boards,
        log_likelihood=_grouped_log_likelihood(z, counts, totals),
        iterations=iterations,
        anchor=anchor,
        _profile=_Profile(likelihood, beta, model, chosen),
    )


def _newton(likelihood: _Likelihood, tol: float, max_iter: int) -> tuple[FloatArray, int]:
    size = likelihood.rows.shape[1]
    ones = np.full((size, size), 1.0 / size)
    beta = np.zeros(size)
    objective = likelihood.objective(beta)
    for iteration in range(1, max_iter + 1):
        gradient, information = likelihood.score(beta)
        # Adding 11ᵀ/N fixes the unidentified all-ones direction; the gradient has no
        # component along it, so the step keeps the ratings centred.
        step = np.linalg.solve(information + ones, gradient)
        length = 1.0
        while True:
            trial = beta + length * step
            trial -= trial.mean()
            value = likelihood.objective(trial)
            if value >= objective - 1e-12 * (1.0 + abs(objective)) or length < 1e-6:
                break
            length /= 2.0
        beta, objective = trial, value
        if float(np.max(np.abs(length * step))) < tol:
            return beta, iteration
        if float(np.max(np.abs(beta))) > SEPARATION_LIMIT:
            raise RatingError(
                "ratings diverge: some bot or group never lost (or never won); "
                "use prior_precision > 0 or firth > 0"
            )
    raise RatingError(f"rating fit did not converge in {max_iter} Newton iterations")


def _logistic(z: FloatArray) -> FloatArray:
    # tanh form: no overflow for large |z|.
    result: FloatArray = 0.5 * (1.0 + np.tanh(0.5 * z))
    return result


def _grouped_log_likelihood(z: FloatArray, counts: FloatArray, totals: FloatArray) -> float:
    # Per hand s·ln p + (1 − s)·ln(1 − p) = s·z − ln(1 + e^z), stable for any z; summed
    # over a row's hands it is (Σs)·z − n·ln(1 + e^z).
    return float(np.sum(totals * z - counts * np.logaddexp(0.0, z)))


def _anchoring(bots: tuple[str, ...], anchor: str | None) -> FloatArray:
    size = len(bots)
    if anchor is None:
        return np.eye(size)
    shift = np.eye(size)
    shift[:, bots.index(anchor)] -= 1.0
    return shift


def _as_tuples(matrix: FloatArray) -> tuple[tuple[float, ...], ...]:
    # Symmetrise: products like C·M·C are symmetric only up to rounding.
    symmetric = 0.5 * (matrix + matrix.T)
    return tuple(tuple(float(x) for x in row) for row in symmetric)


def _z(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level!r}")
    return NormalDist().inv_cdf(0.5 + 0.5 * level)
