"""``arena bench grpc``'s measurements run for real and add up (their figures are not asserted)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import pytest

from arena.bench.grpc import bench_logic, bench_tables, children_cpu
from arena.server.manifest import resolve_bot

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")


@pytest.mark.slow
def test_children_cpu_counts_a_running_child() -> None:
    before = children_cpu()
    assert before is not None
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
            "time.sleep(30)",
        ]
    )
    try:
        deadline = time.monotonic() + 200
        while (children_cpu() or 0.0) - before < 0.25:
            assert time.monotonic() < deadline, "the child's CPU never showed"
            time.sleep(0.05)
    finally:
        child.kill()
        child.wait()


@pytest.mark.slow
def test_bench_logic_counts_decisions_and_forced_answers() -> None:
    f = asyncio.run(bench_logic(matches=2))
    assert f.hands >= 2  # two matches to 1000 points
    assert f.messages > 4 * 4  # four Grand Tichu answers per hand, and more
    assert f.forced > 0
    assert f.cpu_us > 0


@pytest.mark.slow
def test_bench_tables_plays_over_grpc_and_measures_the_bots() -> None:
    f = asyncio.run(
        bench_tables(resolve_bot("minimal"), tables=2, hands=20)
    )  # a window of many clock ticks (each process's CPU is counted in whole ticks)
    assert f.hands == 40
    assert len(f.latencies_ms) >= f.messages > 0  # re-asked requests add latencies
    assert f.full_rate > 0
    assert f.bot_cpu_playing is not None and f.bot_cpu_playing > 0
    assert f.bot_cpu_us > 1e6 * f.bot_cpu_playing  # the lifetime figure counts start-up too


def test_playout_bench_measures_every_kind() -> None:
    from arena.bench.playouts import bench_playouts

    f = bench_playouts(hands=1, deals=2, rounds=2, think=0.01, seed=3)
    assert f.positions > 0
    for xs in (f.old, f.core, f.fast, f.search_old, f.search_strong):
        assert len(xs) == 2 and all(x > 0 for x in xs)


def test_sandbox_bench_times_every_kind_of_start() -> None:
    from arena.bench.sandbox import bench_startup

    f = bench_startup(starts=2, code="pass")
    assert len(f.plain_ms) == len(f.none_ms) == len(f.boxed_ms) == 2
    assert len(f.uncgrouped_ms) == (2 if f.sandbox.cgroups is not None else 0)
    assert all(ms > 0 for ms in f.plain_ms + f.none_ms + f.boxed_ms + f.uncgrouped_ms)


def test_the_cluster_bench_event_has_the_plays_asked_for_and_room_for_the_tables() -> None:
    """``arena bench cluster --plays N``: about N one-hand plays (a round's boards more at
    most), and two tables a round, so N tables at once find sessions to play."""
    from arena.bench.cluster import bench_spec_data
    from arena.tournament.model import parse_event, plan_event

    for plays in (28, 600, 5000):
        spec = parse_event(bench_spec_data("random", plays, 2), source="test")
        plan = plan_event(spec)
        assert plays <= len(plan.plays) < plays + 28
        assert len({(p.round, p.table) for p in plan.plays if p.round == 0}) == 2
