"""Conversion between the wire contract (``arena.wire.pb``) and the rules core (``arena.rules``).

This is the only module that knows both sides (style guide item 13). The referee encodes a
seat's ``Observation`` into a ``DecisionRequest`` and decodes the bot's ``Action``; the SDK does
the reverse. ``decode_request(encode_request(obs, ...), options=obs.options) == obs`` holds for
every observation of the seat to act (the test suite checks it on thousands of states).

Where the wire and the rules core describe the same thing differently, the mapping is:

* **Combos**: wire value = rules kind + 1 (docs/protocol.md section 5).
* **Hand numbers**: the rules core counts hands from 0, the wire from 1.
* **Phases**: the decision kinds equal the rules phases 1..6; the view's phase is ``PLAY``
  for bomb windows, wishes and Dragon gifts.
* **Rule options** are not part of a view; they travel once, in ``Welcome.rules``, so
  ``decode_request`` takes them as an argument.
* **Events**: the rules core announces each Grand Tichu call separately and none when nobody
  called; the wire reveals the four decisions in one ``grand_tichu_revealed`` once the round
  is over. A Dragon gift is one ``dragon_given`` on the wire (rules: ``DRAGON_GIFT`` then
  ``TRICK_WON``). A Dog lead ends its trick on the wire with a ``trick_won`` (Dog's player,
  0 points, cards = the Dog) that the rules core does not emit. ``trick_won`` carries the
  trick's cards. ``decode_event`` undoes all of this, so a history round-trips.
* **Trick**: the wire trick lists passes too (rules: plays only); they come from the events.
* **Scores**: team points in normal mode; in tournament mode ``player_points`` (by player,
  seating is the identity) and, when given, ``victory_points``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from functools import reduce
from itertools import repeat
from operator import or_
from typing import Any, cast

from arena.rules.actions import Action, Exchange, Gift, GrandTichu, Phase, Wish
from arena.rules.cards import DOG_BIT, PHOENIX_BIT, Mask, cards_of, points_of
from arena.rules.combos import PASS, Play
from arena.rules.errors import InvalidActionError
from arena.rules.observe import Observation, new_observation
from arena.rules.state import Event, EventKind, HandResult, Options
from arena.wire import FIGURE_COUNT, FIGURE_MASK_BYTES, pb

__all__ = [
    "AnswerError",
    "HistoryCache",
    "decode_answer",
    "decode_event",
    "decode_options",
    "decode_play",
    "decode_request",
    "decode_scores",
    "default_answer",
    "encode_answer",
    "encode_event",
    "encode_hand_result",
    "encode_options",
    "encode_play",
    "encode_request",
    "encode_request_bytes",
    "encode_scores",
    "entry_bytes",
    "figure_index",
    "hand_events",
    "int32_bytes",
    "legal_plays_bytes",
]

_new = tuple.__new__

_PASS_K = 0
_DOG_K = 1
_SINGLE_K = 2
_COMBO_PASS = 1  # pb.COMBO_PASS
_UINT32_MAX = (1 << 32) - 1
_IDENTITY_SEATING = (0, 1, 2, 3)

# ----------------------------------------------------------------------------- figures


def _figure_rows() -> list[tuple[int, int, int, int]]:
    """The rows of docs/protocol.md section 7: (rules kind, length, lowest rank, highest rank)."""
    rows = [(1, 1, 0, 0), (2, 1, 1, 15), (2, 1, -1, -1)]  # Dog, singles, Phoenix single
    rows += [(3, 2, 2, 14), (4, 3, 2, 14)]
    rows += [(5, 2 * n, n + 1, 14) for n in range(2, 8)]
    rows += [(6, 5, 2, 14)]
    rows += [(7, n, n, 14) for n in range(5, 15)]
    rows += [(8, 4, 2, 14)]
    rows += [(9, n, n + 1, 14) for n in range(5, 14)]
    return rows


def _figure_table() -> list[list[list[int]]]:
    table = [[[-1] * 16 for _ in range(15)] for _ in range(10)]
    table[_PASS_K][0][0] = 0
    f = 1
    for kind, length, lo, hi in _figure_rows():
        if lo < 0:  # the Phoenix single: one figure whatever its rank
            f += 1
            continue
        for rank in range(lo, hi + 1):
            table[kind][length][rank] = f
            f += 1
    assert f == FIGURE_COUNT
    return table


_FIGURES = _figure_table()
_PHOENIX_FIGURE = 17


def figure_index(play: Play) -> int:
    """The figure 0..226 of a play (docs/protocol.md section 7): type, length, rank, no suits."""
    kind, length, rank, cards = play
    if kind == _SINGLE_K and cards == PHOENIX_BIT:
        return _PHOENIX_FIGURE
    try:
        f = _FIGURES[kind][length][rank]
    except IndexError:
        f = -1
    if f < 0:
        raise ValueError(f"no figure for {play!r}")
    return f


# ----------------------------------------------------------------------------- bytes


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
"""``varint(n)``: the protobuf varint encoding of a non-negative int (for hand-built bytes)."""
_ONE_BYTE = tuple(bytes((i,)) for i in range(0x80))


def _int32(n: int) -> bytes:
    return varint(n) if n >= 0 else varint(n + (1 << 64))


class _Int32s(dict[int, bytes]):
    """Varints of protobuf ``int32`` values (negative ones take ten bytes): common ones cached."""

    def __missing__(self, n: int) -> bytes:
        return _int32(n)


int32_bytes = _Int32s((n, _int32(n)) for n in range(-1024, 4096)).__getitem__
"""``int32_bytes(n)``: the varint of a protobuf ``int32`` (for hand-built bytes)."""


# ----------------------------------------------------------------------------- values


def encode_play(msg: pb.Play, play: Play) -> None:
    """Writes a rules ``Play`` into a wire ``Play`` message (in place, no copy)."""
    msg.combo = play[0] + 1  # type: ignore[assignment]
    msg.length = play[1]
    msg.rank = play[2]
    msg.cards = play[3]
    if play[3] & PHOENIX_BIT and play[1] > 1:
        msg.phoenix_rank = play.phoenix_rank


def decode_play(msg: pb.Play) -> Play:
    """Reads a wire ``Play`` as a rules ``Play`` (the Phoenix reading is implied by the rank)."""
    combo = msg.combo
    if not 1 <= combo <= 10:
        raise InvalidActionError(f"unknown combo {combo} in a play")
    result: Play = _new(Play, (combo - 1, msg.length, msg.rank, msg.cards))
    return result


def encode_options(options: Options) -> pb.RulesOptions:
    """The rule options as sent in ``Welcome.rules``."""
    return pb.RulesOptions(
        target_score=options.target_score,
        hand_count=options.hands,
        grand_tichu=options.grand_tichu,
        tournament_mode=options.tournament,
    )


def decode_options(msg: pb.RulesOptions) -> Options:
    """Reads ``Welcome.rules``; a target of 0 (ignored with a hand count) reads as 1000."""
    return Options(
        target_score=msg.target_score or 1000,
        hands=msg.hand_count,
        grand_tichu=msg.grand_tichu,
        tournament=msg.tournament_mode,
    )


def encode_scores(
    msg: pb.Scores,
    scores: Sequence[int],
    *,
    tournament: bool = False,
    victory_points: Sequence[int] | None = None,
) -> None:
    """Writes cumulative team scores into ``msg``: team points, or per-player fields."""
    if tournament:
        msg.player_points.extend([scores[0], scores[1], scores[0], scores[1]])
        if victory_points is not None:
            vp = victory_points
            msg.victory_points.extend([vp[0], vp[1], vp[0], vp[1]])
    else:
        msg.team_points.extend(scores)


def decode_scores(msg: pb.Scores) -> tuple[int, int]:
    """Team scores from a wire ``Scores`` (tournament mode: the players of seats 0 and 1)."""
    t = msg.team_points
    if len(t) == 2:
        return (t[0], t[1])
    p = msg.player_points
    if len(p) == 4:
        return (p[0], p[1])
    if not t and not p:
        return (0, 0)
    raise InvalidActionError(f"scores have {len(t)} team entries and {len(p)} player entries")


# ----------------------------------------------------------------------------- events


def _set_event(ev: pb.Event, e: Event, trick_cards: Mask, points_next: int) -> None:
    """Fills the ``kind`` of a wire event from a rules event (not GRAND_TICHU, not HAND_END)."""
    k = e[0]
    if k == EventKind.PLAY:
        p = ev.played
        p.seat = e[1]
        play = e[2]
        assert play is not None
        encode_play(p.play, play)
        if e[3]:
            p.out_of_turn = True
    elif k == EventKind.PASS:
        ev.passed.seat = e[1]
    elif k == EventKind.TRICK_WON:
        t = ev.trick_won
        t.seat = e[1]
        t.points = e[3]
        t.cards = trick_cards
    elif k == EventKind.OUT:
        o = ev.player_out
        o.seat = e[1]
        o.place = e[3]
    elif k == EventKind.TICHU:
        ev.tichu_called.seat = e[1]
    elif k == EventKind.WISH:
        w = ev.wish_made
        w.seat = e[1]
        w.rank = e[3]
    elif k == EventKind.WISH_FULFILLED:
        f = ev.wish_fulfilled
        f.seat = e[1]
        f.rank = e[3]
    elif k == EventKind.DRAGON_GIFT:
        d = ev.dragon_given
        d.from_seat = e[1]
        d.to_seat = e[3]
        d.points = points_next
        d.cards = trick_cards
    elif k == EventKind.EXCHANGE:
        ev.exchange_done.SetInParent()
    elif k == EventKind.HAND_START:
        ev.hand_started.seating.extend(_IDENTITY_SEATING)
    else:
        raise ValueError(f"no wire event for {e!r}")


def _trick_start(events: Sequence[Event], i: int) -> int:
    """Index of the first event of the trick running at ``events[i]`` (after the last boundary)."""
    while i > 0:
        e = events[i - 1]
        k = e[0]
        if k == EventKind.TRICK_WON or k == EventKind.EXCHANGE or k == EventKind.HAND_START:
            break
        if k == EventKind.PLAY and e[2] is not None and e[2][0] == _DOG_K:
            break
        i -= 1
    return i


def hand_events(
    events: Sequence[Event],
    out: Any,
    *,
    hand_no: int,
    first_seq: int,
    start: int = 0,
    stop: int | None = None,
    reveal_grand: bool = False,
    hand_end: pb.HandResult | None = None,
) -> int:
    """Appends the wire events for ``events[start:stop]`` of one hand to ``out``; returns the count.

    ``out`` is a repeated ``Event`` field (``View.history``) or any object whose ``add()``
    returns a new ``pb.Event``. ``events`` is the whole hand so far (a trick's cards come from
    earlier events). ``reveal_grand`` adds the ``grand_tichu_revealed`` event where the Grand
    Tichu round ended (or at ``start`` if that is later): the caller says when it is due,
    once per hand. A ``HAND_END`` event needs ``hand_end``. Events are numbered from
    ``first_seq``. Convert whole batches (everything one ``Match.apply`` added): a Dog lead's
    ``trick_won`` follows the Dog's play and its ``player_out``.
    """
    n = len(events) if stop is None else stop
    # Where the Grand Tichu round ends: after the hand start and the calls it revealed.
    g = 1
    while g < n and events[g][0] == EventKind.GRAND_TICHU:
        g += 1
    g = max(g, start)
    trick_cards = 0
    for j in range(_trick_start(events, start), start):
        e = events[j]
        if e[0] == EventKind.PLAY and e[2] is not None:
            trick_cards |= e[2][3]
    seq = first_seq
    number = hand_no + 1
    add = out.add
    dog = -1  # the Dog's player, until its trick is announced
    skip = False
    for j in range(start, n):
        e = events[j]
        k = e[0]
        if dog >= 0 and k != EventKind.OUT:
            seq = _add_dog_trick(add, dog, seq, number)
            dog = -1
        if reveal_grand and j == g:
            seq = _add_reveal(add, events, g, seq, number)
            reveal_grand = False
        if skip:  # the TRICK_WON after a DRAGON_GIFT: part of dragon_given
            skip = False
            trick_cards = 0
            continue
        if k == EventKind.GRAND_TICHU:
            continue  # revealed together, at g
        ev = add(state_seq=seq, hand_number=number)
        seq += 1
        if k == EventKind.PLAY:
            play = e[2]
            assert play is not None
            if play[0] == _DOG_K:
                dog = e[1]
                trick_cards = 0
            else:
                trick_cards |= play[3]
            _set_event(ev, e, trick_cards, 0)
        elif k == EventKind.TRICK_WON:
            _set_event(ev, e, trick_cards, 0)
            trick_cards = 0
        elif k == EventKind.DRAGON_GIFT:
            nxt = events[j + 1] if j + 1 < n else None
            skip = nxt is not None and nxt[0] == EventKind.TRICK_WON
            _set_event(ev, e, trick_cards, nxt[3] if skip and nxt is not None else 0)
        elif k == EventKind.HAND_END:
            if hand_end is None:
                raise ValueError("a hand_end event needs the hand's result")
            ev.hand_end.CopyFrom(hand_end)
        else:
            _set_event(ev, e, trick_cards, 0)
    if dog >= 0:
        seq = _add_dog_trick(add, dog, seq, number)
    if reveal_grand:
        seq = _add_reveal(add, events, min(g, n), seq, number)
    return seq - first_seq


def _add_dog_trick(add: Any, seat: int, seq: int, number: int) -> int:
    t = add(state_seq=seq, hand_number=number).trick_won
    t.seat = seat
    t.cards = DOG_BIT
    return seq + 1


def _add_reveal(add: Any, events: Sequence[Event], g: int, seq: int, number: int) -> int:
    ev = add(state_seq=seq, hand_number=number)
    called = [False, False, False, False]
    for j in range(1, g):
        if events[j][0] == EventKind.GRAND_TICHU:
            called[events[j][1]] = True
    ev.grand_tichu_revealed.called.extend(called)
    return seq + 1


def encode_event(
    event: Event,
    *,
    state_seq: int,
    hand_no: int,
    trick_cards: Mask = 0,
    points: int = 0,
) -> pb.Event:
    """One rules event as one wire event (``hand_no`` counts from 0, as in the rules core).

    ``trick_cards`` fills ``trick_won.cards`` and ``dragon_given.cards``; ``points`` fills
    ``dragon_given.points``. Grand Tichu calls and hand ends have no one-to-one wire event:
    use ``EventFeed`` (or ``hand_events``), which also adds the Dog's ``trick_won``.
    """
    if event[0] == EventKind.GRAND_TICHU or event[0] == EventKind.HAND_END:
        raise ValueError(f"{EventKind(event[0]).name} has no one-to-one wire event: use EventFeed")
    ev = pb.Event(state_seq=state_seq, hand_number=hand_no + 1)
    _set_event(ev, event, trick_cards, points)
    return ev


def decode_event(msg: pb.Event) -> tuple[Event, ...]:
    """The rules events a wire event stands for (none for failures, match ends, Dog tricks)."""
    which = msg.WhichOneof("kind")
    if which == "played":
        p = msg.played
        return (_new(Event, (EventKind.PLAY, p.seat, decode_play(p.play), int(p.out_of_turn))),)
    if which == "passed":
        return (_new(Event, (EventKind.PASS, msg.passed.seat, None, 0)),)
    if which == "trick_won":
        t = msg.trick_won
        if t.cards == DOG_BIT:
            return ()  # the Dog's trick: the rules core has no event for it
        return (_new(Event, (EventKind.TRICK_WON, t.seat, None, t.points)),)
    if which == "player_out":
        o = msg.player_out
        return (_new(Event, (EventKind.OUT, o.seat, None, o.place)),)
    if which == "tichu_called":
        return (_new(Event, (EventKind.TICHU, msg.tichu_called.seat, None, 0)),)
    if which == "wish_made":
        w = msg.wish_made
        return (_new(Event, (EventKind.WISH, w.seat, None, w.rank)),)
    if which == "wish_fulfilled":
        f = msg.wish_fulfilled
        return (_new(Event, (EventKind.WISH_FULFILLED, f.seat, None, f.rank)),)
    if which == "dragon_given":
        d = msg.dragon_given
        return (
            _new(Event, (EventKind.DRAGON_GIFT, d.from_seat, None, d.to_seat)),
            _new(Event, (EventKind.TRICK_WON, d.to_seat, None, d.points)),
        )
    if which == "grand_tichu_revealed":
        called = msg.grand_tichu_revealed.called
        return tuple(
            _new(Event, (EventKind.GRAND_TICHU, t, None, 0))
            for t in range(len(called))
            if called[t]
        )
    if which == "exchange_done":
        return (_new(Event, (EventKind.EXCHANGE, -1, None, 0)),)
    if which == "hand_started":
        return (_new(Event, (EventKind.HAND_START, -1, None, msg.hand_number - 1)),)
    if which == "hand_end":
        return (_new(Event, (EventKind.HAND_END, -1, None, msg.hand_number - 1)),)
    return ()  # failure, match_end, or a kind from a later minor version


def encode_hand_result(
    result: HandResult,
    *,
    scores: Sequence[int],
    tournament: bool = False,
    victory_points: Sequence[int] | None = None,
) -> pb.HandResult:
    """A rules ``HandResult`` on the wire; ``scores`` (and ``victory_points``) are cumulative."""
    msg = pb.HandResult(hand_number=result.hand + 1)
    msg.finishing_order.extend(result.out)
    if len(result.out) == 3:  # the last seat is listed too
        msg.finishing_order.append(next(t for t in range(4) if t not in result.out))
    double = result.double_victory
    cards = [0, 0] if double >= 0 else list(result.card_points)
    msg.double_victory = double >= 0
    msg.card_points.extend(cards)
    msg.bet_points.extend(result.bets)
    msg.hand_points.extend(result.score)
    first = result.out[0]
    for t in range(4):
        if result.grand[t] or result.tichu[t]:
            stake = 200 if result.grand[t] else 100
            msg.bets.add(
                seat=t,
                grand=result.grand[t],
                won=t == first,
                points=stake if t == first else -stake,
            )
    if tournament:
        msg.victory_points.extend(result.victory_points)
    encode_scores(msg.scores, scores, tournament=tournament, victory_points=victory_points)
    return msg


# ----------------------------------------------------------------------------- requests

_VIEW_PHASE = {
    Phase.GRAND_TICHU: pb.PHASE_GRAND_TICHU,
    Phase.EXCHANGE: pb.PHASE_EXCHANGE,
    Phase.PLAY: pb.PHASE_PLAY,
    Phase.BOMB_WINDOW: pb.PHASE_PLAY,
    Phase.WISH: pb.PHASE_PLAY,
    Phase.DRAGON_GIFT: pb.PHASE_PLAY,
}
_PHASES = {int(p): p for p in _VIEW_PHASE}


def _next_active(counts: Sequence[int], s: int) -> int:
    for k in (1, 2, 3):
        t = (s + k) & 3
        if counts[t]:
            return t
    return -1


_EV_PLAY = int(EventKind.PLAY)
_EV_PASS = int(EventKind.PASS)
_TRICK_BOUNDARIES = frozenset(
    {int(EventKind.TRICK_WON), int(EventKind.EXCHANGE), int(EventKind.HAND_START)}
)


def _trick_entries(obs: Observation) -> list[tuple[int, Play | None, int]]:
    """The running trick with its passes: (seat, play or None for a pass, out of turn).

    One backward pass over the hand's events to the trick's start (as ``_trick_start``
    finds it): on every play decision's path.
    """
    if not obs.trick:
        return []
    entries: list[tuple[int, Play | None, int]] = []
    add = entries.append
    events = obs.events
    for i in range(len(events) - 1, -1, -1):
        e = events[i]
        k = e[0]
        if k == _EV_PLAY:
            play = e[2]
            if play is not None and play[0] == _DOG_K:
                break  # the Dog's lead ended a trick
            add((e[1], play, e[3]))
        elif k == _EV_PASS:
            add((e[1], None, 0))
        elif k in _TRICK_BOUNDARIES:
            break
    entries.reverse()
    return entries


def _turn_seat(obs: Observation, entries: list[tuple[int, Play | None, int]]) -> int:
    """Who plays next in the trick if nobody bombs (-1 when not in the play phase)."""
    ph = obs.phase
    if ph is Phase.PLAY:
        return obs.seat
    counts = obs.card_counts
    if ph is Phase.WISH:
        return _next_active(counts, obs.seat)
    if ph is Phase.DRAGON_GIFT:
        owner = obs.seat
        return owner if counts[owner] else _next_active(counts, owner)
    if ph is Phase.BOMB_WINDOW and entries:
        seat, play, _ = entries[-1]
        if play is not None:
            return _next_active(counts, seat)
        owner = obs.trick[-1][0]
        return owner if counts[owner] else _next_active(counts, owner)
    return -1


def _clamp(ms: int) -> int:
    return 0 if ms < 0 else _UINT32_MAX if ms > _UINT32_MAX else ms


def encode_request(
    obs: Observation,
    *,
    request_id: int,
    state_seq: int,
    deadline_ms: int,
    bank_ms: int,
    history: Sequence[pb.Event] | bytes | bytearray | None = None,
    victory_points: Sequence[int] | None = None,
) -> pb.DecisionRequest:
    """The ``DecisionRequest`` for the seat to act: its full view and the legal answers.

    ``history`` replaces the conversion of ``obs.events`` (about 3 µs per event): the hand's
    wire events as messages, or already serialized as ``View``
    field 19 entries (merged in one parse), or ``()`` when the caller appends them itself.
    ``victory_points`` (by team) completes the scores in tournament mode.
    """
    phase = obs.phase
    if phase not in _VIEW_PHASE:
        raise ValueError(f"no decision to ask in phase {phase.name}")
    if obs.to_act != obs.seat:
        raise ValueError(f"seat {obs.seat} is not to act (seat {obs.to_act} is)")
    req = pb.DecisionRequest(
        request_id=request_id,
        state_seq=state_seq,
        kind=int(phase),  # type: ignore[arg-type]
        deadline_ms=_clamp(deadline_ms),
        bank_ms_left=_clamp(bank_ms),
    )
    seat = obs.seat
    v = req.view
    v.seat = seat
    v.hand_number = obs.hand_no + 1
    v.phase = _VIEW_PHASE[phase]
    v.hand = obs.hand
    v.card_counts.extend(obs.card_counts)
    v.grand_tichu.extend(obs.grand)
    v.tichu.extend(obs.tichu)
    v.may_call_tichu = obs.may_call_tichu
    v.wish_rank = obs.wish
    v.finished.extend(obs.out)
    v.won_points.extend(obs.won_points)
    v.played = obs.played
    v.seating.extend(_IDENTITY_SEATING)
    given = obs.given
    if given is not None:
        g = [0, 0, 0, 0]
        g[(seat + 1) & 3] = 1 << given[0]
        g[(seat + 2) & 3] = 1 << given[1]
        g[(seat + 3) & 3] = 1 << given[2]
        v.given_to.extend(g)
    if obs.received:
        r = [0, 0, 0, 0]
        for k, c in enumerate(obs.received, 1):
            r[(seat - k) & 3] = 1 << c
        v.received_from.extend(r)
    options = obs.options
    encode_scores(
        v.scores, obs.scores, tournament=options.tournament, victory_points=victory_points
    )
    if phase is not Phase.GRAND_TICHU and phase is not Phase.EXCHANGE:
        entries = _trick_entries(obs)
        if entries:
            t = v.trick
            add = t.entries.add
            for s, play, oot in entries:
                te = add(seat=s)
                if play is None:
                    te.play.combo = _COMBO_PASS  # type: ignore[assignment]
                else:
                    encode_play(te.play, play)
                    if oot:
                        te.out_of_turn = True
            top_seat, top = obs.trick[-1]
            encode_play(t.top, top)
            t.top_seat = top_seat
            pts = 0
            for _, p in obs.trick:
                pts += points_of(p[3])
            t.points = pts
        turn = _turn_seat(obs, entries)
        if turn >= 0:
            v.turn_seat = turn
    if isinstance(history, bytes | bytearray):
        v.MergeFromString(bytes(history))
    elif history is not None:
        v.history.extend(history)
    else:
        hand_events(
            obs.events,
            v.history,
            hand_no=obs.hand_no,
            first_seq=0,
            reveal_grand=options.grand_tichu and phase is not Phase.GRAND_TICHU,
        )
        h = v.history
        last = len(h) - 1
        for i, ev in enumerate(h):
            ev.state_seq = max(0, state_seq - (last - i))
    legal = req.legal
    acts = obs.legal
    if phase is Phase.PLAY or phase is Phase.BOMB_WINDOW:
        legal.MergeFromString(legal_plays_bytes(cast("Sequence[Play]", acts)))
    elif phase is Phase.EXCHANGE:
        legal.values.extend(cards_of(obs.hand))
    elif phase is Phase.GRAND_TICHU:
        legal.values.extend([int(a[0]) for a in cast("Sequence[GrandTichu]", acts)])
    else:  # WISH (Wish.rank), DRAGON_GIFT (Gift.to)
        legal.values.extend([a[0] for a in cast("Sequence[Wish | Gift]", acts)])
    return req


def encode_request_bytes(
    obs: Observation,
    *,
    request_id: int,
    state_seq: int,
    deadline_ms: int,
    bank_ms: int,
    history: bytes | bytearray = b"",
    victory_points: Sequence[int] | None = None,
) -> bytes:
    """``encode_request(...).SerializeToString()``, written directly as bytes (the referee's path).

    Building the message field by field costs more than the rest of a decision in the
    referee; this writes the same canonical bytes (fields in number order, proto3 defaults
    left out) from the observation. ``history`` holds the hand's events already serialized
    as ``View.history`` entries. ``test_wire_convert`` checks both encoders byte for byte.
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
        b"\x10",
        varint(obs.hand_no + 1),
        phase_field,
        b"\x21" + hand.to_bytes(8, "little") if hand else b"",
        b"\x2a\x04",
        bytes(obs.card_counts),
        b"\x32\x04",
        bytes(obs.grand),
        b"\x3a\x04",
        bytes(obs.tichu),
    ]
    add = v.append
    if obs.may_call_tichu:
        add(b"\x40\x01")
    turn = -1
    if phase is not Phase.GRAND_TICHU and phase is not Phase.EXCHANGE:
        entries = _trick_entries(obs)
        if entries:
            t = []
            cards = 0
            for s, play, oot in entries:
                if play is None:
                    t.append(_PASS_ENTRIES[s])
                else:
                    e = entry_bytes(s, play, oot)
                    cards |= play[3]
                    t.append(b"\x0a" + varint(len(e)) + e)
            top_seat, top = obs.trick[-1]
            t.append(_PLAY_FIELDS[top])
            t.append(_TOP_SEAT_FIELD[top_seat])
            pts = points_of(cards)
            if pts:
                t.append(b"\x20" + int32_bytes(pts))
            trick = _join(t)
            add(b"\x4a")
            add(varint(len(trick)))
            add(trick)
        turn = _turn_seat(obs, entries)
    if obs.wish:
        add(_WISH_FIELD[obs.wish])
    if turn >= 0:
        add(_TURN_SEAT_FIELD[turn])
    out = obs.out
    if out:
        add(b"\x62" + _ONE_BYTE[len(out)] + bytes(out))
    if obs.given is not None or obs.received:
        add(_EXCHANGE_FIELDS[(seat, obs.given, obs.received)])
    add(_WON_FIELDS[obs.won_points])
    if obs.played:
        add(b"\x81\x01" + obs.played.to_bytes(8, "little"))
    tournament = obs.options.tournament
    vp = None
    if tournament and victory_points is not None:
        vp = (victory_points[0], victory_points[1])
    add(_SCORES_FIELDS[(obs.scores, tournament, vp)])
    add(history)
    view = _join(v)
    acts = obs.legal
    if phase is Phase.PLAY or phase is Phase.BOMB_WINDOW:
        legal = legal_plays_bytes(cast("Sequence[Play]", acts))
    else:
        if phase is Phase.EXCHANGE:
            values = bytes(cards_of(hand))
        else:  # GrandTichu (a bool), Wish (a rank), Gift (a seat): one small int each
            values = bytes([int(a[0]) for a in cast("Sequence[GrandTichu | Wish | Gift]", acts)])
        legal = b"\x42" + varint(len(values)) + values if values else b""
    deadline = _clamp(deadline_ms)
    bank = _clamp(bank_ms)
    return _join(
        (
            b"\x08" + varint(request_id) if request_id else b"",
            b"\x10" + varint(state_seq) if state_seq else b"",
            _KIND_FIELD[phase],
            b"\x20" + varint(deadline) if deadline else b"",
            b"\x28" + varint(bank) if bank else b"",
            b"\x32",
            varint(len(view)),
            view,
            b"\x3a" + varint(len(legal)) if legal else b"",
            legal,
        )
    )


