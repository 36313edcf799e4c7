"""A seat played over gRPC: the stream it is attached to, the clock, and answer checking.

``Stream`` is one ``Referee.Play`` call. Everything the referee sends goes into the
stream's outbox, which the call's handler drains; so the match loop never waits on a slow
or stalled bot, and the deadline (the seat's alarm, an asyncio timer) always fires. A second
task reads the bot's messages and hands them to the stream's owner (a ``GrpcSeat`` or the
lobby).

``GrpcSeat`` implements the referee's ``Seat`` protocol. It numbers requests, measures each
answer from the moment the request is queued, checks answers (``decode_answer`` plus the
``request_id``/``state_seq`` echo), sends in-band errors and lets the bot answer again
within the remaining time, and keeps the hand's history as bytes for the next request. It
survives its stream: when a bot resumes, the new stream gets a ``Welcome`` and the open
request again, with the time left. ``SeatObserver``s (``Table.observe``) hear of every join
and every decision, for tools that time or disturb a table (``arena kit check-bot``).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import grpc
from google.protobuf.message import DecodeError

from arena.referee.policy import Failure, FailureKind, cap_text
from arena.referee.seat import Answer, Decision, MatchInfo, TableEvent
from arena.rules import EventKind
from arena.server.codec import (
    error_bytes,
    event_bytes,
    request_bytes,
    welcome_bytes,
)
from arena.wire import pb
from arena.wire.answer import AnswerError, decode_answer
from arena.wire.fastpath import EventBytes

_clock = time.monotonic  # answers are timed with it; the loop's clock may count whole ms (uvloop)
_ILLEGAL_CODES = frozenset((pb.ERROR_CODE_ILLEGAL_EXCHANGE, pb.ERROR_CODE_TICHU_NOT_ALLOWED))
_HAND_START = EventKind.HAND_START

Context = Any
"""A ``grpc.aio.ServicerContext`` for a bytes-in, bytes-out stream."""


class Refused(Exception):
    """A ``Hello`` that cannot be accepted: the gRPC status and message to close with."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        message = cap_text(message)
        super().__init__(message)
        self.code = code
        self.message = message


class StreamOwner(Protocol):
    """Who gets a stream's messages: a seat, or the lobby while the bot waits."""

    def on_message(self, stream: Stream, data: bytes) -> None:
        """One message from the bot (not yet parsed)."""

    def on_lost(self, stream: Stream) -> None:
        """The stream ended or broke."""


_CONNECTIONS = itertools.count(1)


class Stream:
    """One ``Referee.Play`` call: an outbox drained by the call's handler, and its reader."""

    def __init__(self, context: Context, hello: pb.Hello) -> None:
        self.context = context
        # The address and this referee's number for the connection: a Unix socket's peer
        # is "unix:" for every bot, so the number tells a resumed seat's owner from a thief.
        serial = next(_CONNECTIONS)
        address = context.peer() if context is not None else "memory"
        self.peer: str = f"{address} (connection {serial})"
        self.name = hello.bot_name[:64]
        self.results_only = hello.results_only
        self.owner: StreamOwner | None = None
        self.status: tuple[grpc.StatusCode, str] | None = None  # set once closing
        self.lost = False
        self._out: deque[bytes] = deque()
        self._wake: asyncio.Future[None] | None = None

    @property
    def closing(self) -> bool:
        """Whether the stream is closing (nothing more will be queued)."""
        return self.status is not None

    def send(self, data: bytes) -> None:
        """Queues one serialized ``RefereeMessage``; dropped once the stream is closing."""
        if self.status is not None or self.lost:
            return
        self._out.append(data)
        wake = self._wake
        if wake is not None:
            self._wake = None
            if not wake.done():
                wake.set_result(None)

    def close(self, code: grpc.StatusCode = grpc.StatusCode.OK, message: str = "") -> None:
        """Ends the call after the queued messages, with ``code``."""
        if self.status is None:
            self.status = (code, message)
        wake = self._wake
        if wake is not None:
            self._wake = None
            if not wake.done():
                wake.set_result(None)

    async def pump(self) -> None:
        """Writes queued messages until the stream is closed (run by the call's handler)."""
        write = self.context.write
        out = self._out
        loop = asyncio.get_running_loop()
        while True:
            while out:
                await write(out.popleft())
            if self.status is not None or self.lost:
                return
            self._wake = wake = loop.create_future()
            await wake

    async def read(self) -> None:
        """Reads the bot's messages and hands them to the owner until the stream ends."""
        read = self.context.read
        eof = grpc.aio.EOF
        try:
            while True:
                data = await read()
                if data is eof:
                    return
                owner = self.owner
                if owner is not None:
                    owner.on_message(self, data)
        finally:
            self.lost = True
            self.close(grpc.StatusCode.CANCELLED, "the bot closed its side")
            owner = self.owner
            if owner is not None:
                owner.on_lost(self)


