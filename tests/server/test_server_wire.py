"""What the server sends agrees with ``arena.wire.convert``, the SDK's side of the contract."""

from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wire_client import Client, hello

from arena.referee import Decision, EventType, TableEvent
from arena.referee import replay as replays
from arena.rules import Match, Options, Phase, Play, combinations, observe, parse_cards
from arena.server import ArenaServer, TableSpec
from arena.server.codec import encode_table_event, event_bytes, request_bytes
from arena.wire import pb
from arena.wire.convert import decode_request, encode_request
from tests.wire.event_feed import EventFeed

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]


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
def test_streamed_events_are_the_sdk_event_feed(options: Options, seed: int) -> None:
    clients, replay = play_one_table(options, seed)
    verified = replays.verify(replay)
    m = Match(replay.options, replay.seed, replay.deals)
    feed = EventFeed(m)
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
        TableEvent(1, 1, EventType.HAND_STARTED),
        TableEvent(2, 1, EventType.PASSED, 2),
        TableEvent(3, 1, EventType.PLAYED, 3, m.combos(0)[0], True),
        TableEvent(4, 1, EventType.TRICK_WON, 3, points=10, cards=1 << 14 | 1 << 34),
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


_HANDS = [
    parse_cards(h) for h in ("Ph 2j 2s 3j 4p 5t 6j Aj", "Dg Mj Dr 5j 5s 5p 5t Tj Ks", "Ph Ks Kj")
]
_PLAYS = [p for h in _HANDS for p in combinations(h)]


@settings(max_examples=300, deadline=None)
@given(
    type_=st.sampled_from(
        [
            t
            for t in EventType
            if t not in (EventType.HAND_END, EventType.MATCH_END, EventType.FAILURE)
        ]
    ),
    seq=st.integers(0, 2**40),
    hand=st.integers(0, 300),
    seat=st.integers(0, 3),
    play=st.sampled_from(_PLAYS),
    out_of_turn=st.booleans(),
    value=st.integers(0, 14),
    points=st.integers(-25, 125),
    cards=st.integers(0, 2**56 - 1),
    called=st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans()),
)
def test_hand_events_are_written_as_their_messages_bytes(
    type_: EventType,
    seq: int,
    hand: int,
    seat: int,
    play: Play,
    out_of_turn: bool,
    value: int,
    points: int,
    cards: int,
    called: tuple[bool, bool, bool, bool],
) -> None:
    """The hand-written bytes of a hand's events equal the message's serialization."""
    if type_ is not EventType.GRAND_TICHU_REVEALED:
        called = ()  # type: ignore[assignment]
    ev = TableEvent(seq, hand, type_, seat, play, out_of_turn, value, points, cards, called)
    body = encode_table_event(ev).SerializeToString()
    assert (
        event_bytes(ev).message
        == pb.RefereeMessage(event=encode_table_event(ev)).SerializeToString()
    )
    assert event_bytes(ev).history.endswith(body)