# The per-play caches below hold the plays of a few hands of every table (a hand's four
# seats hold a few hundred): big enough to serve a hand, small enough to stay in the CPU's
# cache (a play seen in an earlier hand rarely comes back).
_PLAY_CACHE = 1 << 14


class _PlayBytes(dict[Play, bytes]):
    """Per play: its serialized wire ``Play`` (bounded: cleared when full)."""

    def __missing__(self, play: Play) -> bytes:
        if len(self) >= _PLAY_CACHE:
            self.clear()
        kind, length, rank, cards = play
        b = b"\x08" + _ONE_BYTE[kind + 1]
        if length:
            b += b"\x10" + _ONE_BYTE[length]
        if rank:
            b += b"\x18" + _ONE_BYTE[rank]
        if cards:
            b += b"\x21" + cards.to_bytes(8, "little")
        if cards & PHOENIX_BIT and length > 1:
            b += b"\x28" + _ONE_BYTE[play.phoenix_rank]
        self[play] = b
        return b


_PLAY_BYTES = _PlayBytes()
_FOUR_FIXED64 = struct.Struct("<4Q")
_SEAT_FIELD = (b"", b"\x08\x01", b"\x08\x02", b"\x08\x03")  # TrickEntry.seat, View.seat
_TOP_SEAT_FIELD = (b"", b"\x18\x01", b"\x18\x02", b"\x18\x03")  # Trick.top_seat
_PASS_FIELD = b"\x12\x02\x08\x01"  # TrickEntry.play = Play{combo: COMBO_PASS}
_PASS_ENTRIES = tuple(  # Trick.entries = TrickEntry{seat, play: a pass}, by seat
    b"\x0a" + varint(len(_SEAT_FIELD[s] + _PASS_FIELD)) + _SEAT_FIELD[s] + _PASS_FIELD
    for s in range(4)
)
_VIEW_PHASE_FIELD = {p: b"\x18" + _ONE_BYTE[v] for p, v in _VIEW_PHASE.items()}  # View.phase
_KIND_FIELD = {p: b"\x18" + _ONE_BYTE[int(p)] for p in _VIEW_PHASE}  # DecisionRequest.kind
_WISH_FIELD = (b"", *(b"\x50" + _ONE_BYTE[r] for r in range(1, 17)))  # View.wish_rank
_TURN_SEAT_FIELD = tuple(b"\x58" + _ONE_BYTE[s] for s in range(4))  # View.turn_seat
_join = b"".join


