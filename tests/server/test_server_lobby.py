"""Open tables: bots join with a registered key, wait, and are seated when four are in."""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest
from wire_client import Client, hello

from arena.referee import Termination
from arena.rules import Options
from arena.server import ArenaServer, Seating, TableSpec
from arena.wire import pb

pytestmark = pytest.mark.timeout(60)

KEYS = {f"key-of-{name}-0123": name for name in ("ann", "bob", "cyd", "dee", "eve")}


async def join(server: ArenaServer, name: str) -> tuple[Client, list[int]]:
    """Joins with ``name``'s key; returns the client and the Waiting counts seen so far."""
    c = Client(server.address)
    await c.send(hello(key=f"key-of-{name}-0123"))
    first = await c.recv()
    assert first is not None and first.HasField("waiting")
    return c, [first.waiting.bots_waiting]


async def welcome(c: Client, seen: list[int]) -> pb.Welcome:
    while True:
        msg = await c.recv()
        assert msg is not None
        if msg.HasField("waiting"):
            seen.append(msg.waiting.bots_waiting)
        elif msg.HasField("welcome"):
            return msg.welcome


def test_tichujoin_seats_the_first_two_together_and_plays() -> None:
    async def main() -> None:
        spec = TableSpec(options=Options(hands=1))
        server = ArenaServer(keys=KEYS, open_spec=spec, seating=Seating.TICHUJOIN)
        await server.start()
        code = await Client(server.address).status_after(hello(key="wrong-key-123"))
        assert code == grpc.StatusCode.UNAUTHENTICATED
        joined = []
        for name in ("ann", "bob", "eve"):
            joined.append((name, *await join(server, name)))
        # eve gives up waiting; dee and cyd take the last two places.
        eve = joined.pop()
        await eve[1].close()
        for name in ("dee", "cyd"):
            joined.append((name, *await join(server, name)))
        welcomes = {name: await welcome(c, seen) for name, c, seen in joined}
        seats = {name: w.seat for name, w in welcomes.items()}
        assert seats == {"ann": 0, "bob": 2, "dee": 1, "cyd": 3}
        names = list(welcomes["ann"].player_names)
        assert names == ["ann", "dee", "bob", "cyd"]
        assert all(
            w.table_id == welcomes["ann"].table_id and w.seat_token for w in welcomes.values()
        )
        counts = {name: seen for name, _, seen in joined}
        assert counts["ann"][:3] == [1, 2, 3]
        assert 2 in counts["ann"][3:]  # eve left the queue
        clients = [c for _, c, _ in joined]
        codes = await asyncio.gather(*(c.play_out(random.Random(i)) for i, c in enumerate(clients)))
        assert codes == [grpc.StatusCode.OK] * 4
        table = server.lobby.tables[0] if server.lobby is not None else None
        assert table is not None
        records = await table.wait()
        assert records[0].termination is Termination.NORMAL
        assert records[0].names == ("ann", "dee", "bob", "cyd")
        for c in clients:
            await c.close()
        await server.stop(0.5)

    asyncio.run(main())


def test_random_seating_draws_the_seats() -> None:
    async def main() -> set[tuple[int, ...]]:
        spec = TableSpec(options=Options(hands=1))
        server = ArenaServer(keys=KEYS, open_spec=spec, seating=Seating.RANDOM)
        await server.start()
        assert server.lobby is not None
        server.lobby.rng = random.Random(5)
        orders = set()
        for _ in range(3):
            joined = [(name, *await join(server, name)) for name in ("ann", "bob", "cyd", "dee")]
            welcomes = [await welcome(c, seen) for _, c, seen in joined]
            orders.add(tuple(w.seat for w in welcomes))
            for _, c, _ in joined:
                await c.close()
        await server.stop(0.5)
        return orders

    orders = asyncio.run(main())
    assert all(sorted(o) == [0, 1, 2, 3] for o in orders)
    assert len(orders) > 1


def test_a_key_fills_one_seat_of_a_table_unless_the_keys_file_allows_more() -> None:
    async def main() -> None:
        spec = TableSpec(options=Options(hands=1))
        server = ArenaServer(
            keys=KEYS, open_spec=spec, key_seats={"key-of-bob-0123": 2}, seating=Seating.TICHUJOIN
        )
        await server.start()
        ann, _ = await join(server, "ann")
        twice = Client(server.address)  # the same key again: both partners' seats
        await twice.send(hello(key="key-of-ann-0123"))
        code = await twice.status()
        assert code == grpc.StatusCode.ALREADY_EXISTS
        assert server.service.refused[-1][1:] == (
            grpc.StatusCode.ALREADY_EXISTS,
            "bot 'ann' already waits for a table: its key fills 1 seat of a table",
        )
        assert server.lobby is not None and len(server.lobby.queue) == 1
        bob1, _ = await join(server, "bob")
        bob2, _ = await join(server, "bob")  # allowed two seats by the keys file
        third = Client(server.address)
        await third.send(hello(key="key-of-bob-0123"))
        assert await third.status() == grpc.StatusCode.ALREADY_EXISTS
        cyd, _ = await join(server, "cyd")
        clients = [ann, bob1, bob2, cyd]
        codes = await asyncio.gather(*(c.play_out(random.Random(i)) for i, c in enumerate(clients)))
        assert codes == [grpc.StatusCode.OK] * 4
        (table,) = server.lobby.tables
        assert (await table.wait())[0].names == ("ann", "bob", "bob", "cyd")
        for c in [*clients, twice, third]:
            await c.close()
        await server.stop(0.5)

    asyncio.run(main())
