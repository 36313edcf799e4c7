"""Event benchmark: a 4-bot round robin on duplicate boards over gRPC, timed end to end."""

from __future__ import annotations

import resource
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from arena.tournament.model import parse_event
from arena.tournament.runner import EventRunner
from arena.tournament.store import EventStore


@dataclass(frozen=True)
class EventFigures:
    """What ``bench_event`` measured: wall time, hands, and who used the CPU."""

    boards: int
    hands: int
    seconds: float
    referee_cpu: float
    bots_cpu: float
    failures: int

    @property
    def hands_per_second(self) -> float:
        """Hands recorded per second of wall time."""
        return self.hands / self.seconds


def bench_event(
    bot: str = "random", boards: int = 500, jobs: int = 6, seed: int = 1
) -> EventFigures:
    """Runs a fresh event of four copies of ``bot`` (3 rounds, 2 rotations) in a temp folder.

    The referee's CPU is this process's; the bots' is that of the child processes, which
    the runner has waited for when it returns.
    """
    per_round = -(-boards // 3)  # a round robin of four bots has three rounds
    data = {
        "name": "bench",
        "bots": [{"bot": bot, "name": f"{bot}-{k}"} for k in range(1, 5)],
        "boards_per_round": per_round,
        "rotations": 2,
        "seed": seed,
        "jobs": jobs,
    }
    spec = parse_event(data, source="bench")
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        db = Path(tmp) / "bench.sqlite"
        self0 = resource.getrusage(resource.RUSAGE_SELF)
        kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        with EventStore(db) as store:
            store.create_event(spec, store.plan(spec))
            progress = EventRunner(store, spec.name, spec, pace_forced=False).run()
        seconds = time.perf_counter() - start
        self1 = resource.getrusage(resource.RUSAGE_SELF)
        kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return EventFigures(
        boards=3 * per_round,
        hands=progress.hands,
        seconds=seconds,
        referee_cpu=(self1.ru_utime + self1.ru_stime) - (self0.ru_utime + self0.ru_stime),
        bots_cpu=(kids1.ru_utime + kids1.ru_stime) - (kids0.ru_utime + kids0.ru_stime),
        failures=progress.failures,
    )
