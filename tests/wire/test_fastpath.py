"""The fast path (``arena.wire.fastpath``) writes exactly what upb writes for the reference.

Every fast encoder is checked against ``SerializeToString`` of the message the reference
encoder builds (``arena.wire.request``, ``arena.wire.events``): requests (with their history),
legal lists, events and their framing, the varints and every tag; on thousands of states from
many seeds, and on states and values drawn by hypothesis. (Answers have no fast encoder: the
SDK writes them through the message, ``arena.wire.answer``.)
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from google.protobuf.descriptor import FieldDescriptor
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.rules import (
    Event,
    EventKind,
    Observation,
    Options,
    Phase,
    Play,
    combinations,
    parse_cards,
)
from arena.rules.cards import DOG_BIT, mask_of
from arena.rules.observe import replace_observation
from arena.wire import pb
from arena.wire.events import encode_event
from arena.wire.fastpath import (
    FAST,
    SHORT_LIST,
    FastPath,
    decision_message,
    framed_event,
    int32_bytes,
    tag,
    varint,
)
from arena.wire.request import encode_legal, encode_request
from tests.wire.matches import OPTIONS, random_states

ARGS = {"request_id": 7, "state_seq": 1000, "deadline_ms": 500, "bank_ms": 2000}


def history_bytes(fast: FastPath, obs: Observation, last_seq: int) -> bytes:
    """The hand's events as ``View.history`` entries, written by the fast path."""
    parts = []
    n = len(obs.events)
    for i, e in enumerate(obs.events):
        b = fast.event(e, max(0, last_seq - (n - 1 - i)), obs.hand_no + 1)
        assert b is not None
        parts.append(b.history)
    return b"".join(parts)


def assert_same_request(fast: FastPath, obs: Observation, **args: int) -> None:
    """The fast request equals upb's bytes of the reference request, history included."""
    kwargs = ARGS | args
    vp = (obs.hand_no * 7 - 20, 13) if obs.options.tournament else None
    reference = encode_request(obs, victory_points=vp, **kwargs)  # history from obs.events
    history = history_bytes(fast, obs, kwargs["state_seq"])
    raw = fast.request(obs, history=history, victory_points=vp, **kwargs)
    assert raw == reference.SerializeToString()
    assert decision_message(raw) == pb.RefereeMessage(decision=reference).SerializeToString()


def legal_reference(obs: Observation) -> bytes:
    msg = pb.LegalActions()
    encode_legal(msg, obs)
    return msg.SerializeToString()


# ---------------------------------------------------------------------------
# Requests and legal lists, on every decision of many matches
# ---------------------------------------------------------------------------


@pytest.mark.slow  # thousands of states
def test_requests_and_legal_lists_over_thousands_of_states() -> None:
    fast = FastPath()
    count = lists = long_lists = 0
    phases: set[Phase] = set()
    for seed in range(40):
        for _, obs in random_states(seed, OPTIONS[seed % len(OPTIONS)]):
            assert_same_request(fast, obs)
            phases.add(obs.phase)
            count += 1
            if obs.phase in (Phase.PLAY, Phase.BOMB_WINDOW):
                plays: Sequence[Play] = obs.legal  # type: ignore[assignment]
                assert fast.legal_plays(plays) == legal_reference(obs)
                assert fast.legal_plays(list(plays)) == legal_reference(obs)  # a list too
                lists += 1
                long_lists += len(plays) > SHORT_LIST
    assert count > 8000 and lists > 3000 and long_lists > 500
    assert phases == set(Phase) - {Phase.MATCH_OVER}


@pytest.mark.slow  # thousands of states
@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    options=st.sampled_from(OPTIONS),
    calls=st.floats(0, 0.5),
    bombs=st.floats(0, 1),
    ids=st.tuples(st.integers(0, 2**40), st.integers(0, 2**40)),
    clock=st.tuples(st.integers(-5, 2**33), st.integers(-5, 2**33)),
)
def test_requests_hypothesis(
    seed: int,
    options: Options,
    calls: float,
    bombs: float,
    ids: tuple[int, int],
    clock: tuple[int, int],
) -> None:
    rid, seq = ids
    deadline, bank = clock
    for _, obs in random_states(seed, options, calls=calls, bombs=bombs):
        assert_same_request(
            FAST, obs, request_id=rid, state_seq=seq, deadline_ms=deadline, bank_ms=bank
        )


_HANDS = st.lists(st.integers(0, 55), min_size=1, max_size=14, unique=True)
_A_TURN = next(obs for _, obs in random_states(0, Options(hands=1)) if obs.phase is Phase.PLAY)


@settings(max_examples=300, deadline=None)
@given(cards=_HANDS, data=st.data())
def test_legal_lists_hypothesis(cards: list[int], data: st.DataObject) -> None:
    """Any list of plays of a hand: the fast columns and mask are upb's bytes."""
    plays = combinations(mask_of(cards))
    legal = tuple(data.draw(st.lists(st.sampled_from(plays), min_size=1, max_size=40)))
    obs = replace_observation(_A_TURN, legal=legal)
    assert FAST.legal_plays(legal) == legal_reference(obs)


def test_an_empty_legal_list_is_refused() -> None:
    with pytest.raises(ValueError, match="no legal play"):
        FastPath().legal_plays(())


