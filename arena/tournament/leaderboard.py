"""Leaderboards of an event, regenerated from the event store: Markdown, JSON and one HTML page.

``build_leaderboard`` computes everything from the recorded hands with the pure functions of
``arena.ratings``: the batch hand-Elo fit with cluster-robust confidence intervals and the
likelihood of superiority (LOS) over the next bot, the points margin per hand, the duplicate
correlation ρ̂ (within line-ups), each bot's failures, victory-point standings for a turnier
and a partnership table when individual ratings are not identified (fixed partnerships).

Numbers are rounded once, here, so every format shows the same values; the renderers are in
``arena.tournament.leaderboard_render``.
"""

from __future__ import annotations

import math
import sqlite3
import statistics
import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.ratings import (
    DuplicateStats,
    HandOutcome,
    RatingError,
    Standing,
    duplicate_stats,
    fit_margins,
    fit_ratings,
    vp_standings,
)
from arena.tournament.store import EventRef, EventStore, StoredHand, StoreError

__all__ = [
    "FORMAT",
    "VERSION",
    "FailureRow",
    "Leaderboard",
    "Leaders",
    "RatingRow",
    "TeamRow",
    "bot_failures",
    "build_leaderboard",
    "leaders_text",
    "tally_failures",
]

FORMAT = "tichu-arena-leaderboard"
VERSION = 1


@dataclass(frozen=True)
class RatingRow:
    """One bot's line: hand-Elo with its confidence interval, margin and live Elo.

    Attributes:
        rank: 1 for the highest rating.
        bot: The bot's name.
        rating: Hand-Elo (mean 0 over all rated bots, or 0 for the anchor).
        stderr: Cluster-robust standard error of the rating.
        low: Lower end of the confidence interval.
        high: Upper end of the confidence interval.
        los_next: Likelihood that this bot is stronger than the next one down (None for
            the last).
        margin: Points per hand by which two copies of the bot beat two average bots.
        margin_stderr: Standard error of ``margin``.
        hands: Hands the bot played.
    """

    rank: int
    bot: str
    rating: float
    stderr: float
    low: float
    high: float
    los_next: float | None
    margin: float | None
    margin_stderr: float | None
    hands: int


@dataclass(frozen=True)
class TeamRow:
    """A partnership's hands, won/tied/lost and mean points margin per hand.

    ``margin_ci`` is the half-width of the margin's 95% interval, clustered by board (the
    board means are the independent samples); 0 with fewer than two boards.
    """

    players: tuple[str, str]
    hands: int
    won: int
    tied: int
    lost: int
    margin: float
    margin_ci: float = 0.0


@dataclass(frozen=True)
class FailureRow:
    """One bot's recorded failures, by kind, and where to look.

    ``kinds`` are (kind, count) pairs, most frequent first; ``hands`` counts the hands with a
    failure of the bot; ``log`` is the log of the bot's first failing play ("" when none
    was kept).
    """

    bot: str
    kinds: tuple[tuple[str, int], ...]
    hands: int
    log: str

    @property
    def total(self) -> int:
        """All the bot's failures."""
        return sum(count for _, count in self.kinds)

    def describe(self) -> str:
        """``"exception 42, late 1"``."""
        return ", ".join(f"{kind.replace('_', ' ')} {count}" for kind, count in self.kinds)


def bot_failures(hands: Sequence[StoredHand]) -> tuple[FailureRow, ...]:
    """The failures recorded in ``hands``, per bot (the bot at the failing seat)."""
    return tally_failures(
        (hand.seats[f.seat], f.kind, f.log, (hand.play_id, hand.row.hand))
        for hand in hands
        for f in hand.row.failures
    )


def tally_failures(failures: Iterable[tuple[str, str, str, object]]) -> tuple[FailureRow, ...]:
    """Counts failures given as (bot, kind, log, hand key), per bot, most failures first."""
    kinds: dict[str, Counter[str]] = {}
    hands: dict[str, set[object]] = {}
    logs: dict[str, str] = {}
    for bot, kind, log, hand in failures:
        kinds.setdefault(bot, Counter())[kind] += 1
        hands.setdefault(bot, set()).add(hand)
        if log:
            logs.setdefault(bot, log)
    rows = [
        FailureRow(
            bot,
            tuple(sorted(c.items(), key=lambda kc: (-kc[1], kc[0]))),
            len(hands[bot]),
            logs.get(bot, ""),
        )
        for bot, c in kinds.items()
    ]
    return tuple(sorted(rows, key=lambda r: (-r.total, r.bot)))


