"""Tests for the reference encoders of ``arena.wire``: views, figures, events, answers.

The fast path is checked against these in ``test_fastpath.py``.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import fields, replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.rules import (
    CALL_TICHU,
    NO_GRAND,
    PASS,
    Action,
    Event,
    EventKind,
    Exchange,
    Gift,
    InvalidActionError,
    Match,
    Observation,
    Options,
    Phase,
    Play,
    Wish,
    cards_of,
    combinations,
    next_active,
    observe,
    parse_cards,
    parse_play,
)
from arena.rules.cards import (
    DOG_BIT,
    DRAGON_BIT,
    MAHJONG_BIT,
    PHOENIX_BIT,
    card,
    mask_of,
    points_of,
)
from arena.rules.observe import TrickEntry, default_action
from arena.wire import FIGURE_COUNT, FIGURE_MASK_BYTES, pb
from arena.wire.answer import AnswerError, decode_answer, encode_answer
from arena.wire.events import HistoryCache, decode_event, encode_event
from arena.wire.request import decode_request, encode_request
from arena.wire.values import decode_options, encode_options, figure_index
from tests.wire.matches import OPTIONS, NumberedEvents, hand_end, random_states

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


# ---------------------------------------------------------------------------
# Views
# ---------------------------------------------------------------------------


def reference_trick(obs: Observation) -> list[TrickEntry]:
    """The running trick's plays and passes, found plainly: the events after its start."""
    if not obs.trick:
        return []
    ends = (EventKind.TRICK_WON, EventKind.DRAGON_GIFT, EventKind.EXCHANGE, EventKind.HAND_START)
    start = 0
    for i, e in enumerate(obs.events):
        if e.kind in ends:
            start = i + 1
    return [
        TrickEntry(e.seat, e.play if e.play is not None else PASS, e.value == 1)
        for e in obs.events[start:]
        if e.kind in (EventKind.PLAY, EventKind.PASS)
    ]


def assert_round_trip(obs: Observation, **kwargs: int) -> pb.DecisionRequest:
    """Encodes ``obs`` as a request, through its bytes, and decodes it back."""
    args = {
        "request_id": kwargs.get("request_id", 7),
        "state_seq": kwargs.get("state_seq", 1000),
        "deadline_ms": kwargs.get("deadline_ms", 500),
        "bank_ms": kwargs.get("bank_ms", 2000),
    }
    vp = (obs.hand_no * 7 - 20, 13) if obs.options.tournament else None
    req = encode_request(obs, victory_points=vp, **args)
    wire = pb.DecisionRequest.FromString(req.SerializeToString())
    assert list(obs.entries) == reference_trick(obs), "the trick's plays and passes"
    back = decode_request(wire, options=obs.options)
    if back != obs:
        diff = [f.name for f in fields(obs) if getattr(obs, f.name) != getattr(back, f.name)]
        raise AssertionError(f"fields differ after the round trip: {diff}")
    return wire


@pytest.mark.slow  # thousands of states
def test_round_trip_over_thousands_of_states() -> None:
    seen_phases: set[Phase] = set()
    seen_events: set[int] = set()
    count = 0
    for seed in range(24):
        for _, obs in random_states(seed, OPTIONS[seed % len(OPTIONS)]):
            assert_round_trip(obs)
            seen_phases.add(obs.phase)
            seen_events.update(e.kind for e in obs.events)
            count += 1
    assert count > 5000
    assert seen_phases == set(Phase) - {Phase.MATCH_OVER}
    assert seen_events == set(EventKind) - {EventKind.HAND_END}


@pytest.mark.slow  # thousands of states
@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    options=st.sampled_from(OPTIONS),
    calls=st.floats(0, 0.5),
    bombs=st.floats(0, 1),
)
def test_round_trip_hypothesis(seed: int, options: Options, calls: float, bombs: float) -> None:
    for _, obs in random_states(seed, options, calls=calls, bombs=bombs):
        assert_round_trip(obs)


def _states_with_bombs() -> Iterator[tuple[Match, Observation]]:
    for seed in range(6):
        yield from random_states(seed, Options(hands=3), bombs=0.3)