class TableHooks(Protocol):
    """What a ``GrpcSeat`` tells its table."""

    def seat_joined(self, seat: int) -> None:
        """A stream was attached to the seat."""

    def seat_lost(self, seat: int) -> None:
        """The seat's stream ended or broke."""

    def seat_back(self, seat: int, took_over: bool, peer: str) -> None:
        """A stream resumed the seat during a match (``took_over``: from a live stream)."""

    def refuse_join(self, seat: int, resume: bool) -> Refused | None:
        """Why a stream may not take the seat now, or ``None``.

        ``resume``: the seat already played in this match (its policy may forbid resumes).
        """


class SeatObserver(Protocol):
    """Hears what happens at a seat: streams joining, decisions asked and answered."""

    def joined(self, seat: GrpcSeat, resumed: bool) -> None:
        """A stream took ``seat`` (``resumed``: it came back to a match it had joined)."""

    def asked(self, seat: GrpcSeat, decision: Decision) -> None:
        """``decision`` is about to be sent to ``seat``."""

    def answered(self, seat: GrpcSeat, decision: Decision, answer: Answer, ms: float) -> None:
        """``seat`` answered ``decision`` (or failed to: ``answer.failure``) after ``ms``."""


class Turn(Protocol):
    """When a seat's bot may run (``arena.server.turns.BotTurn``): only while it is asked."""

    async def begin(self) -> None:
        """Waits until the bot may run, then lets it run."""

    async def end(self) -> None:
        """Stops the bot (its answer is in, or its time is up) and waits until it has."""

    def rest(self) -> None:
        """Stops the bot between its turns (it joined the table)."""


@dataclass(eq=False, slots=True)
class _Open:
    """The seat's open request."""

    rid: int
    decision: Decision
    future: asyncio.Future[Answer]
    sent: float  # _clock() when queued
    due: float  # _clock() at the deadline (decision time plus bank)
    rejections: int = 0

    def left_ms(self, now: float) -> int:
        """Milliseconds left before the request times out (decision time plus bank)."""
        d = self.decision
        return int(d.deadline_ms + d.bank_ms - (now - self.sent) * 1000.0)


class EventCodec:
    """Encodes each table event once for the four seats, and keeps the hand's history.

    A table's ``broadcast`` encodes a public event once for the four seats; a seat's own
    ``notify`` reuses the last encoding when it is the same event.
    The public events of the current hand are kept as ``View.history`` entries (``history``),
    shared by the seats: a seat copies it only when it gets a private event of its own (a
    failure in a bomb window), which the others must not see.
    """

    def __init__(self, tournament: bool) -> None:
        self.tournament = tournament
        self.history = bytearray()
        self.last: TableEvent | None = None
        self.last_bytes = EventBytes(b"", b"")

    def encode(self, ev: TableEvent) -> EventBytes:
        """The event's bytes, from the cache when it is the event just encoded."""
        if ev is self.last:
            return self.last_bytes
        b = event_bytes(ev, self.tournament)
        self.last = ev
        self.last_bytes = b
        e = ev.event
        if e is not None and e[0] == _HAND_START:
            self.history = bytearray(b.history)
        elif ev.only_seat < 0 and ev.outcome is None:
            self.history += b.history
        return b


