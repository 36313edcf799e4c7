"""Tests for ``position()``: the state it builds, its validation, and play from it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.rules import (
    PASS,
    Combo,
    EventKind,
    IllegalActionError,
    InvalidActionError,
    Options,
    Phase,
    Play,
    observe,
    parse_cards,
    parse_play,
)
from arena.rules.cards import FULL_DECK, points_of
from arena.rules.position import position
from arena.rules.state import check_deal, total_cards


def test_lead_position() -> None:
    m = position(["Mj 2j", "Kp", "", "Ph"], to_act=0, out=[2])
    assert m.phase is Phase.PLAY and m.seat == 0 and m.turn == 0
    assert m.lead and m.trick == [] and m.trick_cards == 0 and m.owner == -1 and m.passes == 0
    assert m.hands == [parse_cards("Mj 2j"), parse_cards("Kp"), 0, parse_cards("Ph")]
    assert m.won == [FULL_DECK & ~parse_cards("Mj 2j Kp Ph"), 0, 0, 0]
    assert total_cards(m) == FULL_DECK
    assert m.out == [2] and m.wish == 0
    assert m.legal_actions() == tuple(parse_play(t) for t in ("Mj", "2j"))
    assert m.actions == [] and m.hand_no == 0 and m.scores == [0, 0]
    assert [(e.kind, e.seat, e.value) for e in m.events] == [
        (EventKind.HAND_START, -1, 0),
        (EventKind.EXCHANGE, -1, 0),
        (EventKind.OUT, 2, 1),
    ]


def test_trick_sets_owner_passes_and_events() -> None:
    m = position(
        ["9j 2s", "3s", "Kj", "Tp Jp"],
        trick=[(2, "5j"), (1, "Ph"), (3, "6s")],
        to_act=1,
    )
    top = m.top
    assert top is not None and top == parse_play("6s")
    assert m.trick[1][1].rank == 5  # the Phoenix read against the 5 below it
    assert m.owner == 3 and m.turn == 1 and m.seat == 1 and not m.lead
    assert m.trick_cards == parse_cards("5j Ph 6s")
    assert m.passes == 1  # seat 0, between the owner and seat 1
    assert [(e.kind, e.seat) for e in m.events[2:]] == [
        (EventKind.PLAY, 2),
        (EventKind.PLAY, 1),
        (EventKind.PLAY, 3),
        (EventKind.PASS, 0),
    ]
    assert total_cards(m) == FULL_DECK
    # Seat 1 passes too, then seat 2 (the last needed): seat 3 takes the trick.
    m.apply(PASS)
    assert m.seat == 2
    m.apply(PASS)
    assert m.trick == [] and m.seat == 3 and m.won[3] == parse_cards("5j Ph 6s")


def test_passes_skip_seats_that_are_out() -> None:
    m = position(["", "2s", "Kj", "Tp"], trick=[(1, "3s")], to_act=3, out=[0])
    assert m.passes == 1  # only seat 2; seat 0 is out
    m.apply(PASS)
    assert m.trick == [] and m.seat == 1


def test_out_during_the_trick_orders_events() -> None:
    m = position(["", "2s", "Kj", "Tp"], trick=[(0, "3s"), (2, "4s")], to_act=3, out=[0])
    assert [(e.kind, e.seat, e.value) for e in m.events[2:]] == [
        (EventKind.PLAY, 0, 0),
        (EventKind.OUT, 0, 1),
        (EventKind.PLAY, 2, 0),
    ]
    with pytest.raises(ValueError, match="out order"):
        position(["", "2s", "Kj", ""], trick=[(0, "3s")], to_act=1, out=[0, 3])


def test_calls_wish_scores_piles_and_options() -> None:
    opts = Options(target_score=500)
    m = position(
        ["7j 2s", "Kj", "3s", "4s"],
        to_act=0,
        wish=7,
        tichu=[1],
        grand=[0],
        won=["", "Dr", "", "5p Tt"],
        scores=(120, -40),
        options=opts,
    )
    assert m.grand == [True, False, False, False] and m.tichu == [False, True, False, False]
    assert m.options is opts and m.scores == [120, -40]
    assert m.won[1] == parse_cards("Dr") and m.won[3] == parse_cards("5p Tt")
    assert points_of(m.won[0]) == 100 - 25 - 15 - 10
    assert m.legal_actions() == (parse_play("7j"),)
    kinds = [(e.kind, e.seat, e.value) for e in m.events]
    assert EventKind.GRAND_TICHU not in [k for k, _, _ in kinds]  # no reveal: ``grand`` says it
    assert (EventKind.TICHU, 1, 0) in kinds
    assert (EventKind.WISH, -1, 7) in kinds
    assert not m.can_call_tichu()
    o = observe(m, 0)
    assert o.wish == 7 and o.tichu == (False, True, False, False) and o.scores == (120, -40)
    assert o.legal == m.legal_actions() and o.won_points[1] == 25


def test_wish_made_in_the_trick() -> None:
    m = position(["9j", "8j 8s", "2j", "3j"], trick=[(0, "Mj")], to_act=1, wish=8)
    assert [(e.kind, e.seat, e.value) for e in m.events[2:]] == [
        (EventKind.PLAY, 0, 0),
        (EventKind.WISH, 0, 8),
    ]
    assert m.legal_actions() == (parse_play("8j"), parse_play("8s"))


def test_dealt_is_a_plausible_deal() -> None:
    m = position(["Mj 2j", "Kp", "", "Ph"], trick=[(3, "9s"), (0, "Tj")], to_act=1, out=[2])
    assert check_deal(m.dealt) == m.dealt
    dealt = [sum(1 << c for c in d) for d in m.dealt]
    for s in range(4):
        assert m.hands[s] & ~dealt[s] == 0  # each hand was dealt to its seat
    assert parse_cards("9s") & dealt[3] and parse_cards("Tj") & dealt[0]  # and each play


def test_copy_and_play_to_the_end() -> None:
    m = position(["Aj", "", "2j", "3j 4j"], to_act=2, out=[1], tichu=[1])
    c = m.copy()
    m.apply(parse_play("2j"))  # out second
    m.apply(parse_play("3j"))
    m.apply(parse_play("Aj"))  # out third: the hand ends
    r = m.hand_results[0]
    assert r.out == (1, 2, 0) and r.bets == (0, 100)
    assert sum(r.card_points) == 100
    assert m.hand_no == 1 and m.phase is Phase.GRAND_TICHU
    assert c.hand_no == 0 and c.hands[2] == parse_cards("2j")  # the copy is untouched


def test_illegal_moves_from_a_position() -> None:
    m = position(["9j", "8j", "2j", "3j"], trick=[(0, "Tj")], to_act=1)
    with pytest.raises(IllegalActionError):
        m.apply(parse_play("8j"))
    assert m.legal_actions() == (PASS,)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"hands": ["2j", "2j", "3j", "4j"]}, "already placed"),
        ({"hands": ["2j", "3j", "4j", "5j"], "trick": [(1, "2j")]}, "already placed"),
        ({"hands": ["2j", "3j", "4j", "5j"], "won": ["", "2j"]}, "already placed"),
        ({"hands": ["2j", "3j", "4j"]}, "four hands"),
        ({"hands": ["2j", "3j", "4j", "5j"], "won": ["", "", "", "", ""]}, "four won"),
        ({"hands": ["2j", "3j", "4j", 1 << 60]}, "not a card mask"),
        ({"trick": [(1, "Kj"), (2, "Qj")]}, "does not beat"),
        ({"trick": [(1, "Kj"), (2, "Aj As")]}, "does not beat"),
        ({"trick": [(1, "Dr"), (2, "Ph")]}, "does not beat"),
        ({"trick": [(1, "Dg")]}, "Dog"),
        ({"trick": [(1, "pass")]}, "not a play"),
        ({"trick": [(5, "Kj")]}, "not 0..3"),
        ({"to_act": 4}, "not 0..3"),
        ({"hands": ["2j", "3j", "", "5j"], "out": [2], "to_act": 2}, "has no cards"),
        ({"hands": ["2j", "3j", "", "5j"]}, "list it in out"),
        ({"out": [1]}, "listed as out"),
        ({"hands": ["2j", "", "", "5j"], "out": [1, 1]}, "out twice"),
        ({"hands": ["2j", "", "4j", ""], "out": [1, 3]}, "hand is over"),
        ({"hands": ["2j", "", "", ""], "out": [1, 2, 3]}, "hand is over"),
        ({"trick": [(0, "Kj")]}, "made the last play"),
        ({"wish": 15}, "rank 2..14"),
        ({"hands": ["Mj 2j", "3j", "4j", "5j"], "wish": 7}, "Mah Jong"),
        ({"trick": [(1, "7s")], "wish": 7}, "fulfilled"),
        ({"trick": [(1, "Mj"), (2, "7s")], "wish": 7}, "fulfilled"),
        ({"tichu": [1], "grand": [1]}, "Tichu and Grand"),
        ({"grand": [1], "options": Options(grand_tichu=False)}, "Grand Tichu is off"),
        ({"tichu": [7]}, "not 0..3"),
        ({"hands": ["2j 3j 4j 5j 6j 7j 8j 9j Tj Jj Qj Kj Aj Ph Dr", "2s", "3s", "4s"]}, "over 14"),
    ],
)
def test_rejects_impossible_positions(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"hands": ["2j", "3j", "4j", "5j"], "to_act": 0}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        position(**args)  # type: ignore[arg-type]


def test_bad_notation_is_an_invalid_action_error() -> None:
    with pytest.raises(InvalidActionError):
        position(["2j", "3j", "4x", "5j"], to_act=0)
    with pytest.raises(InvalidActionError, match="ambiguous"):
        position(["2j", "3j", "4j", "5j"], trick=[(1, "Ts Js Qs Ks Ph")], to_act=2)


@settings(max_examples=60, deadline=None)
@given(st.permutations(range(56)), st.lists(st.integers(0, 14), min_size=4, max_size=4))
def test_any_split_accounts_for_every_card(deck: list[int], sizes: list[int]) -> None:
    sizes = [max(1, n) for n in sizes]
    hands, at = [], 0
    for n in sizes:
        hands.append(sum(1 << c for c in deck[at : at + n]))
        at += n
    m = position(hands, to_act=sizes.index(max(sizes)))
    assert total_cards(m) == FULL_DECK
    assert sum(h.bit_count() for h in m.hands) + sum(w.bit_count() for w in m.won) == 56
    assert m.legal_actions()
    for s in range(4):
        assert observe(m, s).hand == hands[s]


def test_trick_plays_may_be_given_as_values() -> None:
    nine = parse_play("9s")
    m = position(["2j", "3j", "4j", "5j"], trick=[(1, nine)], to_act=2)
    assert m.trick == [(1, nine)] and m.owner == 1
    misread = Play(Combo.SINGLE, 1, 10, nine.cards)
    with pytest.raises(ValueError, match="not a play"):
        position(["2j", "3j", "4j", "5j"], trick=[(1, misread)], to_act=2)