def test_request_shape_follows_the_protocol() -> None:
    kinds: set[int] = set()
    windows = 0
    for m, obs in _states_with_bombs():
        req = assert_round_trip(obs, request_id=3, state_seq=44, deadline_ms=123, bank_ms=456)
        assert (req.request_id, req.state_seq, req.deadline_ms, req.bank_ms_left) == (
            3,
            44,
            123,
            456,
        )
        assert req.kind == int(obs.phase)
        kinds.add(req.kind)
        v, lg = req.view, req.legal
        assert v.hand_number == obs.hand_no + 1
        assert list(v.seating) == [0, 1, 2, 3]
        assert len(v.card_counts) == len(v.tichu) == len(v.grand_tichu) == 4
        assert v.history[0].WhichOneof("kind") == "hand_started"
        assert v.history[-1].state_seq == 44
        if obs.phase in (Phase.PLAY, Phase.BOMB_WINDOW):
            n = len(lg.cards)
            assert n == len(obs.legal) >= 1
            assert n == len(lg.combo) == len(lg.length) == len(lg.rank) == len(lg.figure)
            assert n == len(lg.phoenix_rank)
            assert len(lg.figure_mask) == FIGURE_MASK_BYTES and not lg.values
            assert v.phase == pb.PHASE_PLAY and v.HasField("turn_seat")
            if obs.phase is Phase.PLAY:
                assert v.turn_seat == obs.seat
            elif m.resume == 0:  # a window after a play: the next seat's turn if nobody bombs
                assert v.turn_seat == m.turn
                windows += 1
            else:  # a window after the last pass: the trick's owner leads next
                owner = m.owner if m.hands[m.owner] else next_active(m.owner, m.hands)
                assert v.turn_seat == owner
                windows += 1
            if obs.phase is Phase.BOMB_WINDOW:
                assert lg.combo[0] == pb.COMBO_PASS and lg.cards[0] == 0
            assert v.HasField("trick") == bool(obs.trick)
        else:
            assert not lg.cards and not lg.figure_mask
        if obs.phase is Phase.EXCHANGE:
            assert list(lg.values) == list(cards_of(obs.hand))
            assert not v.HasField("turn_seat")
        if obs.phase is Phase.GRAND_TICHU:
            assert list(lg.values) == [0, 1]
        if obs.phase is Phase.WISH:
            assert list(lg.values) == [0, *range(2, 15)]
        if obs.phase is Phase.DRAGON_GIFT:
            assert list(lg.values) == [(obs.seat + 1) % 4, (obs.seat + 3) % 4]
        if obs.trick:
            t = v.trick
            plays = [e for e in t.entries if e.play.combo != pb.COMBO_PASS]
            assert t.top == plays[-1].play and t.top_seat == plays[-1].seat
            assert t.points == sum(points_of(p.cards) for _, p in obs.trick)
            # Passes are listed too: as many after the last play as the state counts.
            tail = 0
            for e in reversed(t.entries):
                if e.play.combo != pb.COMBO_PASS:
                    break
                tail += 1
            assert tail == m.passes
            # The trick is the history since the trick began (plays keep their flags).
            since: list[tuple[int, pb.Play, bool]] = []
            for e in v.history:
                which = e.WhichOneof("kind")
                if which in ("trick_won", "dragon_given", "exchange_done", "hand_started"):
                    since = []
                elif which == "played":
                    since.append((e.played.seat, e.played.play, e.played.out_of_turn))
                elif which == "passed":
                    since.append((e.passed.seat, pb.Play(combo=pb.COMBO_PASS), False))
            assert [(e.seat, e.play, e.out_of_turn) for e in t.entries] == since
    assert kinds == {1, 2, 3, 4, 5, 6}
    assert windows > 0


def test_tournament_scores_are_per_player() -> None:
    m = Match(Options.turnier(), seed=3)
    while m.hand_no < 1:
        obs = observe(m, m.seat)
        m.apply(obs.legal[0] if obs.legal else Exchange(*list(cards_of(obs.hand))[:3]))
    obs = observe(m, m.seat)
    req = encode_request(
        obs, request_id=1, state_seq=1, deadline_ms=1, bank_ms=0, victory_points=(2, 0)
    )
    s = req.view.scores
    assert not s.team_points
    assert list(s.player_points) == [m.scores[0], m.scores[1], m.scores[0], m.scores[1]]
    assert list(s.victory_points) == [2, 0, 2, 0]
    assert decode_request(req, options=obs.options) == obs


