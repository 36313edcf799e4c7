"""The Play call over real sockets: Hello checks, seat tokens, in-band errors, health, shutdown."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
import pytest
from wire_client import Client, answer, hello

from arena.referee import FailureKind, FailureOutcome, FailurePolicy, Termination, TimeControl
from arena.referee import replay as replays
from arena.rules import Options
from arena.server import ArenaServer, MatchPlan, TableSpec
from arena.wire import pb

pytestmark = pytest.mark.timeout(60)


def run(main: Callable[[ArenaServer], Awaitable[None]], **kw: object) -> None:
    async def wrapper() -> None:
        server = ArenaServer(**kw)  # type: ignore[arg-type]
        await server.start()
        try:
            await asyncio.wait_for(main(server), 45)
        finally:
            await server.stop(0.5)

    asyncio.run(wrapper())


async def refused_with(server: ArenaServer, first: pb.BotMessage) -> tuple[grpc.StatusCode, str]:
    c = Client(server.address)
    await c.send(first)
    try:
        while await c.recv() is not None:
            pass
    except grpc.aio.AioRpcError as e:
        return e.code(), e.details() or ""
    finally:
        await c.close()
    return grpc.StatusCode.OK, ""


def test_a_bad_hello_ends_the_call_with_the_documented_status() -> None:
    async def main(server: ArenaServer) -> None:
        table = server.create_table(TableSpec(startup_timeout_s=30))
        token = table.tokens[0]
        action = pb.BotMessage(action=pb.Action(request_id=1))
        cases = [
            (action, grpc.StatusCode.INVALID_ARGUMENT, "must be a Hello"),
            (hello(token, version="2.0.0"), grpc.StatusCode.FAILED_PRECONDITION, "2.0.0"),
            (hello(token, version="one"), grpc.StatusCode.INVALID_ARGUMENT, "'one'"),
            (hello(), grpc.StatusCode.INVALID_ARGUMENT, "seat_token or a bot_key"),
            (hello(key="k" * 10, resume=True), grpc.StatusCode.INVALID_ARGUMENT, "resume"),
            (hello("forged"), grpc.StatusCode.UNAUTHENTICATED, "unknown seat token"),
            (hello(key="k" * 10), grpc.StatusCode.UNAUTHENTICATED, "no open tables"),
        ]
        for first, code, text in cases:
            got, details = await refused_with(server, first)
            assert got == code, (first, details)
            assert text in details
        assert "1.1.0" in next(d for _, _, d in server.service.refused if "2.0.0" in d)
        table.abort("done")

    run(main)


def test_a_live_seat_refuses_a_second_stream_and_resume_takes_it_over() -> None:
    async def main(server: ArenaServer) -> None:
        table = server.create_table(TableSpec(startup_timeout_s=30))
        first = Client(server.address)
        await first.send(hello(table.tokens[0]))
        welcome = (await first.next("welcome")).welcome
        assert (welcome.seat, welcome.table_id, welcome.resumed) == (0, table.id, False)
        assert welcome.seat_token == table.tokens[0]
        assert welcome.protocol_version == "1.1.0"
        assert welcome.time.decision_ms == 1000
        code, details = await refused_with(server, hello(table.tokens[0]))
        assert code == grpc.StatusCode.ALREADY_EXISTS
        assert "resume" in details
        second = Client(server.address)
        await second.send(hello(table.tokens[0], resume=True))
        assert (await second.next("welcome")).welcome.resumed is True
        assert await first.status() == grpc.StatusCode.ABORTED
        table.abort("done")
        assert await second.status() == grpc.StatusCode.UNAVAILABLE
        await first.close()
        await second.close()

    run(main)


def test_wrong_answers_are_rejected_in_band_and_asked_again() -> None:
    async def main(server: ArenaServer) -> None:
        spec = TableSpec(
            options=Options(hands=1),
            time=TimeControl(decision_ms=2000),
            policy=FailurePolicy(max_rejections=3),
        )
        table = server.create_table(spec)
        clients = [Client(server.address) for _ in range(4)]
        for s, c in enumerate(clients):
            await c.send(hello(table.tokens[s]))
        others = [asyncio.ensure_future(c.play_out()) for c in clients[1:]]
        me = clients[0]
        d = (await me.next("decision")).decision
        assert d.kind == pb.DECISION_KIND_GRAND_TICHU
        assert list(d.legal.values) == [0, 1]
        assert d.request_id == 1 and d.deadline_ms == 2000

        async def error_for(a: pb.Action) -> pb.Error:
            await me.send(pb.BotMessage(action=a))
            return (await me.next("error")).error

        e = await error_for(pb.Action(request_id=7, state_seq=d.state_seq))
        assert (e.code, e.request_id, e.fatal) == (pb.ERROR_CODE_UNKNOWN_REQUEST, 7, False)
        e = await error_for(pb.Action(request_id=1, state_seq=d.state_seq + 5))
        assert e.code == pb.ERROR_CODE_STATE_MISMATCH
        assert 0 < e.ms_left <= 2000
        e = await error_for(pb.Action(request_id=1, state_seq=d.state_seq, choice_index=2))
        assert e.code == pb.ERROR_CODE_MALFORMED
        assert "out of range" in e.message
        await me.send(pb.BotMessage())  # no payload: the third counted rejection
        last = (await me.next("error")).error
        assert (last.code, last.request_id, last.ms_left) == (pb.ERROR_CODE_MALFORMED, 1, 0)
        failure = (await me.next("event")).event.failure
        assert (failure.seat, failure.kind, failure.outcome) == (
            0,
            pb.FAILURE_KIND_MALFORMED,
            pb.FAILURE_OUTCOME_DEFAULT_ACTION,
        )
        # every seat sees the referee's own words; the detail is the seat's (in-band) alone
        assert failure.detail == "malformed answers; the default action was applied"
        d2 = (await me.next("decision")).decision
        e = await error_for(pb.Action(request_id=1, state_seq=d.state_seq))
        assert e.code == pb.ERROR_CODE_TOO_LATE
        assert d2.kind == pb.DECISION_KIND_EXCHANGE and d2.request_id == 2
        e = await error_for(pb.Action(request_id=2, state_seq=d2.state_seq, call_tichu=False))
        assert e.code == pb.ERROR_CODE_MALFORMED  # no exchange cards
        bad = pb.Action(request_id=2, state_seq=d2.state_seq)
        bad.exchange_cards.extend([d2.legal.values[0]] * 3)
        e = await error_for(bad)
        assert e.code == pb.ERROR_CODE_ILLEGAL_EXCHANGE
        await me.send(answer(d2))  # accepted within the time left: no failure
        assert await me.play_out() == grpc.StatusCode.OK
        await asyncio.gather(*others)
        records = await table.wait()
        assert [(f.seat, f.kind, f.outcome) for f in records[0].failures] == [
            (0, FailureKind.MALFORMED, FailureOutcome.DEFAULT_ACTION)
        ]
        for c in clients:
            await c.close()

    run(main)


def test_a_second_hello_is_fatal_and_the_seat_may_resume() -> None:
    async def main(server: ArenaServer) -> None:
        spec = TableSpec(
            options=Options(hands=1),
            time=TimeControl(decision_ms=10_000),
            policy=FailurePolicy(reconnect_grace_ms=10_000),
        )
        table = server.create_table(spec)
        clients = [Client(server.address) for _ in range(4)]
        for s, c in enumerate(clients):
            await c.send(hello(table.tokens[s]))
        others = [asyncio.ensure_future(c.play_out()) for c in clients[1:]]
        await clients[0].next("decision")
        await clients[0].send(hello(table.tokens[0]))
        err = (await clients[0].next("error")).error
        assert (err.code, err.fatal) == (pb.ERROR_CODE_UNEXPECTED_MESSAGE, True)
        assert await clients[0].status() == grpc.StatusCode.INVALID_ARGUMENT
        back = Client(server.address)
        await back.send(hello(table.tokens[0], resume=True))
        assert (await back.next("welcome")).welcome.resumed
        again = (await back.next("decision")).decision
        assert again.request_id == 1  # the open request, sent again with the time left
        assert again.deadline_ms < 10_000
        await back.send(answer(again))
        assert await back.play_out() == grpc.StatusCode.OK
        await asyncio.gather(*others)
        rec = (await table.wait())[0]
        assert [(f.kind, f.outcome) for f in rec.failures] == [
            (FailureKind.DISCONNECT, FailureOutcome.AWAITING_RECONNECT),
            (FailureKind.DISCONNECT, FailureOutcome.RECONNECTED),
        ]
        for c in [*clients, back]:
            await c.close()

    run(main)


def test_a_given_up_seat_and_a_finished_table_refuse_their_tokens() -> None:
    async def main(server: ArenaServer) -> None:
        spec = TableSpec(  # hands enough that the match outlasts the resume below
            options=Options(hands=10),
            time=TimeControl(decision_ms=500),  # the silent seat's; the others answer at once
            policy=FailurePolicy(max_strikes=1),
        )
        table = server.create_table(spec)
        clients = [Client(server.address) for _ in range(4)]
        for s, c in enumerate(clients):
            await c.send(hello(table.tokens[s]))
        others = [asyncio.ensure_future(c.play_out()) for c in clients[1:]]
        silent = clients[0]
        while True:  # never answers: one timeout gives the seat up
            msg = await silent.next("event")
            if msg.event.WhichOneof("kind") == "failure" and msg.event.failure.outcome == (
                pb.FAILURE_OUTCOME_DEFAULT_ACTIONS
            ):
                break
        code, details = await refused_with(server, hello(table.tokens[0], resume=True))
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert "given up" in details
        assert await silent.status() == grpc.StatusCode.OK  # still told the rest
        await asyncio.gather(*others)
        await table.wait()
        code, details = await refused_with(server, hello(table.tokens[1]))
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        for c in clients:
            await c.close()

    run(main)


def test_quiet_bots_get_only_results_and_their_own_failures() -> None:
    async def main(server: ArenaServer) -> None:
        table = server.create_table(TableSpec(options=Options(hands=2)))
        clients = [Client(server.address) for _ in range(4)]
        for s, c in enumerate(clients):
            await c.send(hello(table.tokens[s], quiet=s == 2))
        await asyncio.gather(*(c.play_out(random.Random(s)) for s, c in enumerate(clients)))
        quiet = [m.event.WhichOneof("kind") for m in clients[2].received if m.HasField("event")]
        loud = [m.event.WhichOneof("kind") for m in clients[0].received if m.HasField("event")]
        assert quiet == ["hand_end", "hand_end", "match_end"]
        assert len(loud) > 50 and loud[-1] == "match_end"
        for c in clients:
            await c.close()

    run(main)


def test_a_seat_nobody_joins_is_given_up_and_an_empty_table_plays_nothing() -> None:
    async def main(server: ArenaServer) -> None:
        # Time enough for three clients to join on a loaded machine; the fourth never does.
        spec = TableSpec(options=Options(hands=1), startup_timeout_s=5.0)
        table = server.create_table(spec)
        clients = [Client(server.address) for _ in range(3)]
        for s, c in enumerate(clients):
            await c.send(hello(table.tokens[s]))
        codes = await asyncio.gather(*(c.play_out() for c in clients))
        assert codes == [grpc.StatusCode.OK] * 3
        (record,) = await table.wait()
        assert [(f.seat, f.kind, f.outcome, f.detail) for f in record.failures] == [
            (3, FailureKind.DISCONNECT, FailureOutcome.DEFAULT_ACTIONS, "did not join the table")
        ]
        assert record.termination is Termination.NORMAL
        code, _ = await refused_with(server, hello(table.tokens[3]))
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        empty = server.create_table(spec)
        assert await empty.wait() == []
        for c in clients:
            await c.close()

    run(main)


def test_a_table_plays_its_matches_in_a_row_on_the_same_streams(tmp_path: Path) -> None:
    done: list[tuple[int, Termination]] = []

    async def main(server: ArenaServer) -> None:
        plans = (
            MatchPlan(seed=1, replay=tmp_path / "one.json"),
            MatchPlan(seed=2, replay=tmp_path / "two.json"),
        )
        table = server.create_table(TableSpec(options=Options(hands=1), plans=plans))
        table.on_record = lambda k, record: done.append((k, record.termination))
        clients = [Client(server.address) for _ in range(4)]
        for s, c in enumerate(clients):
            await c.send(hello(table.tokens[s]))
        codes = await asyncio.gather(*(c.play_out(random.Random(s)) for s, c in enumerate(clients)))
        assert codes == [grpc.StatusCode.OK] * 4
        records = await table.wait()
        assert [r.replay.seed for r in records] == [1, 2]
        for c in clients:
            welcomes = [m.welcome for m in c.received if m.HasField("welcome")]
            assert [w.resumed for w in welcomes] == [False, False]
            ends = [m for m in c.received if m.HasField("event") and m.event.HasField("match_end")]
            assert len(ends) == 2
            requests = [m.decision.request_id for m in c.received if m.HasField("decision")]
            assert requests.count(1) == 2  # request ids start again with each match
            await c.close()

    run(main)
    assert done == [(1, Termination.NORMAL), (2, Termination.NORMAL)]
    for name in ("one.json", "two.json"):
        assert replays.verify(replays.load(tmp_path / name)).mismatches == []


def test_a_resume_over_a_live_stream_is_recorded_and_rate_limited(tmp_path: Path) -> None:
    async def main(server: ArenaServer) -> None:
        spec = TableSpec(
            options=Options(hands=1),
            time=TimeControl(decision_ms=10_000),
            policy=FailurePolicy(reconnect_grace_ms=10_000, max_resumes=2, resume_gap_ms=60_000),
            replay=tmp_path / "match.json",
        )
        table = server.create_table(spec)
        clients = [Client(server.address) for _ in range(4)]
        for s, c in enumerate(clients):
            await c.send(hello(table.tokens[s]))
        others = [asyncio.ensure_future(c.play_out()) for c in clients[1:]]
        await clients[0].next("decision")
        thief = Client(server.address)  # seat 0's token, presented by someone else
        await thief.send(hello(table.tokens[0], resume=True))
        assert (await thief.next("welcome")).welcome.resumed
        assert await clients[0].status() == grpc.StatusCode.ABORTED  # the owner is told
        again = Client(server.address)  # a second resume within the gap: refused
        await again.send(hello(table.tokens[0], resume=True))
        assert await again.status() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "resumed less than 60000 ms ago" in server.service.refused[-1][2]
        assert await thief.play_out() == grpc.StatusCode.OK
        await asyncio.gather(*others)
        rec = (await table.wait())[0]
        (took,) = rec.failures
        assert (took.seat, took.kind, took.outcome) == (
            0,
            FailureKind.DISCONNECT,
            FailureOutcome.RECONNECTED,
        )
        assert took.detail.startswith("resumed from ipv") and "over a live stream" in took.detail
        meta = replays.load(tmp_path / "match.json").meta
        assert [f["detail"] for f in meta["failures"]] == [took.detail]
        # every seat was told, in the referee's own words
        seen = [m.event.failure for m in clients[1].received if m.event.HasField("failure")]
        assert [f.detail for f in seen] == ["the stream ended; the seat resumed"]
        for c in [*clients, thief, again]:
            await c.close()

    run(main)


def test_a_policy_can_forbid_resuming_a_seat() -> None:
    async def main(server: ArenaServer) -> None:
        spec = TableSpec(
            options=Options(hands=1),
            time=TimeControl(decision_ms=10_000),
            policy=FailurePolicy(reconnect_grace_ms=10_000, max_resumes=0),
        )
        table = server.create_table(spec)
        clients = [Client(server.address) for _ in range(4)]
        for s, c in enumerate(clients):
            await c.send(hello(table.tokens[s]))
        others = [asyncio.ensure_future(c.play_out()) for c in clients[1:]]
        d = (await clients[0].next("decision")).decision
        thief = Client(server.address)
        await thief.send(hello(table.tokens[0], resume=True))
        assert await thief.status() == grpc.StatusCode.PERMISSION_DENIED
        await clients[0].send(answer(d))
        assert await clients[0].play_out() == grpc.StatusCode.OK  # the owner plays on
        await asyncio.gather(*others)
        rec = (await table.wait())[0]
        assert rec.failures == [] and rec.termination is Termination.NORMAL
        for c in [*clients, thief]:
            await c.close()

    run(main)
