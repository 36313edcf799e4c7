"""Duplicate strength table of the reference bots: greedy, heuristic and random.

    .venv/bin/python scripts/bot_strength.py --boards 1000

Each row plays ``--boards`` duplicate boards in-process (``example_bots.common.duel``): a deal
is played twice with the teams' hands swapped, and a board's margin is the first bot's team
score minus the other's, in points per hand. Rows run in parallel processes. Also prints each
bot's decisions per second, mean, 99th percentile and slowest decision time (the slowest is
usually a garbage-collection pause, not the bot), and the bets the first bot called and won.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from example_bots.common.duel import DuelResult, Timing, duel
from example_bots.greedy.bot import GreedyBot
from example_bots.heuristic.bot import HeuristicBot
from example_bots.random.bot import RandomBot
from sdk import Bot

PAIRS = (("greedy", "random"), ("heuristic", "greedy"), ("heuristic", "random"))


def _factory(name: str) -> Callable[[], Bot]:
    if name == "greedy":
        return GreedyBot
    if name == "heuristic":
        return HeuristicBot
    seeds = itertools.count(10_000)
    return lambda: RandomBot(next(seeds))


def _run(job: tuple[str, str, int, int]) -> tuple[str, str, DuelResult, float]:
    a, b, boards, first_seed = job
    t0 = time.perf_counter()
    result = duel(_factory(a), _factory(b), boards, first_seed)
    return a, b, result, time.perf_counter() - t0


def main() -> None:
    """Runs the three pairings and prints the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--boards", type=int, default=500, help="duplicate boards per pairing")
    parser.add_argument("--seed", type=int, default=100_000, help="first board seed")
    parser.add_argument("--jobs", type=int, default=2, help="parallel processes")
    args = parser.parse_args()
    jobs = [(a, b, args.boards, args.seed) for a, b in PAIRS]
    with Pool(args.jobs) as pool:
        results = pool.map(_run, jobs)
    print("| pairing | points per hand (A − B) ± 95% CI | boards | A's bets won/called |")
    print("|---|---|---|---|")
    timing: dict[str, Timing] = {}
    for a, b, r, _ in results:
        bets = r.bets.get(a)
        called = ""
        if bets:
            called = f"T {bets.tichu_won}/{bets.tichu}, GT {bets.grand_won}/{bets.grand}"
        print(f"| {a} vs {b} | {r.mean:+.1f} ± {r.half_width:.1f} | {r.boards} | {called} |")
        for name, t in r.timing.items():
            timing.setdefault(name, Timing()).times.extend(t.times)
    print()
    print("| bot | decisions | decisions/s | mean ms | p99 ms | slowest ms |")
    print("|---|---|---|---|---|---|")
    for name, t in sorted(timing.items()):
        print(
            f"| {name} | {t.decisions} | {t.per_second:,.0f} | {1e3 * t.seconds / t.decisions:.3f}"
            f" | {1e3 * t.quantile(0.99):.2f} | {1e3 * t.slowest:.1f} |"
        )


if __name__ == "__main__":
    main()
