"""Tests for the SDK client (``sdk.client``, ``python -m sdk``) over real gRPC.

``SeatReferee`` is a small real referee for one remote seat, written here so that the
client's policies can be driven precisely: it plays a real ``Match`` (the other three seats
are random bots), encodes every request with ``arena.wire.request``, validates every answer
with ``decode_answer``, and can drop the stream, reject an answer or play several matches on
one stream. The last tests run the client against the project's own referee
(``arena.server``).
"""

from __future__ import annotations

import asyncio
import functools
import os
import socket
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.rules import (
    CALL_TICHU,
    GRAND,
    NO_GRAND,
    Action,
    Match,
    Observation,
    Options,
    Phase,
    observe,
)
from arena.rules.observe import default_action
from arena.runtime.aio import run as run_loop
from arena.wire import PROTOCOL_VERSION, pb, pb_grpc
from arena.wire.answer import AnswerError, decode_answer
from arena.wire.request import encode_request
from arena.wire.values import encode_options
from example_bots.random.bot import RandomBot
from sdk import Bot
from sdk.client import BotClient, ClientConfig, load_bot
from tests.helpers import ROOT
from tests.wire.matches import NumberedEvents, encode_match_result

TOKEN = "seat-token-1"

pytestmark = pytest.mark.timeout(300)


