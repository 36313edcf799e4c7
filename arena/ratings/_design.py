"""Design matrix, board clusters and identifiability shared by the rating and margin fits."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from arena.ratings.hands import HandOutcome, RatingError, board_pairs, bots_of, team_weights

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]


def design(hands: Sequence[HandOutcome]) -> tuple[tuple[str, ...], FloatArray]:
    """Returns the sorted bots and the design matrix (one row per hand, one column per bot).

    Raises:
        RatingError: If fewer than two bots played.
    """
    bots = bots_of(hands)
    if len(bots) < 2:
        raise RatingError(f"ratings need at least 2 bots, got {len(bots)}")
    column = {bot: i for i, bot in enumerate(bots)}
    rows = np.zeros((len(hands), len(bots)))
    for g, hand in enumerate(hands):
        for bot, weight in team_weights(hand.seats).items():
            rows[g, column[bot]] = weight
    return bots, rows


def board_clusters(hands: Sequence[HandOutcome]) -> tuple[IntArray, int]:
    """Returns each hand's board index (in order of first appearance) and the board count."""
    index: dict[str, int] = {}
    clusters = np.fromiter(
        (index.setdefault(hand.board, len(index)) for hand in hands), dtype=np.intp
    )
    return clusters, len(index)


def cluster_sums(rows: FloatArray, clusters: IntArray, boards: int) -> FloatArray:
    """Sums the rows of ``rows`` within each board: the score contributions u_b of §3.3."""
    sums = np.zeros((boards, rows.shape[1]))
    np.add.at(sums, clusters, rows)
    return sums


def within_board_pairs(clusters: IntArray) -> tuple[IntArray, IntArray]:
    """Every pair (g, h), g < h, of hands on the same board (the plays of a duplicate deal)."""
    order = np.argsort(clusters, kind="stable")
    firsts: list[IntArray] = []
    seconds: list[IntArray] = []
    edges = np.flatnonzero(np.diff(clusters[order])) + 1
    for members in np.split(order, edges):
        if len(members) > 1:
            g, h = np.triu_indices(len(members), k=1)
            firsts.append(members[g])
            seconds.append(members[h])
    if not firsts:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty
    return np.concatenate(firsts), np.concatenate(seconds)


def leverage_corrected(
    rows: FloatArray,
    residuals: FloatArray,
    weights: FloatArray,
    clusters: IntArray,
    bread: FloatArray,
    power: float,
) -> FloatArray:
    """Residuals with each board's leverage taken out: ``(I − H_b)^(−power) e_b``.

    Fitted residuals are smaller than the errors they stand for, most on boards that weigh
    much in the fit, so sandwiches built from them are too small with few boards per bot.
    ``H_b = W_b X_b B X_bᵀ`` is board b's block of the hat matrix (``weights`` W the working
    variances, ``bread`` B the inverse information); power 1 is the correction of Mancl &
    DeRouen (2001), power ½ that of Bell & McCaffrey (2002, "CR2") and Kauermann & Carroll
    (2001). Computed on the symmetric ``W^½ X B Xᵀ W^½``, batched by board size.
    """
    order = np.argsort(clusters, kind="stable")
    counts = np.bincount(clusters)
    starts = np.cumsum(counts) - counts
    root = np.sqrt(np.maximum(weights, 1e-300))
    scaled = residuals / root
    corrected = residuals.copy()
    for size in np.unique(counts):
        boards = np.flatnonzero(counts == size)
        members = order[starts[boards][:, None] + np.arange(size)]
        x = rows[members] * root[members][:, :, None]
        hat = x @ bread @ x.transpose(0, 2, 1)
        values, vectors = np.linalg.eigh(np.eye(size) - hat)
        factors = np.where(values > 1e-12, np.maximum(values, 1e-12) ** -power, 0.0)
        adjust = (vectors * factors[:, None, :]) @ vectors.transpose(0, 2, 1)
        corrected[members] = root[members] * (adjust @ scaled[members][:, :, None])[:, :, 0]
    return corrected