def test_encode_request_refuses_a_seat_not_to_act() -> None:
    m = Match(Options(), seed=1)
    m.apply(NO_GRAND)  # seat 0 has answered the Grand Tichu decision; seats 1..3 are asked
    with pytest.raises(ValueError, match="not to act"):
        encode_request(observe(m, 0), request_id=1, state_seq=1, deadline_ms=1, bank_ms=1)


def test_options_round_trip() -> None:
    for o in (*OPTIONS, Options()):
        assert decode_options(encode_options(o)) == o
    assert decode_options(pb.RulesOptions(hand_count=4)).target_score == 1000


# ---------------------------------------------------------------------------
# Events: one rules event is one wire event
# ---------------------------------------------------------------------------


def test_numbered_events_and_every_history_are_the_rules_events() -> None:
    for seed in range(8):
        options = OPTIONS[seed % 3]
        m = Match(options, seed=seed)
        feed = NumberedEvents(m)
        sent = feed.advance()
        rng = random.Random(seed)
        while not m.over:
            obs = observe(m, m.seat)
            req = encode_request(
                obs, request_id=1, state_seq=feed.state_seq, deadline_ms=1, bank_ms=1
            )
            # The view's history is the hand's events as the stream numbered them.
            assert list(req.view.history) == sent[len(sent) - len(m.events) :]
            if obs.may_call_tichu and rng.random() < 0.2:
                m.apply(CALL_TICHU)
            if obs.phase is Phase.EXCHANGE:
                m.apply(Exchange(*rng.sample(list(cards_of(obs.hand)), 3)))
            else:
                m.apply(rng.choice(obs.legal))
            sent += feed.advance()
        assert [e.state_seq for e in sent] == list(range(1, len(sent) + 1))
        ends = [e for e in sent if e.WhichOneof("kind") == "hand_end"]
        assert len(ends) == len(m.hand_results)
        for ev, r in zip(ends, m.hand_results, strict=True):
            h = ev.hand_end
            assert h.hand_number == r.hand + 1 == ev.hand_number
            order = list(h.finishing_order)
            assert order[: len(r.out)] == list(r.out)
            assert len(order) == (2 if r.double_victory >= 0 else 4)
            assert sorted(order) == sorted(set(order))
            assert h.double_victory == (r.double_victory >= 0)
            assert list(h.hand_points) == list(r.score)
            assert list(h.bet_points) == list(r.bets)
            if r.double_victory >= 0:
                assert list(h.card_points) == [0, 0]
            else:
                assert list(h.card_points) == list(r.card_points)
                assert sum(h.card_points) == 100
            called = [t for t in range(4) if r.grand[t] or r.tichu[t]]
            assert [b.seat for b in h.bets] == called
            for b in h.bets:
                stake = 200 if b.grand else 100
                assert b.won == (b.seat == r.out[0])
                assert b.points == (stake if b.won else -stake)
        last = ends[-1].hand_end
        if options.tournament:
            assert list(last.scores.player_points)[:2] == m.scores
            assert list(last.scores.victory_points)[:2] == m.vp
        else:
            assert list(last.scores.team_points) == m.scores
        # Decoding the stream gives back the rules events of every hand, in order.
        assert [decode_event(e) for e in sent] == [e for hand in m.log for e in hand]


