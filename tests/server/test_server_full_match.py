"""A whole match to 1000 over gRPC: the SDK's random bot in four processes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arena.referee import Answer, Decision, Termination, TimeControl
from arena.referee import replay as replays
from arena.server import ArenaServer, GrpcSeat, TableSpec, play_table
from arena.server.manifest import resolve_bot

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


class Watcher:
    """A ``SeatObserver``: the joins and the decisions of every seat, as they happen."""

    def __init__(self) -> None:
        self.joins: list[tuple[int, bool]] = []
        self.questions = 0
        self.answers: list[float] = []

    def joined(self, seat: GrpcSeat, resumed: bool) -> None:
        self.joins.append((seat.seat, resumed))

    def asked(self, seat: GrpcSeat, decision: Decision) -> None:
        self.questions += 1

    def answered(self, seat: GrpcSeat, decision: Decision, answer: Answer, ms: float) -> None:
        assert answer.action is not None and 0 <= ms <= decision.deadline_ms
        self.answers.append(ms)


def test_four_sdk_bot_processes_play_a_match_to_1000(tmp_path: Path) -> None:
    random_bot = resolve_bot("random")
    exits: list[tuple[int, int]] = []
    watcher = Watcher()

    async def main() -> None:
        server = ArenaServer(runs_dir=tmp_path)
        await server.start()
        try:
            table, records = await play_table(
                server,
                TableSpec(seed=2026, time=TimeControl(decision_ms=5000), table_id="full"),
                [random_bot] * 4,
                log_dir=tmp_path / "logs",
                on_exit=lambda seat, code: exits.append((seat, code)),
                on_table=lambda table: table.observe(watcher),
            )
        finally:
            await server.stop(1.0)
        (record,) = records
        assert record.termination is Termination.NORMAL
        assert max(record.scores) >= 1000
        assert record.failures == []
        assert record.decisions > 500
        assert all(seat.latencies for seat in table.seats)
        # The table's observer heard every join and every decision asked over the streams.
        assert sorted(watcher.joins) == [(0, False), (1, False), (2, False), (3, False)]
        assert watcher.questions == len(watcher.answers) == record.decisions

    asyncio.run(main())
    assert exits == []  # every bot stayed up until the referee closed its stream
    replay = replays.load(tmp_path / "full" / "match-1.json")
    verified = replays.verify(replay)
    assert verified.mismatches == []
    assert verified.match.over
