"""Measures the gate's false pass rate and power on pentanomial shapes from real play.

Usage (from the repository root; docs/gate.md gives the table and its wall time):

    .venv/bin/python scripts/calibrate_gate.py                # the table, Markdown
    .venv/bin/python scripts/calibrate_gate.py --runs 500     # fewer runs per row
    .venv/bin/python scripts/calibrate_gate.py --check        # exit 1 outside the bands

Each row simulates ``--runs`` gates of one preset on one shape of
``arena.ratings.gate_calibration`` at the preset's elo0 (false pass rate), at its elo1
(power) and 200 Elo below elo0 (pairs to a decision for a broken candidate). Progress goes
to stderr, the table to stdout.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from arena.ratings.gate_calibration import PRESETS, SHAPES, simulate

FALSE_PASS = (0.035, 0.065)
POWER = (0.935, 0.965)
Z = 1.96
"""Monte Carlo errors a rate may stray outside its band before ``--check`` fails it."""
BROKEN = -200.0
"""Elo below elo0 of the broken candidate whose median pairs the table gives."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated gates per cell")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--check",
        action="store_true",
        help=f"exit 1 if a rate is above its band by more than {Z} Monte Carlo errors",
    )
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    started = time.monotonic()
    rng = np.random.default_rng(args.seed)
    print(
        "| shape | preset | false pass at elo0 | power at elo1 | median pairs at elo0 / elo1 "
        f"| median pairs at elo0 {BROKEN:+.0f} |"
    )
    print("|:--|:--|--:|--:|--:|--:|")
    above = []
    for shape in SHAPES:
        for preset, (elo0, elo1) in PRESETS.items():
            at = {
                elo: simulate(shape.counts, elo, elo0=elo0, elo1=elo1, runs=args.runs, rng=rng)
                for elo in (elo0, elo1, elo0 + BROKEN)
            }
            null, alternative, broken = at[elo0], at[elo1], at[elo0 + BROKEN]
            print(
                f"| {shape.name} | {preset} | {100 * null.passed:.1f} ± {100 * null.error:.1f} %"
                f" | {100 * alternative.passed:.1f} ± {100 * alternative.error:.1f} %"
                f" | {null.median_length:.0f} / {alternative.median_length:.0f}"
                f" | {broken.median_length:.0f} |",
                flush=True,
            )
            if null.passed - Z * null.error > FALSE_PASS[1]:
                above.append(f"{shape.name} {preset}: false pass {100 * null.passed:.1f} %")
            if alternative.passed + Z * alternative.error < POWER[0]:
                above.append(f"{shape.name} {preset}: power {100 * alternative.passed:.1f} %")
            elapsed = time.monotonic() - started
            print(f"  {shape.name} {preset}: {elapsed:.0f} s", file=sys.stderr, flush=True)
    print(f"\nwall time {time.monotonic() - started:.0f} s", file=sys.stderr)
    if above:
        print("error rates beyond their bands: " + "; ".join(above), file=sys.stderr)
    return 1 if args.check and above else 0


if __name__ == "__main__":
    raise SystemExit(main())
