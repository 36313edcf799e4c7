"""What the server sends agrees with the reference encoders, the SDK's side of the contract."""

from __future__ import annotations

import asyncio
import random

import pytest
from wire_client import Client, hello

from arena.referee import Decision, TableEvent
from arena.referee import replay as replays
from arena.rules import (
    Event,
    EventKind,
    Match,
    Options,
    Phase,
    observe,
)
from arena.server import ArenaServer, TableSpec
from arena.server.codec import event_bytes, request_bytes
from arena.wire import pb
from arena.wire.request import decode_request, encode_request
from tests.wire.matches import NumberedEvents

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def play_one_table(options: Options, seed: int) -> tuple[list[Client], replays.Replay]:
    async def main() -> tuple[list[Client], replays.Replay]:
        server = ArenaServer()
        await server.start()
        table = server.create_table(TableSpec(options=options, seed=seed))
        clients = [Client(server.address) for _ in range(4)]
        for s, c in enumerate(clients):
            await c.send(hello(table.tokens[s]))
        await asyncio.gather(*(c.play_out(random.Random(s)) for s, c in enumerate(clients)))
        records = await table.wait()
        for c in clients:
            await c.close()
        await server.stop(0.5)
        return clients, records[0].replay

    return asyncio.run(main())


@pytest.mark.parametrize(
    ("options", "seed"),
    [(Options(hands=8), 3), (Options(hands=3, grand_tichu=False), 4), (Options.turnier(), 5)],
)
def test_streamed_events_are_the_rules_events(options: Options, seed: int) -> None:
    """Every seat gets the match's rules events, one wire event each, numbered 1, 2, ..."""
    clients, replay = play_one_table(options, seed)
    verified = replays.verify(replay)
    m = Match(replay.options, replay.seed, replay.deals)
    feed = NumberedEvents(m)
    expected = [e.SerializeToString() for e in feed.advance()]
    for _, action in verified.match.actions:
        m.apply(action)
        expected += [e.SerializeToString() for e in feed.advance()]
    for c in clients:
        events = [msg.event for msg in c.received if msg.HasField("event")]
        assert events[-1].WhichOneof("kind") == "match_end"
        got = [e.SerializeToString() for e in events[:-1]]
        assert got == expected


def test_every_request_decodes_to_the_seats_view() -> None:
    options = Options(hands=4)
    clients, _ = play_one_table(options, 9)
    for s, c in enumerate(clients):
        kinds = set()
        for msg in c.received:
            if not msg.HasField("decision"):
                continue
            obs = decode_request(msg.decision, options=options)
            assert obs.seat == s and obs.to_act == s
            assert obs.phase is not Phase.EXCHANGE or obs.legal == ()
            assert len(obs.legal) != 1 or obs.may_call_tichu  # forced answers are not asked
            kinds.add(msg.decision.kind)
        assert {
            pb.DECISION_KIND_GRAND_TICHU,
            pb.DECISION_KIND_EXCHANGE,
            pb.DECISION_KIND_PLAY,
        } <= kinds


def test_a_request_with_spliced_history_parses_as_one_message() -> None:
    m = Match(Options(), seed=1)
    events = [
        TableEvent(1, 1, Event(EventKind.HAND_START, -1)),
        TableEvent(2, 1, Event(EventKind.PASS, 2)),
        TableEvent(3, 1, Event(EventKind.PLAY, 3, m.combos(0)[0], 1)),
        TableEvent(4, 1, Event(EventKind.TRICK_WON, 3, None, 0, 10, 1 << 14 | 1 << 34)),
    ]
    parts = [event_bytes(e) for e in events]
    history = b"".join(p.history for p in parts)
    obs = observe(m, 0)
    req = encode_request(obs, request_id=7, state_seq=4, deadline_ms=900, bank_ms=5, history=())
    msg = pb.RefereeMessage.FromString(request_bytes(Decision(obs, 4, 900, 5), 7, history))
    expected = pb.DecisionRequest()
    expected.CopyFrom(req)
    for p in parts:
        expected.view.history.append(pb.RefereeMessage.FromString(p.message).event)
    assert msg.decision == expected
    assert len(msg.decision.view.history) == 4
    assert msg.decision.view.history[1].passed.seat == 2
