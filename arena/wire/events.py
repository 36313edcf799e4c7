"""Public game events on the wire: one rules ``Event`` is one ``pb.Event`` (the reference).

The rules core emits its events in their public shape (``arena.rules.events``), so the
mapping is one to one and ``decode_event`` is its inverse: ``decode_event(encode_event(e,
...)) == e`` for every event of a hand. The referee's own events (failures, the match's
end) are encoded by the server; they decode to no rules event. The referee writes the same
bytes through ``arena.wire.fastpath``; ``tests/wire/test_fastpath.py`` checks both agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arena.rules.events import Event, EventKind, called_mask
from arena.wire import pb
from arena.wire.values import IDENTITY_SEATING, decode_play, encode_play

_new = tuple.__new__
_PLAY = EventKind.PLAY
_PASS = EventKind.PASS
_TRICK_WON = EventKind.TRICK_WON
_OUT = EventKind.OUT
_TICHU = EventKind.TICHU
_WISH = EventKind.WISH
_WISH_FULFILLED = EventKind.WISH_FULFILLED
_DRAGON_GIFT = EventKind.DRAGON_GIFT
_GRAND_TICHU = EventKind.GRAND_TICHU
_EXCHANGE = EventKind.EXCHANGE
_HAND_START = EventKind.HAND_START
_HAND_END = EventKind.HAND_END


def set_event(msg: pb.Event, e: Event, hand_end: pb.HandResult | None = None) -> None:
    """Fills the ``kind`` of a wire event from a rules event; ``HAND_END`` needs ``hand_end``."""
    k = e[0]
    if k == _PLAY:
        p = msg.played
        p.seat = e[1]
        play = e[2]
        assert play is not None
        encode_play(p.play, play)
        if e[3]:
            p.out_of_turn = True
    elif k == _PASS:
        msg.passed.seat = e[1]
    elif k == _TRICK_WON:
        t = msg.trick_won
        t.seat = e[1]
        t.points = e[4]
        t.cards = e[5]
    elif k == _OUT:
        o = msg.player_out
        o.seat = e[1]
        o.place = e[3]
    elif k == _TICHU:
        msg.tichu_called.seat = e[1]
    elif k == _WISH:
        w = msg.wish_made
        w.seat = e[1]
        w.rank = e[3]
    elif k == _WISH_FULFILLED:
        f = msg.wish_fulfilled
        f.seat = e[1]
        f.rank = e[3]
    elif k == _DRAGON_GIFT:
        d = msg.dragon_given
        d.from_seat = e[1]
        d.to_seat = e[3]
        d.points = e[4]
        d.cards = e[5]
    elif k == _GRAND_TICHU:
        msg.grand_tichu_revealed.called.extend(e.called)
    elif k == _EXCHANGE:
        msg.exchange_done.SetInParent()
    elif k == _HAND_START:
        msg.hand_started.seating.extend(IDENTITY_SEATING)
    elif k == _HAND_END:
        if hand_end is None:
            raise ValueError("a hand_end event needs the hand's result")
        msg.hand_end.CopyFrom(hand_end)
    else:
        raise ValueError(f"no wire event for {e!r}")


def encode_event(
    e: Event, *, state_seq: int, hand_no: int, hand_end: pb.HandResult | None = None
) -> pb.Event:
    """One rules event as its wire event (``hand_no`` counts from 0, as in the rules core).

    A ``HAND_END`` event needs ``hand_end``: the hand's result with the cumulative scores
    (``arena.wire.values.encode_hand_result``).
    """
    msg = pb.Event(state_seq=state_seq, hand_number=hand_no + 1)
    set_event(msg, e, hand_end)
    return msg


def decode_event(msg: pb.Event) -> Event | None:
    """The rules event a wire event is, or ``None`` (a failure, a match end, a later kind)."""
    which = msg.WhichOneof("kind")
    if which == "played":
        p = msg.played
        return _new(Event, (_PLAY, p.seat, decode_play(p.play), int(p.out_of_turn), 0, 0))
    if which == "passed":
        return _new(Event, (_PASS, msg.passed.seat, None, 0, 0, 0))
    if which == "trick_won":
        t = msg.trick_won
        return _new(Event, (_TRICK_WON, t.seat, None, 0, t.points, t.cards))
    if which == "player_out":
        o = msg.player_out
        return _new(Event, (_OUT, o.seat, None, o.place, 0, 0))
    if which == "tichu_called":
        return _new(Event, (_TICHU, msg.tichu_called.seat, None, 0, 0, 0))
    if which == "wish_made":
        w = msg.wish_made
        return _new(Event, (_WISH, w.seat, None, w.rank, 0, 0))
    if which == "wish_fulfilled":
        f = msg.wish_fulfilled
        return _new(Event, (_WISH_FULFILLED, f.seat, None, f.rank, 0, 0))
    if which == "dragon_given":
        d = msg.dragon_given
        return _new(Event, (_DRAGON_GIFT, d.from_seat, None, d.to_seat, d.points, d.cards))
    if which == "grand_tichu_revealed":
        called = list(msg.grand_tichu_revealed.called)
        return _new(Event, (_GRAND_TICHU, -1, None, called_mask(called), 0, 0))
    if which == "exchange_done":
        return _new(Event, (_EXCHANGE, -1, None, 0, 0, 0))
    if which == "hand_started":
        return _new(Event, (_HAND_START, -1, None, msg.hand_number - 1, 0, 0))
    if which == "hand_end":
        return _new(Event, (_HAND_END, -1, None, msg.hand_number - 1, 0, 0))
    return None


def decode_history(history: Iterable[pb.Event]) -> tuple[Event, ...]:
    """The rules events of a view's history (failures in it are left out)."""
    events = []
    for msg in history:
        e = decode_event(msg)
        if e is not None:
            events.append(e)
    return tuple(events)


class HistoryCache:
    """The decoded history of the hand so far, so a stream decodes each event once.

    A view's history only grows within a hand; when the cached events are still its prefix
    (same count or more, same first and last event) only the new ones are decoded.
    """

    def __init__(self) -> None:
        self._first: pb.Event | None = None
        self._last: pb.Event | None = None
        self._count = 0
        self._events: tuple[Event, ...] = ()

    def decode(self, history: Sequence[pb.Event]) -> tuple[Event, ...]:
        """The rules events of ``history`` (a view's repeated ``Event`` field)."""
        n = len(history)
        k = self._count
        if not (0 < k <= n and history[0] == self._first and history[k - 1] == self._last):
            k = 0
            self._events = ()
        if k < n:
            self._events += decode_history(history[k:])
        if n:
            self._first = history[0]
            self._last = history[n - 1]
        self._count = n
        return self._events


__all__ = ["HistoryCache", "decode_event", "decode_history", "encode_event", "set_event"]
