"""No message to a seat ever shows another seat's hidden card, even with buggy bots.

Two tables of random stub-bot processes play 40 hands each over gRPC, one bot per table
answering 4 % of its requests wrongly; every bot writes down every message it receives.
Then, per seat and in stream order, every card mentioned in a message (any ``fixed64`` card
set, and the card ids of an exchange request) must be one the seat may know at that point:
its own 14 cards, the cards passed to it once the exchange is done, and the cards played so
far. The plays the stream announces are checked against the replay, so the stream cannot
vouch for itself. Each request's history must equal the events streamed in the hand so far
(the history is spliced into requests as bytes). A failure is announced in the referee's own
words only, and an in-band error is about the seat's own requests.

The same check runs over 400 more hands on the server's own seats and codec with the bots
in this process (in-memory streams instead of sockets: what a seat is sent does not depend
on the transport), every bot 4 % wrong: about a thousand rejected answers, among them
illegal ones and malformed ones told to their seat alone (the test requires all three kinds).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from wire_client import answer

from arena.referee import (
    Failure,
    FailureKind,
    FailureOutcome,
    FailurePolicy,
    Termination,
    TimeControl,
)
from arena.referee import replay as replays
from arena.referee.policy import TEXT_CAP
from arena.rules import Action, Exchange, Match, Options, Play
from arena.server import ArenaServer, Table, TableSpec
from arena.server.bots import play_table
from arena.server.manifest import Manifest
from arena.server.seat import Stream
from arena.wire import pb
from tests.helpers import MANY_PROCESSES

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300), MANY_PROCESSES]

TABLES = 2
HANDS = 40
MEMORY_TABLES = 4
MEMORY_HANDS = 100  # 400 hands in all
WRONG = 0.04
PUBLIC_TEXTS = frozenset(
    Failure(0, kind, outcome, 1, 0).public for kind in FailureKind for outcome in FailureOutcome
)
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


def hands_of(replay: replays.Replay, actions: list[tuple[int, Action]] | None = None) -> list[Hand]:
    """The hands of a replay file (verified), or of a match's own ``actions``."""
    if actions is None:
        verified = replays.verify(replay)
        assert verified.mismatches == []
        actions = list(verified.match.actions)
    m = Match(replay.options, replay.seed, replay.deals)
    out: list[Hand] = []
    for deal in replay.deals:
        h = Hand()
        h.dealt = [sum(1 << c for c in cards) for cards in deal]
        out.append(h)
    for seat, action in actions:
        h = out[m.hand_no]
        if isinstance(action, Exchange):
            h.exchanges[seat] = action
        elif isinstance(action, Play) and action.length:
            h.plays.append((seat, action.cards))
        m.apply(action)
    return out


def check_seat(
    seat: int, messages: Iterable[bytes], hands: list[Hand], *, histories: bool = True
) -> int:
    """Checks one seat's messages; returns how many card sets were checked.

    ``histories``: also check that each request's history is the hand's events so far.
    """
    checked = 0
    hand: Hand | None = None
    allowed = 0
    plays: list[tuple[int, int]] = []
    streamed: list[bytes] = []
    asked: set[int] = {0}  # request ids this seat was sent (0: none)
    for data in messages:
        msg = pb.RefereeMessage.FromString(data)
        which = msg.WhichOneof("payload")
        if which == "error":
            err = msg.error
            assert err.request_id in asked, f"seat {seat} was told of another's request: {err}"
            assert len(err.message.encode()) <= TEXT_CAP
        elif which == "event":
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
            if kind == "failure":
                assert ev.failure.detail in PUBLIC_TEXTS, f"seat {seat} was told {ev.failure}"
            if histories:
                streamed.append(ev.SerializeToString())
            for cards in masks(ev):
                assert cards & ~allowed == 0, f"seat {seat} was shown {cards & ~allowed:#x} in {ev}"
                checked += 1
        elif which == "decision":
            d = msg.decision
            asked.add(d.request_id)
            if histories:
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
    seen = tmp_path / "seen"
    seen.mkdir()
    seen.chmod(0o777)

    async def main() -> list[str]:
        server = ArenaServer(runs_dir=tmp_path / "runs")
        await server.start()

        async def one(k: int) -> str:
            dumps = [seen / f"t{k}-seat{s}.hex" for s in range(4)]
            bots = [
                stub(
                    "--seed",
                    str(10 * k + s),
                    "--dump",
                    str(dumps[s]),
                    *(("--mode", "buggy", "--wrong", str(WRONG)) if s == k % 4 else ()),
                )
                for s in range(4)
            ]
            spec = TableSpec(
                options=Options(hands=HANDS),
                seed=1000 + k,
                time=TimeControl(decision_ms=60_000),  # generous: a loaded machine is slow
                policy=FailurePolicy(max_strikes=0, max_rejections=1),
                table_id=f"hidden{k}",
            )
            # The bots' sandboxes show them this folder alone, writable by their own uids.
            table, records = await play_table(server, spec, bots, writable=[seen])
            assert records[0].termination is Termination.NORMAL
            assert {f.seat for f in records[0].failures} == {k % 4}
            assert {f.kind for f in records[0].failures} <= {
                FailureKind.MALFORMED,
                FailureKind.ILLEGAL,
            }
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
            lines = (seen / f"t{k}-seat{s}.hex").read_text().split()
            total += check_seat(s, (bytes.fromhex(line) for line in lines), hands)
    assert total > TABLES * HANDS * 100


