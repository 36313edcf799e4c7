"""``ArenaServer``: the grpc.aio server with its tables, lobby, health service and shutdown.

>>> async def main() -> None:                                   # doctest: +SKIP
...     server = ArenaServer(runs_dir=Path("runs"))
...     port = await server.start()                              # 127.0.0.1, ephemeral port
...     table = server.create_table(TableSpec(seed=7))           # four seat tokens
...     ...                                                      # start bots with the tokens
...     records = await table.wait()
...     await server.stop()

Besides its TCP port the server listens on a Unix socket in a private folder (``socket``):
the bots the arena starts reach it there from inside their sandboxes, which have no network
(``arena.server.sandbox``). ``stop(grace_s)`` is the graceful shutdown: the health service
reports NOT_SERVING, no new table or join is accepted, running matches get ``grace_s`` to
finish and are then aborted (their replays are written, marked ``aborted``), and the streams
are closed.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import grpc

from arena.server.lobby import Lobby, Seating
from arena.server.relay import RELAY_SOCKET
from arena.server.sandbox import SOCKET_NAME
from arena.server.service import SERVICE, RefereeService
from arena.server.table import Table, TableManager, TableSpec
from arena.server.turns import TurnLocks

try:  # the standard health service, when grpcio-health-checking is installed
    from grpc_health.v1 import (  # type: ignore[import-untyped,unused-ignore]
        health as _health,
    )
    from grpc_health.v1 import (  # type: ignore[import-untyped,unused-ignore]
        health_pb2 as _health_pb2,
    )
    from grpc_health.v1 import (  # type: ignore[import-untyped,unused-ignore]
        health_pb2_grpc as _health_pb2_grpc,
    )
except ImportError:  # pragma: no cover - optional dependency
    _health = None


SERVER_OPTIONS: list[tuple[str, Any]] = [
    # Accept bot pings no more often than every 10 s.
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_recv_ping_interval_without_data_ms", 10_000),
    ("grpc.http2.max_ping_strikes", 2),
    # An ephemeral port must be ours alone.
    ("grpc.so_reuseport", 0),
]
PING_OPTIONS: list[tuple[str, Any]] = [
    # Notice half-open connections of bots elsewhere: a ping every 20 s, 10 s to answer.
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
]
"""Only for a server of remote bots (``pings``): a frozen bot cannot answer a ping."""


# The longest path a Unix socket may have (``sun_path`` holds 108 bytes with its final NUL).
_SOCKET_PATH_MAX = 107


def _socket_folder() -> Path:
    """A new private folder for the referee's socket: in the temporary folder, or in ``/tmp``
    when that one's path is too long for a socket (as a test's or a CI job's may be)."""
    for base in (None, "/tmp"):
        folder = Path(tempfile.mkdtemp(prefix="tichu-arena-", dir=base))
        longest = max(len(os.fsencode(folder / name)) for name in (SOCKET_NAME, RELAY_SOCKET))
        if longest <= _SOCKET_PATH_MAX:  # the bots' relays listen deeper in it
            return folder
        folder.rmdir()
    raise OSError(
        f"the temporary folder's path is too long for a Unix socket ({tempfile.gettempdir()}):"
        " set TMPDIR to a shorter one"
    )


class ArenaServer:
    """A referee server: many tables at once, optional open tables, health, shutdown."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        runs_dir: Path | None = None,
        keys: Mapping[str, str] | None = None,
        open_spec: TableSpec | None = None,
        seating: Seating = Seating.TICHUJOIN,
        key_seats: Mapping[str, int] | None = None,
        pings: bool = False,
        machine_turns: Path | None = None,
    ) -> None:
        self.host = host
        # Bots on other machines are pinged (half-open connections); the runner's own are
        # watched as processes instead, and frozen between their turns (``freezes``).
        self.pings = pings
        # Turns kept apart in this referee; with ``machine_turns`` (a folder: a cluster task's
        # referee, beside others on its machine) on the whole machine.
        self.turns = TurnLocks(machine_turns)
        self.port = port
        self.manager = TableManager(runs_dir)
        self.lobby = (
            Lobby(self.manager, keys, open_spec, seating, seats=key_seats)
            if keys is not None
            else None
        )
        self.service = RefereeService(self.manager, self.lobby)
        self.health: Any = None
        self.socket: Path | None = None
        self._server: grpc.aio.Server | None = None

    @property
    def address(self) -> str:
        """``host:port`` for bots (valid after ``start``)."""
        return f"{self.host}:{self.port}"

    async def start(self) -> int:
        """Binds and starts the server; returns the port (useful with port 0)."""
        options = SERVER_OPTIONS + (PING_OPTIONS if self.pings else [])
        server = grpc.aio.server(options=options)
        server.add_generic_rpc_handlers((self.service.handler(),))
        if _health is not None:
            self.health = _health.aio.HealthServicer()
            _health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
            for name in ("", SERVICE):
                await self.health.set(name, _health_pb2.HealthCheckResponse.SERVING)
        self.port = server.add_insecure_port(f"{self.host}:{self.port}")
        if self.port == 0:
            raise OSError(f"cannot bind {self.host}:{self.port}")
        if os.name == "posix":
            # Traversable, not listable: only who knows the random name finds the socket.
            folder = _socket_folder()
            os.chmod(folder, 0o711)
            if not server.add_insecure_port(f"unix:{folder / SOCKET_NAME}"):
                raise OSError(f"cannot bind the Unix socket in {folder}")
            self.socket = folder / SOCKET_NAME
        await server.start()
        if self.socket is not None:
            os.chmod(self.socket, 0o666)  # sandboxed bots run under uids of their own
        self._server = server
        return self.port

    def create_table(self, spec: TableSpec | None = None) -> Table:
        """Creates and starts a table; give ``table.tokens[seat]`` to each seat's bot."""
        return self.manager.create(spec)

    async def stop(self, grace_s: float = 10.0) -> None:
        """Graceful shutdown; see the module docstring."""
        if self.health is not None:
            await self.health.enter_graceful_shutdown()
        await self.manager.shutdown(grace_s)
        if self._server is not None:
            await self._server.stop(1.0)
            self._server = None
        if self.socket is not None:
            shutil.rmtree(self.socket.parent, ignore_errors=True)
            self.socket = None
        self.turns.close()

    @property
    def freezes(self) -> bool:
        """Whether its managed bots may be frozen between turns (it sends no pings)."""
        return not self.pings

    async def wait_for_termination(self) -> None:
        """Waits until the server stops."""
        if self._server is not None:
            await self._server.wait_for_termination()


async def serve_until(stop: asyncio.Event, server: ArenaServer, grace_s: float) -> None:
    """Runs ``server`` until ``stop`` is set (a signal), then shuts it down gracefully."""
    await stop.wait()
    await server.stop(grace_s)
