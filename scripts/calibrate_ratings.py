"""Measures the coverage of the 95 % rating intervals on simulated events (docs/ratings.md).

Usage (from the repository root; `--events 250` took about 30 minutes on a loaded two-core machine):

    .venv/bin/python scripts/calibrate_ratings.py                # the table, Markdown
    .venv/bin/python scripts/calibrate_ratings.py --events 200   # fewer events per row
    .venv/bin/python scripts/calibrate_ratings.py --check        # exit 1 outside 93-97 %

Each row simulates ``--events`` events of one scenario of ``arena.ratings.calibration``
(1,000 by default, a tenth of that for 16 bots and more) and counts the bots whose interval
holds their true rating.
"""

from __future__ import annotations

import argparse
import sys
import time

from arena.ratings.calibration import SCENARIOS, measure

LOW, HIGH = 0.93, 0.97


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000, help="events per scenario")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check", action="store_true", help="exit 1 if a row is outside 93-97 %")
    args = parser.parse_args()
    if args.events < 1:
        parser.error("--events must be at least 1")
    print("| scenario | events | intervals | hands per bot | coverage | mean width (Elo) |")
    print("|:--|--:|--:|--:|--:|--:|")
    outside = []
    for scenario in SCENARIOS:
        started = time.monotonic()
        events = min(args.events, args.events // 10 if scenario.bots >= 16 else args.events)
        c = measure(scenario, events, args.seed)
        print(
            f"| {scenario.name} | {c.events} | {c.intervals} | {c.hands_per_bot:.0f} "
            f"| {100 * c.rate:.1f} % | {c.mean_width:.0f} |",
            flush=True,
        )
        print(f"  {scenario.name}: {time.monotonic() - started:.0f} s", file=sys.stderr)
        if not LOW <= c.rate <= HIGH:
            outside.append(scenario.name)
    if outside:
        print(f"\noutside {LOW:.0%}-{HIGH:.0%}: {', '.join(outside)}", file=sys.stderr)
    return 1 if args.check and outside else 0


if __name__ == "__main__":
    raise SystemExit(main())
