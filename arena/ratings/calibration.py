"""Simulated events with known strengths, to measure how often intervals cover the truth.

A simulated event seats ``N`` bots at tables of four, round after round (the three
partnerships in turn for four bots, a fresh random seating otherwise), and every table plays
``boards`` duplicate boards in rotations 0 and 1; each board is one cluster.

Rating scenarios: team A wins a play with probability ``L(Δ)``, Δ the gap of the teams' mean
true ratings, so the true hand-Elo is exactly what the fit estimates. Card luck ties the two
plays of a board: one uniform draw ``u`` decides rotation 0 (A wins when ``u < L(Δ)``); with
probability ``luck`` rotation 1 uses ``1 − u`` (the teams swapped hands, so the luck swaps
sides), otherwise a fresh draw.

Margin scenarios: team A's score margin is ``x·θ + ε`` (θ the true points per hand), where
the luck ``ε`` is lumpy like Tichu's (docs/ratings.md): a card-point split in tens, and with
small probabilities a double victory (±200) or a Tichu call (±100) swinging it. With
probability ``luck`` rotation 1 gets ``−ε`` (the swapped hands), otherwise a fresh draw. The
margin is rounded to whole points at random (up with the fractional part's probability), so
its mean stays exactly ``x·θ``.

Used by ``scripts/calibrate_ratings.py`` and its fast test; the table is in docs/ratings.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from arena.ratings._design import FloatArray
from arena.ratings.bradley_terry import DEFAULT_FIRTH, fit_ratings
from arena.ratings.duplicate import fit_margins
from arena.ratings.hands import HandOutcome, RatingError

_PARTNERSHIPS = ((0, 1, 2, 3), (0, 2, 1, 3), (0, 1, 3, 2))

CARD_SPLIT_SD = 50.0
"""Standard deviation of the card-point part of a hand's luck, in points."""
DOUBLE_VICTORY = 0.1
"""Probability that a double victory (±200) swings a hand's luck."""
TICHU_SWING = 0.1
"""Probability that a Tichu call (±100) swings a hand's luck."""


@dataclass(frozen=True)
class Scenario:
    """A family of simulated events: true values, rounds and boards per table per round.

    ``spread`` > 0 draws each event's true values from N(0, spread) for ``bots`` bots;
    otherwise ``ratings`` are the true values of every event. ``kind`` says whether the
    values are hand-Elo ratings or margins in points per hand.
    """

    name: str
    rounds: int
    boards: int
    ratings: tuple[float, ...] = ()
    bots: int = 0
    spread: float = 0.0
    luck: float = 0.6
    kind: Literal["rating", "margin"] = "rating"

    @property
    def unit(self) -> str:
        """The unit of the true values and the intervals."""
        return "Elo" if self.kind == "rating" else "points"

    def true_ratings(self, rng: np.random.Generator) -> FloatArray:
        """This event's true values, mean 0."""
        values = rng.normal(0.0, self.spread, self.bots) if self.spread > 0 else self.ratings
        truth = np.asarray(values, dtype=float)
        centred: FloatArray = truth - truth.mean()
        return centred


@dataclass(frozen=True)
class Coverage:
    """How a scenario's intervals did over its simulated events (totals, so parts add up).

    ``unrated`` counts events whose random seatings left some value unidentified (no fit).
    ``covered_sq``, ``cross`` and ``intervals_sq`` sum, over the events, the squares and the
    product of each event's covered and interval counts, for the Monte Carlo error.
    """

    scenario: Scenario
    events: int
    intervals: int
    covered: int
    width: float
    hands: float
    unrated: int = 0
    covered_sq: int = 0
    cross: int = 0
    intervals_sq: int = 0

    @property
    def rate(self) -> float:
        """Share of intervals that held the true value."""
        return self.covered / self.intervals

    @property
    def error(self) -> float:
        """Monte Carlo standard error of ``rate``, with the events as clusters (the intervals
        of one event share its hands, so they are not independent): the ratio estimator's
        linearised variance, Σ(cₑ − p·nₑ)² / (E(E − 1)) over the mean count n̄ squared."""
        rated = self.events - self.unrated
        if rated < 2:
            return math.inf
        p = self.rate
        spread = self.covered_sq - 2 * p * self.cross + p * p * self.intervals_sq
        mean = self.intervals / rated
        return math.sqrt(max(spread, 0.0) / (rated * (rated - 1))) / mean

    @property
    def mean_width(self) -> float:
        """Mean width of the intervals."""
        return self.width / self.intervals

    @property
    def hands_per_bot(self) -> float:
        """Mean hands behind an interval."""
        return self.hands / self.intervals

    def __add__(self, other: Coverage) -> Coverage:
        """The two parts' events together (for events measured in parallel)."""
        return Coverage(
            self.scenario,
            self.events + other.events,
            self.intervals + other.intervals,
            self.covered + other.covered,
            self.width + other.width,
            self.hands + other.hands,
            self.unrated + other.unrated,
            self.covered_sq + other.covered_sq,
            self.cross + other.cross,
            self.intervals_sq + other.intervals_sq,
        )