def test_wire_event_shapes() -> None:
    """The Grand Tichu reveal, the Dog's trick and the Dragon gift, one wire event each."""
    dog = parse_play("Dg")
    dragon = parse_play("Dr")
    events = [
        Event(EventKind.HAND_START, -1, None, 4),
        Event(EventKind.GRAND_TICHU, -1, None, 0b0100),
        Event(EventKind.EXCHANGE, -1),
        Event(EventKind.PLAY, 1, dog, 0),
        Event(EventKind.OUT, 1, None, 1),
        Event(EventKind.TRICK_WON, 1, None, 0, 0, DOG_BIT),
        Event(EventKind.PLAY, 3, dragon, 0),
        Event(EventKind.PASS, 0),
        Event(EventKind.DRAGON_GIFT, 3, None, 0, 25, DRAGON_BIT),
    ]
    out = [encode_event(e, state_seq=10 + i, hand_no=4) for i, e in enumerate(events)]
    kinds = [e.WhichOneof("kind") for e in out]
    assert kinds == [
        "hand_started",
        "grand_tichu_revealed",
        "exchange_done",
        "played",
        "player_out",
        "trick_won",
        "played",
        "passed",
        "dragon_given",
    ]
    assert [e.state_seq for e in out] == list(range(10, 19))
    assert all(e.hand_number == 5 for e in out)
    assert list(out[1].grand_tichu_revealed.called) == [False, False, True, False]
    w = out[5].trick_won
    assert (w.seat, w.points, w.cards) == (1, 0, DOG_BIT)
    d = out[8].dragon_given
    assert (d.from_seat, d.to_seat, d.points, d.cards) == (3, 0, 25, DRAGON_BIT)
    assert [decode_event(e) for e in out] == events
    # Nobody called: the reveal still comes, with four "no"s.
    none = encode_event(Event(EventKind.GRAND_TICHU, -1), state_seq=1, hand_no=0)
    assert list(none.grand_tichu_revealed.called) == [False] * 4
    assert decode_event(none) == Event(EventKind.GRAND_TICHU, -1)
    # The referee's own events have no rules counterpart.
    assert decode_event(pb.Event(failure=pb.Failure(seat=1))) is None
    assert decode_event(pb.Event(match_end=pb.MatchResult())) is None


def test_rules_events_have_the_public_shape() -> None:
    """A real match's Dog, Dragon gift and tricks carry what the wire shows."""
    seen = set()
    for seed in range(12):
        states = random_states(seed, OPTIONS[seed % 3])
        m, _ = next(states)
        for _ in states:  # plays the match on
            pass
        for events in m.log:
            for i, e in enumerate(events):
                if e.kind == EventKind.PLAY and e.play is not None and e.play.cards == DOG_BIT:
                    after = next(x for x in events[i + 1 :] if x.kind != EventKind.OUT)
                    assert (after.kind, after.seat, after.points) == (
                        EventKind.TRICK_WON,
                        e.seat,
                        0,
                    )
                    assert after.cards == DOG_BIT
                    seen.add("dog")
                if e.kind in (EventKind.TRICK_WON, EventKind.DRAGON_GIFT):
                    assert e.points == points_of(e.cards)
                    seen.add(e.kind.name)
    assert seen == {"dog", "TRICK_WON", "DRAGON_GIFT"}


def test_encode_event_one_to_one() -> None:
    e = Event(EventKind.WISH, 2, None, 9)
    msg = encode_event(e, state_seq=5, hand_no=0)
    assert (msg.state_seq, msg.hand_number, msg.wish_made.seat, msg.wish_made.rank) == (
        5,
        1,
        2,
        9,
    )
    assert decode_event(msg) == e
    end = Event(EventKind.HAND_END, -1, None, 0)
    with pytest.raises(ValueError, match="hand's result"):
        encode_event(end, state_seq=1, hand_no=0)
    m = Match(Options(hands=1), seed=1)
    rng = random.Random(1)
    while not m.over:
        obs = observe(m, m.seat)
        if obs.phase is Phase.EXCHANGE:
            m.apply(Exchange(*list(cards_of(obs.hand))[:3]))
        else:
            m.apply(rng.choice(obs.legal))
    end = m.log[0][-1]
    msg = encode_event(end, state_seq=9, hand_no=0, hand_end=hand_end(m, 0))
    assert msg.hand_end.hand_number == 1 and decode_event(msg) == end


