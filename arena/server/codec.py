"""The referee's values as ready-to-write wire bytes (rules values go through ``arena.wire``).

The service writes serialized ``RefereeMessage`` bytes, so that a public event is encoded
once per table and written to four streams. A ``DecisionRequest`` carries the hand's history;
rather than copying every ``Event`` message into every request, each seat keeps the hand's
history as serialized ``View.history`` entries, which the request's bytes take as they are.
"""

from __future__ import annotations

from arena.referee.policy import Failure, cap_text
from arena.referee.seat import Decision, MatchInfo, MatchOutcome, TableEvent
from arena.rules import EventKind
from arena.wire import PROTOCOL_VERSION, pb
from arena.wire.events import set_event
from arena.wire.fastpath import FAST, EventBytes, decision_message, framed_event
from arena.wire.values import encode_hand_result, encode_options, encode_scores

SERVER_VERSION = "tichu-arena 0.1.0"
"""The referee build reported in ``Welcome.server_version``."""

_HAND_END = EventKind.HAND_END


def encode_table_event(ev: TableEvent, tournament: bool = False) -> pb.Event:
    """A referee ``TableEvent`` as a wire ``Event``: a rules event, a failure or the match end."""
    msg = pb.Event(state_seq=ev.seq, hand_number=ev.hand)
    e = ev.event
    if e is not None:
        hand_end = None
        if e[0] == _HAND_END:
            assert ev.result is not None
            hand_end = encode_hand_result(
                ev.result,
                scores=ev.scores,
                tournament=tournament,
                victory_points=ev.victory_points,
            )
        set_event(msg, e, hand_end)
    elif ev.failure is not None:
        encode_failure(msg.failure, ev.failure)
    elif ev.outcome is not None:
        encode_outcome(msg.match_end, ev.outcome, tournament)
    else:
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

    The events of a hand are written by the fast path, the same bytes as
    ``encode_table_event(ev).SerializeToString()``; results and failures go through the message.
    """
    e = ev.event
    if e is not None:
        b = FAST.event(e, ev.seq, ev.hand)
        if b is not None:
            return b
    return framed_event(encode_table_event(ev, tournament).SerializeToString())


def request_bytes(decision: Decision, request_id: int, history: bytes | bytearray) -> bytes:
    """A ``RefereeMessage`` asking ``decision``, with the hand's history entries in its view."""
    body = FAST.request(
        decision.obs,
        request_id=request_id,
        state_seq=decision.state_seq,
        deadline_ms=decision.deadline_ms,
        bank_ms=decision.bank_ms,
        history=history,
        victory_points=decision.victory_points,
    )
    return decision_message(body)


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