class _PlayFields(dict[Play, bytes]):
    """Per play: the play as a length-delimited field 2 (``TrickEntry.play``, ``Trick.top``)."""

    def __missing__(self, play: Play) -> bytes:
        if len(self) >= _PLAY_CACHE:
            self.clear()
        body = _PLAY_BYTES[play]
        b = self[play] = b"\x12" + varint(len(body)) + body
        return b


class _ExchangeFields(dict[tuple[int, Exchange | None, tuple[int, ...]], bytes]):
    """Per (seat, cards given, cards received): ``View.given_to`` and ``received_from``."""

    def __missing__(self, key: tuple[int, Exchange | None, tuple[int, ...]]) -> bytes:
        if len(self) >= 4096:
            self.clear()
        seat, given, received = key
        b = b""
        if given is not None:
            g = [0, 0, 0, 0]
            for k, c in enumerate(given, 1):
                g[(seat + k) & 3] = 1 << c
            b = b"\x6a\x20" + _FOUR_FIXED64.pack(*g)
        if received:
            r = [0, 0, 0, 0]
            for k, c in enumerate(received, 1):
                r[(seat - k) & 3] = 1 << c
            b += b"\x72\x20" + _FOUR_FIXED64.pack(*r)
        self[key] = b
        return b


_PLAY_FIELDS = _PlayFields()


