"""Can a seat tell a forced pass from an asked one by its timing? The AUC of an observer.

Plays one table of four bot processes over gRPC on loopback, once with ``pace_forced`` and
once without, and takes, for every pass of seats 1 to 3, the time since the previous event
as the table sends them: what seat 0 sees, but for the constant network delay. The observer
calls a pass forced when that time is short; its AUC is the probability that an asked pass
took longer than a forced one (1.0: always right, 0.5: a coin). Prints the AUC and the
hands per second of each run.

    .venv/bin/python scripts/pace_auc.py --hands 200 --bot heuristic
"""

from __future__ import annotations

import argparse
import asyncio
import time

from arena.referee import TableEvent, TimeControl
from arena.rules import EventKind, Options
from arena.server import ArenaServer, Table, TableSpec
from arena.server.bots import play_table
from arena.server.manifest import resolve_bot


def auc(asked: list[float], forced: list[float]) -> float:
    """P(an asked time > a forced time), ties counted half (the Mann-Whitney statistic)."""
    if not asked or not forced:
        return float("nan")
    ranked = sorted([(t, 1) for t in asked] + [(t, 0) for t in forced])
    rank_sum = 0.0
    i = 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        mid = (i + j + 1) / 2  # average 1-based rank of the tie group
        rank_sum += mid * sum(1 for k in range(i, j) if ranked[k][1])
        i = j
    n1, n0 = len(asked), len(forced)
    return (rank_sum - n1 * (n1 + 1) / 2) / (n1 * n0)


async def measure(bot: str, hands: int, pace: bool) -> tuple[float, float, int, int]:
    """One run: (AUC, hands per second, asked passes, forced passes)."""
    manifest = resolve_bot(bot)
    server = ArenaServer()
    await server.start()
    spec = TableSpec(
        options=Options(hands=hands),
        seed=None,
        time=TimeControl(decision_ms=5000),
        startup_timeout_s=120.0,
        pace_forced=pace,
    )
    tables: list[Table] = []
    asked: list[float] = []
    forced: list[float] = []
    last = [0.0, 0.0]  # time of the previous event, forced count then

    def watch(ev: TableEvent) -> None:
        now = time.perf_counter()
        ref = tables[0].referee if tables else None
        count = ref.forced if ref is not None else 0
        e = ev.event
        if e is not None and e.kind == EventKind.PASS and e.seat != 0 and last[0]:
            (forced if count != last[1] else asked).append(now - last[0])
        last[0], last[1] = now, count

    try:
        _, records = await play_table(
            server, spec, [manifest] * 4, watch=watch, on_table=tables.append
        )
    finally:
        await server.stop(1.0)
    rec = records[0]
    return auc(asked, forced), rec.outcome.hands_played / rec.seconds, len(asked), len(forced)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bot", default="heuristic", help="built-in bot or manifest")
    parser.add_argument("--hands", type=int, default=200)
    args = parser.parse_args()
    for pace in (False, True):
        a, rate, n1, n0 = asyncio.run(measure(args.bot, args.hands, pace))
        print(
            f"pace_forced={pace!s:5}  AUC {a:.3f}  {rate:.2f} hands/s"
            f"  ({n1} asked and {n0} forced passes of seats 1-3)",
            flush=True,
        )


if __name__ == "__main__":
    main()