class GrpcSeat:
    """The ``Seat`` of a bot that plays over a ``Referee.Play`` stream; see the module doc."""

    def __init__(
        self, table: TableHooks, seat: int, token: str, info: MatchInfo, codec: EventCodec
    ) -> None:
        self.table = table
        self.seat = seat
        self.token = token
        self.info = info
        # Names go in Welcome only when the table set them: otherwise they are the bots' own
        # Hello names, which a bot could use to signal to the others.
        self._names = bool(info.names)
        self.codec = codec
        self.stream: Stream | None = None
        self.name = ""
        self.joined = False
        self.observers: list[SeatObserver] = []
        self.latencies: list[float] = []  # ms per answered request, for benchmarks
        self._open: _Open | None = None
        self._rid = 0
        self._own: bytearray | None = None  # this seat's history, once it differs
        self._defaulted: set[int] = set()
        self._told: set[int] = set()  # requests whose failure detail the seat had in-band
        self._welcomed = 0  # match_no of the last Welcome sent for this seat
        self._alarm: asyncio.TimerHandle | None = None  # the clock (see ``_ring``)
        self._alarm_at = 0.0
        self._loop = asyncio.get_running_loop()
        self.turn: Turn | None = None  # the bot runs only while asked (a managed bot)

    # ---------------------------------------------------------------- Seat protocol

    async def start(self, info: MatchInfo) -> None:
        """A match starts: fresh request ids and history; a Welcome if not yet sent."""
        self.info = info
        self._rid = 0
        self._own = None
        self._defaulted.clear()
        self._told.clear()
        st = self.stream
        if st is not None and self._welcomed != info.match_no:
            self._welcomed = info.match_no
            st.send(welcome_bytes(info, self.token, names=self._names))

    def notify(self, event: TableEvent) -> None:
        """Queues the event on the stream (unless quiet mode drops it) and into the history."""
        codec = self.codec
        eb = codec.encode(event) if event is not codec.last else codec.last_bytes
        if event.only_seat >= 0 or self._own is not None:
            self._own_history(event, eb)
        st = self.stream
        if st is None:
            return
        own = event.failure is not None and event.failure.seat == self.seat
        if own and event.failure is not None:
            self._tell(st, event.failure)
        if not st.results_only or event.result is not None or event.outcome is not None or own:
            st.send(eb.message)

    def _own_history(self, event: TableEvent, eb: EventBytes) -> None:
        """Keeps this seat's own history once a private event made it differ."""
        e = event.event
        if e is not None and e[0] == _HAND_START:
            self._own = None
        elif event.only_seat >= 0:
            if self._own is None:
                self._own = bytearray(self.codec.history)
            self._own += eb.history
        elif event.outcome is None:
            assert self._own is not None
            self._own += eb.history

    def _tell(self, stream: Stream, f: Failure) -> None:
        """Sends the seat the detail of its own failure, unless it already had it in-band."""
        if f.detail and f.request_id and f.request_id not in self._told:
            stream.send(error_bytes(pb.ERROR_CODE_UNSPECIFIED, f.request_id, f.detail))

    @property
    def history(self) -> bytes | bytearray:
        """The hand's history entries as this seat may see them."""
        return self.codec.history if self._own is None else self._own

    async def decide(self, decision: Decision) -> Answer:
        """Sends the request and waits for an accepted answer, the deadline or a failure.

        A managed bot runs only for this: its turn begins (it is thawed) before the request
        goes out and its clock starts, and ends (it is frozen) once the answer is in."""
        observers = self.observers
        for o in observers:
            o.asked(self, decision)
        turn = self.turn
        try:
            if turn is not None:
                await turn.begin()
            answer, now = await self._ask(decision)
        finally:
            if turn is not None:
                await turn.end()
        if answer.action is not None:
            self.latencies.append(answer.elapsed_ms)
        for o in observers:
            o.answered(self, decision, answer, (_clock() - now) * 1000.0)
        return answer

    async def _ask(self, decision: Decision) -> tuple[Answer, float]:
        """The request out, the answer in; returns it and when the clock started."""
        self._rid = rid = self._rid + 1
        body = request_bytes(decision, rid, self.history)
        loop = self._loop
        fut: asyncio.Future[Answer] = loop.create_future()
        now = _clock()
        due = now + (decision.deadline_ms + decision.bank_ms) / 1000.0
        op = _Open(rid, decision, fut, now, due)
        self._open = op
        alarm = self._alarm
        if alarm is None or self._alarm_at > due:
            if alarm is not None:
                alarm.cancel()
            self._alarm = loop.call_later(due - now, self._ring)
            self._alarm_at = due
        st = self.stream
        if st is not None:
            st.send(body)
        try:
            return await fut, now
        finally:
            self._open = None

    # ---------------------------------------------------------------- streams

    def attach(self, stream: Stream, resume: bool) -> None:
        """Seats a stream; raises ``Refused`` when the seat cannot take it.

        Taking a seat that already played in this match is a resume: the table may refuse
        it (its policy, its rate limit) and the referee records it, with the peer's address.
        """
        info = self.info
        resumed = self._welcomed == info.match_no
        why = self.table.refuse_join(self.seat, resume and resumed)
        if why is not None:
            raise why
        old = self.stream
        if old is not None:
            if not resume:
                raise Refused(
                    grpc.StatusCode.ALREADY_EXISTS,
                    f"seat {self.seat} of table {self.info.table_id} already has a live stream;"
                    " send resume = true to take it over",
                )
            self.stream = None
            old.close(grpc.StatusCode.ABORTED, "another stream resumed this seat")
        self._welcomed = info.match_no
        self.stream = stream
        self.name = stream.name or self.name
        stream.owner = self
        stream.send(welcome_bytes(info, self.token, resumed=resumed, names=self._names))
        self.joined = True
        self.table.seat_joined(self.seat)
        if resumed:
            self.table.seat_back(self.seat, old is not None, stream.peer)
        for o in self.observers:
            o.joined(self, resumed)
        op = self._open
        if op is not None:
            self._resend(stream, op)

    def _resend(self, stream: Stream, op: _Open) -> None:
        """Sends the open request again with the time left (after a resume)."""
        elapsed = int((_clock() - op.sent) * 1000.0)
        d = op.decision
        left = d._replace(
            deadline_ms=max(0, d.deadline_ms - elapsed),
            bank_ms=max(0, d.bank_ms - max(0, elapsed - d.deadline_ms)),
        )
        stream.send(request_bytes(left, op.rid, self.history))

    def on_lost(self, stream: Stream) -> None:
        """The stream ended: the table decides whether it is a disconnect or a crash."""
        if stream is self.stream:
            self.stream = None
            self.table.seat_lost(self.seat)

    def close(self, code: grpc.StatusCode = grpc.StatusCode.OK, message: str = "") -> None:
        """Ends the seat's stream after what is queued (the table is done with it)."""
        st = self.stream
        if st is not None:
            self.stream = None
            st.close(code, message)

    def release(self) -> None:
        """Ends a pending decision at once (the seat was given up or the match stopped)."""
        op = self._open
        if op is not None and not op.future.done():
            self._defaulted.add(op.rid)
            op.future.set_result(Answer(None, failure=FailureKind.DISCONNECT, request_id=op.rid))

    # ---------------------------------------------------------------- answers

    def on_message(self, stream: Stream, data: bytes) -> None:
        """Checks one message from the bot; accepts, rejects (in-band) or ends the stream."""
        if stream is not self.stream:
            return
        try:
            msg = pb.BotMessage.FromString(data)
        except DecodeError:
            self._reject(stream, pb.ERROR_CODE_MALFORMED, "the message is not a BotMessage")
            return
        which = msg.WhichOneof("payload")
        if which == "action":
            self._answer(stream, msg.action)
        elif which == "hello":
            stream.send(
                error_bytes(
                    pb.ERROR_CODE_UNEXPECTED_MESSAGE,
                    0,
                    "a second Hello on the same stream",
                    fatal=True,
                )
            )
            stream.close(grpc.StatusCode.INVALID_ARGUMENT, "a second Hello on the same stream")
        else:
            self._reject(stream, pb.ERROR_CODE_MALFORMED, "a BotMessage with no payload")

    def _answer(self, stream: Stream, a: pb.Action) -> None:
        op = self._open
        rid = a.request_id
        if op is None or rid != op.rid or op.future.done():
            if rid in self._defaulted:
                code, text = pb.ERROR_CODE_TOO_LATE, f"request {rid} already got its default"
            else:
                code, text = pb.ERROR_CODE_UNKNOWN_REQUEST, f"request {rid} is not open"
            left = op.left_ms(_clock()) if op is not None else 0
            stream.send(error_bytes(code, rid, text, ms_left=left))
            return
        if a.state_seq != op.decision.state_seq:
            self._reject(
                stream,
                pb.ERROR_CODE_STATE_MISMATCH,
                f"state_seq {a.state_seq} differs from the request's {op.decision.state_seq}",
            )
            return
        try:
            action, call = decode_answer(a, op.decision.obs)
        except AnswerError as e:
            self._reject(stream, e.code, str(e))
            return
        elapsed = (_clock() - op.sent) * 1000.0
        fault, detail = _fault(a)
        op.future.set_result(Answer(action, call, elapsed, fault, detail, rid))

    def _reject(self, stream: Stream, code: int, text: str) -> None:
        """An in-band error; counted against the open request, which may then default."""
        op = self._open
        if op is None or op.future.done():
            stream.send(error_bytes(code, 0, text))
            return
        op.rejections += 1
        limit = self.info.policy.max_rejections
        if limit and op.rejections >= limit:
            kind = FailureKind.ILLEGAL if code in _ILLEGAL_CODES else FailureKind.MALFORMED
            self._defaulted.add(op.rid)
            self._told.add(op.rid)
            stream.send(error_bytes(code, op.rid, text))
            elapsed = (_clock() - op.sent) * 1000.0
            detail = f"{op.rejections} rejected answers; the last: {text}"
            op.future.set_result(Answer(None, False, elapsed, kind, detail, op.rid))
            return
        left = op.left_ms(_clock())
        stream.send(error_bytes(code, op.rid, text, ms_left=left))

    def _ring(self) -> None:
        """The seat's clock: times the open request out if it is due, else waits for it.

        The alarm is not cancelled when an answer comes in time: it stays set for an
        earlier deadline and, when it rings, moves on to the open request's deadline (or
        stops when none is open). So a decision usually costs no timer of its own.
        """
        self._alarm = None
        op = self._open
        if op is None or op.future.done():
            return
        early = op.due - _clock()
        if early <= 1e-6:
            self._expire(op)
        else:  # a later deadline, or a timer that rang early (uvloop's count whole ms)
            self._alarm = self._loop.call_later(early, self._ring)
            self._alarm_at = op.due

    def _expire(self, op: _Open) -> None:
        if op.future.done():
            return
        self._defaulted.add(op.rid)
        self._told.add(op.rid)  # the seat knows it did not answer
        total = op.decision.deadline_ms + op.decision.bank_ms
        elapsed = (_clock() - op.sent) * 1000.0
        op.future.set_result(
            Answer(
                None, False, elapsed, FailureKind.TIMEOUT, f"no answer within {total} ms", op.rid
            )
        )