class _WonFields(dict[tuple[int, ...], bytes]):
    """Per won card points by seat: ``View.won_points`` (they change when a trick ends)."""

    def __missing__(self, won: tuple[int, ...]) -> bytes:
        if len(self) >= 4096:
            self.clear()
        b = b"".join(map(int32_bytes, won))
        b = self[won] = b"\x7a" + _ONE_BYTE[len(b)] + b
        return b


_WON_FIELDS = _WonFields()


class _ScoresFields(dict[tuple[tuple[int, int], bool, tuple[int, int] | None], bytes]):
    """Per (team scores, tournament, victory points): ``View.scores`` and ``View.seating``."""

    def __missing__(self, key: tuple[tuple[int, int], bool, tuple[int, int] | None]) -> bytes:
        if len(self) >= 4096:
            self.clear()
        (a, b), tournament, vp = key
        if tournament:
            sc = b""
            if vp is not None:
                x, y = vp
                v = int32_bytes(x) + int32_bytes(y) + int32_bytes(x) + int32_bytes(y)
                sc = b"\x12" + _ONE_BYTE[len(v)] + v
            pp = int32_bytes(a) + int32_bytes(b) + int32_bytes(a) + int32_bytes(b)
            sc += b"\x1a" + _ONE_BYTE[len(pp)] + pp
        else:
            tp = int32_bytes(a) + int32_bytes(b)
            sc = b"\x0a" + _ONE_BYTE[len(tp)] + tp
        field = self[key] = b"\x8a\x01" + _ONE_BYTE[len(sc)] + sc + _SEATING_FIELD
        return field