def duplicate_meat(
    rows: FloatArray,
    residuals: FloatArray,
    variances: FloatArray,
    clusters: IntArray,
    bread: FloatArray,
) -> FloatArray:
    """The score covariance Σ_b Var(u_b) of a fit, for duplicate boards (docs/ratings.md).

    The plain cluster sandwich takes Var(u_b) = u_b u_bᵀ, whose diagonal terms are the
    squared residuals: near-perfect records make them vanish, and the interval with them.
    Here each hand's own variance is the model's (``variances``); only the covariance of
    two hands of one board comes from the data, the product of their residuals after
    Mancl & DeRouen's leverage correction (``leverage_corrected``, power 1), clipped to
    a correlation of ±1 so that every board's term stays positive semi-definite.
    """
    meat: FloatArray = rows.T @ (variances[:, None] * rows)
    g, h = within_board_pairs(clusters)
    if len(g):
        corrected = leverage_corrected(rows, residuals, variances, clusters, bread, 1.0)
        bound = np.sqrt(variances[g] * variances[h])
        cross = np.clip(corrected[g] * corrected[h], -bound, bound)
        half = rows[g].T @ (cross[:, None] * rows[h])
        meat += half + half.T
    return meat


def t_quantile(probability: float, freedom: float) -> float:
    """Student's t quantile by its Cornish–Fisher expansion (Abramowitz & Stegun 26.7.5).

    Accurate to about 1e-3 for 5 or more degrees of freedom, which is where it is used.
    """
    z = NormalDist().inv_cdf(probability)
    v = max(freedom, 1.0)
    return (
        z
        + (z**3 + z) / (4 * v)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
    )


def centring(size: int) -> FloatArray:
    """Returns the projection onto ratings with mean 0, ``I − 11ᵀ/N``."""
    projection: FloatArray = np.eye(size) - np.full((size, size), 1.0 / size)
    return projection


def pseudo_inverse(information: FloatArray) -> FloatArray:
    """Inverts an information matrix on the mean-0 subspace (where all fits live).

    Every design row sums to 0, so the all-ones direction carries no information. Adding
    ``11ᵀ/N`` makes the matrix invertible without changing it on the mean-0 subspace.
    """
    size = information.shape[0]
    projection = centring(size)
    inverse = np.linalg.inv(information + np.full((size, size), 1.0 / size))
    result: FloatArray = projection @ inverse @ projection
    return result


def require_identified(
    bots: tuple[str, ...], rows: FloatArray, hands: Sequence[HandOutcome]
) -> None:
    """Checks that the hands identify every individual rating (rank N − 1, §3.2).

    Raises:
        RatingError: Naming the disconnected groups of bots, or saying that only team
            sums are identified (for example fixed partnerships).
    """
    gram = rows.T @ rows
    rank = int(np.linalg.matrix_rank(gram))
    if rank == len(bots) - 1:
        return
    groups = _connected_groups(bots, hands)
    if len(groups) > 1:
        listing = "; ".join(", ".join(group) for group in groups)
        raise RatingError(
            f"the hands split the bots into {len(groups)} groups that never met: {listing}"
        )
    raise RatingError(
        f"the hands identify only {rank} of {len(bots) - 1} rating differences; "
        "fixed partnerships identify team sums only, rotate partners (a whist schedule)"
    )


def require_evidence(hands: Sequence[HandOutcome]) -> None:
    """Checks that the hands hold some evidence of a difference between the bots.

    Copies of a deterministic bot mirror each other: each board's second play undoes the
    first (its margin is minus the other's), so every board is a tie and the fit would give
    intervals of width 0, as if the difference were measured exactly as 0. It is not
    measured at all.

    Raises:
        RatingError: When every hand belongs to a board pair whose margins cancel.
    """
    pairs = board_pairs(hands)
    mirrored = all(first.margin + second.margin == 0 for first, second in pairs)
    if pairs and 2 * len(pairs) == len(hands) and mirrored:
        raise RatingError(
            f"all {len(pairs)} boards mirrored: each board's two plays cancel (the margin"
            " of one is minus the other's), as copies of a deterministic bot play; the"
            " hands hold no evidence of a difference between the bots"
        )


def _connected_groups(bots: tuple[str, ...], hands: Sequence[HandOutcome]) -> list[list[str]]:
    parent = {bot: bot for bot in bots}

    def root(bot: str) -> str:
        while parent[bot] != bot:
            parent[bot] = parent[parent[bot]]
            bot = parent[bot]
        return bot

    for hand in hands:
        first = root(hand.seats[0])
        for bot in hand.seats[1:]:
            parent[root(bot)] = first
    groups: dict[str, list[str]] = {}
    for bot in bots:
        groups.setdefault(root(bot), []).append(bot)
    return sorted(groups.values())
