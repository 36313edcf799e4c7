"""A bot process's own way to the referee: a Unix socket that relays a few connections.

Every sandboxed bot once reached the referee through the one Unix socket all bots share, so a
bot whose children opened connections by the thousand took every descriptor the referee had
and no other bot could connect. Each bot process now gets a socket of its own (``SeatRelay``)
in a private folder; the relay holds at most ``MAX_CONNECTIONS`` of that bot's connections
at once, each piped to the referee's socket, and closes any further one as soon as it is
accepted. A flood costs the flooder its own connections, never another bot's.

The relay runs on the runner's event loop and copies bytes both ways with flow control (a
side whose peer does not read is paused, so a bot cannot make the runner buffer without
bound). The SDK and the example bots open one channel; a few more leave room for a bot
that reconnects before its old connection is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import cast

__all__ = ["MAX_CONNECTIONS", "RELAY_SOCKET", "SeatRelay"]

MAX_CONNECTIONS = 4
"""Connections one bot process may hold to the referee at once."""
RELAY_SOCKET = Path("seat-12345678") / "seat.sock"
"""The shape of a relay's socket path under the referee's socket folder (``mkdtemp``'s
names have 8 characters after the prefix): the longest path the referee's folder must hold."""
_HIGH_WATER = 256 * 1024
"""Bytes a side may have waiting to be written before its peer is paused."""


class _Pipe(asyncio.Protocol):
    """One side of a relayed connection: what it reads goes to its peer's transport."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.peer: _Pipe | None = None
        self.waiting: list[bytes] = []  # read before the two sides were joined
        self.closed = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self.transport.set_write_buffer_limits(high=_HIGH_WATER)

    def data_received(self, data: bytes) -> None:
        peer = self.peer
        if peer is None or peer.transport is None:
            self.waiting.append(data)
        else:
            peer.transport.write(data)

    def eof_received(self) -> bool:
        peer = self.peer
        if peer is not None and peer.transport is not None and peer.transport.can_write_eof():
            peer.transport.write_eof()
            return True  # half-closed: the other way may still carry data
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)
        peer = self.peer
        if peer is not None and peer.transport is not None:
            peer.transport.close()

    # Flow control: this side's transport is full, so its peer stops reading.
    def pause_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.resume_reading()

    def join(self, peer: _Pipe) -> None:
        """Pairs this side with ``peer``; each gets what the other read before."""
        self.peer, peer.peer = peer, self
        for src, dst in ((self, peer), (peer, self)):
            for data in src.waiting:
                cast(asyncio.Transport, dst.transport).write(data)
            src.waiting.clear()


class SeatRelay:
    """A bot process's socket (``path``), relayed to the referee's socket ``target``."""

    def __init__(self, target: Path, limit: int = MAX_CONNECTIONS) -> None:
        self.target = target
        self.limit = limit
        self.path: Path | None = None
        self.refused = 0  # connections closed because the bot held ``limit`` already
        self._server: asyncio.AbstractServer | None = None
        self._open: set[_Pipe] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def held(self) -> int:
        """The bot's connections relayed now."""
        return len(self._open)

    async def start(self) -> Path:
        """Listens on a new socket in a private folder in the referee's; returns it."""
        folder = Path(tempfile.mkdtemp(prefix="seat-", dir=self.target.parent))
        os.chmod(folder, 0o711)  # traversable, not listable: the name is the secret
        path = folder / "seat.sock"
        loop = asyncio.get_running_loop()
        self._server = await loop.create_unix_server(self._accepted, str(path), backlog=16)
        os.chmod(path, 0o666)  # the bot runs under a uid of its own
        self.path = path
        return path

    def _accepted(self) -> asyncio.Protocol:
        if len(self._open) >= self.limit:
            self.refused += 1
            return _Refused()
        inbound = _Pipe()
        self._open.add(inbound)
        task = asyncio.ensure_future(self._connect(inbound))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return inbound

    async def _connect(self, inbound: _Pipe) -> None:
        """Opens the referee side of ``inbound`` and pipes the two until either closes."""
        loop = asyncio.get_running_loop()
        try:
            transport, outbound = await loop.create_unix_connection(_Pipe, str(self.target))
        except OSError:
            if inbound.transport is not None:
                inbound.transport.close()
            self._open.discard(inbound)
            return
        if inbound.closed.done():  # the bot hung up while the referee side was opened
            transport.close()
            self._open.discard(inbound)
            return
        inbound.join(outbound)
        if outbound.closed.done():  # the referee hung up before the two were joined
            transport.close()
            cast(asyncio.Transport, inbound.transport).close()
        try:
            await inbound.closed
        finally:
            self._open.discard(inbound)

    async def close(self) -> None:
        """Stops listening, closes every relayed connection, removes the socket's folder."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for pipe in list(self._open):
            if pipe.transport is not None:
                pipe.transport.close()
        for task in list(self._tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.path is not None:
            shutil.rmtree(self.path.parent, ignore_errors=True)
            self.path = None


class _Refused(asyncio.Protocol):
    """A connection past the bot's limit: closed as soon as it is accepted."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()