def run_async(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Runs an async test in a fresh event loop of the kind ``sdk.run`` uses (uvloop)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        run_loop(fn(*args, **kwargs))

    return wrapper


class SeatReferee(pb_grpc.RefereeServicer):
    """A referee for one remote seat (``seat``); the other seats are random bots in-process."""

    def __init__(
        self,
        *,
        seat: int = 1,
        options: Options | None = None,
        seed: int = 0,
        matches: int = 1,
        drop_after: int = 0,
        reject_first: bool = False,
        deadline_ms: int = 5000,
        bank_ms: int = 0,
        grace_ms: int = 10_000,
    ) -> None:
        self.seat = seat
        self.options = options or Options(hands=2)
        self.seed = seed
        self.matches = matches
        self.drop_after = drop_after  # drop the stream after sending this request (0: never)
        self.reject_first = reject_first
        self.deadline_ms = deadline_ms
        self.bank_ms = bank_ms
        self.grace_ms = grace_ms
        self.others = [RandomBot(100 + s) for s in range(4)]
        self.hellos: list[pb.Hello] = []
        self.sent: dict[int, Observation] = {}  # request id -> the view it carried
        self.answers: list[tuple[int, Action, bool, float]] = []  # id, action, call, ms taken
        self.rejected: list[str] = []  # answers this referee refused
        self.errors_sent = 0
        self.finished: list[Match] = []
        self.match_no = 0
        self.match: Match | None = None
        self.feed: NumberedEvents | None = None
        self.open: tuple[int, pb.DecisionRequest, Observation, float] | None = None
        self.request_id = 0
        self.dropped = False

    async def Play(self, request_iterator: Any, context: Any) -> None:
        first = await context.read()
        hello = first.hello
        self.hellos.append(hello)
        if hello.seat_token != TOKEN:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown seat token")
        resumed = self.match is not None
        if resumed and not hello.resume:
            await context.abort(grpc.StatusCode.ALREADY_EXISTS, "seat already connected")
        quiet = hello.results_only
        if not resumed:
            self._new_match()
        await context.write(pb.RefereeMessage(welcome=self._welcome(resumed)))
        while True:
            m, feed = self.match, self.feed
            assert m is not None and feed is not None
            for ev in feed.advance():
                if not quiet or ev.WhichOneof("kind") in ("hand_end", "match_end"):
                    await context.write(pb.RefereeMessage(event=ev))
            if m.over:
                self.finished.append(m)
                end = pb.Event(state_seq=feed.next_seq(), hand_number=m.hand_no + 1)
                end.match_end.CopyFrom(encode_match_result(m))
                await context.write(pb.RefereeMessage(event=end))
                if self.match_no >= self.matches:
                    return  # status OK
                self._new_match()
                await context.write(pb.RefereeMessage(welcome=self._welcome(False)))
                continue
            if m.seat != self.seat:
                obs = observe(m, m.seat)
                bot = self.others[m.seat]
                call = obs.may_call_tichu and bot.call_tichu(obs)
                if call:
                    m.apply(CALL_TICHU)
                m.apply(bot.act(obs))
                continue
            if self.open is None:
                obs = observe(m, self.seat)
                self.request_id += 1
                req = encode_request(
                    obs,
                    request_id=self.request_id,
                    state_seq=feed.state_seq,
                    deadline_ms=self.deadline_ms,
                    bank_ms=self.bank_ms,
                )
                self.sent[self.request_id] = obs
                self.open = (self.request_id, req, obs, time.monotonic())
            rid, req, obs, t0 = self.open
            await context.write(pb.RefereeMessage(decision=req))
            if rid == self.drop_after and not self.dropped:
                self.dropped = True
                await context.abort(grpc.StatusCode.UNAVAILABLE, "connection lost (test)")
            while True:
                msg = await context.read()
                if msg is grpc.aio.EOF:
                    return
                a = msg.action
                if a.request_id != rid or a.state_seq != req.state_seq:
                    self.rejected.append(f"stale answer {a}")
                    continue
                try:
                    action, call = decode_answer(a, obs)
                except AnswerError as e:
                    self.rejected.append(str(e))
                    continue
                if self.reject_first and not self.errors_sent:
                    self.errors_sent += 1
                    err = pb.Error(
                        code=pb.ERROR_CODE_MALFORMED,
                        request_id=rid,
                        message="rejected on purpose (test)",
                        ms_left=1000,
                    )
                    await context.write(pb.RefereeMessage(error=err))
                    continue
                break
            ms = (time.monotonic() - t0) * 1000
            self.answers.append((rid, action, call, ms))
            self.open = None
            if call:
                m.apply(CALL_TICHU)
            m.apply(action)

    def _new_match(self) -> None:
        self.match_no += 1
        self.match = Match(self.options, seed=self.seed + self.match_no)
        self.feed = NumberedEvents(self.match)

    def _welcome(self, resumed: bool) -> pb.Welcome:
        return pb.Welcome(
            seat=self.seat,
            table_id="test-table",
            rules=encode_options(self.options),
            time=pb.TimeControl(decision_ms=self.deadline_ms, bank_ms_per_hand=self.bank_ms),
            policy=pb.FailurePolicy(reconnect_grace_ms=self.grace_ms),
            server_version="test",
            protocol_version=PROTOCOL_VERSION,
            seat_token=TOKEN,
            resumed=resumed,
        )


async def _serve(referee: pb_grpc.RefereeServicer, port: int = 0) -> tuple[grpc.aio.Server, int]:
    server = grpc.aio.server()
    pb_grpc.add_RefereeServicer_to_server(referee, server)
    port = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    return server, port


async def _bot_process(port: int, *args: str, token: str = TOKEN) -> asyncio.subprocess.Process:
    env = dict(os.environ, TICHU_ARENA_SERVER=f"127.0.0.1:{port}", TICHU_ARENA_TOKEN=token)
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sdk",
        "example_bots.random.bot:RandomBot",
        *args,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def _finish(proc: asyncio.subprocess.Process, timeout: float = 60) -> tuple[int, str]:
    _, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, err.decode()


def _client(port: int, bot: Bot, **kwargs: Any) -> BotClient:
    return BotClient(bot, ClientConfig(server=f"127.0.0.1:{port}", token=TOKEN, **kwargs))


def _check_answers(referee: SeatReferee) -> None:
    """Every answer the referee accepted was legal for the view it carried, none rejected."""
    assert not referee.rejected, referee.rejected
    assert referee.answers
    for rid, action, _, _ in referee.answers:
        obs = referee.sent[rid]
        assert action in obs.legal or obs.phase is Phase.EXCHANGE


# ---------------------------------------------------------------------------
# The bot as a real process: python -m sdk example_bots.random.bot:RandomBot
# ---------------------------------------------------------------------------


@run_async
async def test_random_bot_process_plays_a_match() -> None:
    referee = SeatReferee(seat=2, options=Options(hands=3), seed=4)
    server, port = await _serve(referee)
    try:
        code, err = await _finish(await _bot_process(port))
    finally:
        await server.stop(None)
    assert code == 0, err
    assert "match over after 3 hand(s)" in err and "stream closed by the referee" in err
    assert len(referee.finished) == 1 and referee.finished[0].over
    _check_answers(referee)
    hello = referee.hellos[0]
    assert hello.protocol_version == PROTOCOL_VERSION and hello.bot_name == "random"
    assert not hello.resume and hello.results_only
    phases = {referee.sent[rid].phase for rid, *_ in referee.answers}
    assert {Phase.GRAND_TICHU, Phase.EXCHANGE, Phase.PLAY} <= phases
    # RandomBot never bets.
    assert not any(call for _, _, call, _ in referee.answers)


@pytest.mark.slow
@run_async
async def test_process_resumes_after_a_dropped_stream() -> None:
    referee = SeatReferee(seat=0, drop_after=6, seed=2)
    server, port = await _serve(referee)
    try:
        code, err = await _finish(await _bot_process(port, "--name", "phoenix-rider"))
    finally:
        await server.stop(None)
    assert code == 0, err
    assert referee.dropped and len(referee.hellos) == 2
    first, again = referee.hellos
    assert not first.resume and again.resume and again.seat_token == TOKEN
    assert again.bot_name == "phoenix-rider"
    # gRPC Core reports the cut as UNAVAILABLE or, in a race, INTERNAL: both are resumed.
    assert "retrying" in err and "resumed seat 0" in err
    # The request open at the drop was answered after the resume, under its own id.
    assert 6 in [rid for rid, *_ in referee.answers]
    assert len(referee.finished) == 1
    _check_answers(referee)


@pytest.mark.slow
@run_async
async def test_process_exits_1_on_a_refused_token() -> None:
    referee = SeatReferee()
    server, port = await _serve(referee)
    try:
        code, err = await _finish(await _bot_process(port, token="wrong"))
    finally:
        await server.stop(None)
    assert code == 1
    assert "UNAUTHENTICATED" in err and "unknown seat token" in err


@pytest.mark.slow
def test_usage_errors() -> None:
    import subprocess

    run = [sys.executable, "-m", "sdk"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TICHU_ARENA_")}
    r = subprocess.run(
        [*run, "example_bots.random.bot:RandomBot"], cwd=ROOT, env=env, capture_output=True
    )
    assert r.returncode == 2 and b"TICHU_ARENA_TOKEN" in r.stderr
    r = subprocess.run([*run, "no.such.module:Bot", "--token", "x"], cwd=ROOT, capture_output=True)
    assert r.returncode == 2 and b"cannot load bot" in r.stderr
    assert b"RuntimeWarning" not in r.stderr  # the module is not imported twice
    with pytest.raises(ValueError, match="module:Class"):
        load_bot("example_bots.random.bot")
    with pytest.raises(TypeError, match="not a Bot"):
        load_bot("arena.rules:Match")
    assert load_bot("example_bots.random.bot:RandomBot").name == "random"


@pytest.mark.slow
def test_a_bot_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    """A missing module or class is one line; a bug at the bot's import keeps its traceback."""
    import subprocess

    (tmp_path / "buggy.py").write_text("import no_such_dependency_51\n")
    (tmp_path / "fine.py").write_text("X = 1\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}

    def stderr(spec: str) -> list[str]:
        r = subprocess.run(
            [sys.executable, "-m", "sdk", spec], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert r.returncode == 2
        return r.stderr.splitlines()

    for spec in ("nosuchmod:X", "fine.nosub:X", "fine:NoSuchClass", "fine"):
        lines = stderr(spec)
        assert len(lines) == 1 and lines[0].startswith("error: cannot load bot"), (spec, lines)
    lines = stderr("buggy:Bot")
    assert lines[0].startswith("Traceback") and "no_such_dependency_51" in lines[-1]


# ---------------------------------------------------------------------------
# Client policies, with the bot in-process
# ---------------------------------------------------------------------------


class Checker(RandomBot):
    """Keeps every view it is shown, and the hooks' calls."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.seen: list[Observation] = []
        self.hooks: list[tuple[str, object]] = []

    def act(self, obs: Observation) -> Action:
        self.seen.append(obs)
        return super().act(obs)

    def on_match_start(self, seat: int) -> None:
        self.hooks.append(("start", seat))

    def on_match_end(self, scores: tuple[int, int]) -> None:
        self.hooks.append(("end", scores))


@pytest.mark.parametrize("threaded", [True, False])
@run_async
async def test_views_are_exact_and_matches_follow_on_one_stream(threaded: bool) -> None:
    referee = SeatReferee(seat=3, matches=2, seed=7, options=Options.turnier())
    server, port = await _serve(referee)
    bot = Checker()
    try:
        code = await _client(port, bot, threaded=threaded, results_only=False).run()
    finally:
        await server.stop(None)
    assert code == 0
    assert bot.seen == [referee.sent[rid] for rid, *_ in referee.answers]
    assert len(referee.finished) == 2 and len(referee.hellos) == 1
    ends = [tuple(m.scores) for m in referee.finished]
    assert bot.hooks == [("start", 3), ("end", ends[0]), ("start", 3), ("end", ends[1])]
    _check_answers(referee)


class Bettor(RandomBot):
    """Calls Tichu whenever asked; calls Grand Tichu too."""

    def call_tichu(self, obs: Observation) -> bool:
        return True

    def act(self, obs: Observation) -> Action:
        if obs.phase is Phase.GRAND_TICHU:
            return NO_GRAND if obs.seat % 2 else GRAND
        return super().act(obs)


@run_async
async def test_tichu_calls_ride_on_answers() -> None:
    referee = SeatReferee(seat=1, seed=3)
    server, port = await _serve(referee)
    try:
        assert await _client(port, Bettor(1)).run() == 0
    finally:
        await server.stop(None)
    calls = [rid for rid, _, call, _ in referee.answers if call]
    assert calls  # asked only while allowed; the referee checks the flag
    assert all(referee.sent[rid].may_call_tichu for rid in calls)
    assert referee.finished[0].hand_results[0].tichu[1]
    _check_answers(referee)


class Faulty(RandomBot):
    """Raises on every third decision and answers illegally on every fifth."""

    name = "faulty"

    def __init__(self) -> None:
        super().__init__(5)
        self.n = 0

    def act(self, obs: Observation) -> Action:
        self.n += 1
        if self.n % 3 == 0:
            raise RuntimeError("bug in the bot")
        if self.n % 5 == 0:
            return CALL_TICHU  # not an answer to any decision
        return super().act(obs)


@run_async
async def test_a_failing_bot_gets_default_answers(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("ERROR", logger="sdk")
    referee = SeatReferee(seat=0, seed=9)
    server, port = await _serve(referee)
    client = _client(port, Faulty())
    try:
        assert await client.run() == 0
    finally:
        await server.stop(None)
    assert client.bot_errors >= 3
    assert "RuntimeError: bug in the bot" in caplog.text
    assert "is not legal" in caplog.text or "not among" in caplog.text
    _check_answers(referee)
    # The bot is asked once per decision, in order: its failures were answered by default.
    for n, (rid, action, _, _) in enumerate(referee.answers, 1):
        if n % 3 == 0 or n % 5 == 0:
            assert action == default_action(referee.sent[rid]), n


@run_async
async def test_strict_mode_stops_at_the_first_bot_error() -> None:
    from sdk.client import BotError

    referee = SeatReferee(seat=0, seed=9)
    server, port = await _serve(referee)
    try:
        with pytest.raises(BotError, match="bug in the bot"):
            await _client(port, Faulty(), strict=True).run()
    finally:
        await server.stop(None)


@run_async
async def test_rejected_answer_is_replaced_by_the_default() -> None:
    referee = SeatReferee(seat=2, reject_first=True, seed=1)
    server, port = await _serve(referee)
    try:
        assert await _client(port, RandomBot(2)).run() == 0
    finally:
        await server.stop(None)
    assert referee.errors_sent == 1
    rid, action, call, _ = referee.answers[0]
    assert action == default_action(referee.sent[rid]) and not call
    _check_answers(referee)


class Sleeper(RandomBot):
    """Thinks far too long about its first decision."""

    def __init__(self) -> None:
        super().__init__(0)
        self.slept = False

    def act(self, obs: Observation) -> Action:
        if not self.slept:
            self.slept = True
            time.sleep(2.0)
        return super().act(obs)


@pytest.mark.slow
@pytest.mark.parametrize("threaded", [False, True])
@run_async
async def test_slow_bot_is_answered_for_within_the_deadline(threaded: bool) -> None:
    referee = SeatReferee(seat=1, seed=5, deadline_ms=500, bank_ms=300)
    server, port = await _serve(referee)
    client = _client(port, Sleeper(), safety_ms=150, threaded=threaded)
    try:
        assert await client.run() == 0
    finally:
        await server.stop(None)
    rid, action, _, ms = referee.answers[0]
    assert action == default_action(referee.sent[rid])
    assert ms < 800, ms  # deadline plus bank, far less than the bot's 2 s
    assert client.bot_errors >= 1
    _check_answers(referee)
    if not threaded:  # interrupted: the next decisions are the bot's own, in time
        assert all(ms < 400 for _, _, _, ms in referee.answers[1:])


@run_async
async def test_first_connection_is_retried_until_the_referee_listens() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    referee = SeatReferee(seat=0, options=Options(hands=1))
    client = _client(port, RandomBot(0), connect_timeout_s=20)
    task = asyncio.ensure_future(client.run())
    await asyncio.sleep(0.5)
    assert not task.done()
    server, _ = await _serve(referee, port)
    try:
        assert await asyncio.wait_for(task, 30) == 0
    finally:
        await server.stop(None)
    assert len(referee.finished) == 1


@run_async
async def test_unreachable_referee_gives_up() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t = time.monotonic()
    assert await _client(port, RandomBot(0), connect_timeout_s=0.5).run() == 1
    assert time.monotonic() - t < 100  # gives up rather than retrying forever


# ---------------------------------------------------------------------------
# Against the project's referee (arena.server)
# ---------------------------------------------------------------------------


async def _arena_server() -> Any:
    from arena.server import ArenaServer

    server = ArenaServer()
    await server.start()
    return server


@pytest.mark.slow
@run_async
async def test_four_bot_processes_against_the_arena_referee() -> None:
    from arena.server import TableSpec

    arena_server = await _arena_server()
    try:
        table = arena_server.create_table(TableSpec(options=Options(hands=2), seed=11, matches=2))
        procs = [await _bot_process(arena_server.port, token=table.tokens[s]) for s in range(4)]
        records = await asyncio.wait_for(table.wait(), 120)
        results = [await _finish(p) for p in procs]
    finally:
        await arena_server.stop(1)
    assert [code for code, _ in results] == [0, 0, 0, 0], results
    assert len(records) == 2
    assert all(err.count("match over after 2 hand(s)") == 2 for _, err in results)


class Mirror(RandomBot):
    """Compares every view with the referee's own match at the moment it asks (inline)."""

    def __init__(self, table: Any, seed: int) -> None:
        super().__init__(seed)
        self.table = table
        self.checked = 0

    def act(self, obs: Observation) -> Action:
        m = self.table.referee.match
        expected = observe(m, obs.seat)
        if obs.phase in (Phase.GRAND_TICHU, Phase.EXCHANGE):
            may = m.hands[obs.seat].bit_count() == 14 and not m.grand[obs.seat]
            expected = replace(
                expected,
                to_act=obs.seat,
                legal=obs.legal,
                may_call_tichu=obs.phase is Phase.EXCHANGE and may and not m.tichu[obs.seat],
            )
        assert obs == expected
        self.checked += 1
        return super().act(obs)


@run_async
async def test_views_from_the_arena_referee_are_exact() -> None:
    from arena.server import TableSpec

    arena_server = await _arena_server()
    try:
        table = arena_server.create_table(TableSpec(options=Options(hands=2), seed=5))
        bots = [Mirror(table, s) for s in range(4)]
        clients = [
            BotClient(
                bots[s],
                ClientConfig(server=arena_server.address, token=table.tokens[s], threaded=False),
            )
            for s in range(4)
        ]
        codes = await asyncio.wait_for(asyncio.gather(*(c.run() for c in clients)), 120)
    finally:
        await arena_server.stop(1)
    assert codes == [0, 0, 0, 0]
    assert all(b.checked > 10 for b in bots)
    assert sum(c.bot_errors for c in clients) == 0
