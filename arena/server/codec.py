"""The referee's values as ready-to-write wire bytes (rules values go through ``convert``).

The service writes serialized ``RefereeMessage`` bytes, so that a public event is encoded
once per table and written to four streams. A ``DecisionRequest`` carries the hand's history;
rather than copying every ``Event`` message into every request, each seat keeps the hand's
history as serialized ``View.history`` entries, which the request's bytes take as they are.
"""

from __future__ import annotations

from typing import NamedTuple

from arena.referee.policy import Failure, cap_text
from arena.referee.seat import Decision, EventType, MatchInfo, MatchOutcome, TableEvent
from arena.wire import PROTOCOL_VERSION, pb
from arena.wire.convert import (
    encode_hand_result,
    encode_options,
    encode_play,
    encode_request_bytes,
    encode_scores,
    entry_bytes,
    int32_bytes,
    varint,
)

SERVER_VERSION = "tichu-arena 0.1.0"
"""The referee build reported in ``Welcome.server_version``."""

_IDENTITY_SEATING = (0, 1, 2, 3)
# Tags of length-delimited fields: (field number << 3) | 2, as varints.
_TAG_MSG_DECISION = b"\x1a"  # RefereeMessage.decision = 3
_TAG_MSG_EVENT = b"\x22"  # RefereeMessage.event = 4
_TAG_VIEW_HISTORY = b"\x9a\x01"  # View.history = 19
_SEAT_VALUE_TAGS = {  # Event fields whose message starts with a seat and a value
    EventType.WISH_MADE: b"\x4a",
    EventType.WISH_FULFILLED: b"\x52",
    EventType.DRAGON_GIVEN: b"\x62",
    EventType.PLAYER_OUT: b"\x6a",
}
_HAND_STARTED = b"\x1a\x06\x0a\x04" + bytes(_IDENTITY_SEATING)  # Event.hand_started = 3
_join = b"".join
_PASSED = (b"\x42\x00", b"\x42\x02\x08\x01", b"\x42\x02\x08\x02", b"\x42\x02\x08\x03")  # by seat


class EventBytes(NamedTuple):
    """One event, encoded once: as a stream message and as a ``View.history`` entry."""

    message: bytes
    history: bytes


def encode_table_event(ev: TableEvent, tournament: bool = False) -> pb.Event:
    """A referee ``TableEvent`` as a wire ``Event``."""
    msg = pb.Event(state_seq=ev.seq, hand_number=ev.hand)
    t = ev.type
    if t is EventType.PLAYED:
        p = msg.played
        p.seat = ev.seat
        assert ev.play is not None
        encode_play(p.play, ev.play)
        if ev.out_of_turn:
            p.out_of_turn = True
    elif t is EventType.PASSED:
        msg.passed.seat = ev.seat
    elif t is EventType.TRICK_WON:
        w = msg.trick_won
        w.seat = ev.seat
        w.points = ev.points
        w.cards = ev.cards
    elif t is EventType.PLAYER_OUT:
        o = msg.player_out
        o.seat = ev.seat
        o.place = ev.value
    elif t is EventType.TICHU_CALLED:
        msg.tichu_called.seat = ev.seat
    elif t is EventType.WISH_MADE:
        wm = msg.wish_made
        wm.seat = ev.seat
        wm.rank = ev.value
    elif t is EventType.WISH_FULFILLED:
        wf = msg.wish_fulfilled
        wf.seat = ev.seat
        wf.rank = ev.value
    elif t is EventType.DRAGON_GIVEN:
        d = msg.dragon_given
        d.from_seat = ev.seat
        d.to_seat = ev.value
        d.points = ev.points
        d.cards = ev.cards
    elif t is EventType.EXCHANGE_DONE:
        msg.exchange_done.SetInParent()
    elif t is EventType.HAND_STARTED:
        msg.hand_started.seating.extend(_IDENTITY_SEATING)
    elif t is EventType.GRAND_TICHU_REVEALED:
        msg.grand_tichu_revealed.called.extend(ev.called)
    elif t is EventType.HAND_END:
        assert ev.result is not None
        msg.hand_end.CopyFrom(
            encode_hand_result(
                ev.result,
                scores=ev.scores,
                tournament=tournament,
                victory_points=ev.victory_points,
            )
        )
    elif t is EventType.FAILURE:
        assert ev.failure is not None
        encode_failure(msg.failure, ev.failure)
    elif t is EventType.MATCH_END:
        assert ev.outcome is not None
        encode_outcome(msg.match_end, ev.outcome, tournament)
    else:  # pragma: no cover - every EventType is handled above
        raise ValueError(f"no wire event for {ev!r}")
    return msg


def encode_failure(msg: pb.Failure, f: Failure) -> None:
    """Writes a recorded failure into a wire ``Failure``."""
    msg.seat = f.seat
    msg.kind = int(f.kind)  # type: ignore[assignment]
    msg.outcome = int(f.outcome)  # type: ignore[assignment]
    msg.request_id = f.request_id
    msg.strikes = f.strikes
    msg.detail = f.public  # never the detail: it may hold cards or the bot's own values