def test_caches_stay_within_their_bound_and_bytes_do_not_change() -> None:
    small = FastPath(limit=8)
    for seed in range(3):
        for _, obs in random_states(seed, OPTIONS[seed % len(OPTIONS)]):
            assert_same_request(small, obs)
            assert all(len(memo) <= 8 for memo in small._memos)
    assert any(len(memo) for memo in small._memos)
    small.clear()
    assert not any(len(memo) for memo in small._memos)


# ---------------------------------------------------------------------------
# Events
# ---------------------------------------------------------------------------


def assert_same_event(e: Event, seq: int, hand: int) -> None:
    b = FAST.event(e, seq, hand)
    assert b is not None
    msg = encode_event(e, state_seq=seq, hand_no=hand - 1)
    assert b.message == pb.RefereeMessage(event=msg).SerializeToString(), e
    assert b.history == pb.View(history=[msg]).SerializeToString(), e
    assert framed_event(msg.SerializeToString()) == b


def test_every_event_of_many_matches() -> None:
    kinds: set[int] = set()
    seq = 0
    for seed in range(16):
        states = random_states(seed, OPTIONS[seed % len(OPTIONS)])
        m, _ = next(states)
        for _ in states:
            pass
        for h, events in enumerate([*m.log, m.events]):
            for e in events:
                seq += 1
                if e.kind == EventKind.HAND_END:
                    assert FAST.event(e, seq, h + 1) is None  # its result: the message's
                    continue
                assert_same_event(e, seq, h + 1)
                kinds.add(e.kind)
    assert kinds == set(EventKind) - {EventKind.HAND_END}


_PLAYS = [
    p
    for h in ("Ph 2j 2s 3j 4p 5t 6j Aj", "Dg Mj Dr 5j 5s 5p 5t Tj Ks", "Ph Ks Kj")
    for p in combinations(parse_cards(h))
]


@settings(max_examples=500, deadline=None)
@given(
    kind=st.sampled_from([k for k in EventKind if k != EventKind.HAND_END]),
    seq=st.integers(0, 2**40),
    hand=st.integers(0, 300),
    seat=st.integers(0, 3),
    play=st.sampled_from(_PLAYS),
    value=st.integers(0, 15),
    points=st.integers(-25, 125),
    cards=st.integers(0, 2**56 - 1),
)
def test_events_hypothesis(
    kind: EventKind, seq: int, hand: int, seat: int, play: Play, value: int, points: int, cards: int
) -> None:
    """Any event of a hand, with any numbers: the fast bytes are the message's."""
    if kind == EventKind.PLAY:
        e = Event(kind, seat, play, value & 1)
    elif kind == EventKind.TRICK_WON:
        e = Event(kind, seat, None, 0, points, cards)
    elif kind == EventKind.DRAGON_GIFT:
        e = Event(kind, seat, None, value & 3, points, cards)
    elif kind in (EventKind.HAND_START, EventKind.EXCHANGE):
        e = Event(kind, -1)
    elif kind == EventKind.GRAND_TICHU:
        e = Event(kind, -1, None, value)
    else:
        e = Event(kind, seat, None, value)
    assert_same_event(e, seq, hand)


def test_the_dog_trick_bytes() -> None:
    e = Event(EventKind.TRICK_WON, 2, None, 0, 0, DOG_BIT)
    b = FAST.event(e, 5, 1)
    assert b is not None
    body = b"\x08\x05\x10\x01\x5a\x0b\x08\x02\x19" + DOG_BIT.to_bytes(8, "little")
    assert b.message == b"\x22\x11" + body


# ---------------------------------------------------------------------------
# Varints and tags
# ---------------------------------------------------------------------------


@given(st.integers(1, 2**64 - 1))
def test_varint_is_protobufs_encoding(n: int) -> None:
    assert pb.Action(request_id=n).SerializeToString() == b"\x08" + varint(n)


@given(st.integers(-(2**31), 2**31 - 1))
def test_int32_bytes_is_protobufs_encoding(n: int) -> None:
    wire = pb.TrickWon(points=n).SerializeToString()
    assert wire == (b"\x10" + int32_bytes(n) if n else b"")


def test_varint_covers_the_table_edges() -> None:
    for n in (1, 127, 128, 16383, 16384, 2**21 - 1, 2**21, 2**28):
        assert pb.Action(request_id=n).SerializeToString() == b"\x08" + varint(n)
    with pytest.raises(ValueError, match="negative"):
        varint(-1)


def _messages() -> list[type]:
    return [getattr(pb, name) for name in pb.DESCRIPTOR.message_types_by_name]


def _set_one(msg: object, f: FieldDescriptor) -> None:
    """Sets field ``f`` of ``msg`` to a value that is not the default."""
    if f.type == FieldDescriptor.TYPE_MESSAGE:
        sub = getattr(msg, f.name)
        if f.is_repeated:
            sub.add()
        else:
            sub.SetInParent()
        return
    value: object
    if f.type == FieldDescriptor.TYPE_STRING:
        value = "x"
    elif f.type == FieldDescriptor.TYPE_BYTES:
        value = b"x"
    elif f.type == FieldDescriptor.TYPE_BOOL:
        value = True
    else:
        value = 1
    if f.is_repeated:
        getattr(msg, f.name).append(value)
    else:
        setattr(msg, f.name, value)


def test_tags_are_what_upb_writes_for_every_field() -> None:
    checked = 0
    for cls in _messages():
        for f in cls.DESCRIPTOR.fields:
            msg = cls()
            _set_one(msg, f)
            assert msg.SerializeToString().startswith(tag(cls, f.name)), (cls.__name__, f.name)
            checked += 1
    assert checked > 150