def simulate_event(
    truth: Sequence[float] | FloatArray,
    rounds: int,
    boards: int,
    rng: np.random.Generator,
    luck: float = 0.6,
    kind: Literal["rating", "margin"] = "rating",
) -> list[HandOutcome]:
    """Plays one simulated event (see the module docstring); bots are named ``b00``, ..."""
    n = len(truth)
    names = [f"b{i:02d}" for i in range(n)]
    hands: list[HandOutcome] = []
    board = 0
    for k in range(rounds):
        order = np.array(_PARTNERSHIPS[k % 3]) if n == 4 else rng.permutation(n)
        for t in range(n // 4):
            seats = order[4 * t : 4 * t + 4]
            gap = (truth[seats[0]] + truth[seats[2]] - truth[seats[1]] - truth[seats[3]]) / 2
            line_up = (names[seats[0]], names[seats[1]], names[seats[2]], names[seats[3]])
            plays = (
                _margins(gap, boards, rng, luck)
                if kind == "margin"
                else _wins(gap, boards, rng, luck)
            )
            for b in range(boards):
                for rotation in (0, 1):
                    margin = int(plays[b, rotation])
                    hands.append(
                        HandOutcome(
                            str(board + b), line_up, max(margin, 0), max(-margin, 0), rotation
                        )
                    )
            board += boards
    return hands


def _wins(gap: float, boards: int, rng: np.random.Generator, luck: float) -> FloatArray:
    """Rotations 0 and 1 of ``boards`` boards as margins ±1: A won or lost."""
    p = 1.0 / (1.0 + 10.0 ** (-gap / 400.0))
    first = rng.random(boards)
    second = np.where(rng.random(boards) < luck, 1.0 - first, rng.random(boards))
    draws = np.stack([first, second], axis=1)
    won: FloatArray = np.where(draws < p, 1.0, -1.0)
    return won


def _margins(gap: float, boards: int, rng: np.random.Generator, luck: float) -> FloatArray:
    """Rotations 0 and 1 of ``boards`` boards as score margins with mean ``gap``."""
    first = _luck(boards, rng)
    second = np.where(rng.random(boards) < luck, -first, _luck(boards, rng))
    exact = gap + np.stack([first, second], axis=1)
    rounded: FloatArray = np.floor(exact) + (rng.random(exact.shape) < exact - np.floor(exact))
    return rounded


def _luck(boards: int, rng: np.random.Generator) -> FloatArray:
    """One play's luck per board: card split, double victories and Tichu calls, mean 0."""
    cards = 10.0 * np.round(rng.normal(0.0, CARD_SPLIT_SD, boards) / 10.0)
    doubles = 200.0 * rng.choice((-1.0, 1.0), boards) * (rng.random(boards) < DOUBLE_VICTORY)
    calls = 100.0 * rng.choice((-1.0, 1.0), boards) * (rng.random(boards) < TICHU_SWING)
    total: FloatArray = cards + doubles + calls
    return total


def measure(
    scenario: Scenario,
    events: int,
    seed: int = 0,
    level: float = 0.95,
    first: int = 0,
    firth: float = DEFAULT_FIRTH,
) -> Coverage:
    """Simulates events ``first`` .. ``first + events − 1`` of ``scenario`` and counts the
    intervals that cover; event ``k`` draws from its own seed, so any split of the events
    into parts gives the same totals. ``firth`` is the rating fit's Firth weight τ."""
    intervals = covered = unrated = covered_sq = cross = intervals_sq = 0
    width = hands = 0.0
    for event in range(first, first + events):
        rng = np.random.default_rng([seed, event])
        truth = scenario.true_ratings(rng)
        played = simulate_event(
            truth, scenario.rounds, scenario.boards, rng, scenario.luck, scenario.kind
        )
        try:
            fit = (
                fit_ratings(played, firth=firth)
                if scenario.kind == "rating"
                else fit_margins(played)
            )
        except RatingError:
            unrated += 1
            continue
        held = 0
        for i, bot in enumerate(fit.bots):
            low, high = fit.interval(bot, level)
            held += low <= truth[int(bot[1:])] <= high
            width += high - low
            hands += fit.hands[i]
        n = len(fit.bots)
        covered += held
        intervals += n
        covered_sq += held * held
        cross += held * n
        intervals_sq += n * n
    return Coverage(
        scenario, events, intervals, covered, width, hands, unrated, covered_sq, cross, intervals_sq
    )


DEMO = (380.0, 360.0, -370.0, -370.0)
"""True ratings like the demo's: two strong bots and two random ones."""

DEMO_MARGINS = (120.0, 90.0, -90.0, -120.0)
"""True points per hand like the demo's."""

SCENARIOS = (
    Scenario("demo (2 strong, 2 random), 144 hands", 3, 24, DEMO),
    Scenario("demo, 576 hands", 3, 96, DEMO),
    Scenario("4 close bots, 144 hands", 3, 24, (60.0, 20.0, -20.0, -60.0)),
    Scenario("near-perfect records (±500), 144 hands", 3, 24, (500.0, 500.0, -500.0, -500.0)),
    Scenario("one strong bot, 144 hands", 3, 24, (900.0, -300.0, -300.0, -300.0)),
    Scenario("8 bots, s.d. 200, 28 hands each", 7, 2, bots=8, spread=200.0),
    Scenario("8 bots, s.d. 200, 84 hands each", 14, 3, bots=8, spread=200.0),
    Scenario("16 bots, s.d. 150, 180 hands each", 15, 6, bots=16, spread=150.0),
    Scenario("40 bots, s.d. 150, 72 hands each", 9, 4, bots=40, spread=150.0),
    Scenario("margins: demo, 144 hands", 3, 24, DEMO_MARGINS, kind="margin"),
    Scenario(
        "margins: demo, no duplicate luck, 144 hands", 3, 24, DEMO_MARGINS, luck=0.0, kind="margin"
    ),
    Scenario("margins: 8 bots, s.d. 60, 28 hands each", 7, 2, bots=8, spread=60.0, kind="margin"),
    Scenario("margins: 8 bots, s.d. 60, 84 hands each", 14, 3, bots=8, spread=60.0, kind="margin"),
    Scenario(
        "margins: 16 bots, s.d. 40, 180 hands each", 15, 6, bots=16, spread=40.0, kind="margin"
    ),
    Scenario("margins: 40 bots, s.d. 40, 72 hands each", 9, 4, bots=40, spread=40.0, kind="margin"),
)
"""The scenarios of the coverage table in docs/ratings.md."""


def table_rows(text: str, count: int) -> list[int]:
    """Parses a choice of rows of a calibration table: numbers from 1, comma-separated
    (``"1,3"``); returns them from 0, sorted and distinct.

    Raises:
        ValueError: Naming what is wrong (a scripts' ``--rows`` shows it as it is).
    """
    try:
        rows = [int(part) - 1 for part in text.split(",")]
    except ValueError:
        raise ValueError(f"expected row numbers like 1,3, got {text!r}") from None
    if not all(0 <= row < count for row in rows):
        raise ValueError(f"rows are numbered 1 to {count}, got {text!r}")
    return sorted(set(rows))
