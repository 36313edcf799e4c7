"""Measures the coverage of the 95 % rating and margin intervals on simulated events.

Usage (from the repository root; docs/ratings.md gives the wall time of the table):

    .venv/bin/python scripts/calibrate_ratings.py                       # the table, Markdown
    .venv/bin/python scripts/calibrate_ratings.py --events 200 --jobs 2 # fewer events, 2 cores
    .venv/bin/python scripts/calibrate_ratings.py --check               # exit 1 outside 93-97 %
                                                                        # (beyond the MC error)
    .venv/bin/python scripts/calibrate_ratings.py --rows 1,2,4 --events 300  # some rows only
    .venv/bin/python scripts/calibrate_ratings.py --rows 1,2,4,5 --firth 0.3  # a Firth weight

Each row simulates ``--events`` events of one scenario of ``arena.ratings.calibration``
(1,000 by default, ``--large-events`` for fields of 16 bots and more) and counts the bots
whose interval holds their true value; its Monte Carlo error treats each event as a cluster.
Progress goes to stderr, the table to stdout.
"""

from __future__ import annotations

import os

# One BLAS thread per process: the fits are small, and threads only fight for the cores.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from arena.ratings.bradley_terry import DEFAULT_FIRTH
from arena.ratings.calibration import SCENARIOS, Coverage, Scenario, measure, table_rows

LOW, HIGH = 0.93, 0.97
Z = 1.96
"""Monte Carlo errors a row's coverage may stray outside the band before ``--check`` fails
it: the row estimates its method's coverage, and a miss by less is the simulation's noise."""
CHUNK = 50
"""Events per task handed to a worker."""


def _part(task: tuple[int, int, int, int, float]) -> tuple[int, Coverage]:
    row, first, events, seed, firth = task
    return row, measure(SCENARIOS[row], events, seed, first=first, firth=firth)


def _events(scenario: Scenario, events: int, large: int) -> int:
    return large if scenario.bots >= 16 else events


def _rows(text: str) -> list[int]:
    """Parses ``--rows``: table rows counted from 1, comma-separated."""
    try:
        return table_rows(text, len(SCENARIOS))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000, help="events per scenario")
    parser.add_argument(
        "--large-events", type=int, default=100, help="events per scenario of 16 bots or more"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument(
        "--rows",
        type=_rows,
        default=list(range(len(SCENARIOS))),
        help="table rows to run, counted from 1 (default: all)",
    )
    parser.add_argument(
        "--firth",
        type=float,
        default=DEFAULT_FIRTH,
        help="weight of Firth's penalty in the rating fit (docs/ratings.md; default %(default)s)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help=f"exit 1 if a row is outside 93-97 %% by more than {Z} Monte Carlo errors",
    )
    args = parser.parse_args()
    if args.events < 1 or args.large_events < 1 or args.jobs < 1:
        parser.error("--events, --large-events and --jobs must be at least 1")
    if args.firth < 0.0:
        parser.error("--firth must be at least 0")
    started = time.monotonic()
    tasks = []
    for row in args.rows:
        scenario = SCENARIOS[row]
        total = _events(scenario, args.events, args.large_events)
        chunk = max(1, CHUNK // max(1, scenario.bots // 8))
        tasks += [
            (row, k, min(chunk, total - k), args.seed, args.firth) for k in range(0, total, chunk)
        ]
    results: dict[int, Coverage] = {}
    with ProcessPoolExecutor(args.jobs) as pool:
        for done, (row, part) in enumerate(pool.map(_part, tasks), 1):
            results[row] = results[row] + part if row in results else part
            elapsed = time.monotonic() - started
            print(f"  {done}/{len(tasks)} parts, {elapsed:.0f} s", file=sys.stderr, flush=True)
    print("| scenario | events | intervals | hands per bot | coverage | MC error | mean width |")
    print("|:--|--:|--:|--:|--:|--:|--:|")
    outside, edge = [], []
    for row in args.rows:
        scenario, c = SCENARIOS[row], results[row]
        print(
            f"| {scenario.name} | {c.events} | {c.intervals} | {c.hands_per_bot:.0f} "
            f"| {100 * c.rate:.2f} % | ±{100 * c.error:.2f} | {c.mean_width:.0f} {scenario.unit} |"
        )
        margin = Z * c.error
        if c.rate + margin < LOW or c.rate - margin > HIGH:
            outside.append(scenario.name)
        elif not LOW <= c.rate <= HIGH:
            edge.append(f"{scenario.name} ({100 * c.rate:.2f} %)")
    print(f"\nwall time {time.monotonic() - started:.0f} s, {args.jobs} jobs", file=sys.stderr)
    band = f"{LOW:.0%}-{HIGH:.0%}"
    if edge:
        print(f"outside {band}, within {Z} Monte Carlo errors: {', '.join(edge)}", file=sys.stderr)
    if outside:
        print(
            f"outside {band} by more than {Z} Monte Carlo errors: {', '.join(outside)}",
            file=sys.stderr,
        )
    return 1 if args.check and outside else 0


if __name__ == "__main__":
    raise SystemExit(main())