def test_history_cache_decodes_only_new_events() -> None:
    cache = HistoryCache()
    m = Match(Options(hands=1), seed=2)
    rng = random.Random(2)
    while not m.over:
        obs = observe(m, m.seat)
        if obs.phase is not Phase.EXCHANGE:
            req = encode_request(obs, request_id=1, state_seq=500, deadline_ms=1, bank_ms=1)
            assert decode_request(req, options=obs.options, cache=cache) == obs
            m.apply(rng.choice(obs.legal))
        else:
            m.apply(Exchange(*list(cards_of(obs.hand))[:3]))


# ---------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------


def _doc_figure_function() -> Callable[[int, int, int, int], int]:
    """The reference implementation printed in docs/protocol.md section 7."""
    text = DOC.read_text(encoding="utf-8")
    code = re.search(r"```python\n(def figure_index.*?)```", text, re.S)
    assert code is not None, "the reference implementation is missing from the docs"
    namespace: dict[str, object] = {}
    exec(code.group(1), namespace)
    fn = namespace["figure_index"]
    assert callable(fn)
    return fn  # type: ignore[return-value]


def _doc_figure_table() -> list[tuple[int, int, str, int, str]]:
    """Rows ``first | last | combo | length | ranks`` of the figure table."""
    text = DOC.read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+) \| (\d+) \| ([A-Z_ ()a-z]+) \| (\d+) \| ([^|]+) \|$", text, re.M)
    return [(int(a), int(b), c.strip(), int(d), e.strip()) for a, b, c, d, e in rows]


def _hand_for(kind: int, length: int, rank: int) -> int:
    """A hand holding a play of this kind, length and rank (no Phoenix)."""
    cards: list[int] = []
    if kind in (5, 7, 9):  # steps, straight, flush bomb: ranks up to ``rank``
        width = 2 if kind == 5 else 1
        low = rank - length // width + 1
        for r in range(low, rank + 1):
            if r == 1:
                cards.append(1)  # the Mah Jong as the 1 of a straight
            elif kind == 5:
                cards += [card(r, 0), card(r, 1)]
            else:
                cards.append(card(r, 0 if kind == 9 else r % 2))
    elif kind == 6:
        cards = [card(rank, s) for s in range(3)] + [card(3 if rank == 2 else 2, s) for s in (0, 1)]
    elif kind == 1:
        cards = [0]
    elif kind == 2:
        cards = [1 if rank == 1 else 54 if rank == 15 else card(rank, 0)]
    else:  # pair, triple, four-bomb
        cards = [card(rank, s) for s in range({3: 2, 4: 3, 8: 4}[kind])]
    return mask_of(cards)


def all_figure_plays() -> dict[int, Play]:
    """A real play (from ``combinations``) for each of the 227 figures, by the docs' table."""
    names = {"PASS": 0, "DOG": 1, "SINGLE": 2, "PAIR": 3, "TRIPLE": 4, "STEPS": 5}
    names |= {"FULL_HOUSE": 6, "STRAIGHT": 7, "FOUR_BOMB": 8, "FLUSH_BOMB": 9}
    plays: dict[int, Play] = {0: PASS, 17: Play(2, 1, 1, PHOENIX_BIT)}
    for first, last, combo, length, ranks in _doc_figure_table():
        if combo in ("PASS", "SINGLE (Phoenix)"):
            continue
        kind = names[combo]
        low = int(ranks.split("–")[0]) if ranks[0].isdigit() else 0
        for f in range(first, last + 1):
            rank = low + f - first
            hand = _hand_for(kind, length, rank)
            found = [
                p for p in combinations(hand) if (p.kind, p.length, p.rank) == (kind, length, rank)
            ]
            assert found, (f, combo, length, rank)
            plays[f] = found[0]
    return plays


