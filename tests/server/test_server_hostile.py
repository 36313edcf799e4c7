"""Hostile bot processes against honest ones (stub and SDK bots), three tables on one server.

* ``hostile``: seat 1 answers each exchange with 2 MB of card ids, three times, and every
  other request first with a value of its own (a covert channel to its partner would
  carry it). The honest seats (one stub that writes down all it receives, two SDK bots)
  play on: nobody else's stream fails, no message to them is large, and none shows the
  value or the failing seat's detail; the hostile seat gets that detail in-band, capped.
* ``thief``: seat 0 resumes seat 2 with seat 2's token (as if stolen) and plays it: the
  takeover is recorded with the thief's address, the other seats play on.
* ``guarded``: the same under ``max_resumes = 0``: the thief is refused, nothing changes.

And a bot process joining an open table with a key that already waits is refused.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest

from arena.referee import (
    Failure,
    FailureKind,
    FailureOutcome,
    FailurePolicy,
    MatchRecord,
    Termination,
    TimeControl,
)
from arena.referee.policy import TEXT_CAP
from arena.rules import Options
from arena.server import ArenaServer, Table, TableSpec
from arena.server.bots import play_table
from arena.server.manifest import Manifest, resolve_bot
from arena.wire import pb

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

STUB_BOT = Path(__file__).resolve().parent / "bots" / "stub_bot.py"
MARKER = "4000000000"  # the hostile bot's value (tests/server/bots/stub_bot.py)
PUBLIC_TEXTS = frozenset(
    Failure(0, kind, outcome, 1, 0).public for kind in FailureKind for outcome in FailureOutcome
)


class Run:
    def __init__(self) -> None:
        self.records: dict[str, MatchRecord] = {}
        self.exits: dict[str, list[tuple[int, int]]] = {}
        self.refused: list[tuple[str, grpc.StatusCode, str]] = []
        self.logs: Path = Path()
        self.dumps: Path = Path()


@pytest.fixture(scope="module")
def run(stub: Callable[..., Manifest], tmp_path_factory: pytest.TempPathFactory) -> Run:
    tmp = tmp_path_factory.mktemp("hostile")
    seen = tmp / "seen"  # the bots' sandboxes show them this folder alone, writable by all
    seen.mkdir()
    seen.chmod(0o777)
    out = Run()
    out.logs, out.dumps = tmp / "logs", seen
    sdk_bot = resolve_bot("random")

    async def one(server: ArenaServer, name: str) -> None:
        if name == "hostile":
            bots = [
                stub("--seed", "1", "--dump", str(seen / "honest.hex")),
                stub("--mode", "hostile", "--seed", "2", "--dump", str(seen / "hostile.hex")),
                sdk_bot,
                sdk_bot,
            ]
            policy = FailurePolicy()
        else:
            bots = [stub("--mode", "thief", "--seed", "3"), sdk_bot, sdk_bot, sdk_bot]
            policy = FailurePolicy(max_resumes=0) if name == "guarded" else FailurePolicy()

        def env(table: Table) -> list[dict[str, str]]:
            return [{"TEST_OTHER_TOKENS": table.tokens[2]}, {}, {}, {}]

        exits: list[tuple[int, int]] = []
        spec = TableSpec(
            options=Options(hands=2),
            seed=21,
            time=TimeControl(decision_ms=5000),
            policy=policy,
            table_id=name,
        )
        _, records = await play_table(
            server,
            spec,
            bots,
            log_dir=tmp / "logs" / name,
            extra_env=env,
            on_exit=lambda s, c: exits.append((s, c)),
            writable=[seen],
        )
        out.records[name] = records[0]
        out.exits[name] = exits

    async def main() -> None:
        server = ArenaServer()
        await server.start()
        await asyncio.gather(*(one(server, n) for n in ("hostile", "thief", "guarded")))
        out.refused = list(server.service.refused)
        await server.stop(1.0)

    asyncio.run(main())
    return out


def messages(path: Path) -> list[pb.RefereeMessage]:
    return [pb.RefereeMessage.FromString(bytes.fromhex(x)) for x in path.read_text().split()]


def test_oversized_and_echoing_answers_reach_nobody_else(run: Run) -> None:
    rec = run.records["hostile"]
    assert rec.termination is Termination.NORMAL and rec.outcome.hands_played == 2
    assert run.exits["hostile"] == []  # no honest bot died (the SDK ones read 4 MB at most)
    assert {f.seat for f in rec.failures} == {1}
    exchanges = [f for f in rec.failures if "exchange_cards must hold 3" in f.detail]
    assert len(exchanges) == 2  # one per hand: three 2 MB answers, then the default
    assert all(len(f.detail.encode()) <= TEXT_CAP for f in rec.failures)
    lines = (run.dumps / "honest.hex").read_text().split()
    assert len(lines) > 100
    assert max(len(x) // 2 for x in lines) < 16_384  # no 8 MB Failure event
    for msg in messages(run.dumps / "honest.hex"):
        assert MARKER not in str(msg), msg
        if msg.event.HasField("failure"):
            assert msg.event.failure.detail in PUBLIC_TEXTS
    # the hostile seat itself is told why, in-band and capped
    errors = [m.error for m in messages(run.dumps / "hostile.hex") if m.HasField("error")]
    assert any("exchange_cards must hold 3 card ids, not 400000" in e.message for e in errors)
    assert all(len(e.message.encode()) <= TEXT_CAP for e in errors)


def test_a_stolen_token_takes_the_seat_on_record(run: Run) -> None:
    rec = run.records["thief"]
    assert rec.termination is Termination.NORMAL
    took = [f for f in rec.failures if "over a live stream" in f.detail]
    assert [(f.seat, f.kind, f.outcome) for f in took] == [
        (2, FailureKind.DISCONNECT, FailureOutcome.RECONNECTED)
    ]
    assert took[0].detail.startswith(("resumed from ipv", "resumed from unix:"))
    assert re.search(r"resumed from \S+ \(connection \d+\)", took[0].detail), took[0].detail
    log = (run.logs / "thief" / "seat0-stub.log").read_text()
    assert "thief: JOINED seat 2" in log


def test_a_table_that_forbids_resumes_refuses_the_thief(run: Run) -> None:
    rec = run.records["guarded"]
    assert rec.termination is Termination.NORMAL and rec.failures == []
    log = (run.logs / "guarded" / "seat0-stub.log").read_text()
    assert "thief: refused PERMISSION_DENIED" in log
    assert any(code is grpc.StatusCode.PERMISSION_DENIED for _, code, _ in run.refused)


def test_one_key_cannot_take_two_seats_of_an_open_table(tmp_path: Path) -> None:
    async def main() -> tuple[int, list[tuple[str, grpc.StatusCode, str]], int]:
        keys = {f"key-of-{n}-0123": n for n in ("ann", "bob")}
        server = ArenaServer(keys=keys, open_spec=TableSpec(options=Options(hands=1)))
        await server.start()
        env = {
            **os.environ,
            "TICHU_ARENA_SERVER": server.address,
            "TICHU_ARENA_BOT_KEY": "key-of-ann-0123",
        }

        async def start() -> asyncio.subprocess.Process:
            return await asyncio.create_subprocess_exec(
                sys.executable,
                str(STUB_BOT),
                env=env,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )

        first = await start()
        assert server.lobby is not None
        while not server.lobby.queue:  # the first one waits for a table
            await asyncio.sleep(0.05)
        second = await start()  # the same author's key again, as the partner
        code = await asyncio.wait_for(second.wait(), 60)
        waiting = len(server.lobby.queue)
        first.kill()
        await first.wait()
        refused = list(server.service.refused)
        await server.stop(0.5)
        return code, refused, waiting

    code, refused, waiting = asyncio.run(main())
    assert code != 0 and waiting == 1
    assert [(c, m) for _, c, m in refused] == [
        (
            grpc.StatusCode.ALREADY_EXISTS,
            "bot 'ann' already waits for a table: its key fills 1 seat of a table",
        )
    ]
