"""The health service, and a graceful shutdown that aborts a running match."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc  # type: ignore[import-untyped]
from wire_client import Client, hello

from arena.referee import Termination, TimeControl
from arena.referee import replay as replays
from arena.server import ArenaServer, TableSpec
from arena.server.relay import SeatRelay
from arena.server.sandbox import SOCKET_NAME

pytestmark = pytest.mark.timeout(60)


def test_health_and_graceful_shutdown(tmp_path: Path) -> None:
    async def main() -> None:
        server = ArenaServer(runs_dir=tmp_path)
        await server.start()
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            for name in ("", "tichu.arena.v1.Referee"):
                reply = await stub.Check(health_pb2.HealthCheckRequest(service=name))
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
            table = server.create_table(TableSpec(time=TimeControl(decision_ms=60_000)))
            clients = [Client(server.address) for _ in range(4)]
            for s, c in enumerate(clients):
                await c.send(hello(table.tokens[s]))
            await clients[0].next("decision")  # the match runs; nobody answers
            # A grace long enough for the checks below on a loaded machine; it ends with it.
            stopping = asyncio.ensure_future(server.stop(grace_s=5.0))
            await asyncio.sleep(0)  # stop() has entered its graceful shutdown
            reply = await stub.Check(health_pb2.HealthCheckRequest(service=""))
            assert reply.status == health_pb2.HealthCheckResponse.NOT_SERVING
            code, details = await status_of_a_new_call(server.address)
            assert (code, details) == (grpc.StatusCode.UNAVAILABLE, "the referee is shutting down")
            await stopping
            records = await table.wait()
        assert records[0].termination is Termination.ABORTED
        replay = replays.load(tmp_path / table.id / "match-1.json")
        assert replay.meta["termination"] == "aborted"
        for c in clients:
            assert await c.status() == grpc.StatusCode.UNAVAILABLE
            await c.close()
        code, _ = await status_of_a_new_call(server.address)
        assert code == grpc.StatusCode.UNAVAILABLE

    asyncio.run(asyncio.wait_for(main(), 45))


async def status_of_a_new_call(address: str) -> tuple[grpc.StatusCode, str]:
    c = Client(address)
    try:
        await c.send(hello("x"))
        await c.recv()
    except grpc.aio.AioRpcError as e:
        return e.code(), e.details() or ""
    finally:
        await c.close()
    return grpc.StatusCode.OK, ""


def test_a_temporary_folder_too_deep_for_a_socket_falls_back_to_tmp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bots' Unix socket must fit ``sun_path``; a deep TMPDIR (a CI job's) is not refused."""
    deep = tmp_path / ("d" * 120)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))

    async def main() -> None:
        server = ArenaServer(runs_dir=tmp_path)
        await server.start()
        assert server.socket is not None
        assert server.socket.parent.parent == Path("/tmp")
        assert len(str(server.socket)) <= 107 and server.socket.is_socket()
        folder = server.socket.parent
        await server.stop(0.1)
        assert not folder.exists()

    asyncio.run(main())


def test_a_temporary_folder_too_deep_for_the_relays_sockets_falls_back_to_tmp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deep enough for the referee's socket, not for a bot's relay socket in its folder
    (``seat-XXXXXXXX/seat.sock``): a README command in a deep TMPDIR ended in a traceback,
    "AF_UNIX path too long", when it started its first bot."""
    folder_name = len("/tichu-arena-12345678/")
    room = 107 - folder_name - len(SOCKET_NAME)  # the deepest TMPDIR the socket fits in
    base = Path(tempfile.mkdtemp(prefix="d", dir="/tmp"))  # short, whatever pytest's numbering
    deep = base / ("d" * (room - len(str(base)) - 1))
    deep.mkdir()
    assert len(str(deep)) == room
    monkeypatch.setattr(tempfile, "tempdir", str(deep))

    async def main() -> None:
        server = ArenaServer(runs_dir=tmp_path)
        await server.start()
        assert server.socket is not None
        relay = SeatRelay(server.socket)
        path = await relay.start()
        assert path.is_socket()
        await relay.close()
        await server.stop(0.1)

    try:
        asyncio.run(main())
    finally:
        shutil.rmtree(base, ignore_errors=True)
