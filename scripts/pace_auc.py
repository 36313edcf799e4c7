"""Can a seat tell a forced pass from an asked one, or see a bomb window, by timing? AUCs.

Plays tables of four bot processes over gRPC on loopback, with and without ``pace_forced``,
and times every public event as the table sends it: what any seat sees, but for the constant
network delay. Three observers, each scored by its AUC (the probability that it ranks a
positive above a negative; 0.5 is a coin, 1.0 always right):

* **forced, raw**: calls a pass of seats 1-3 forced when the time since the previous event
  is short.
* **forced, in context**: the same, but only compares passes made in the same public context
  (the passing seat, how many cards it holds, and whether the pass answers a play directly
  or follows another pass), so that it cannot be fooled by a bot that thinks longer with
  more cards, nor by the pause a play may be followed by: the observer a careful bot author
  would build.
* **bomb window**: calls a play (or a trick's last pass) followed by a private bomb window
  when the time until the next public event is long.

Prints each AUC with the numbers of events, and the hands per second of each run (its cost).

    .venv/bin/python scripts/pace_auc.py --hands 200 --bot heuristic --tables 2
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import time
from collections import defaultdict
from dataclasses import dataclass, field

from arena.referee import TableEvent, TimeControl
from arena.rules import EventKind, Options, Phase
from arena.server import ArenaServer, Table, TableSpec
from arena.server.bots import play_table
from arena.server.manifest import resolve_bot


def auc(positive: list[float], negative: list[float]) -> float:
    """P(a positive's time > a negative's), ties counted half (Mann-Whitney); nan if empty."""
    if not positive or not negative:
        return float("nan")
    ranked = sorted([(t, 1) for t in positive] + [(t, 0) for t in negative])
    rank_sum = 0.0
    i = 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        mid = (i + j + 1) / 2  # average 1-based rank of the tie group
        rank_sum += mid * sum(1 for k in range(i, j) if ranked[k][1])
        i = j
    n1, n0 = len(positive), len(negative)
    return (rank_sum - n1 * (n1 + 1) / 2) / (n1 * n0)


def stratified_auc(strata: dict[object, tuple[list[float], list[float]]]) -> float:
    """The AUC over pairs within the same stratum only, pooled with each stratum's pair count."""
    num = den = 0.0
    for positive, negative in strata.values():
        pairs = len(positive) * len(negative)
        if pairs:
            num += auc(positive, negative) * pairs
            den += pairs
    return num / den if den else float("nan")


@dataclass
class Timings:
    """Times (seconds) of the events each observer classifies."""

    asked: list[float] = field(default_factory=list)
    forced: list[float] = field(default_factory=list)
    context: dict[object, tuple[list[float], list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: ([], []))
    )
    window: list[float] = field(default_factory=list)
    no_window: list[float] = field(default_factory=list)
    hands: int = 0
    seconds: float = 0.0


class Watcher:
    """Times one table's public events into ``out`` (see the module docstring)."""

    def __init__(self, table_no: int, out: Timings) -> None:
        self.table_no = table_no
        self.out = out
        self.tables: list[Table] = []
        self.t = 0.0  # when the previous public event went out
        self.forced = 0  # the referee's forced count then
        self.kind: EventKind | None = None  # its kind
        self.window: bool | None = None  # after a play or pass: whether a window opened

    def __call__(self, ev: TableEvent) -> None:
        now = time.perf_counter()
        ref = self.tables[0].referee if self.tables else None
        e = ev.event
        if ref is None or e is None or ev.only_seat >= 0:
            return
        out = self.out
        if self.window is not None:  # the event after a play or pass: was a window opened?
            (out.window if self.window else out.no_window).append(now - self.t)
            self.window = None
        if e.kind == EventKind.PASS and e.seat != 0 and self.t:
            forced = ref.forced != self.forced
            (out.forced if forced else out.asked).append(now - self.t)
            cards = ref.match.hands[e.seat].bit_count()
            after_play = self.kind in (EventKind.PLAY, EventKind.WISH)
            key = (self.table_no, e.seat, cards, after_play)
            out.context[key][1 if forced else 0].append(now - self.t)
        if e.kind in (EventKind.PLAY, EventKind.PASS):
            self.window = ref.match.phase is Phase.BOMB_WINDOW
        self.t, self.forced, self.kind = now, ref.forced, EventKind(e.kind)


async def measure(bot: str, hands: int, pace: bool, tables: int) -> Timings:
    """Plays ``tables`` tables at once; returns every observer's timings."""
    manifest = resolve_bot(bot)
    server = ArenaServer()
    await server.start()
    out = Timings()

    async def one(k: int) -> None:
        spec = TableSpec(
            options=Options(hands=hands),
            seed=secrets.randbits(64),
            time=TimeControl(decision_ms=5000),
            startup_timeout_s=120.0,
            pace_forced=pace,
            table_id=f"pace{k}",
        )
        watch = Watcher(k, out)
        _, records = await play_table(
            server, spec, [manifest] * 4, watch=watch, on_table=watch.tables.append
        )
        out.hands += records[0].outcome.hands_played

    start = time.perf_counter()
    try:
        await asyncio.gather(*(one(k) for k in range(tables)))
    finally:
        await server.stop(1.0)
    out.seconds = time.perf_counter() - start
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bot", default="heuristic", help="built-in bot or manifest")
    parser.add_argument("--hands", type=int, default=200, help="hands per table")
    parser.add_argument("--tables", type=int, default=1, help="tables at once")
    args = parser.parse_args()
    for pace in (False, True):
        t = asyncio.run(measure(args.bot, args.hands, pace, args.tables))
        context = {key: (asked, forced) for key, (asked, forced) in t.context.items()}
        print(
            f"pace_forced={pace!s:5}  {t.hands / t.seconds:.2f} hands/s;"
            f"  forced AUC {auc(t.asked, t.forced):.3f} raw,"
            f" {stratified_auc(context):.3f} in context"
            f" ({len(t.asked)} asked, {len(t.forced)} forced passes of seats 1-3);"
            f"  bomb window AUC {auc(t.window, t.no_window):.3f}"
            f" ({len(t.window)} windows, {len(t.no_window)} without)",
            flush=True,
        )


if __name__ == "__main__":
    main()