_FAULTS = {
    pb.FAILURE_KIND_LATE: FailureKind.LATE,
    pb.FAILURE_KIND_EXCEPTION: FailureKind.EXCEPTION,
    pb.FAILURE_KIND_BAD_ANSWER: FailureKind.BAD_ANSWER,
}
FAULT_DETAIL_LIMIT = 200
"""Characters of ``BotFault.detail`` the referee keeps."""


def _fault(a: pb.Action) -> tuple[FailureKind | None, str]:
    """The bot fault the client reported with its answer (``Action.fault``), if any."""
    if not a.HasField("fault"):
        return None, ""
    kind = _FAULTS.get(a.fault.kind)
    return (kind, a.fault.detail[:FAULT_DETAIL_LIMIT]) if kind is not None else (None, "")


def broadcast(seats: Sequence[GrpcSeat], codec: EventCodec, event: TableEvent) -> None:
    """``notify`` of a public event for the four seats of a table, encoding it once.

    The referee's hot path (a few public events per decision): the same as calling each
    seat's ``notify``, in one call.
    """
    eb = codec.encode(event)
    result = event.result is not None or event.outcome is not None  # a hand's end, the match's
    failure = event.failure
    for seat in seats:
        if seat._own is not None:
            seat._own_history(event, eb)
        st = seat.stream
        if st is None:
            continue
        own = failure is not None and failure.seat == seat.seat
        if failure is not None and own:
            seat._tell(st, failure)
        if result or not st.results_only or own:
            st.send(eb.message)