_SCORES_FIELDS = _ScoresFields()


def entry_bytes(seat: int, play: Play, out_of_turn: int | bool) -> bytes:
    """A play by a seat as the body of a ``TrickEntry`` or a ``Played`` event (same fields)."""
    b = _SEAT_FIELD[seat] + _PLAY_FIELDS[play]
    return b + b"\x18\x01" if out_of_turn else b


_EXCHANGE_FIELDS = _ExchangeFields()
_SEATING_FIELD = b"\x92\x01\x04" + bytes(_IDENTITY_SEATING)  # View.seating = 18


class _PlayRows(dict[Play, tuple[bytes, bytes, bytes, bytes, bytes, bytes, int]]):
    """Per play: its six ``LegalActions`` column values as bytes, and its figure bit."""

    def __missing__(self, play: Play) -> tuple[bytes, bytes, bytes, bytes, bytes, bytes, int]:
        if len(self) >= _PLAY_CACHE:
            self.clear()
        kind, length, rank, cards = play
        f = figure_index(play)
        phoenix = play.phoenix_rank if cards & PHOENIX_BIT and length > 1 else 0
        r = self[play] = (
            cards.to_bytes(8, "little"),
            _ONE_BYTE[kind + 1],
            _ONE_BYTE[length],
            _ONE_BYTE[rank],
            _ONE_BYTE[phoenix],
            varint(f),
            1 << f,
        )
        return r


