"""A decision on the wire: ``Observation`` <-> ``DecisionRequest`` (the readable reference).

The referee asks each decision with ``DecisionRequest`` bytes written by
``arena.wire.fastpath``; ``encode_request`` builds the same request as a message, field by
field, and is what the fast path is checked against (``tests/wire/test_fastpath.py``). The SDK
reads requests with ``decode_request``: ``decode_request(encode_request(obs, ...),
options=obs.options) == obs`` for every observation of the seat to act.

* The view's trick lists passes too (``Observation.entries``); ``turn_seat`` is
  ``Observation.turn``, absent when it is -1.
* Rule options are not part of a view; they travel once, in ``Welcome.rules``, so
  ``decode_request`` takes them as an argument.
* The history is the hand's events, one ``Event`` each (``arena.wire.events``).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from typing import cast

from arena.rules.actions import Action, Exchange, Gift, GrandTichu, Phase, Wish
from arena.rules.cards import PHOENIX_BIT, cards_of
from arena.rules.combos import PASS, Play
from arena.rules.errors import InvalidActionError
from arena.rules.observe import Observation, TrickEntry, new_observation
from arena.rules.state import Options
from arena.wire import pb
from arena.wire.events import HistoryCache, decode_history, encode_event
from arena.wire.values import (
    COMBO_PASS,
    IDENTITY_SEATING,
    PASS_K,
    PHASES,
    VIEW_PHASE,
    clamp_ms,
    decode_play,
    decode_scores,
    encode_play,
    encode_scores,
    figure_index,
    figure_mask,
)

_new = tuple.__new__
_COMBO_TO_KIND = bytes.maketrans(bytes(range(1, 11)), bytes(range(10)))


def encode_legal(msg: pb.LegalActions, obs: Observation) -> None:
    """Writes the legal answers of ``obs`` into ``msg`` (docs/protocol.md section 6)."""
    phase = obs.phase
    acts = obs.legal
    if phase is Phase.PLAY or phase is Phase.BOMB_WINDOW:
        plays = cast("Sequence[Play]", acts)
        if not plays:
            raise ValueError("a play decision with no legal play")
        figures = [figure_index(p) for p in plays]
        msg.cards.extend([p[3] for p in plays])
        msg.combo.extend([p[0] + 1 for p in plays])  # type: ignore[misc]
        msg.length.extend([p[1] for p in plays])
        msg.rank.extend([p[2] for p in plays])
        msg.phoenix_rank.extend(
            [p.phoenix_rank if p[3] & PHOENIX_BIT and p[1] > 1 else 0 for p in plays]
        )
        msg.figure.extend(figures)
        msg.figure_mask = figure_mask(figures)
    elif phase is Phase.EXCHANGE:
        msg.values.extend(cards_of(obs.hand))
    elif phase is Phase.GRAND_TICHU:
        msg.values.extend([int(a[0]) for a in cast("Sequence[GrandTichu]", acts)])
    else:  # WISH (Wish.rank), DRAGON_GIFT (Gift.to)
        msg.values.extend([a[0] for a in cast("Sequence[Wish | Gift]", acts)])


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

    ``history`` replaces the conversion of ``obs.events``: the hand's wire events as
    messages, or already serialized as ``View`` field 19 entries (merged in one parse), or
    ``()`` when the caller appends them itself. Without it, the events are numbered so that
    the last one has ``state_seq``. ``victory_points`` (by team) completes the scores in
    tournament mode.
    """
    phase = obs.phase
    if phase not in VIEW_PHASE:
        raise ValueError(f"no decision to ask in phase {phase.name}")
    if obs.to_act != obs.seat:
        raise ValueError(f"seat {obs.seat} is not to act (seat {obs.to_act} is)")
    req = pb.DecisionRequest(
        request_id=request_id,
        state_seq=state_seq,
        kind=int(phase),  # type: ignore[arg-type]
        deadline_ms=clamp_ms(deadline_ms),
        bank_ms_left=clamp_ms(bank_ms),
    )
    seat = obs.seat
    v = req.view
    v.seat = seat
    v.hand_number = obs.hand_no + 1
    v.phase = VIEW_PHASE[phase]
    v.hand = obs.hand
    v.card_counts.extend(obs.card_counts)
    v.grand_tichu.extend(obs.grand)
    v.tichu.extend(obs.tichu)
    v.may_call_tichu = obs.may_call_tichu
    v.wish_rank = obs.wish
    v.finished.extend(obs.out)
    v.won_points.extend(obs.won_points)
    v.played = obs.played
    v.seating.extend(IDENTITY_SEATING)
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
    if obs.entries:
        t = v.trick
        for entry in obs.entries:
            te = t.entries.add(seat=entry.seat)
            encode_play(te.play, entry.play)
            if entry.out_of_turn:
                te.out_of_turn = True
        top_seat, top = obs.trick[-1]
        encode_play(t.top, top)
        t.top_seat = top_seat
        t.points = obs.trick_points
    if obs.turn >= 0:
        v.turn_seat = obs.turn
    if isinstance(history, bytes | bytearray):
        v.MergeFromString(bytes(history))
    elif history is not None:
        v.history.extend(history)
    else:
        last = len(obs.events) - 1
        for i, e in enumerate(obs.events):
            seq = max(0, state_seq - (last - i))
            v.history.append(encode_event(e, state_seq=seq, hand_no=obs.hand_no))
    encode_legal(req.legal, obs)
    return req


def decode_request(
    msg: pb.DecisionRequest, *, options: Options, cache: HistoryCache | None = None
) -> Observation:
    """The ``Observation`` a request describes; ``options`` come from ``Welcome.rules``.

    A ``HistoryCache`` kept across the requests of a stream decodes only the history events
    that are new since the last request.
    """
    phase = PHASES.get(msg.kind)
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
    entries: tuple[TrickEntry, ...] = ()
    if v.HasField("trick"):
        entries = tuple(
            [
                _new(
                    TrickEntry,
                    (
                        e.seat,
                        PASS if e.play.combo == COMBO_PASS else decode_play(e.play),
                        e.out_of_turn,
                    ),
                )
                for e in v.trick.entries
            ]
        )
        trick = tuple([(e[0], e[1]) for e in entries if e[1][0] != PASS_K])
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
    events = cache.decode(v.history) if cache is not None else decode_history(v.history)
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
        entries,
        v.turn_seat if v.HasField("turn_seat") else -1,
    )


__all__ = ["HistoryCache", "decode_request", "encode_legal", "encode_request"]
