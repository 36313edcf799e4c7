"""No message to a seat ever shows another seat's hidden card (a few hundred random hands).

Four tables of random stub-bot processes play 60 hands each over gRPC; every bot writes
down every message it receives. Then, per seat and in stream order, every card mentioned in
a message (any ``fixed64`` card set, and the card ids of an exchange request) must be one the
seat may know at that point: its own 14 cards, the cards passed to it once the exchange is
done, and the cards played so far. The plays the stream announces are checked against the
replay, so the stream cannot vouch for itself. Each request's history must equal the events
streamed in the hand so far (the history is spliced into requests as bytes).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from arena.referee import Termination, TimeControl
from arena.referee import replay as replays
from arena.rules import Exchange, Match, Options, Play
from arena.server import ArenaServer, TableSpec
from arena.server.bots import play_table
from arena.server.manifest import Manifest
from arena.wire import pb
from tests.helpers import MANY_PROCESSES

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180), MANY_PROCESSES]

TABLES = 4
HANDS = 60
_FIXED64 = FieldDescriptor.TYPE_FIXED64


def masks(msg: Message) -> Iterator[int]:
    """Every ``fixed64`` value in a message, at any depth (all card sets are fixed64)."""
    for field, value in msg.ListFields():
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            items = value if field.is_repeated else [value]
            for item in items:
                yield from masks(item)
        elif field.type == _FIXED64:
            if field.is_repeated:
                yield from value
            else:
                yield value


class Hand:
    """What the replay says about one hand: deals, exchanges, plays in order."""

    def __init__(self) -> None:
        self.dealt: list[int] = [0, 0, 0, 0]
        self.exchanges: dict[int, Exchange] = {}
        self.plays: list[tuple[int, int]] = []  # (seat, cards) of every non-pass play

    def received(self, seat: int) -> int:
        got = 0
        for giver, ex in self.exchanges.items():
            for k, card in enumerate(ex, 1):
                if (giver + k) % 4 == seat:
                    got |= 1 << card
        return got


def hands_of(replay: replays.Replay) -> list[Hand]:
    verified = replays.verify(replay)
    assert verified.mismatches == []
    m = Match(replay.options, replay.seed, replay.deals)
    out: list[Hand] = []
    for deal in replay.deals:
        h = Hand()
        h.dealt = [sum(1 << c for c in cards) for cards in deal]
        out.append(h)
    for seat, action in verified.match.actions:
        h = out[m.hand_no]
        if isinstance(action, Exchange):
            h.exchanges[seat] = action
        elif isinstance(action, Play) and action.length:
            h.plays.append((seat, action.cards))
        m.apply(action)
    return out


def check_seat(seat: int, lines: list[str], hands: list[Hand]) -> int:
    """Checks one seat's messages; returns how many card sets were checked."""
    checked = 0
    hand: Hand | None = None
    allowed = 0
    plays: list[tuple[int, int]] = []
    streamed: list[bytes] = []
    for line in lines:
        msg = pb.RefereeMessage.FromString(bytes.fromhex(line))
        which = msg.WhichOneof("payload")
        if which == "event":
            ev = msg.event
            kind = ev.WhichOneof("kind")
            if kind == "match_end":
                continue
            if kind == "hand_started":
                if hand is not None:
                    assert plays == hand.plays, f"seat {seat}: plays differ from the replay"
                hand = hands[ev.hand_number - 1]
                allowed = hand.dealt[seat]
                plays = []
                streamed = []
            assert hand is not None
            if kind == "exchange_done":
                allowed |= hand.received(seat)
            elif kind == "played":
                plays.append((ev.played.seat, ev.played.play.cards))
                allowed |= ev.played.play.cards
            streamed.append(ev.SerializeToString())
            for cards in masks(ev):
                assert cards & ~allowed == 0, f"seat {seat} was shown {cards & ~allowed:#x} in {ev}"
                checked += 1
        elif which == "decision":
            d = msg.decision
            history = [e.SerializeToString() for e in d.view.history]
            assert history == streamed, f"seat {seat}: request {d.request_id}'s history"
            d.view.ClearField("history")
            cards = list(masks(d))
            if d.kind == pb.DECISION_KIND_EXCHANGE:
                cards.append(sum(1 << c for c in d.legal.values))
            for c in cards:
                assert c & ~allowed == 0, f"seat {seat} was shown {c & ~allowed:#x} in {d}"
                checked += 1
    assert hand is not None and plays == hand.plays
    return checked


def test_no_seat_is_ever_shown_a_hidden_card(stub: Callable[..., Manifest], tmp_path: Path) -> None:
    async def main() -> list[str]:
        server = ArenaServer(runs_dir=tmp_path / "runs")
        await server.start()

        async def one(k: int) -> str:
            dumps = [tmp_path / f"t{k}-seat{s}.hex" for s in range(4)]
            bots = [stub("--seed", str(10 * k + s), "--dump", str(dumps[s])) for s in range(4)]
            spec = TableSpec(
                options=Options(hands=HANDS),
                seed=1000 + k,
                time=TimeControl(decision_ms=5000),
                table_id=f"hidden{k}",
            )
            table, records = await play_table(server, spec, bots)
            assert records[0].termination is Termination.NORMAL
            assert records[0].failures == []
            return table.id

        ids = await asyncio.gather(*(one(k) for k in range(TABLES)))
        await server.stop(1.0)
        return list(ids)

    ids = asyncio.run(main())
    total = 0
    for k, table_id in enumerate(ids):
        replay = replays.load(tmp_path / "runs" / table_id / "match-1.json")
        hands = hands_of(replay)
        assert len(hands) == HANDS
        for s in range(4):
            lines = (tmp_path / f"t{k}-seat{s}.hex").read_text().split()
            total += check_seat(s, lines, hands)
    assert total > TABLES * HANDS * 100
