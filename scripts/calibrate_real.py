"""Measures interval coverage and gate error rates on real games of the reference bots.

Usage (from the repository root; docs/ratings.md and docs/gate.md give the tables):

    .venv/bin/python scripts/calibrate_real.py --events 40        # coverage rows, Markdown
    .venv/bin/python scripts/calibrate_real.py --rows 1,3 --events 20
    .venv/bin/python scripts/calibrate_real.py --gate-boards 1000 --events 0  # gate rows
    .venv/bin/python scripts/calibrate_real.py --events 0 --controls 300      # model controls
    .venv/bin/python scripts/calibrate_real.py --events 0 --lack-of-fit 20 --rows 3,4

Coverage: each row plays ``--events`` in-process events of one field of reference bots and
variants (``example_bots.common.field``). The truth for an event is the pooled fit of all the
*other* events of its field (leave one event out: the same bots, so the same mean-zero
scale); a row counts the event's 95 % intervals (ratings and margins) that hold it, with
the events as clusters for the Monte Carlo error. The pooled truth has its own error, about
1/√(events − 1) of an event's, which lowers the coverage it can show by about 0.1 point at
40 events.

Gate: plays ``--gate-boards`` gate boards (candidate + candidate against baseline +
baseline) of near-identical and distinct pairs, prints their pentanomials, and simulates
``--runs`` gates on each shape tilted to the presets' bounds
(``arena.ratings.gate_calibration``).

Controls and lack of fit: the same seatings simulated with additive strengths (the rating
model's own coverage), and the line-ups' departure from the pooled fit in real and simulated
events, which tell a model that does not fit from intervals that are wrong. Progress goes to
stderr, tables to stdout.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.ratings import (
    HandOutcome,
    RatingError,
    board_pairs,
    expected_score,
    fit_margins,
    fit_ratings,
    pentanomial_counts,
)
from arena.ratings.calibration import Coverage, Scenario, measure, simulate_event, table_rows
from arena.ratings.gate_calibration import PRESETS, simulate
from example_bots.common.field import Play, gate_pairs, play_event

LOW, HIGH = 0.93, 0.97
Z = 1.96


@dataclass(frozen=True)
class Field:
    """A row: the bots, and each event's rounds and boards per table per round."""

    name: str
    bots: tuple[str, ...]
    rounds: int
    boards: int

    @property
    def hands(self) -> int:
        """Hands of one event."""
        return 2 * self.rounds * self.boards * (len(self.bots) // 4)


FIELDS = (
    Field("4 bots, greedy family", ("greedy", "greedy-no-calls", "random", "random#2"), 3, 24),
    Field("4 bots with heuristic", ("heuristic", "heuristic-no-calls", "greedy", "random"), 3, 24),
    Field(
        "6 bots",
        ("greedy", "greedy-no-calls", "heuristic", "random", "random#2", "random#3"),
        15,
        12,
    ),
    Field(
        "8 bots",
        (
            "greedy",
            "greedy#2",
            "greedy-no-calls",
            "heuristic",
            "heuristic-no-calls",
            "random",
            "random#2",
            "random#3",
        ),
        8,
        18,
    ),
)
"""The coverage rows: fields of 4, 6 and 8 bots, 144 to 576 hands an event."""

GATE_PAIRS = (
    ("near-identical", "greedy", "greedy-no-calls"),
    ("near-identical", "heuristic", "heuristic-no-calls"),
    ("distinct", "heuristic", "greedy"),
)
"""Candidate and baseline of the gate rows."""
GATE_SEED = 500_000
"""First board seed of the gate boards (the shapes in gate_calibration.SHAPES came from it)."""


def outcomes(plays: Sequence[Play], event: int) -> list[HandOutcome]:
    """The plays as the ratings' hands, boards labelled by event so events stay apart."""
    return [
        HandOutcome(f"{event}/{p.board}", p.seats, p.score_a, p.score_b, p.rotation) for p in plays
    ]


def coverage(field: Field, events: int, seed: int) -> tuple[Coverage, Coverage]:
    """Plays ``events`` events of ``field`` and returns the rating and margin coverage."""
    played = []
    for event in range(events):
        started = time.monotonic()
        played.append(
            outcomes(play_event(field.bots, field.rounds, field.boards, seed + event), event)
        )
        print(
            f"  {field.name}: event {event + 1}/{events}, {time.monotonic() - started:.1f} s",
            file=sys.stderr,
            flush=True,
        )
    results = []
    for kind in ("rating", "margin"):
        scenario = Scenario(
            f"{field.name} ({kind})", field.rounds, field.boards, bots=len(field.bots), kind=kind
        )
        total = Coverage(scenario, 0, 0, 0, 0.0, 0.0)
        for event, hands in enumerate(played):
            others = [hand for k, rest in enumerate(played) if k != event for hand in rest]
            try:
                if kind == "rating":
                    truth_fit = fit_ratings(others)
                    fit = fit_ratings(hands)
                    truth = {bot: truth_fit.rating(bot) for bot in truth_fit.bots}
                    value = {bot: fit.interval(bot) for bot in fit.bots}
                    counts = fit.hands
                else:
                    truth_margins = fit_margins(others)
                    margins = fit_margins(hands)
                    truth = {bot: truth_margins.margin(bot) for bot in truth_margins.bots}
                    value = {bot: margins.interval(bot) for bot in margins.bots}
                    counts = margins.hands
            except RatingError:
                total = total + Coverage(scenario, 1, 0, 0, 0.0, 0.0, unrated=1)
                continue
            held = sum(low <= truth[bot] <= high for bot, (low, high) in value.items())
            n = len(value)
            width = sum(high - low for low, high in value.values())
            total = total + Coverage(
                scenario, 1, n, held, width, float(sum(counts)), 0, held * held, held * n, n * n
            )
        results.append(total)
    return results[0], results[1]


def lack_of_fit(hands: Sequence[HandOutcome], least: int = 10) -> tuple[float, int]:
    """Returns Σz² over the line-ups with at least ``least`` board pairs, and their number.

    z is a line-up's mean pair score less the pooled fit's ``L(Δ)``, over its standard error
    from the spread of its pair scores: near the count of line-ups when team strength is
    the mean of the partners' (the rating model), far above it when a bot's edge depends on
    whom it partners and meets.
    """
    fit = fit_ratings(hands)
    scores: dict[tuple[tuple[str, ...], tuple[str, ...]], list[float]] = {}
    for first, second in board_pairs(hands):
        seats = first.seats
        a, b = tuple(sorted((seats[0], seats[2]))), tuple(sorted((seats[1], seats[3])))
        score = (first.outcome + second.outcome) / 2
        if a > b:
            a, b, score = b, a, 1.0 - score
        scores.setdefault((a, b), []).append(score)
    total, line_ups = 0.0, 0
    for (a, b), values in scores.items():
        x = np.array(values)
        if x.size < least or x.var() == 0.0:
            continue
        gap = (sum(fit.rating(bot) for bot in a) - sum(fit.rating(bot) for bot in b)) / 2
        total += float((x.mean() - expected_score(gap)) ** 2 / (x.var(ddof=1) / x.size))
        line_ups += 1
    return total, line_ups


def lack_of_fit_row(field: Field, events: int, seed: int) -> str:
    """Plays ``events`` events of ``field`` (the coverage row's first ones) and compares the
    line-ups' lack of fit with that of the same seatings simulated from the pooled ratings."""
    real: list[HandOutcome] = []
    for event in range(events):
        plays = play_event(field.bots, field.rounds, field.boards, seed + event)
        real += outcomes(plays, event)
    fit = fit_ratings(real)
    rng = np.random.default_rng(seed)
    simulated: list[HandOutcome] = []
    for event in range(events):
        for hand in simulate_event(list(fit.ratings), field.rounds, field.boards, rng):
            named = tuple(fit.bots[int(bot[1:])] for bot in hand.seats)
            assert len(named) == 4
            simulated.append(
                HandOutcome(
                    f"{event}/{hand.board}",
                    (named[0], named[1], named[2], named[3]),
                    hand.score_a,
                    hand.score_b,
                    hand.rotation,
                )
            )
    chi, line_ups = lack_of_fit(real)
    additive, additive_line_ups = lack_of_fit(simulated)
    return (
        f"| {field.name} | {events} | {line_ups} | {chi:.0f} "
        f"| {additive:.0f} ({additive_line_ups} line-ups) |"
    )


CONTROL_SPREAD = {"rating": 200.0, "margin": 60.0}
"""Spread of the simulated controls' true values: Elo for ratings, points per hand for margins."""


def control_rows(field: Field, events: int, seed: int) -> list[str]:
    """Simulates ``events`` events with the field's seatings and additive strengths (the
    rating model itself) and returns their coverage rows: the control for the real row."""
    rows = []
    for kind, spread in CONTROL_SPREAD.items():
        scenario = Scenario(
            field.name, field.rounds, field.boards, bots=len(field.bots), spread=spread, kind=kind
        )
        c = measure(scenario, events, seed=seed)
        rows.append(
            f"| {field.name} ({field.hands} hands) | {kind} | {c.events} | {c.intervals} "
            f"| {100 * c.rate:.1f} % | ±{100 * c.error:.1f} |"
        )
    return rows


def gate_rows(boards: int, runs: int, seed: int) -> list[str]:
    """Plays the gate pairs and simulates the presets on their shapes; Markdown rows."""
    rng = np.random.default_rng(seed)
    rows = []
    for kind, candidate, baseline in GATE_PAIRS:
        started = time.monotonic()
        hands = outcomes(gate_pairs(candidate, baseline, boards, GATE_SEED), 0)
        counts = pentanomial_counts(hands, candidate)
        print(
            f"  {candidate} vs {baseline}: {counts}, {time.monotonic() - started:.0f} s",
            file=sys.stderr,
            flush=True,
        )
        for preset, (elo0, elo1) in PRESETS.items():
            null = simulate(counts, elo0, elo0=elo0, elo1=elo1, runs=runs, rng=rng)
            alternative = simulate(counts, elo1, elo0=elo0, elo1=elo1, runs=runs, rng=rng)
            rows.append(
                f"| {kind}: {candidate} vs {baseline} | {list(counts)} | {preset} "
                f"| {100 * null.passed:.1f} ± {100 * null.error:.1f} % "
                f"| {100 * alternative.passed:.1f} ± {100 * alternative.error:.1f} % |"
            )
    return rows


def _rows(text: str) -> list[int]:
    """Parses ``--rows``: table rows counted from 1, comma-separated."""
    try:
        return table_rows(text, len(FIELDS))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=40, help="events per coverage row")
    parser.add_argument("--rows", type=_rows, default=list(range(len(FIELDS))))
    parser.add_argument("--gate-boards", type=int, default=0, help="boards per gate pair")
    parser.add_argument("--runs", type=int, default=2000, help="simulated gates per cell")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--lack-of-fit", type=int, default=0, help="events per row for the line-up lack of fit"
    )
    parser.add_argument(
        "--controls", type=int, default=0, help="simulated events per row of the model control"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help=f"exit 1 if a row is outside 93-97 %% by more than {Z} MC errors",
    )
    args = parser.parse_args()
    if args.events < 0 or args.gate_boards < 0 or args.runs < 1:
        parser.error("--events and --gate-boards must be at least 0, --runs at least 1")
    started = time.monotonic()
    outside = []
    if args.events:
        print(
            "| field | kind | events | intervals | hands per bot | coverage | MC error "
            "| mean width |"
        )
        print("|:--|:--|--:|--:|--:|--:|--:|--:|")
        for row in args.rows:
            field = FIELDS[row]
            for c in coverage(field, args.events, args.seed + 1000 * row):
                kind = c.scenario.kind
                unit = "Elo" if kind == "rating" else "points"
                print(
                    f"| {field.name} ({field.hands} hands) | {kind} | {c.events} | {c.intervals} "
                    f"| {c.hands_per_bot:.0f} | {100 * c.rate:.1f} % | ±{100 * c.error:.1f} "
                    f"| {c.mean_width:.0f} {unit} |",
                    flush=True,
                )
                if c.rate + Z * c.error < LOW or c.rate - Z * c.error > HIGH:
                    outside.append(c.scenario.name)
    if args.controls:
        print("\n| simulated control | kind | events | intervals | coverage | MC error |")
        print("|:--|:--|--:|--:|--:|--:|")
        for row in args.rows:
            for line in control_rows(FIELDS[row], args.controls, args.seed + 1000 * row):
                print(line, flush=True)
    if args.lack_of_fit:
        print("\n| field | events | line-ups | Σz² real | Σz² simulated, additive |")
        print("|:--|--:|--:|--:|--:|")
        for row in args.rows:
            line = lack_of_fit_row(FIELDS[row], args.lack_of_fit, args.seed + 1000 * row)
            print(line, flush=True)
    if args.gate_boards:
        print("\n| gate pair | pentanomial | preset | false pass at elo0 | power at elo1 |")
        print("|:--|:--|:--|--:|--:|")
        for line in gate_rows(args.gate_boards, args.runs, args.seed):
            print(line, flush=True)
    print(f"\nwall time {time.monotonic() - started:.0f} s", file=sys.stderr)
    if outside:
        print(
            f"outside {LOW:.0%}-{HIGH:.0%} beyond {Z} MC errors: {', '.join(outside)}",
            file=sys.stderr,
        )
    return 1 if args.check and outside else 0


if __name__ == "__main__":
    raise SystemExit(main())
