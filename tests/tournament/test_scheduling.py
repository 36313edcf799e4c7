"""The scheduling rules every runner shares (``arena.tournament.scheduling``), as properties.

Random event shapes — jobs 1..8, rounds, tables, rotations, boards, one process per play or per
session, bots shared across tables, the twin locks — on fake tables that finish at once or in
a random order: no two running sessions hold a common key, at most ``jobs`` groups are ever
half-played, a half-played board's next session starts before any new board's first one, and
every pending session is played. A scheduler that starves board pairs fails here in seconds.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Hashable, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournament.gate import GateConfig, build_event_data
from arena.tournament.model import parse_event, plan_event
from arena.tournament.runner import (
    EventRunner,
    Progress,
    Stalled,
    manifests_for,
    session_slots,
    sessions_of,
)
from arena.tournament.scheduling import BoardScheduler, Slot, drive
from arena.tournament.store import EventStore, HandRow, StoredPlay

Shape = tuple[list[Slot], int]


@st.composite
def shapes(draw: st.DrawFn) -> Shape:
    """Sessions of a random event: rounds × tables × rotations (× boards when every play has
    its own processes), seated from a small pool so that bots meet across tables too, with the
    twin locks per round or, as one process of a bot at a time anywhere, across rounds."""
    rounds = draw(st.integers(1, 6))
    tables = draw(st.integers(1, 3))
    rotations = draw(st.integers(1, 4))
    boards = draw(st.integers(1, 4))
    per_play = draw(st.booleans())
    anywhere = draw(st.booleans())  # a bot's processes apart in every round, not only in one
    pool = draw(st.integers(4, 4 * tables + 2))
    jobs = draw(st.integers(1, 8))
    rng = random.Random(draw(st.integers(0, 2**32)))
    slots: list[Slot] = []
    for r in range(rounds):
        for t in range(tables):
            seats = rng.sample(range(pool), 4)
            holds = frozenset((bot, -1 if anywhere else r) for bot in seats)
            for b in range(boards if per_play else 1):
                group: tuple[int, ...] = (r, t, b)
                for rot in range(rotations):
                    slots.append(Slot(len(slots), group, (*group, rot), holds))
    rng.shuffle(slots)  # the order given is not the running order
    return slots, jobs


def _startable(
    scheduler: BoardScheduler, pending: Sequence[Slot], started: set[Hashable]
) -> list[Slot]:
    held = {key for s in scheduler.running for key in s.holds}
    return [s for s in pending if s.group in started and not s.holds & held]


def _play_out(slots: list[Slot], jobs: int, rng: random.Random) -> list[Slot]:
    """Runs the schedule, finishing a random running session at each step, checking every rule
    at every start; returns the sessions in the order they started."""
    scheduler = BoardScheduler(slots, jobs)
    pending = list(slots)
    started_groups: set[Hashable] = set()
    order: list[Slot] = []
    while not scheduler.done():
        while True:
            due = _startable(scheduler, pending, started_groups)
            opened = scheduler.open_groups
            slot = scheduler.next()
            if slot is None:
                break
            if slot.group not in started_groups:
                # completion first: a new group opens only when no open one could go on
                assert not due, (slot, due)
                assert opened < jobs
            pending.remove(slot)
            started_groups.add(slot.group)
            order.append(slot)
            running = scheduler.running
            assert len(running) <= jobs
            keys = [key for s in running for key in s.holds]
            assert len(keys) == len(set(keys)), "two running sessions hold one key"
            assert scheduler.open_groups <= jobs
        running = scheduler.running
        # progress: with nothing running and something pending, a session always starts
        assert running, f"stalled with {scheduler.pending} sessions pending"
        scheduler.finished(rng.choice(running))
    assert not pending and len(order) == len(slots)
    return order


@settings(max_examples=400, deadline=None)
@given(shapes(), st.integers(0, 2**32))
def test_every_schedule_keeps_the_rules_and_plays_every_session(shape: Shape, seed: int) -> None:
    slots, jobs = shape
    _play_out(slots, jobs, random.Random(seed))


@settings(max_examples=200, deadline=None)
@given(shapes(), st.integers(0, 2**32))
def test_fake_tables_on_the_event_loop_play_every_session_within_the_bound(
    shape: Shape, seed: int
) -> None:
    """``drive``, the loop the local pool plays on, with tables that end at once or after a
    random number of loop turns."""
    slots, jobs = shape
    rng = random.Random(seed)
    played: list[int] = []
    live: set[int] = set()

    async def play(slot: Slot) -> None:
        held = {key for s in slots if s.id in live for key in s.holds}
        assert not slot.holds & held
        live.add(slot.id)
        for _ in range(rng.choice((0, 0, 1, 3, 10))):
            await asyncio.sleep(0)
        live.discard(slot.id)
        played.append(slot.id)

    def check(scheduler: BoardScheduler) -> None:
        assert len(scheduler.running) <= jobs
        assert scheduler.open_groups <= jobs

    asyncio.run(drive(BoardScheduler(slots, jobs), play, lambda: False, check))
    assert sorted(played) == sorted(s.id for s in slots)


def test_a_stop_starts_nothing_more_and_an_error_ends_the_drive() -> None:
    slots = [Slot(i, (i,), (i,), frozenset()) for i in range(10)]
    played: list[int] = []
    stop = False

    async def play(slot: Slot) -> None:
        nonlocal stop
        played.append(slot.id)
        stop = slot.id == 2

    asyncio.run(drive(BoardScheduler(slots, 1), play, lambda: stop))
    assert played == [0, 1, 2]

    async def fail(slot: Slot) -> None:
        if slot.id == 1:
            raise RuntimeError("table broke")
        await asyncio.sleep(0)

    with pytest.raises(RuntimeError, match="table broke"):
        asyncio.run(drive(BoardScheduler(slots, 2), fail, lambda: False))


def _gate_sessions(jobs: int, max_boards: int = 20_000) -> list[Slot]:
    """The gate's sessions at its defaults, seated as the local pool seats them."""
    config = GateConfig(candidate="greedy", baseline="random", elo0=-10, elo1=0, jobs=jobs,
                        max_boards=max_boards, seed=1)  # fmt: skip
    spec = parse_event(build_event_data(config), source="gate", base_dir=Path.cwd())
    plan = plan_event(spec)
    stored = [StoredPlay(k, p, False, None) for k, p in enumerate(plan.plays)]
    return session_slots(sessions_of(stored), manifests_for(spec))


