"""The seat's clock (``GrpcSeat._ring``): one alarm that follows the open request's deadline.

An answer in time leaves the alarm set for the old deadline; when the next request has an
earlier deadline (a smaller bank), the alarm must move to it, and a request left open must
time out at its own deadline, not at an earlier request's; never early, on either loop
(uvloop's timers count whole milliseconds).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from arena.referee import Decision, FailureKind, TimeControl
from arena.rules import Match, Options, observe
from arena.runtime.aio import ENV_LOOP, loop_name
from arena.runtime.aio import run as run_loop
from arena.server.seat import Stream
from arena.server.table import Table, TableSpec
from arena.wire import pb


class _Bot(Stream):
    """An in-memory stream whose bot answers the requests whose deadline is in ``answer``."""

    def __init__(self, answer: set[int]) -> None:
        super().__init__(None, pb.Hello(results_only=True))
        self.answer = answer
        self.requests = 0

    def send(self, data: bytes) -> None:
        msg = pb.RefereeMessage.FromString(data)
        if msg.WhichOneof("payload") != "decision":
            return
        self.requests += 1
        d = msg.decision
        if d.deadline_ms in self.answer:
            a = pb.Action(request_id=d.request_id, state_seq=d.state_seq, choice_index=0)
            owner = self.owner
            assert owner is not None
            reply = pb.BotMessage(action=a).SerializeToString()
            asyncio.get_running_loop().call_soon(owner.on_message, self, reply)


async def _ask(deadlines_ms: list[int], answer: set[int]) -> list[tuple[FailureKind | None, float]]:
    """Asks one seat a decision per deadline; returns each answer's failure and duration."""
    spec = TableSpec(options=Options(hands=1), seed=1, time=TimeControl())
    table = Table("clock", spec, ["a", "b", "c", "d"], None, lambda t: None)
    seat = table.seats[0]
    stream = _Bot(answer)
    seat.attach(stream, resume=False)
    m = Match(Options(hands=1), seed=1)
    obs = observe(m, 0)
    out = []
    for k, ms in enumerate(deadlines_ms, 1):
        t0 = time.perf_counter()
        answer = await seat.decide(Decision(obs, k, ms, 0))
        out.append((answer.failure, time.perf_counter() - t0))
    assert stream.requests == len(deadlines_ms)
    return out


Run = Callable[[Coroutine[Any, Any, Any]], Any]


@pytest.fixture(params=["asyncio", "uvloop"])
def run(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Run:
    """``arena.runtime.aio.run`` on each loop."""
    if request.param == "uvloop":
        pytest.importorskip("uvloop")
    monkeypatch.setenv(ENV_LOOP, request.param)
    assert loop_name() == request.param
    return run_loop


LATE_S = 0.5
"""How late a timeout may ring: generous for a loaded machine (issue 23); quiet, a few ms."""


def _assert_timed_out(result: tuple[FailureKind | None, float], ms: int) -> None:
    kind, seconds = result
    assert kind is FailureKind.TIMEOUT
    # Never early; late by less than LATE_S, far less than the gaps between the deadlines
    # here, so a request timing out at another request's deadline still fails.
    assert ms / 1000 <= seconds < ms / 1000 + LATE_S, (ms, seconds)


def test_each_request_times_out_at_its_own_deadline(run: Run) -> None:
    results = run(_ask([1500, 200, 600, 200], answer=set()))
    for result, ms in zip(results, [1500, 200, 600, 200], strict=True):
        _assert_timed_out(result, ms)


def test_an_earlier_deadline_after_an_answer_in_time_still_rings(run: Run) -> None:
    """5 s answered at once leaves the alarm at +5 s; the next request is due in 50 ms."""
    (answered, answered_s), timed_out = run(_ask([5000, 50], answer={5000}))
    assert answered is None and answered_s < LATE_S
    _assert_timed_out(timed_out, 50)


def test_a_later_deadline_waits_past_the_earlier_alarm(run: Run) -> None:
    """40 ms answered at once leaves the alarm at +40 ms; the next, due in 250 ms, outlives it."""
    (answered, _), timed_out = run(_ask([40, 250], answer={40}))
    assert answered is None
    _assert_timed_out(timed_out, 250)