def encode_outcome(msg: pb.MatchResult, o: MatchOutcome, tournament: bool) -> None:
    """Writes a match outcome into a wire ``MatchResult``."""
    msg.termination = int(o.termination)  # type: ignore[assignment]
    encode_scores(msg.scores, o.scores, tournament=tournament, victory_points=o.victory_points)
    msg.winners.extend(o.winners)
    msg.hands_played = o.hands_played
    msg.given_up.extend(o.given_up)
    msg.detail = o.detail


def event_bytes(ev: TableEvent, tournament: bool = False) -> EventBytes:
    """Encodes an event once for all the seats that receive it.

    The events of a hand are written as bytes directly, the same bytes as
    ``encode_table_event(ev).SerializeToString()`` (fields in number order, defaults left
    out; ``test_server_wire`` checks it); results and failures go through the message.
    """
    t = ev.type
    seat = ev.seat
    if t is EventType.PLAYED:
        assert ev.play is not None
        kind = entry_bytes(seat, ev.play, ev.out_of_turn)
        kind = b"\x3a" + varint(len(kind)) + kind
    elif t is EventType.PASSED:
        kind = _PASSED[seat]
    elif t is EventType.TRICK_WON:
        kind = b"\x08" + varint(seat) if seat else b""
        if ev.points:
            kind += b"\x10" + int32_bytes(ev.points)
        if ev.cards:
            kind += b"\x19" + ev.cards.to_bytes(8, "little")
        kind = b"\x5a" + varint(len(kind)) + kind
    elif t in _SEAT_VALUE_TAGS:  # seat = 1, value = 2 (place, rank or receiving seat)
        kind = b"\x08" + varint(seat) if seat else b""
        if ev.value:
            kind += b"\x10" + varint(ev.value)
        if t is EventType.DRAGON_GIVEN:
            if ev.points:
                kind += b"\x18" + int32_bytes(ev.points)
            if ev.cards:
                kind += b"\x21" + ev.cards.to_bytes(8, "little")
        kind = _SEAT_VALUE_TAGS[t] + varint(len(kind)) + kind
    elif t is EventType.TICHU_CALLED:
        kind = b"\x2a\x02\x08" + varint(seat) if seat else b"\x2a\x00"
    elif t is EventType.EXCHANGE_DONE:
        kind = b"\x32\x00"
    elif t is EventType.HAND_STARTED:
        kind = _HAND_STARTED
    elif t is EventType.GRAND_TICHU_REVEALED:
        called = bytes(ev.called)
        kind = b"\x0a" + varint(len(called)) + called if called else b""
        kind = b"\x22" + varint(len(kind)) + kind
    else:
        kind = b""
    if kind:
        seq, hand = ev.seq, ev.hand
        body = _join(
            (
                b"\x08" if seq else b"",
                varint(seq) if seq else b"",
                b"\x10" if hand else b"",
                varint(hand) if hand else b"",
                kind,
            )
        )
    else:
        body = encode_table_event(ev, tournament).SerializeToString()
    n = varint(len(body))
    return EventBytes(_join((_TAG_MSG_EVENT, n, body)), _join((_TAG_VIEW_HISTORY, n, body)))


def request_bytes(decision: Decision, request_id: int, history: bytes | bytearray) -> bytes:
    """A ``RefereeMessage`` asking ``decision``, with the hand's history entries in its view."""
    body = encode_request_bytes(
        decision.obs,
        request_id=request_id,
        state_seq=decision.state_seq,
        deadline_ms=decision.deadline_ms,
        bank_ms=decision.bank_ms,
        history=history,
        victory_points=decision.victory_points,
    )
    return _join((_TAG_MSG_DECISION, varint(len(body)), body))


def welcome_bytes(
    info: MatchInfo, token: str, *, resumed: bool = False, names: bool = True
) -> bytes:
    """The ``Welcome`` for a seat of a match."""
    t = info.time
    p = info.policy
    w = pb.Welcome(
        seat=info.seat,
        table_id=info.table_id,
        rules=encode_options(info.options),
        time=pb.TimeControl(decision_ms=t.decision_ms, bank_ms_per_hand=t.bank_ms_per_hand),
        policy=pb.FailurePolicy(
            max_strikes=p.max_strikes,
            max_rejections=p.max_rejections,
            reconnect_grace_ms=p.reconnect_grace_ms,
            give_up=int(p.give_up),  # type: ignore[arg-type]
        ),
        server_version=SERVER_VERSION,
        protocol_version=PROTOCOL_VERSION,
        seat_token=token,
        resumed=resumed,
    )
    if info.seed is not None:
        w.seed = info.seed
    if names:
        w.player_names.extend(info.names)
    return pb.RefereeMessage(welcome=w).SerializeToString()


def waiting_bytes(bots_waiting: int) -> bytes:
    """A lobby ``Waiting`` message."""
    return pb.RefereeMessage(waiting=pb.Waiting(bots_waiting=bots_waiting)).SerializeToString()


def error_bytes(
    code: int, request_id: int, message: str, *, ms_left: int = 0, fatal: bool = False
) -> bytes:
    """An in-band ``Error`` message; its text is capped (``cap_text``)."""
    err = pb.Error(
        code=code,  # type: ignore[arg-type]
        request_id=request_id,
        fatal=fatal,
        message=cap_text(message),
        ms_left=max(0, ms_left),
    )
    return pb.RefereeMessage(error=err).SerializeToString()
