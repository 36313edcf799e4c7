"""Sealed in time: at a table only the seat being asked runs (``arena.server.turns``).

Four copies of the heartbeat bot (``bots/heartbeat``) play a real table: each notes the
shared monotonic clock about every half millisecond from a thread of its own, whatever it is
doing, so its log shows when it ran. From the first decision on, every beat of a copy falls
inside a turn the referee gave it: each is frozen, all its threads, except while it is asked
(the Grand Tichu and exchange decisions included, asked of all at once: the bots take
turns), also when
its thread never sleeps, as a bot computing past its answer. Two tables at once seat the same
bot, so its processes there never run at once either; ``strict`` keeps two bots apart too.
The control plays the same table on a referee that pings its bots (where freezing is off, as
for remote bots): the beats interleave all the time, so the test can fail.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from arena.referee.policy import TimeControl
from arena.server import ArenaServer, Table, TableSpec, play_table
from arena.server.manifest import load_manifest
from arena.server.sandbox import host_sandbox
from arena.server.turns import BotTurn
from tests.security.hostile import BOTS

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _needs_freezer() -> None:
    sandbox = host_sandbox()
    if not sandbox.freezes:
        pytest.skip(f"this host cannot freeze a bot's processes: {sandbox.summary()}")


def _marks(log: Path, what: str) -> list[int]:
    return [int(n) for n in re.findall(rf"^{what} (\d+)$", log.read_text(), re.M)]


def switches(logs: Sequence[Path]) -> tuple[int, int, int]:
    """From the moment every table has asked its first decision (every process has joined;
    before that a process still starting runs, holding no cards) to the last decision: how
    often the process that beat changed (in the order of the beats, by the clock), the
    decisions asked, and the beats.

    A process runs only in its turns, so the beats form one run per turn and change owner
    at most once per decision. Processes that run at once interleave their beats: the owner
    changes at nearly every beat."""
    tables: dict[Path, list[int]] = {}
    for log in logs:
        tables.setdefault(log.parent, []).extend(_marks(log, "asked"))
    assert all(tables.values()), "a table asked no decision"
    start = max(min(marks) for marks in tables.values())
    end = max(max(marks) for marks in tables.values())
    asked = [t for marks in tables.values() for t in marks if start <= t <= end]
    beats = sorted(
        (t, k) for k, log in enumerate(logs) for t in _marks(log, "beat") if start <= t <= end
    )
    changes = sum(1 for (_, a), (_, b) in itertools.pairwise(beats) if a != b)
    return changes, len(asked), len(beats)


async def _tables(
    tmp: Path,
    count: int,
    pings: bool,
    strict: bool = False,
    others: bool = False,
    spin: bool = False,
    owner: str | None = None,
    referees: int = 1,
    machine: Path | None = None,
) -> tuple[list[Path], list[list[tuple[int, int]]]]:
    """Plays ``count`` tables of four heartbeat copies at once; their seat logs and, by log,
    the turns the referee gave each process (none on a referee that pings). With ``others``
    each table's copies are of a bot of its own (a copy of the folder); ``owner`` is every
    seat's owner (a league's). With ``referees`` the tables are shared out among that many
    referees (a cluster worker's tasks), taking turns on the machine's locks in ``machine``."""
    manifests = []
    for k in range(count):
        folder = BOTS / "heartbeat"
        if others:
            folder = shutil.copytree(folder, tmp / f"heartbeat-{k}")
        manifest = load_manifest(folder / "bot.toml")
        manifests.append(manifest.configured({"HEARTBEAT_SPIN": "1" if spin else "0"}, []))
    servers = [ArenaServer(pings=pings, machine_turns=machine) for _ in range(referees)]
    for server in servers:
        await server.start()
    spec = TableSpec(max_hands=2, time=TimeControl(decision_ms=10_000), seed=7)
    windows: dict[Path, list[tuple[int, int]]] = {}

    def record(table: Table, folder: Path) -> None:
        for seat in table.seats:
            if isinstance(seat.turn, BotTurn):
                seat.turn.windows = windows[folder / f"seat{seat.seat}-heartbeat.log"] = []

    try:
        played = await asyncio.gather(
            *(
                play_table(
                    servers[k % referees],
                    spec,
                    [manifests[k]] * 4,
                    log_dir=tmp / f"t{k}",
                    on_table=lambda table, k=k: record(table, tmp / f"t{k}"),
                    strict=strict,
                    owners=[owner] * 4,
                )
                for k in range(count)
            )
        )
    finally:
        for server in servers:
            await server.stop(1.0)
    # every answer in time: a bot stopped in its own turn would time out
    failures = [f for _, records in played for r in records for f in r.failures]
    assert not failures, failures
    logs = sorted(tmp.glob("t*/seat*.log"))
    return logs, [windows.get(log, []) for log in logs]


def outside_turns(
    logs: Sequence[Path], windows: Sequence[Sequence[tuple[int, int]]]
) -> tuple[int, int]:
    """The beats of one table's processes, from its first turn (every bot there joined and
    stopped) to the end of its last, that lie outside every turn the referee gave that
    process; and the beats in that span."""
    turns = [w[1:] for w in windows]
    assert all(turns), "a process was never given a turn"
    start = min(t[0][0] for t in turns)
    end = max(t[-1][1] for t in turns)
    outside = seen = 0
    for log, mine in zip(logs, turns, strict=True):
        beats = [t for t in _marks(log, "beat") if start < t < end]
        seen += len(beats)
        outside += sum(1 for t in beats if not any(lo < t < hi for lo, hi in mine))
    return outside, seen


def by_table(
    logs: Sequence[Path], windows: Sequence[Sequence[tuple[int, int]]]
) -> list[tuple[list[Path], list[Sequence[tuple[int, int]]]]]:
    """The logs and turns grouped by table (by the logs' folder)."""
    tables: dict[Path, tuple[list[Path], list[Sequence[tuple[int, int]]]]] = {}
    for log, turns in zip(logs, windows, strict=True):
        group = tables.setdefault(log.parent, ([], []))
        group[0].append(log)
        group[1].append(turns)
    return list(tables.values())


@pytest.mark.parametrize(("tables", "spin"), [(1, False), (2, False), (1, True)])
def test_only_the_seat_asked_runs(tmp_path: Path, tables: int, spin: bool) -> None:
    """Every beat of every process after it joined falls inside a turn the referee gave it;
    and no two turns of the bot's processes (all are one bot) overlap, at one table or two."""
    _needs_freezer()
    logs, windows = asyncio.run(_tables(tmp_path, tables, pings=False, spin=spin))
    assert len(logs) == 4 * tables
    seen = 0
    for table_logs, turns in by_table(logs, windows):
        outside, beats = outside_turns(table_logs, turns)
        assert outside == 0, f"{outside} of {beats} beats outside their process's turns"
        seen += beats
    assert seen > 50, seen  # the bots did run, and were seen running
    every = sorted(w for turns in windows for w in turns[1:])
    for (_, end), (begin, _) in itertools.pairwise(every):
        assert end <= begin, "two processes of the bot had turns at once"


@pytest.mark.parametrize(("strict", "owner"), [(False, None), (True, None), (False, "alice")])
def test_strict_runs_one_bot_process_of_all_at_a_time(
    tmp_path: Path, strict: bool, owner: str | None
) -> None:
    """Two tables of two different bots: each process runs only in its turns either way; only
    strict, or one owner of both bots (a league's), keeps every turn of the machine apart
    (otherwise the two bots' turns overlap)."""
    _needs_freezer()
    logs, windows = asyncio.run(
        _tables(tmp_path, 2, pings=False, strict=strict, others=True, owner=owner)
    )
    for table_logs, turns in by_table(logs, windows):
        assert outside_turns(table_logs, turns)[0] == 0, table_logs
    every = sorted(w for turns in windows for w in turns[1:])
    apart = all(end <= begin for (_, end), (begin, _) in itertools.pairwise(every))
    assert apart is (strict or owner is not None)


@pytest.mark.parametrize("machine", [False, True])
def test_one_bot_at_two_referees_of_a_machine(tmp_path: Path, machine: bool) -> None:
    """A Dask worker machine plays each task's table with a referee of its own. With the
    machine's locks (what a cluster task's referee takes) the bot's processes at two such
    referees never run at once; without them (two unrelated runs) they do."""
    _needs_freezer()
    folder = tmp_path / "turns" if machine else None
    logs, windows = asyncio.run(_tables(tmp_path, 2, pings=False, referees=2, machine=folder))
    for table_logs, turns in by_table(logs, windows):
        assert outside_turns(table_logs, turns)[0] == 0, table_logs
    every = sorted(w for turns in windows for w in turns[1:])
    apart = all(end <= begin for (_, end), (begin, _) in itertools.pairwise(every))
    assert apart is machine


def test_the_control_without_freezing_overlaps(tmp_path: Path) -> None:
    _needs_freezer()
    logs, _ = asyncio.run(_tables(tmp_path, 1, pings=True))
    changes, asked, beats = switches(logs)
    assert changes > 2 * asked, (changes, asked, beats)