class BuggyBot(Stream):
    """A bot on an in-memory stream: random legal answers, ``WRONG`` of them malformed.

    It keeps every message it is sent. A wrong answer is one of: an index out of range, the
    cards of another legal entry, a stale ``state_seq``, one card given three times in the
    exchange, bytes that are no message at all. Told of an error about its open request, it
    answers again, rightly.
    """

    def __init__(self, seed: int) -> None:
        super().__init__(None, pb.Hello())
        self.rng = random.Random(seed)
        self.messages: list[bytes] = []
        self.open: pb.DecisionRequest | None = None
        self.wrong = 0

    def send(self, data: bytes) -> None:
        self.messages.append(data)
        msg = pb.RefereeMessage.FromString(data)
        which = msg.WhichOneof("payload")
        if which == "decision":
            self.open = d = msg.decision
            if self.rng.random() < WRONG:
                self.wrong += 1
                self._reply(self._wrong(d))
            else:
                self._reply(self._right(d))
        elif (
            which == "error"
            and self.open is not None
            and msg.error.request_id == (self.open.request_id)
        ):
            d, self.open = self.open, None  # answer again once
            self._reply(self._right(d))

    def _reply(self, data: bytes) -> None:
        owner = self.owner
        assert owner is not None
        asyncio.get_running_loop().call_soon(owner.on_message, self, data)

    def _right(self, d: pb.DecisionRequest) -> bytes:
        return answer(d, self.rng).SerializeToString()

    def _wrong(self, d: pb.DecisionRequest) -> bytes:
        a = pb.Action(request_id=d.request_id, state_seq=d.state_seq)
        how = self.rng.randrange(5)
        if how == 0:
            a.choice_index = 4_000_000_000  # a value of its own choosing: never echoed
        elif how == 1 and len(d.legal.cards) > 1:
            a.choice_index = 0
            a.cards = d.legal.cards[1]  # its own cards, quoted back to it alone
        elif how == 2:
            a.state_seq = d.state_seq + 7
        elif how == 3 and d.kind == pb.DECISION_KIND_EXCHANGE:
            a.exchange_cards.extend([d.legal.values[0]] * 3)  # illegal: one card three times
        else:
            return bytes(self.rng.randrange(256) for _ in range(12)) + b"\xff"
        return pb.BotMessage(action=a).SerializeToString()


@pytest.mark.timeout(600)
def test_buggy_bots_are_never_shown_a_hidden_card_in_400_hands() -> None:
    async def one(k: int) -> tuple[list[BuggyBot], Table]:
        spec = TableSpec(
            options=Options(hands=MEMORY_HANDS),
            seed=5000 + k,
            time=TimeControl(decision_ms=60_000),
            policy=FailurePolicy(max_strikes=0, max_rejections=1),
            pace_forced=False,
        )
        table = Table(f"memory{k}", spec, ["a", "b", "c", "d"], None, lambda t: None)
        bots = [BuggyBot(40 * k + s) for s in range(4)]
        for s, bot in enumerate(bots):
            table.seats[s].attach(bot, resume=False)
        await table.wait()
        return bots, table

    async def main() -> list[tuple[list[BuggyBot], Table]]:
        return list(await asyncio.gather(*(one(k) for k in range(MEMORY_TABLES))))

    total = hands_played = 0
    kinds: set[tuple[FailureKind, bool]] = set()
    for bots, table in asyncio.run(main()):
        (record,) = table.records
        assert record.termination is Termination.NORMAL
        hands = hands_of(record.replay, list(record.replay.actions))
        hands_played += len(hands)
        wrong = sum(b.wrong for b in bots)
        assert len(record.failures) == wrong  # one rejection ends a request: one failure each
        kinds |= {(f.kind, f.private) for f in record.failures}
        for s, bot in enumerate(bots):
            total += check_seat(s, bot.messages, hands, histories=False)
    assert hands_played == MEMORY_TABLES * MEMORY_HANDS
    assert kinds == {
        (FailureKind.MALFORMED, False),
        (FailureKind.MALFORMED, True),
        (FailureKind.ILLEGAL, False),
    }
    assert total > hands_played * 400