@pytest.mark.parametrize("jobs", [1, 2, 4])
def test_the_gate_completes_its_first_pairs_in_its_first_sessions(jobs: int) -> None:
    """At the gate's defaults (20,000 boards in rounds of 50) the first board pairs complete
    after about one round per job, not after every round's first rotation (20,000 plays)."""
    slots = _gate_sessions(jobs)
    scheduler = BoardScheduler(slots, jobs)
    started: list[Slot] = []
    finished_groups: set[Hashable] = set()
    left = {s.group: 0 for s in slots}
    for s in slots:
        left[s.group] += 1
    while not finished_groups:
        while (slot := scheduler.next()) is not None:
            started.append(slot)
        first = scheduler.running[0]  # the tables finish in the order they started
        scheduler.finished(first)
        left[first.group] -= 1
        if left[first.group] == 0:
            finished_groups.add(first.group)
    assert len(started) <= 2 * jobs + 1, [s.order for s in started]


def test_the_twin_locks_name_a_bot_by_its_manifest() -> None:
    """Two rotations of one round hold the same keys; the gate's two copies of one bot are
    one bot; rounds hold different keys."""
    slots = _gate_sessions(2, max_boards=200)
    by_group: dict[Hashable, list[Slot]] = {}
    for s in slots:
        by_group.setdefault(s.group, []).append(s)
    for group in by_group.values():
        assert len(group) == 2 and group[0].holds == group[1].holds
        assert len(group[0].holds) == 2  # candidate and baseline, two copies each
    rounds = {s.order[0]: s.holds for s in slots}
    assert not rounds[0] & rounds[1]


class _RotationFirst:
    """An executor that records every play of rotation 0 before any of rotation 1 (what a
    starving scheduler does), on tables that answer at once with one made-up hand each."""

    def play(self, runner: EventRunner, pending: Sequence[StoredPlay], progress: Progress) -> None:
        for sp in sorted(pending, key=lambda sp: (sp.play.rotation, sp.play.ordinal)):
            if runner.stopping:
                return
            runner.record_play(sp, [HandRow(0, 60, 40, (60, 40), (0, 0))], 0, None)

    def stop(self) -> None:
        pass

    def slots(self, runner: EventRunner) -> int:
        return runner.jobs


def test_an_event_that_completes_no_board_stops_with_one_line(tmp_path: Path) -> None:
    """The runner's stall check: plays recorded without completing a board beyond what the
    rules allow stop the run with the cause, long before the event's end."""
    data = {
        "name": "stall",
        "schedule": "fixed",
        "bots": ["random", "greedy", {"bot": "random", "name": "random-b"},
                 {"bot": "greedy", "name": "greedy-b"}],
        "cycles": 40,
        "boards_per_round": 5,
        "jobs": 2,
        "seed": 3,
    }  # fmt: skip
    spec = parse_event(data, source="test")
    with EventStore(tmp_path / "stall.sqlite") as store:
        store.create_event(spec, plan_event(spec))
        runner = EventRunner(store, "stall", spec, executor=_RotationFirst())
        with pytest.raises(Stalled, match=r"plays were recorded without completing a board"):
            runner.run()
        summary = store.event_summary("stall")
    # allowance: 2 × jobs × 5 boards × (2 − 1) rotations + 2 × jobs = 24 plays, then a stop
    assert summary.plays_done == 25
    assert summary.plays_total == 400


def test_no_new_group_opens_while_jobs_groups_are_half_played() -> None:
    """The bound holds even where a group's sessions hold different keys: here each second
    rotation also needs ``z``, which a long session holds, so open groups wait for it rather
    than new ones piling up half-played."""
    long = Slot(0, "long", (0,), frozenset({"z"}))
    slots = [long]
    for g in range(1, 6):
        slots.append(Slot(len(slots), g, (g, 0), frozenset({g})))
        slots.append(Slot(len(slots), g, (g, 1), frozenset({g, "z"})))
    scheduler = BoardScheduler(slots, 3)
    assert scheduler.next() == long
    first = [scheduler.next(), scheduler.next()]
    assert [s.group for s in first if s] == [1, 2]
    for s in first:
        assert s is not None
        scheduler.finished(s)
    # the long session's group and groups 1 and 2 are open; two slots are free, yet no new
    # group opens (their second rotations wait for z)
    assert scheduler.open_groups == 3
    assert scheduler.next() is None
    scheduler.finished(long)
    assert [scheduler.next(), scheduler.next()] == [slots[2], slots[5]]  # 2 waits for z
