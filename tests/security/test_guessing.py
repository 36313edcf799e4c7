"""Guessing seat tokens and bot keys: refusals slow down, resumes name their connection."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest

from arena.server import ArenaServer, TableSpec
from arena.server.service import GUESS_DELAY_MAX_S, GUESS_DELAY_S, GUESS_FREE, Guesses
from tests.server.wire_client import Client, hello

pytestmark = pytest.mark.timeout(300)


def test_a_peer_s_failed_credentials_are_slowed_then_forgotten() -> None:
    now = [0.0]
    guesses = Guesses(clock=lambda: now[0])
    delays = [guesses.delay("ipv4:127.0.0.1:4000" + str(k)) for k in range(10)]
    free = [0.0] * GUESS_FREE
    slowed = [min(GUESS_DELAY_MAX_S, GUESS_DELAY_S * 2**k) for k in range(10 - GUESS_FREE)]
    assert delays == free + slowed  # one host, whatever its ports
    assert guesses.delay("unix:") == 0.0  # another peer counts apart
    now[0] = 61.0  # the window has passed
    assert guesses.delay("ipv4:127.0.0.1:5000") == 0.0
    guesses.held = 10**6  # past the cap, refusals are no longer held
    assert [guesses.delay("ipv6:[::1]:1") for _ in range(6)] == [0.0] * 6


def test_guessed_tokens_are_refused_ever_more_slowly_over_grpc() -> None:
    async def main() -> float:
        server = ArenaServer()
        await server.start()
        table = server.create_table(TableSpec(startup_timeout_s=60))
        try:
            start = time.monotonic()
            for k in range(GUESS_FREE + 3):
                c = Client(server.address)
                await c.send(hello(f"guess-{k}"))
                assert await c.status() == grpc.StatusCode.UNAUTHENTICATED
                await c.close()
            return time.monotonic() - start
        finally:
            table.abort("done")
            await server.stop(0.5)

    took = asyncio.run(main())
    assert took >= GUESS_DELAY_S * (1 + 2 + 4)  # three slowed refusals, at least this long