_PLAY_ROWS = _PlayRows()
_FIGURE_MASK_TAG = b"\x3a" + varint(FIGURE_MASK_BYTES)


def legal_plays_bytes(plays: Sequence[Play]) -> bytes:
    """The ``LegalActions`` bytes of a play decision: six play columns and the figure mask.

    The hot path of every turn: the columns are written as packed protobuf fields
    (``LegalActions`` fields 1..7: fixed64 cards, then varint columns whose values are all
    below 128 except figures), with the per-play columns cached. Short lists are cached
    whole: a seat holding the same cards against the same play gets the same list (in
    random play, 89 % of the lists of one or two plays repeat and a third of those of three
    or four); longer ones almost never do, and hashing one to look it up costs a good part
    of building it.
    ``test_wire_convert`` checks the bytes against a field-by-field encoding.
    """
    if type(plays) is not tuple:
        plays = tuple(plays)
    if len(plays) <= _SHORT_LIST:
        return _SHORT_LISTS[plays]
    return _legal_bytes(plays)


class _ShortLists(dict[tuple[Play, ...], bytes]):
    """Per short legal list: its ``LegalActions`` bytes (bounded: cleared when full)."""

    def __missing__(self, plays: tuple[Play, ...]) -> bytes:
        if len(self) >= 4096:
            self.clear()
        b = self[plays] = _legal_bytes(plays)
        return b


