"""The ``tichu.arena.v1.Referee`` servicer: one ``Play`` call per seat.

``Play`` reads the ``Hello``, checks the protocol version and the credential, attaches the
stream to its seat (a seat token) or queues it in the lobby (a bot key), then drains the
stream's outbox until the table closes it; a second task reads the bot's answers. Refused
``Hello``s end the call with the status of docs/protocol.md section 10. The method is
registered with no (de)serializers: the service reads and writes bytes, so that an event is
serialized once for four streams and a message that does not parse is an in-band error
rather than a broken call.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import deque
from collections.abc import Callable

import grpc
from google.protobuf.message import DecodeError

from arena.server.lobby import Lobby
from arena.server.seat import Context, Refused, Stream
from arena.server.table import TableManager
from arena.wire import PROTOCOL_VERSION, pb

SERVICE = "tichu.arena.v1.Referee"

GUESS_WINDOW_S = 60.0
"""How long a failed credential counts against its peer."""
GUESS_FREE = 3
"""Failed credentials a peer may make within the window before its refusals are slowed."""
GUESS_DELAY_S = 0.25
"""The delay of the first slowed refusal; each further failure doubles it, up to the max."""
GUESS_DELAY_MAX_S = 5.0
GUESS_HELD_MAX = 1024
"""Slowed refusals held at once; past it a refusal is answered at once (no call piles up)."""
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)(?:[-+][0-9A-Za-z.+-]*)?")
_MAJOR = int(PROTOCOL_VERSION.split(".")[0])


class Guesses:
    """Failed credentials (unknown seat tokens and bot keys) by peer, to slow guessing.

    A peer's first ``GUESS_FREE`` failures within ``GUESS_WINDOW_S`` are refused at once;
    each one after waits ``GUESS_DELAY_S``, doubling, up to ``GUESS_DELAY_MAX_S``, before
    its refusal. Honest streams never fail a credential, so they are never slowed; a peer
    is an address, so all sandboxed bots (one Unix socket) count as one guesser.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.held = 0
        self._failed: dict[str, deque[float]] = {}

    def delay(self, peer: str) -> float:
        """Counts a failure of ``peer`` (by host: a client's port changes with every call);
        returns how long to wait before refusing it."""
        now = self.clock()
        host = peer.rsplit(":", 1)[0] if peer.startswith(("ipv4:", "ipv6:")) else peer
        times = self._failed.setdefault(host, deque())
        while times and times[0] < now - GUESS_WINDOW_S:
            times.popleft()
        times.append(now)
        over = len(times) - GUESS_FREE
        if over <= 0 or self.held >= GUESS_HELD_MAX:
            return 0.0
        return min(GUESS_DELAY_MAX_S, GUESS_DELAY_S * 2.0 ** min(over - 1, 16))


def parse_hello(data: bytes) -> pb.Hello:
    """The ``Hello`` of a call's first message; raises ``Refused`` with the status to send."""
    try:
        msg = pb.BotMessage.FromString(data)
    except DecodeError:
        raise Refused(
            grpc.StatusCode.INVALID_ARGUMENT, "the first message is not a BotMessage"
        ) from None
    if msg.WhichOneof("payload") != "hello":
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be a Hello")
    hello = msg.hello
    version = hello.protocol_version
    m = _VERSION.fullmatch(version)
    if m is None:
        raise Refused(
            grpc.StatusCode.INVALID_ARGUMENT, f"cannot parse protocol_version {version!r}"
        )
    if int(m[1]) != _MAJOR:
        raise Refused(
            grpc.StatusCode.FAILED_PRECONDITION,
            f"protocol_version {version} is incompatible with the referee's {PROTOCOL_VERSION}"
            " (major versions differ)",
        )
    credential = hello.WhichOneof("credential")
    if credential is None:
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "a Hello needs a seat_token or a bot_key")
    if hello.resume and credential != "seat_token":
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "resume = true needs a seat_token")
    return hello


class RefereeService:
    """The servicer; see the module docstring."""

    def __init__(
        self, manager: TableManager, lobby: Lobby | None = None, hello_timeout_s: float = 10.0
    ) -> None:
        self.manager = manager
        self.lobby = lobby
        self.hello_timeout_s = hello_timeout_s
        self.refused: list[tuple[str, grpc.StatusCode, str]] = []  # (peer, code, message)
        self.guesses = Guesses()

    def handler(self) -> grpc.GenericRpcHandler:
        """The generic handler to add to a ``grpc.aio`` server (bytes in, bytes out)."""
        play: grpc.RpcMethodHandler[bytes, bytes] = grpc.stream_stream_rpc_method_handler(self.Play)
        return grpc.method_handlers_generic_handler(SERVICE, {"Play": play})

    async def Play(self, request_iterator: object, context: Context) -> None:
        """Plays one seat (or waits in the lobby, then plays) until the table closes it."""
        try:
            data = await asyncio.wait_for(context.read(), self.hello_timeout_s)
        except TimeoutError:
            await self._refuse(
                context,
                Refused(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"no Hello within {self.hello_timeout_s:g} s",
                ),
            )
            return
        if data is grpc.aio.EOF:
            return
        try:
            hello = parse_hello(data)
            stream = Stream(context, hello)
            self._seat(stream, hello)
        except Refused as r:
            await self._refuse(context, r)
            return
        reader = asyncio.ensure_future(stream.read())
        try:
            await stream.pump()
        except (grpc.RpcError, grpc.aio.UsageError, ConnectionError):
            pass  # the call broke while writing: the reader reports it
        finally:
            reader.cancel()  # its cleanup tells the stream's owner the stream is gone
        code, message = stream.status or (grpc.StatusCode.OK, "")
        if code is not grpc.StatusCode.OK and code is not grpc.StatusCode.CANCELLED:
            await context.abort(code, message)

    def _seat(self, stream: Stream, hello: pb.Hello) -> None:
        if not self.manager.accepting:
            raise Refused(grpc.StatusCode.UNAVAILABLE, "the referee is shutting down")
        if hello.WhichOneof("credential") == "seat_token":
            table, seat = self.manager.find(hello.seat_token)
            table.seats[seat].attach(stream, hello.resume)
            return
        if self.lobby is None:
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, "this referee has no open tables")
        self.lobby.join(stream, hello.bot_key)

    async def _refuse(self, context: Context, refused: Refused) -> None:
        peer = context.peer()
        self.refused.append((peer, refused.code, refused.message))
        if refused.code is grpc.StatusCode.UNAUTHENTICATED:  # a wrong token or key: slowed
            wait = self.guesses.delay(peer)
            if wait > 0:
                self.guesses.held += 1
                try:
                    await asyncio.sleep(wait)
                finally:
                    self.guesses.held -= 1
        await context.abort(refused.code, refused.message)