def test_figures_match_the_docs() -> None:
    reference = _doc_figure_function()
    rows = _doc_figure_table()
    assert rows[0][0] == 0 and rows[-1][1] == FIGURE_COUNT - 1 and len(rows) == 33
    assert all(a[1] + 1 == b[0] for a, b in itertools.pairwise(rows))
    by_figure = all_figure_plays()
    assert sorted(by_figure) == list(range(FIGURE_COUNT))
    # Each row's play has the row's figure, by our code and by the docs' reference code.
    for f, p in by_figure.items():
        assert figure_index(p) == f, (f, p)
        assert reference(p.kind + 1, p.length, p.rank, p.cards) == f, (f, p)
    # All 227 figures are distinct and in range over every play of many random hands.
    rng = random.Random(0)
    for _ in range(500):
        hand = mask_of(rng.sample(range(56), 14))
        for p in combinations(hand):
            f = figure_index(p)
            assert 0 <= f < FIGURE_COUNT
            assert f == reference(p.kind + 1, p.length, p.rank, p.cards)
            assert by_figure[f][:3] == p[:3] or f == 17, (f, p)
    # Every Phoenix single is figure 17 whatever its rank.
    for r in (1, 5, 14):
        assert figure_index(Play(2, 1, r, PHOENIX_BIT)) == 17
    assert figure_index(Play(2, 1, 1, MAHJONG_BIT)) == 2
    with pytest.raises(ValueError):
        figure_index(Play(3, 2, 15, 0))


def test_doc_example_columns_and_mask() -> None:
    """docs/protocol.md section 7's example: the pair of 7s led, seat 1's answers."""
    m = Match(Options(grand_tichu=False), seed=0)
    m.hands = [0, parse_cards("3j 9j 9t Kj Ph"), 0, 0]
    m.hands[0] = parse_cards("7j 7t 2s")
    m.hands[2] = parse_cards("4s")
    m.hands[3] = parse_cards("5s")
    m.phase = Phase.PLAY
    m.trick = [(0, parse_play("7j 7t"))]
    m.owner = 0
    m.lead = False
    m.seat = m.turn = 1
    m.events = [Event(EventKind.HAND_START, -1, None, 0), Event(EventKind.EXCHANGE, -1)]
    m.events.append(Event(EventKind.PLAY, 0, m.trick[0][1], 0))
    m._combos = [None] * 4
    m._legal = None
    obs = observe(m, 1)
    req = encode_request(obs, request_id=1, state_seq=3, deadline_ms=1, bank_ms=1)
    lg = req.legal
    rows = list(
        zip(lg.combo, lg.length, lg.rank, lg.cards, lg.phoenix_rank, lg.figure, strict=True)
    )
    assert rows == [
        (pb.COMBO_PASS, 0, 0, 0, 0, 0),
        (pb.COMBO_PAIR, 2, 9, (1 << 30) | (1 << 33), 0, 25),
        (pb.COMBO_PAIR, 2, 9, (1 << 30) | (1 << 55), 9, 25),
        (pb.COMBO_PAIR, 2, 9, (1 << 33) | (1 << 55), 9, 25),
        (pb.COMBO_PAIR, 2, 13, (1 << 46) | (1 << 55), 13, 29),
    ]
    assert lg.figure_mask == bytes.fromhex("01000022") + bytes(25)
    assert req.view.trick.entries[0].play.cards == (1 << 22) | (1 << 25)
    assert decode_request(req, options=obs.options) == obs


# ---------------------------------------------------------------------------
# Answers
# ---------------------------------------------------------------------------


def _first_view(phase: Phase, seed: int = 0) -> Observation:
    for _, obs in random_states(seed, Options(hands=2)):
        if obs.phase is phase and (phase is not Phase.PLAY or len(obs.legal) > 3):
            return obs
    raise AssertionError(f"no {phase.name} decision")


def test_answers_round_trip() -> None:
    for _, obs in random_states(4, Options(hands=2)):
        if obs.phase is Phase.EXCHANGE:
            cards = list(cards_of(obs.hand))
            choices: list[Action] = [Exchange(cards[5], cards[0], cards[13])]
        else:
            choices = list(obs.legal)
        for action in choices:
            msg = encode_answer(action, obs, obs.may_call_tichu, request_id=9, state_seq=4)
            msg = pb.Action.FromString(msg.SerializeToString())
            assert (msg.request_id, msg.state_seq) == (9, 4)
            assert decode_answer(msg, obs) == (action, obs.may_call_tichu)
            if type(action) is Play:
                assert msg.HasField("cards") and msg.cards == action.cards


