"""Misbehaving bot processes, each at its own table on one server, all at once.

One server runs nine tables concurrently: a normal one, and one per failure (timeout,
garbage, disconnect and resume, vanish, crash, crash with a restart, impostor, a bot that
dies before joining). Each failing
seat must get its defined, recorded outcome, and the normal table must finish untouched.
The scenario runs once per module; each test checks one table.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest

from arena.referee import (
    FailureKind,
    FailureOutcome,
    FailurePolicy,
    GiveUp,
    MatchRecord,
    Termination,
    TimeControl,
)
from arena.referee import replay as replays
from arena.rules import Options
from arena.server import ArenaServer, Table, TableSpec
from arena.server.bots import play_table
from arena.server.manifest import Manifest
from tests.helpers import MANY_PROCESSES

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600), MANY_PROCESSES]

ODD = 1  # the seat that misbehaves


class Scenario:
    """The outcome of the whole run: a record per table, and what the server refused."""

    def __init__(self) -> None:
        self.records: dict[str, MatchRecord] = {}
        self.tables: dict[str, Table] = {}
        self.exits: dict[str, list[tuple[int, int]]] = {}
        self.refused: list[tuple[str, grpc.StatusCode, str]] = []
        self.runs: Path = Path()


@pytest.fixture(scope="module")
def scenario(stub: Callable[..., Manifest], tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    return _run(stub, tmp_path_factory.mktemp("failures"))


def _run(stub: Callable[..., Manifest], tmp: Path) -> Scenario:
    out = Scenario()
    out.runs = tmp / "runs"
    strict = FailurePolicy(max_strikes=2, max_rejections=2, reconnect_grace_ms=3000)
    cases: dict[str, tuple[list[str], FailurePolicy]] = {
        "normal": ([], strict),
        "timeout": (["--mode", "timeout", "--after", "2"], strict),
        "garbage": (["--mode", "garbage", "--after", "2"], strict),
        "disconnect": (["--mode", "disconnect", "--after", "2", "--away", "0.1"], strict),
        "vanish": (
            ["--mode", "vanish", "--after", "2"],
            FailurePolicy(max_strikes=0, reconnect_grace_ms=400, give_up=GiveUp.FORFEIT),
        ),
        "crash": (["--mode", "crash", "--after", "2"], strict),
        "restart": (
            ["--mode", "crash", "--after", "2"],
            FailurePolicy(max_strikes=0, reconnect_grace_ms=10_000),
        ),
        "impostor": (["--mode", "impostor"], strict),
        "early": (["exit-before-joining"], strict),
    }

    async def main() -> None:
        server = ArenaServer(runs_dir=out.runs)
        await server.start()
        done = server.create_table(TableSpec(options=Options(hands=1), table_id="old"))
        done.abort("an earlier table, over before the others start")
        await done.wait()

        async def one(name: str, args: list[str], policy: FailurePolicy) -> None:
            bots = [stub("--seed", str(s)) for s in range(4)]
            if args == ["exit-before-joining"]:
                # In the stub's folder: a manifest without a path shows the working folder
                # (here the whole checkout, virtual environment included) to its sandbox.
                bots[ODD] = Manifest(
                    name="early",
                    command=["{python}", "-c", "raise SystemExit(4)"],
                    path=bots[0].path,
                )
            elif args:
                bots[ODD] = stub(*args, "--seed", "99")

            def env(table: Table) -> list[dict[str, str]]:
                extra: list[dict[str, str]] = [{}, {}, {}, {}]
                # The impostor holds the token of a live seat of its own table, of a
                # table that is over, and a made-up one.
                others = [table.tokens[2], done.tokens[0], "not-a-token"]
                extra[ODD] = {"TEST_OTHER_TOKENS": ",".join(others)}
                return extra

            exits: list[tuple[int, int]] = []
            spec = TableSpec(
                options=Options(hands=2),
                seed=17,
                # Short deadlines where a timeout is the point (yet long enough for honest bots
                # on a loaded machine); room elsewhere, so slow answers do not become failures.
                time=TimeControl(decision_ms=1500 if name in ("timeout", "vanish") else 5000),
                policy=policy,
                table_id=name,
                # Nine tables of bots start at once beside the rest of the suite: room to join.
                startup_timeout_s=120.0,
            )
            table, records = await play_table(
                server,
                spec,
                bots,
                log_dir=tmp / "logs" / name,
                extra_env=env,
                on_exit=lambda s, c: exits.append((s, c)),
                restarts=1 if name == "restart" else 0,
            )
            out.records[name] = records[0]
            out.tables[name] = table
            out.exits[name] = exits

        await asyncio.gather(*(one(n, a, p) for n, (a, p) in cases.items()))
        out.refused = list(server.service.refused)
        await server.stop(1.0)

    asyncio.run(main())
    return out


def outcomes(record: MatchRecord) -> list[tuple[int, FailureKind, FailureOutcome]]:
    return [(f.seat, f.kind, f.outcome) for f in record.failures]


def test_the_normal_table_is_untouched_by_its_neighbours(scenario: Scenario) -> None:
    rec = scenario.records["normal"]
    assert rec.termination is Termination.NORMAL
    assert rec.failures == []
    assert rec.outcome.hands_played == 2
    assert replays.verify(replays.load(scenario.runs / "normal" / "match-1.json")).mismatches == []


def test_a_bot_that_stops_answering_times_out_then_is_given_up(scenario: Scenario) -> None:
    rec = scenario.records["timeout"]
    assert outcomes(rec) == [
        (ODD, FailureKind.TIMEOUT, FailureOutcome.DEFAULT_ACTION),
        (ODD, FailureKind.TIMEOUT, FailureOutcome.DEFAULT_ACTION),
        (ODD, FailureKind.TIMEOUT, FailureOutcome.DEFAULT_ACTIONS),
    ]
    assert rec.termination is Termination.NORMAL
    assert rec.outcome.given_up == (ODD,)
    assert all("1500 ms" in f.detail for f in rec.failures[:2])


def test_a_bot_that_sends_garbage_gets_defaults_then_is_given_up(scenario: Scenario) -> None:
    rec = scenario.records["garbage"]
    assert outcomes(rec) == [
        (ODD, FailureKind.MALFORMED, FailureOutcome.DEFAULT_ACTION),
        (ODD, FailureKind.MALFORMED, FailureOutcome.DEFAULT_ACTION),
        (ODD, FailureKind.MALFORMED, FailureOutcome.DEFAULT_ACTIONS),
    ]
    assert "2 rejected answers" in rec.failures[0].detail
    assert rec.termination is Termination.NORMAL
    log = (scenario.runs.parent / "logs" / "garbage").glob(f"seat{ODD}-*.log")
    text = next(iter(log)).read_text()
    assert "choice_index 10000 is out of range" in text  # the in-band Error it was sent


def test_a_bot_that_drops_its_stream_and_resumes_keeps_its_seat(scenario: Scenario) -> None:
    rec = scenario.records["disconnect"]
    assert outcomes(rec)[:2] == [
        (ODD, FailureKind.DISCONNECT, FailureOutcome.AWAITING_RECONNECT),
        (ODD, FailureKind.DISCONNECT, FailureOutcome.RECONNECTED),
    ]
    assert rec.outcome.given_up == ()
    assert rec.termination is Termination.NORMAL
    assert scenario.exits["disconnect"] == []


def test_a_bot_gone_past_the_grace_period_forfeits(scenario: Scenario) -> None:
    rec = scenario.records["vanish"]
    got = outcomes(rec)
    assert got[0] == (ODD, FailureKind.DISCONNECT, FailureOutcome.AWAITING_RECONNECT)
    assert got[-1] == (ODD, FailureKind.DISCONNECT, FailureOutcome.FORFEIT)
    assert rec.termination is Termination.FORFEIT
    assert rec.outcome.winners == (0, 2)
    assert "grace" in rec.failures[-1].detail


def test_a_bot_that_crashes_is_given_up(scenario: Scenario) -> None:
    rec = scenario.records["crash"]
    assert outcomes(rec) == [(ODD, FailureKind.CRASH, FailureOutcome.DEFAULT_ACTIONS)]
    assert "code 3" in rec.failures[0].detail
    assert scenario.exits["crash"] == [(ODD, 3)]
    assert rec.termination is Termination.NORMAL
    assert rec.outcome.hands_played == 2


def test_a_crashed_bot_is_restarted_once_then_given_up(scenario: Scenario) -> None:
    rec = scenario.records["restart"]
    # The restarted bot resumes its seat, then crashes again: no restart left. Its clock
    # runs while it restarts, so a decision may time out meanwhile.
    got = outcomes(rec)
    assert [o for o in got if o[1] is FailureKind.CRASH] == [
        (ODD, FailureKind.CRASH, FailureOutcome.AWAITING_RECONNECT),
        (ODD, FailureKind.CRASH, FailureOutcome.RECONNECTED),
        (ODD, FailureKind.CRASH, FailureOutcome.DEFAULT_ACTIONS),
    ]
    others = {o for o in got if o[1] is not FailureKind.CRASH}
    assert others <= {(ODD, FailureKind.TIMEOUT, FailureOutcome.DEFAULT_ACTION)}
    assert scenario.exits["restart"] == [(ODD, 3), (ODD, 3)]
    assert rec.termination is Termination.NORMAL


def test_a_bot_that_dies_before_joining_is_given_up_at_the_start(scenario: Scenario) -> None:
    rec = scenario.records["early"]
    assert outcomes(rec) == [(ODD, FailureKind.CRASH, FailureOutcome.DEFAULT_ACTIONS)]
    assert rec.failures[0].detail == "the bot process exited with code 4 before joining"
    assert rec.failures[0].hand == 1 and rec.failures[0].decision == 0
    assert rec.termination is Termination.NORMAL


def test_another_seats_token_gets_nothing(scenario: Scenario) -> None:
    rec = scenario.records["impostor"]
    assert rec.failures == []
    assert rec.termination is Termination.NORMAL
    log = (scenario.runs.parent / "logs" / "impostor").glob(f"seat{ODD}-*.log")
    text = next(iter(log)).read_text()
    prefix = "impostor: presented a token: "
    codes = sorted(line[len(prefix) :] for line in text.splitlines() if line.startswith(prefix))
    assert codes == ["ALREADY_EXISTS", "FAILED_PRECONDITION", "UNAUTHENTICATED"]
    refused = {code.name for _, code, _ in scenario.refused}
    assert set(codes) <= refused


def test_every_match_has_a_replay_with_its_failures(scenario: Scenario) -> None:
    for name, rec in scenario.records.items():
        path = scenario.runs / name / "match-1.json"
        replay = replays.load(path)
        assert replays.verify(replay).mismatches == [], name
        assert len(replay.meta["failures"]) == len(rec.failures), name
        assert replay.meta["termination"] == rec.termination.name.lower(), name


def test_a_crash_the_runner_learns_of_late_is_still_a_crash(
    stub: Callable[..., Manifest], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a loaded machine a crashed process's exit can reach the runner seconds after its
    stream ended: the table sees the process has ended and waits for its exit code, so the
    drop is a crash with its code, not a disconnect."""
    from arena.server.bots import BotProcess
    from arena.server.table import CRASH_CHECK_S

    real_wait = BotProcess.wait

    async def late_wait(self: BotProcess) -> int:
        code = await real_wait(self)
        await asyncio.sleep(2.5 * CRASH_CHECK_S)  # the runner hears of the exit late
        return code

    monkeypatch.setattr(BotProcess, "wait", late_wait)

    async def main() -> MatchRecord:
        server = ArenaServer()
        await server.start()
        try:
            bots = [stub("--seed", str(s)) for s in range(4)]
            bots[ODD] = stub("--mode", "crash", "--after", "2", "--seed", "99")
            spec = TableSpec(
                options=Options(hands=1),
                seed=17,
                time=TimeControl(decision_ms=20_000),
                policy=FailurePolicy(max_strikes=0),
                table_id="late",
                startup_timeout_s=120.0,
            )
            _, records = await play_table(server, spec, bots, log_dir=tmp_path / "logs")
        finally:
            await server.stop(1.0)
        return records[0]

    rec = asyncio.run(main())
    assert outcomes(rec) == [(ODD, FailureKind.CRASH, FailureOutcome.DEFAULT_ACTIONS)]
    assert "code 3" in rec.failures[0].detail
