"""A whole match to 1000 over gRPC: the SDK's random bot in four processes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arena.referee import Termination, TimeControl
from arena.referee import replay as replays
from arena.server import ArenaServer, TableSpec
from arena.server.bots import play_table
from arena.server.manifest import resolve_bot

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def test_four_sdk_bot_processes_play_a_match_to_1000(tmp_path: Path) -> None:
    random_bot = resolve_bot("random")
    exits: list[tuple[int, int]] = []

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
            )
        finally:
            await server.stop(1.0)
        (record,) = records
        assert record.termination is Termination.NORMAL
        assert max(record.scores) >= 1000
        assert record.failures == []
        assert record.decisions > 500
        assert all(seat.latencies for seat in table.seats)

    asyncio.run(main())
    assert exits == []  # every bot stayed up until the referee closed its stream
    replay = replays.load(tmp_path / "full" / "match-1.json")
    verified = replays.verify(replay)
    assert verified.mismatches == []
    assert verified.match.over