def _legal_bytes(plays: tuple[Play, ...]) -> bytes:
    n = len(plays)
    if not n:
        raise ValueError("a play decision with no legal play")
    cards, combos, lengths, ranks, phoenix, figures, bits = zip(
        *map(_PLAY_ROWS.__getitem__, plays), strict=True
    )
    join = b"".join
    count = varint(n)
    fig = join(figures)
    return join(
        (
            b"\x0a",
            varint(8 * n),
            join(cards),
            b"\x12",
            count,
            join(combos),
            b"\x1a",
            count,
            join(lengths),
            b"\x22",
            count,
            join(ranks),
            b"\x2a",
            count,
            join(phoenix),  # 0 but for a Phoenix in a combination
            b"\x32",
            varint(len(fig)),
            fig,
            _FIGURE_MASK_TAG,
            reduce(or_, bits).to_bytes(FIGURE_MASK_BYTES, "little"),
        )
    )


_SHORT_LIST = 4
_SHORT_LISTS = _ShortLists()


_COMBO_TO_KIND = bytes.maketrans(bytes(range(1, 11)), bytes(range(10)))


def _decode_history(history: Iterable[pb.Event]) -> tuple[Event, ...]:
    events: list[Event] = []
    for ev in history:
        events.extend(decode_event(ev))
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
            self._events += _decode_history(history[k:])
        if n:
            self._first = history[0]
            self._last = history[n - 1]
        self._count = n
        return self._events


