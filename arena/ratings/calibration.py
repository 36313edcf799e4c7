"""Simulated events with known strengths, to measure how often rating intervals cover the truth.

A simulated event seats ``N`` bots at tables of four, round after round (the three
partnerships in turn for four bots, a fresh random seating otherwise), and every table plays
``boards`` duplicate boards in rotations 0 and 1. Team A wins a play with probability
``L(Δ)``, Δ the gap of the teams' mean true ratings, so the true hand-Elo is exactly what
the fit estimates. Card luck ties the two plays of a board: one uniform draw ``u`` decides
rotation 0 (A wins when ``u < L(Δ)``); with probability ``luck`` rotation 1 uses ``1 − u``
(the teams swapped hands, so the luck swaps sides), otherwise a fresh draw. Used by
``scripts/calibrate_ratings.py`` and its fast test; the table is in docs/ratings.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from arena.ratings._design import FloatArray
from arena.ratings.bradley_terry import fit_ratings
from arena.ratings.hands import HandOutcome, RatingError

_PARTNERSHIPS = ((0, 1, 2, 3), (0, 2, 1, 3), (0, 1, 3, 2))


@dataclass(frozen=True)
class Scenario:
    """A family of simulated events: true ratings, rounds and boards per table per round.

    ``spread`` > 0 draws each event's true ratings from N(0, spread) for ``bots`` bots;
    otherwise ``ratings`` are the true ratings of every event.
    """

    name: str
    rounds: int
    boards: int
    ratings: tuple[float, ...] = ()
    bots: int = 0
    spread: float = 0.0
    luck: float = 0.6
    unit: str = "Elo"

    def true_ratings(self, rng: np.random.Generator) -> FloatArray:
        """This event's true ratings, mean 0."""
        values = rng.normal(0.0, self.spread, self.bots) if self.spread > 0 else self.ratings
        truth = np.asarray(values, dtype=float)
        centred: FloatArray = truth - truth.mean()
        return centred


@dataclass(frozen=True)
class Coverage:
    """How a scenario's intervals did over its simulated events (totals, so parts add up).

    ``unrated`` counts events whose random seatings left some rating unidentified (no fit).
    """

    scenario: Scenario
    events: int
    intervals: int
    covered: int
    width: float
    hands: float
    unrated: int = 0

    @property
    def rate(self) -> float:
        """Share of intervals that held the true rating."""
        return self.covered / self.intervals

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
        )


def simulate_event(
    truth: Sequence[float] | FloatArray,
    rounds: int,
    boards: int,
    rng: np.random.Generator,
    luck: float = 0.6,
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
            p = 1.0 / (1.0 + 10.0 ** (-gap / 400.0))
            line_up = (names[seats[0]], names[seats[1]], names[seats[2]], names[seats[3]])
            for _ in range(boards):
                first = rng.random()
                second = 1.0 - first if rng.random() < luck else rng.random()
                for rotation, draw in ((0, first), (1, second)):
                    won = draw < p
                    hands.append(HandOutcome(str(board), line_up, int(won), int(not won), rotation))
                board += 1
    return hands


def measure(
    scenario: Scenario, events: int, seed: int = 0, level: float = 0.95, first: int = 0
) -> Coverage:
    """Simulates events ``first`` .. ``first + events − 1`` of ``scenario`` and counts the
    intervals that cover; event ``k`` draws from its own seed, so any split of the events
    into parts gives the same totals."""
    intervals = covered = unrated = 0
    width = hands = 0.0
    for event in range(first, first + events):
        rng = np.random.default_rng([seed, event])
        truth = scenario.true_ratings(rng)
        played = simulate_event(truth, scenario.rounds, scenario.boards, rng, scenario.luck)
        try:
            fit = fit_ratings(played)
        except RatingError:
            unrated += 1
            continue
        for i, bot in enumerate(fit.bots):
            low, high = fit.interval(bot, level)
            covered += low <= truth[int(bot[1:])] <= high
            intervals += 1
            width += high - low
            hands += fit.hands[i]
    return Coverage(scenario, events, intervals, covered, width, hands, unrated)


DEMO = (380.0, 360.0, -370.0, -370.0)
"""True ratings like the demo's: two strong bots and two random ones."""

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
)
"""The scenarios of the coverage table in docs/ratings.md."""