@dataclass(frozen=True)
class Leaderboard:
    """Everything a leaderboard shows, with numbers already rounded for display."""

    event: str
    status: str
    created: str
    schedule: str
    method: str
    format: str
    rotations: int
    hands_per_board: int
    seed: int | None  # None: the deals come from the event's secret
    bots: tuple[str, ...]
    plays_done: int
    plays_total: int
    boards_done: int
    boards_total: int
    hands: int
    level: float
    anchor: str | None
    ratings: tuple[RatingRow, ...]
    ratings_note: str | None
    residual_sd: float | None
    duplicate: DuplicateStats | None
    duplicate_note: str | None
    standings: tuple[Standing, ...]
    teams: tuple[TeamRow, ...]
    failures: tuple[FailureRow, ...] = ()


def build_leaderboard(
    store: EventStore,
    ref: EventRef | None = None,
    *,
    anchor: str | None = None,
    level: float = 0.95,
) -> Leaderboard:
    """Computes an event's leaderboard from its recorded hands.

    Ratings that cannot be fitted yet (no hands, too few, fixed partnerships) leave
    ``ratings`` empty and say why in ``ratings_note``; the rest is still filled in.

    Raises:
        StoreError: No such event.
        ValueError: ``level`` outside (0, 1).
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level!r}")
    summary = store.event_summary(ref)
    stored = store.hands(summary.info.id)
    outcomes = [hand.outcome() for hand in stored]
    hidden = set(summary.fillers)
    spec = summary.spec

    rows: tuple[RatingRow, ...] = ()
    note: str | None = None
    residual: float | None = None
    if not outcomes:
        note = "no hands recorded yet"
    else:
        try:
            rows, residual = _rating_rows(outcomes, hidden, anchor, level)
        except RatingError as e:
            note = str(e)

    duplicate: DuplicateStats | None = None
    duplicate_note: str | None = None
    try:
        duplicate = _rounded_duplicate(duplicate_stats(outcomes))
    except RatingError as e:
        duplicate_note = str(e)

    standings: tuple[Standing, ...] = ()
    if spec.get("schedule") == "turnier" and stored:
        table = vp_standings(hand.turnier_hand() for hand in stored)
        standings = tuple(s for s in table if s.bot not in hidden)
    teams: tuple[TeamRow, ...] = ()
    if outcomes and (spec.get("schedule") == "fixed" or not rows):
        teams = _team_rows(stored)

    return Leaderboard(
        event=summary.name,
        status=summary.info.status.value,
        created=summary.info.created,
        schedule=str(spec.get("schedule", "")),
        method=str(summary.schedule.get("method", "")),
        format=str(spec.get("format", "board")),
        rotations=int(spec.get("rotations", 2)),
        hands_per_board=int(spec.get("hands_per_board", 1)),
        seed=None if spec.get("seed") is None else int(spec["seed"]),
        bots=summary.bots,
        plays_done=summary.plays_done,
        plays_total=summary.plays_total,
        boards_done=summary.boards_done,
        boards_total=summary.boards_total,
        hands=summary.hands,
        level=level,
        anchor=anchor,
        ratings=rows,
        ratings_note=note,
        residual_sd=residual,
        duplicate=duplicate,
        duplicate_note=duplicate_note,
        standings=standings,
        teams=teams,
        failures=tuple(r for r in bot_failures(stored) if r.bot not in hidden),
    )


def _rating_rows(
    outcomes: Sequence[HandOutcome], hidden: set[str], anchor: str | None, level: float
) -> tuple[tuple[RatingRow, ...], float | None]:
    fit = fit_ratings(outcomes, anchor=anchor)
    try:
        margins = fit_margins(outcomes)
    except RatingError:
        margins = None
    shown = [bot for bot in fit.ranking() if bot not in hidden]
    rows: list[RatingRow] = []
    for rank, bot in enumerate(shown, 1):
        low, high = fit.interval(bot, level)
        below = shown[rank] if rank < len(shown) else None
        rows.append(
            RatingRow(
                rank=rank,
                bot=bot,
                rating=_round(fit.rating(bot), 1),
                stderr=_round(fit.stderr(bot), 1),
                low=_round(low, 1),
                high=_round(high, 1),
                los_next=None if below is None else _round(fit.los(bot, below), 3),
                margin=None if margins is None else _round(margins.margin(bot), 2),
                margin_stderr=None if margins is None else _round(margins.stderr(bot), 2),
                hands=fit.hands[fit.index(bot)],
            )
        )
    residual = None if margins is None else _round(margins.residual_sd, 2)
    return tuple(rows), residual


def _rounded_duplicate(stats: DuplicateStats) -> DuplicateStats:
    return DuplicateStats(
        pairs=stats.pairs,
        correlation=_round(stats.correlation, 4),
        effective_sample_multiplier=_round(stats.effective_sample_multiplier, 3),
        margin_sd=_round(stats.margin_sd, 2),
        pair_margin_variance=_round(stats.pair_margin_variance, 1),
        pair_score_variance=_round(stats.pair_score_variance, 5),
        independent_pair_score_variance=_round(stats.independent_pair_score_variance, 5),
    )


def _team_rows(hands: Sequence[StoredHand]) -> tuple[TeamRow, ...]:
    tally: dict[tuple[str, str], list[int]] = {}
    by_board: dict[tuple[str, str], dict[str, list[float]]] = {}
    for hand in hands:
        outcome = hand.outcome()
        seats = hand.seats
        sides = (
            (_pair(seats[0], seats[2]), outcome.margin),
            (_pair(seats[1], seats[3]), -outcome.margin),
        )
        for team, margin in sides:
            counts = tally.setdefault(team, [0, 0, 0, 0, 0])
            counts[0] += 1
            counts[1 if margin > 0 else 2 if margin == 0 else 3] += 1
            counts[4] += margin
            by_board.setdefault(team, {}).setdefault(hand.board_label, []).append(margin)
    rows = [
        TeamRow(
            team,
            c[0],
            c[1],
            c[2],
            c[3],
            _round(c[4] / c[0], 2),
            _round(_clustered_ci(by_board[team]), 2),
        )
        for team, c in tally.items()
    ]
    return tuple(sorted(rows, key=lambda r: (-r.margin, r.players)))


def _clustered_ci(boards: dict[str, list[float]]) -> float:
    """Half-width of a 95% interval for the mean margin, with boards as the samples."""
    means = [statistics.fmean(v) for v in boards.values()]
    if len(means) < 2:
        return 0.0
    return 1.96 * statistics.stdev(means) / math.sqrt(len(means))


def _pair(first: str, second: str) -> tuple[str, str]:
    return (first, second) if first <= second else (second, first)


def _round(value: float, digits: int) -> float:
    # Adding 0.0 turns -0.0 into 0.0, so a value rounding to zero prints one way.
    return round(value, digits) + 0.0 if math.isfinite(value) else value


def leaders_text(store: EventStore, event: str, count: int = 3) -> str:
    """The event's leaders by hand-Elo for a progress line (``greedy +210  random -35``);
    '' before the ratings can be fitted."""
    try:
        fit = fit_ratings(store.hand_outcomes(event))
    except (RatingError, ValueError):
        return ""
    return "  ".join(f"{bot} {fit.rating(bot):+.0f}" for bot in fit.ranking()[:count])


class Leaders:
    """The leaders of a running event for its progress line, fitted off the caller's thread.

    A full rating fit takes longer the more hands are stored (0.6 s at 19,000 hands), and the
    progress line is drawn on the loop that referees the local tables: ``text()`` returns at
    once with the latest fit, and starts the next one in a thread of its own when due: at
    least ``every_s`` after the last, never two at once, and never more than ``share`` of the
    time (a fit of t seconds waits t / share before the next), so fits stay a small part of
    the machine whatever the event's length. The thread reads the database on a connection
    of its own.
    """

    def __init__(self, db: Path, event: str, every_s: float = 2.0, share: float = 0.1) -> None:
        self.db = db
        self.event = event
        self.every_s = every_s
        self.share = share
        self.fits = 0  # fits finished (for tests)
        self._text = ""
        self._due = 0.0  # monotonic time from which the next fit may start
        self._thread: threading.Thread | None = None

    def text(self) -> str:
        """The latest leaders ('' before the first fit); starts a fit when one is due."""
        now = time.monotonic()
        if now >= self._due and (self._thread is None or not self._thread.is_alive()):
            self._due = math.inf  # until this fit ends
            self._thread = threading.Thread(target=self._fit, name="leaders", daemon=True)
            self._thread.start()
        return self._text

    def wait(self, timeout: float | None = None) -> None:
        """Waits for the fit under way, if any."""
        if self._thread is not None:
            self._thread.join(timeout)

    def _fit(self) -> None:
        start = time.monotonic()
        try:
            with EventStore(self.db, create=False) as store:
                self._text = leaders_text(store, self.event)
        except (StoreError, sqlite3.Error, OSError):
            pass  # a progress line never stops an event: the last leaders stay
        took = time.monotonic() - start
        self.fits += 1
        self._due = time.monotonic() + max(self.every_s, took / self.share)
