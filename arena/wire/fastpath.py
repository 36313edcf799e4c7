"""The referee's hot path: decision requests, legal lists and events written as bytes.

Building a ``DecisionRequest`` message field by field costs more than the rest of a decision
in the referee; this module writes the same canonical bytes (fields in number order, proto3
defaults left out) straight from the rules values. It is the only hand-written protobuf in
the project: every tag is computed from the message descriptors (``tag``), and the memoised
pieces (a play's bytes, a legal list, the scores field...) belong to one ``FastPath`` object,
each bounded by its ``limit`` (cleared when full). The readable reference is message-based
(``arena.wire.request``, ``arena.wire.events``); ``tests/wire/test_fastpath.py`` checks every
encoder here against it, byte for byte.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Hashable, Sequence
from functools import reduce
from operator import or_
from typing import Any, Generic, NamedTuple, TypeVar, cast

from google.protobuf.descriptor import FieldDescriptor

from arena.rules.actions import Exchange, Gift, GrandTichu, Phase, Wish
from arena.rules.cards import PHOENIX_BIT, cards_of
from arena.rules.combos import Play
from arena.rules.events import Event, EventKind
from arena.rules.observe import Observation
from arena.wire import FIGURE_MASK_BYTES, pb
from arena.wire.values import (
    COMBO_PASS,
    IDENTITY_SEATING,
    PASS_K,
    VIEW_PHASE,
    clamp_ms,
    figure_index,
)

# ----------------------------------------------------------------------------- varints


def _varint(n: int) -> bytes:
    if n < 0:
        raise ValueError(f"no varint for the negative {n}")
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


class _Varints(dict[int, bytes]):
    """Varints of 0..16383 looked up (a C call, the hot path); larger ones computed."""

    def __missing__(self, n: int) -> bytes:
        if 1 << 14 <= n < 1 << 21:  # three bytes: a long match's state_seq
            return bytes((n & 0x7F | 0x80, n >> 7 & 0x7F | 0x80, n >> 14))
        return _varint(n)


varint = _Varints((n, _varint(n)) for n in range(1 << 14)).__getitem__
"""``varint(n)``: the protobuf varint encoding of a non-negative int."""
_ONE_BYTE = tuple(bytes((i,)) for i in range(0x80))


def _int32(n: int) -> bytes:
    return varint(n) if n >= 0 else varint(n + (1 << 64))


class _Int32s(dict[int, bytes]):
    """Varints of protobuf ``int32`` values (negative ones take ten bytes), common ones listed."""

    def __missing__(self, n: int) -> bytes:
        return _int32(n)


int32_bytes = _Int32s((n, _int32(n)) for n in range(-1024, 4096)).__getitem__
"""``int32_bytes(n)``: the varint of a protobuf ``int32``."""

# ----------------------------------------------------------------------------- tags

_FIXED64 = frozenset((FieldDescriptor.TYPE_FIXED64, FieldDescriptor.TYPE_SFIXED64))
_DELIMITED = frozenset(
    (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES)
)


def tag(message: Any, name: str) -> bytes:
    """The tag of field ``name`` of ``message`` (a generated class): number and wire type.

    Wire type 2 for messages, strings, bytes and packed repeated fields, 1 for a single
    ``fixed64``, 0 for the varint scalars (the only kinds this protocol uses).
    """
    f = message.DESCRIPTOR.fields_by_name[name]
    if f.type in _DELIMITED or (f.is_repeated and f.is_packed):
        wire = 2
    elif f.type in _FIXED64:
        wire = 1
    elif f.type in (FieldDescriptor.TYPE_FIXED32, FieldDescriptor.TYPE_FLOAT):
        raise ValueError(f"{name}: 32-bit fields are not used by the protocol")
    else:
        wire = 0
    return varint(f.number << 3 | wire)


def _small(message: Any, name: str) -> tuple[bytes, ...]:
    """Field ``name`` with each value 0..127 (index = value; 0 is the absent default)."""
    t = tag(message, name)
    return (b"", *(t + _ONE_BYTE[i] for i in range(1, 128)))


_join = b"".join
_FOUR_FIXED64 = struct.Struct("<4Q")

# RefereeMessage
_MSG_DECISION = tag(pb.RefereeMessage, "decision")
_MSG_EVENT = tag(pb.RefereeMessage, "event")
# DecisionRequest
_REQ_ID = tag(pb.DecisionRequest, "request_id")
_REQ_SEQ = tag(pb.DecisionRequest, "state_seq")
_REQ_KIND = tag(pb.DecisionRequest, "kind")
_REQ_DEADLINE = tag(pb.DecisionRequest, "deadline_ms")
_REQ_BANK = tag(pb.DecisionRequest, "bank_ms_left")
_REQ_VIEW = tag(pb.DecisionRequest, "view")
_REQ_LEGAL = tag(pb.DecisionRequest, "legal")
_KIND_FIELD = {p: _REQ_KIND + _ONE_BYTE[int(p)] for p in VIEW_PHASE}
# View
_V = pb.View
_SEAT_FIELD = _small(_V, "seat")  # also TrickEntry.seat and Played.seat (field 1)
_HAND_NUMBER = tag(_V, "hand_number")
_VIEW_PHASE_FIELD = {p: tag(_V, "phase") + _ONE_BYTE[v] for p, v in VIEW_PHASE.items()}
_HAND = tag(_V, "hand")
_CARD_COUNTS = tag(_V, "card_counts") + b"\x04"  # four packed one-byte values
_GRAND = tag(_V, "grand_tichu") + b"\x04"
_TICHU = tag(_V, "tichu") + b"\x04"
_MAY_CALL = tag(_V, "may_call_tichu") + b"\x01"
_TRICK = tag(_V, "trick")
_WISH_FIELD = _small(_V, "wish_rank")
_TURN_SEAT_FIELD = tuple(tag(_V, "turn_seat") + _ONE_BYTE[s] for s in range(4))  # 0 is sent
_FINISHED = tag(_V, "finished")
_GIVEN_TO = tag(_V, "given_to") + _ONE_BYTE[32]  # four packed fixed64
_RECEIVED_FROM = tag(_V, "received_from") + _ONE_BYTE[32]
_WON_POINTS = tag(_V, "won_points")
_PLAYED = tag(_V, "played")
_SCORES = tag(_V, "scores")
_SEATING_FIELD = tag(_V, "seating") + _ONE_BYTE[4] + bytes(IDENTITY_SEATING)
_HISTORY = tag(_V, "history")
# Trick and TrickEntry
_ENTRY = tag(pb.Trick, "entries")
_TOP_SEAT_FIELD = _small(pb.Trick, "top_seat")
_TRICK_POINTS = tag(pb.Trick, "points")
_ENTRY_PLAY = tag(pb.TrickEntry, "play")  # also Trick.top and Played.play (field 2)
_OUT_OF_TURN = tag(pb.TrickEntry, "out_of_turn") + b"\x01"  # also Played.out_of_turn
_PASS_PLAY = _ENTRY_PLAY + b"\x02" + tag(pb.Play, "combo") + _ONE_BYTE[COMBO_PASS]
_PASS_ENTRIES = tuple(  # Trick.entries = TrickEntry{seat, play: a pass}, by seat
    _ENTRY + varint(len(_SEAT_FIELD[s] + _PASS_PLAY)) + _SEAT_FIELD[s] + _PASS_PLAY
    for s in range(4)
)
# Play
_COMBO = tag(pb.Play, "combo")
_LENGTH = tag(pb.Play, "length")
_RANK = tag(pb.Play, "rank")
_CARDS = tag(pb.Play, "cards")
_PHOENIX_RANK = tag(pb.Play, "phoenix_rank")
# Scores
_TEAM_POINTS = tag(pb.Scores, "team_points")
_VICTORY_POINTS = tag(pb.Scores, "victory_points")
_PLAYER_POINTS = tag(pb.Scores, "player_points")
# LegalActions
_L = pb.LegalActions
_L_CARDS = tag(_L, "cards")
_L_COMBO = tag(_L, "combo")
_L_LENGTH = tag(_L, "length")
_L_RANK = tag(_L, "rank")
_L_PHOENIX = tag(_L, "phoenix_rank")
_L_FIGURE = tag(_L, "figure")
_L_FIGURE_MASK = tag(_L, "figure_mask") + varint(FIGURE_MASK_BYTES)
_L_VALUES = tag(_L, "values")
# Event
_E = pb.Event
_EV_SEQ = tag(_E, "state_seq")
_EV_HAND = tag(_E, "hand_number")
_HAND_STARTED = (
    tag(_E, "hand_started")
    + _ONE_BYTE[2 + len(IDENTITY_SEATING)]
    + tag(pb.HandStarted, "seating")
    + _ONE_BYTE[len(IDENTITY_SEATING)]
    + bytes(IDENTITY_SEATING)
)
_REVEALED = tag(_E, "grand_tichu_revealed")
_CALLED = tag(pb.GrandTichuRevealed, "called") + b"\x04"
_TICHU_CALLED = tuple(  # by seat
    tag(_E, "tichu_called") + _ONE_BYTE[len(f)] + f for f in _small(pb.TichuCalled, "seat")[:4]
)
_EXCHANGE_DONE = tag(_E, "exchange_done") + b"\x00"
_PLAYED_EV = tag(_E, "played")
_PASSED = tuple(  # by seat
    tag(_E, "passed") + _ONE_BYTE[len(f)] + f for f in _small(pb.Passed, "seat")[:4]
)
_TRICK_WON = tag(_E, "trick_won")
_WON_SEAT = _small(pb.TrickWon, "seat")
_WON_POINTS_EV = tag(pb.TrickWon, "points")
_WON_CARDS = tag(pb.TrickWon, "cards")
_SEAT_VALUE: dict[
    int, tuple[bytes, tuple[bytes, ...], bytes]
] = {  # rules event kind: (Event field, its seat field, its value field)
    EventKind.OUT: (
        tag(_E, "player_out"),
        _small(pb.PlayerOut, "seat"),
        tag(pb.PlayerOut, "place"),
    ),
    EventKind.WISH: (tag(_E, "wish_made"), _small(pb.WishMade, "seat"), tag(pb.WishMade, "rank")),
    EventKind.WISH_FULFILLED: (
        tag(_E, "wish_fulfilled"),
        _small(pb.WishFulfilled, "seat"),
        tag(pb.WishFulfilled, "rank"),
    ),
    EventKind.DRAGON_GIFT: (
        tag(_E, "dragon_given"),
        _small(pb.DragonGiven, "from_seat"),
        tag(pb.DragonGiven, "to_seat"),
    ),
}
_GIVEN_POINTS = tag(pb.DragonGiven, "points")
_GIVEN_CARDS = tag(pb.DragonGiven, "cards")
_PLAY = EventKind.PLAY
_PASS = EventKind.PASS
_TRICK_WON_K = EventKind.TRICK_WON
_DRAGON_GIFT = EventKind.DRAGON_GIFT
_HAND_START = EventKind.HAND_START
_GRAND_TICHU = EventKind.GRAND_TICHU
_TICHU_K = EventKind.TICHU
_EXCHANGE = EventKind.EXCHANGE
_HAND_END = EventKind.HAND_END

# ----------------------------------------------------------------------------- framing


class EventBytes(NamedTuple):
    """One event, encoded once: as a stream message and as a ``View.history`` entry."""

    message: bytes
    history: bytes


def framed_event(body: bytes) -> EventBytes:
    """A serialized ``Event`` as a ``RefereeMessage`` and as a ``View.history`` entry."""
    n = varint(len(body))
    return EventBytes(_join((_MSG_EVENT, n, body)), _join((_HISTORY, n, body)))


def decision_message(body: bytes) -> bytes:
    """A serialized ``DecisionRequest`` as a ``RefereeMessage``."""
    return _join((_MSG_DECISION, varint(len(body)), body))


# ----------------------------------------------------------------------------- the caches

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _Memo(dict[K, V], Generic[K, V]):
    """Values built on first use, forgotten all at once when ``limit`` is reached."""

    __slots__ = ("build", "limit")

    def __init__(self, build: Callable[[K], V], limit: int) -> None:
        super().__init__()
        self.build = build
        self.limit = limit

    def __missing__(self, key: K) -> V:
        if len(self) >= self.limit:
            self.clear()
        v = self[key] = self.build(key)
        return v


_Row = tuple[bytes, bytes, bytes, bytes, bytes, bytes, int]
_ScoresKey = tuple[tuple[int, int], bool, tuple[int, int] | None]
_ExchangeKey = tuple[int, Exchange | None, tuple[int, ...]]

SHORT_LIST = 4
"""Legal lists up to this length are remembered whole (most of them repeat)."""


class FastPath:
    """The byte encoders and the pieces they remember; one per process is enough (``FAST``).

    ``limit`` bounds every cache: the plays of a few hands of every table (a hand's four seats
    hold a few hundred) fit, and a play seen in an earlier hand rarely comes back.
    """

    def __init__(self, limit: int = 1 << 14) -> None:
        self.limit = limit
        self.plays = _Memo(self._play, limit)  # Play -> its serialized ``Play``
        self.play_fields = _Memo(self._play_field, limit)  # Play -> ``TrickEntry.play`` field
        self.play_rows = _Memo(self._play_row, limit)  # Play -> its ``LegalActions`` columns
        self.short_lists = _Memo(self._legal_bytes, limit)  # legal list -> ``LegalActions``
        self.exchanges = _Memo(self._exchange_fields, limit)  # -> ``given_to``/``received_from``
        self.won = _Memo(self._won_field, limit)  # won points by seat -> ``View.won_points``
        self.scores = _Memo(self._scores_field, limit)  # -> ``View.scores`` and ``seating``
        self._memos = (
            self.plays,
            self.play_fields,
            self.play_rows,
            self.short_lists,
            self.exchanges,
            self.won,
            self.scores,
        )

    def clear(self) -> None:
        """Forgets every remembered piece."""
        for memo in self._memos:
            memo.clear()

    # ------------------------------------------------------------------ pieces

    def _play(self, play: Play) -> bytes:
        kind, length, rank, cards = play
        b = _COMBO + _ONE_BYTE[kind + 1]
        if length:
            b += _LENGTH + _ONE_BYTE[length]
        if rank:
            b += _RANK + _ONE_BYTE[rank]
        if cards:
            b += _CARDS + cards.to_bytes(8, "little")
        if cards & PHOENIX_BIT and length > 1:
            b += _PHOENIX_RANK + _ONE_BYTE[play.phoenix_rank]
        return b

    def _play_field(self, play: Play) -> bytes:
        body = self.plays[play]
        return _ENTRY_PLAY + varint(len(body)) + body

    def _play_row(self, play: Play) -> _Row:
        kind, length, rank, cards = play
        f = figure_index(play)
        phoenix = play.phoenix_rank if cards & PHOENIX_BIT and length > 1 else 0
        return (
            cards.to_bytes(8, "little"),
            _ONE_BYTE[kind + 1],
            _ONE_BYTE[length],
            _ONE_BYTE[rank],
            _ONE_BYTE[phoenix],
            varint(f),
            1 << f,
        )

    def _exchange_fields(self, key: _ExchangeKey) -> bytes:
        seat, given, received = key
        b = b""
        if given is not None:
            g = [0, 0, 0, 0]
            for k, c in enumerate(given, 1):
                g[(seat + k) & 3] = 1 << c
            b = _GIVEN_TO + _FOUR_FIXED64.pack(*g)
        if received:
            r = [0, 0, 0, 0]
            for k, c in enumerate(received, 1):
                r[(seat - k) & 3] = 1 << c
            b += _RECEIVED_FROM + _FOUR_FIXED64.pack(*r)
        return b

    def _won_field(self, won: tuple[int, ...]) -> bytes:
        b = _join(map(int32_bytes, won))
        return _WON_POINTS + _ONE_BYTE[len(b)] + b

    def _scores_field(self, key: _ScoresKey) -> bytes:
        (a, b), tournament, vp = key
        if tournament:
            sc = b""
            if vp is not None:
                x, y = vp
                v = int32_bytes(x) + int32_bytes(y) + int32_bytes(x) + int32_bytes(y)
                sc = _VICTORY_POINTS + _ONE_BYTE[len(v)] + v
            pp = int32_bytes(a) + int32_bytes(b) + int32_bytes(a) + int32_bytes(b)
            sc += _PLAYER_POINTS + _ONE_BYTE[len(pp)] + pp
        else:
            tp = int32_bytes(a) + int32_bytes(b)
            sc = _TEAM_POINTS + _ONE_BYTE[len(tp)] + tp
        return _SCORES + _ONE_BYTE[len(sc)] + sc + _SEATING_FIELD

    def entry(self, seat: int, play: Play, out_of_turn: int | bool) -> bytes:
        """A play by a seat as the body of a ``TrickEntry`` or a ``Played`` event (same fields)."""
        b = _SEAT_FIELD[seat] + self.play_fields[play]
        return b + _OUT_OF_TURN if out_of_turn else b

    # ------------------------------------------------------------------ legal lists

    def legal_plays(self, plays: Sequence[Play]) -> bytes:
        """The ``LegalActions`` bytes of a play decision: six play columns and the figure mask.

        The hot path of every turn: the columns are written as packed fields (fixed64 cards,
        then varint columns whose values are all below 128 except figures), with the per-play
        columns remembered. Short lists are remembered whole: a seat holding the same cards
        against the same play gets the same list (in random play most lists of one or two
        plays repeat); longer ones almost never do, and hashing one costs a good part of
        building it.
        """
        if type(plays) is not tuple:
            plays = tuple(plays)
        if len(plays) <= SHORT_LIST:
            return self.short_lists[plays]
        return self._legal_bytes(plays)

    def _legal_bytes(self, plays: tuple[Play, ...]) -> bytes:
        n = len(plays)
        if not n:
            raise ValueError("a play decision with no legal play")
        cards, combos, lengths, ranks, phoenix, figures, bits = zip(
            *map(self.play_rows.__getitem__, plays), strict=True
        )
        count = varint(n)
        fig = _join(figures)
        return _join(
            (
                _L_CARDS,
                varint(8 * n),
                _join(cards),
                _L_COMBO,
                count,
                _join(combos),
                _L_LENGTH,
                count,
                _join(lengths),
                _L_RANK,
                count,
                _join(ranks),
                _L_PHOENIX,
                count,
                _join(phoenix),  # 0 but for a Phoenix in a combination
                _L_FIGURE,
                varint(len(fig)),
                fig,
                _L_FIGURE_MASK,
                reduce(or_, bits).to_bytes(FIGURE_MASK_BYTES, "little"),
            )
        )

    # ------------------------------------------------------------------ requests

    def request(
        self,
        obs: Observation,
        *,
        request_id: int,
        state_seq: int,
        deadline_ms: int,
        bank_ms: int,
        history: bytes | bytearray = b"",
        victory_points: Sequence[int] | None = None,
    ) -> bytes:
        """``encode_request(...).SerializeToString()``, written directly as bytes.

        ``history`` holds the hand's events already serialized as ``View.history`` entries.
        """
        phase = obs.phase
        phase_field = _VIEW_PHASE_FIELD.get(phase)
        if phase_field is None:
            raise ValueError(f"no decision to ask in phase {phase.name}")
        seat = obs.seat
        if obs.to_act != seat:
            raise ValueError(f"seat {seat} is not to act (seat {obs.to_act} is)")
        hand = obs.hand
        # The view's fields as parts joined once: a ``bytes + bytes`` or ``bytearray +=`` per
        # field costs more than the field.
        v: list[bytes | bytearray] = [
            _SEAT_FIELD[seat],
            _HAND_NUMBER,
            varint(obs.hand_no + 1),
            phase_field,
            _HAND + hand.to_bytes(8, "little") if hand else b"",
            _CARD_COUNTS,
            bytes(obs.card_counts),
            _GRAND,
            bytes(obs.grand),
            _TICHU,
            bytes(obs.tichu),
        ]
        add = v.append
        if obs.may_call_tichu:
            add(_MAY_CALL)
        entries = obs.entries
        if entries:
            t = []
            play_fields = self.play_fields
            for s, play, oot in entries:
                if play[0] == PASS_K:
                    t.append(_PASS_ENTRIES[s])
                else:
                    e = _SEAT_FIELD[s] + play_fields[play]
                    if oot:
                        e += _OUT_OF_TURN
                    t.append(_ENTRY + varint(len(e)) + e)
            top_seat, top = obs.trick[-1]
            t.append(play_fields[top])
            t.append(_TOP_SEAT_FIELD[top_seat])
            pts = obs.trick_points
            if pts:
                t.append(_TRICK_POINTS + int32_bytes(pts))
            trick = _join(t)
            add(_TRICK)
            add(varint(len(trick)))
            add(trick)
        if obs.wish:
            add(_WISH_FIELD[obs.wish])
        turn = obs.turn
        if turn >= 0:
            add(_TURN_SEAT_FIELD[turn])
        out = obs.out
        if out:
            add(_FINISHED + _ONE_BYTE[len(out)] + bytes(out))
        if obs.given is not None or obs.received:
            add(self.exchanges[(seat, obs.given, obs.received)])
        add(self.won[obs.won_points])
        if obs.played:
            add(_PLAYED + obs.played.to_bytes(8, "little"))
        tournament = obs.options.tournament
        vp = None
        if tournament and victory_points is not None:
            vp = (victory_points[0], victory_points[1])
        add(self.scores[(obs.scores, tournament, vp)])
        add(history)
        view = _join(v)
        acts = obs.legal
        if phase is Phase.PLAY or phase is Phase.BOMB_WINDOW:
            legal = self.legal_plays(cast("Sequence[Play]", acts))
        else:
            if phase is Phase.EXCHANGE:
                values = bytes(cards_of(hand))
            else:  # GrandTichu (a bool), Wish (a rank), Gift (a seat): one small int each
                values = bytes(
                    [int(a[0]) for a in cast("Sequence[GrandTichu | Wish | Gift]", acts)]
                )
            legal = _L_VALUES + varint(len(values)) + values if values else b""
        deadline = clamp_ms(deadline_ms)
        bank = clamp_ms(bank_ms)
        return _join(
            (
                _REQ_ID + varint(request_id) if request_id else b"",
                _REQ_SEQ + varint(state_seq) if state_seq else b"",
                _KIND_FIELD[phase],
                _REQ_DEADLINE + varint(deadline) if deadline else b"",
                _REQ_BANK + varint(bank) if bank else b"",
                _REQ_VIEW,
                varint(len(view)),
                view,
                _REQ_LEGAL + varint(len(legal)) if legal else b"",
                legal,
            )
        )

    # ------------------------------------------------------------------ events

    def event(self, e: Event, seq: int, hand: int) -> EventBytes | None:
        """Rules event ``e`` numbered ``seq`` in hand ``hand`` (from 1), framed for the stream
        and the history; ``None`` for a ``HAND_END`` (its result goes through the message)."""
        k = e[0]
        seat = e[1]
        if k == _PLAY:
            play = e[2]
            assert play is not None
            kind = _SEAT_FIELD[seat] + self.play_fields[play]
            if e[3]:
                kind += _OUT_OF_TURN
            kind = _PLAYED_EV + varint(len(kind)) + kind
        elif k == _PASS:
            kind = _PASSED[seat]
        elif k == _TRICK_WON_K:
            kind = _WON_SEAT[seat]
            if e[4]:
                kind += _WON_POINTS_EV + int32_bytes(e[4])
            if e[5]:
                kind += _WON_CARDS + e[5].to_bytes(8, "little")
            kind = _TRICK_WON + varint(len(kind)) + kind
        elif k == _TICHU_K:
            kind = _TICHU_CALLED[seat]
        elif k == _EXCHANGE:
            kind = _EXCHANGE_DONE
        elif k == _HAND_START:
            kind = _HAND_STARTED
        elif k == _GRAND_TICHU:
            kind = _REVEALED + _ONE_BYTE[len(_CALLED) + 4] + _CALLED + bytes(e.called)
        elif k == _HAND_END:
            return None
        else:  # seat = 1, value = 2 (place, rank or receiving seat)
            field, seats, value = _SEAT_VALUE[k]
            kind = seats[seat]
            if e[3]:
                kind += value + varint(e[3])
            if k == _DRAGON_GIFT:
                if e[4]:
                    kind += _GIVEN_POINTS + int32_bytes(e[4])
                if e[5]:
                    kind += _GIVEN_CARDS + e[5].to_bytes(8, "little")
            kind = field + varint(len(kind)) + kind
        body = _join(
            (
                _EV_SEQ if seq else b"",
                varint(seq) if seq else b"",
                _EV_HAND if hand else b"",
                varint(hand) if hand else b"",
                kind,
            )
        )
        n = varint(len(body))
        return EventBytes(_join((_MSG_EVENT, n, body)), _join((_HISTORY, n, body)))


FAST = FastPath()
"""The process's fast path (the referee's requests and events)."""

__all__ = [
    "FAST",
    "SHORT_LIST",
    "EventBytes",
    "FastPath",
    "decision_message",
    "framed_event",
    "int32_bytes",
    "tag",
    "varint",
]