def test_out_of_range_index() -> None:
    obs = _first_view(Phase.PLAY)
    with pytest.raises(InvalidActionError, match="out of range") as e:
        decode_answer(pb.Action(choice_index=len(obs.legal)), obs)
    assert isinstance(e.value, AnswerError) and e.value.code == pb.ERROR_CODE_MALFORMED
    for phase in (Phase.WISH, Phase.GRAND_TICHU):
        view = _first_view(phase)
        with pytest.raises(AnswerError, match="out of range"):
            decode_answer(pb.Action(choice_index=99), view)


def test_mismatched_cards_echo() -> None:
    obs = _first_view(Phase.PLAY)
    good = encode_answer(obs.legal[2], obs)
    assert decode_answer(good, obs)[0] == obs.legal[2]
    bad = pb.Action(choice_index=2, cards=good.cards ^ (1 << 54))
    with pytest.raises(AnswerError, match="do not match entry 2") as e:
        decode_answer(bad, obs)
    assert e.value.code == pb.ERROR_CODE_CARDS_MISMATCH
    # The echo of the pass is 0 (no cards).
    if obs.legal[0] == PASS:
        assert decode_answer(pb.Action(choice_index=0, cards=0), obs)[0] == PASS


def test_bad_exchanges() -> None:
    obs = _first_view(Phase.EXCHANGE)
    hand = list(cards_of(obs.hand))
    missing = next(c for c in range(56) if c not in hand)
    cases = {
        (hand[0], hand[1]): ("3 card ids, not 2", pb.ERROR_CODE_MALFORMED),
        (hand[0], hand[1], hand[2], hand[3]): ("not 4", pb.ERROR_CODE_MALFORMED),
        (hand[0], hand[1], missing): (f"card {missing} .* not in", pb.ERROR_CODE_ILLEGAL_EXCHANGE),
        (hand[0], hand[1], 999): ("card 999", pb.ERROR_CODE_ILLEGAL_EXCHANGE),
        (hand[0], hand[0], hand[1]): ("three different", pb.ERROR_CODE_ILLEGAL_EXCHANGE),
    }
    for cards, (text, code) in cases.items():
        msg = pb.Action(exchange_cards=cards)
        with pytest.raises(AnswerError, match=text) as e:
            decode_answer(msg, obs)
        assert e.value.code == code
    ok = pb.Action(exchange_cards=hand[:3], choice_index=77)  # choice_index is ignored
    assert decode_answer(ok, obs) == (Exchange(*hand[:3]), False)


def test_tichu_flag_only_when_allowed() -> None:
    obs = _first_view(Phase.WISH)
    assert not obs.may_call_tichu
    with pytest.raises(AnswerError, match="may not call Tichu") as e:
        decode_answer(pb.Action(choice_index=0, call_tichu=True), obs)
    assert e.value.code == pb.ERROR_CODE_TICHU_NOT_ALLOWED


def test_encode_answer_rejects_what_is_not_listed() -> None:
    obs = _first_view(Phase.PLAY)
    with pytest.raises(AnswerError, match="not among the"):
        encode_answer(Wish(3), obs)
    with pytest.raises(AnswerError, match="not among the"):
        encode_answer(Play(2, 1, 3, 1 << 6), replace(obs, legal=(PASS,)))
    ex = _first_view(Phase.EXCHANGE)
    with pytest.raises(AnswerError, match="does not answer an exchange"):
        encode_answer(PASS, ex)


def test_default_actions() -> None:
    seen = set()
    for _, obs in random_states(6, Options(hands=2)):
        d = default_action(obs)
        seen.add(obs.phase)
        if obs.phase is Phase.EXCHANGE:
            assert d == Exchange(*list(cards_of(obs.hand))[:3])
        else:
            assert d == obs.legal[0]
            if PASS in obs.legal:
                assert d == PASS
            if obs.phase is Phase.GRAND_TICHU:
                assert d == NO_GRAND
            if obs.phase is Phase.WISH:
                assert d == Wish(0)
            if obs.phase is Phase.DRAGON_GIFT:
                assert d == Gift((obs.seat + 1) % 4)
    assert {Phase.PLAY, Phase.EXCHANGE, Phase.GRAND_TICHU} <= seen