def decode_request(
    msg: pb.DecisionRequest, *, options: Options, cache: HistoryCache | None = None
) -> Observation:
    """The ``Observation`` a request describes; ``options`` come from ``Welcome.rules``.

    A ``HistoryCache`` kept across the requests of a stream decodes only the history events
    that are new since the last request.
    """
    phase = _PHASES.get(msg.kind)
    if phase is None:
        raise InvalidActionError(f"unknown decision kind {msg.kind}")
    v = msg.view
    seat = v.seat
    c = tuple(v.card_counts)
    gr = tuple(v.grand_tichu)
    ti = tuple(v.tichu)
    wp = tuple(v.won_points)
    if len(c) != 4 or len(gr) != 4 or len(ti) != 4 or len(wp) != 4:
        raise InvalidActionError("a view needs 4 card counts, calls and won points")
    trick: tuple[tuple[int, Play], ...] = ()
    if v.HasField("trick"):
        trick = tuple(
            (e.seat, decode_play(e.play)) for e in v.trick.entries if e.play.combo != _COMBO_PASS
        )
    given: Exchange | None = None
    gt = v.given_to
    if len(gt) == 4:
        given = _new(
            Exchange,
            (
                gt[(seat + 1) & 3].bit_length() - 1,
                gt[(seat + 2) & 3].bit_length() - 1,
                gt[(seat + 3) & 3].bit_length() - 1,
            ),
        )
    received: tuple[int, ...] = ()
    rf = v.received_from
    if len(rf) == 4:
        received = tuple(rf[(seat - k) & 3].bit_length() - 1 for k in (1, 2, 3))
    events = cache.decode(v.history) if cache is not None else _decode_history(v.history)
    legal: tuple[Action, ...]
    lg = msg.legal
    if phase is Phase.PLAY or phase is Phase.BOMB_WINDOW:
        cards = lg.cards
        try:
            combos = bytes(lg.combo)
        except ValueError:
            combos = b"\xff"
        if not len(combos) == len(lg.length) == len(lg.rank) == len(cards):
            raise InvalidActionError("the play columns of a legal list differ in length")
        if combos and (0 in combos or max(combos) > 10):
            raise InvalidActionError(f"unknown combo in a legal list: {list(lg.combo)}")
        legal = tuple(
            map(
                _new,
                repeat(Play),
                zip(combos.translate(_COMBO_TO_KIND), lg.length, lg.rank, cards, strict=True),
            )
        )
    elif phase is Phase.GRAND_TICHU:
        legal = tuple([_new(GrandTichu, (bool(x),)) for x in lg.values])
    elif phase is Phase.WISH:
        legal = tuple([_new(Wish, (x,)) for x in lg.values])
    elif phase is Phase.DRAGON_GIFT:
        legal = tuple([_new(Gift, (x,)) for x in lg.values])
    else:
        legal = ()
    return new_observation(  # in field order (every request of a bot comes here)
        seat,
        phase,
        seat,
        v.hand_number - 1,
        v.hand,
        c,  # four of each: checked above
        gr,
        ti,
        trick,
        v.wish_rank,
        tuple(v.finished),
        v.played,
        wp,
        given,
        received,
        decode_scores(v.scores),
        options,
        events,
        legal,
        v.may_call_tichu,
    )


# ----------------------------------------------------------------------------- answers


class AnswerError(InvalidActionError):
    """An answer that does not fit its request; ``code`` is the wire ``ErrorCode`` to send."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def encode_answer(
    action: Action,
    obs: Observation,
    call_tichu: bool = False,
    *,
    request_id: int = 0,
    state_seq: int = 0,
) -> pb.Action:
    """The wire answer picking ``action`` (an entry of ``obs.legal``, or an ``Exchange``)."""
    msg = pb.Action(request_id=request_id, state_seq=state_seq, call_tichu=call_tichu)
    if obs.phase is Phase.EXCHANGE:
        if type(action) is not Exchange:
            raise AnswerError(
                f"{action!r} does not answer an exchange: give an Exchange of three cards",
                pb.ERROR_CODE_MALFORMED,
            )
        msg.exchange_cards.extend(action)
        return msg
    try:
        i = obs.legal.index(action)
    except ValueError:
        raise AnswerError(
            f"{action!r} is not among the {len(obs.legal)} legal answers to this"
            f" {obs.phase.name.lower().replace('_', ' ')} decision",
            pb.ERROR_CODE_MALFORMED,
        ) from None
    msg.choice_index = i
    if type(action) is Play:
        msg.cards = action[3]
    return msg


def decode_answer(msg: pb.Action, obs: Observation) -> tuple[Action, bool]:
    """The rules action a wire answer picks and its Tichu flag, or ``AnswerError``.

    Checks the index range, the optional cards echo, the exchange cards and the Tichu flag
    (docs/protocol.md section 10); ``request_id`` and ``state_seq`` are the referee's to check.
    """
    call = msg.call_tichu
    if call and not obs.may_call_tichu:
        raise AnswerError(
            f"call_tichu is set but seat {obs.seat} may not call Tichu now",
            pb.ERROR_CODE_TICHU_NOT_ALLOWED,
        )
    if obs.phase is Phase.EXCHANGE:
        cards = list(msg.exchange_cards)
        if len(cards) != 3:
            raise AnswerError(
                f"exchange_cards must hold 3 card ids, not {len(cards)}: {cards}",
                pb.ERROR_CODE_MALFORMED,
            )
        hand = obs.hand
        for x in cards:
            if not (x < 56 and hand >> x & 1):
                raise AnswerError(
                    f"card {x} in exchange_cards is not in seat {obs.seat}'s hand",
                    pb.ERROR_CODE_ILLEGAL_EXCHANGE,
                )
        if len(set(cards)) != 3:
            raise AnswerError(
                f"exchange_cards must be three different cards, not {cards}",
                pb.ERROR_CODE_ILLEGAL_EXCHANGE,
            )
        return _new(Exchange, (cards[0], cards[1], cards[2])), call
    legal = obs.legal
    i = msg.choice_index
    if i >= len(legal):
        raise AnswerError(
            f"choice_index {i} is out of range: the legal list has {len(legal)} entries",
            pb.ERROR_CODE_MALFORMED,
        )
    action = legal[i]
    if msg.HasField("cards") and type(action) is Play and msg.cards != action[3]:
        raise AnswerError(
            f"cards {msg.cards} do not match entry {i}, whose cards are {action[3]}",
            pb.ERROR_CODE_CARDS_MISMATCH,
        )
    return action, call


def default_answer(obs: Observation) -> Action:
    """The referee's default (docs/protocol.md section 6): pass, no call, lowest three cards."""
    if obs.phase is Phase.EXCHANGE:
        low = list(cards_of(obs.hand))[:3]
        return _new(Exchange, (low[0], low[1], low[2]))
    if obs.legal and obs.legal[0] == PASS:
        return PASS
    return obs.legal[0]
