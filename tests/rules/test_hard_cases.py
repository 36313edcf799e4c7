"""The 50 hard rule cases (the corner cases of the published rules and their FAQ), one test each,
in real play.

Calls and exchange cases start from explicit deals; mid-hand cases start from ``position()``.
Where the sources disagree the tests assert the readings marked in docs/rules.md: an obliged
player must fulfil the wish on his turn, so a bomb without the wished rank is then illegal
(§7.1), while an out-of-turn bomb is never forced; bomb windows ask the seats
in a fixed order (state.py's docstring); level totals at or above the target play on.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from arena.rules import (
    CALL_TICHU,
    GRAND,
    NO_GRAND,
    NO_WISH,
    PASS,
    Action,
    Combo,
    EventKind,
    Exchange,
    Gift,
    GrandTichu,
    IllegalActionError,
    InvalidActionError,
    Match,
    Options,
    Phase,
    Play,
    Wish,
    beats,
    observe,
    parse_card,
    parse_cards,
    parse_play,
    readings,
)
from arena.rules.cards import DOG_BIT, DRAGON_BIT, FULL_DECK, cards_of, points_of
from arena.rules.combos import combinations
from arena.rules.position import position
from arena.rules.state import Deal, total_cards

# Hands after the exchange for the call cases: seat t holds one card of every rank, in suit
# (rank + t) % 4 (so no bomb anywhere), and one special card.
LAYOUT = (
    "Mj 2p 3t 4j 5s 6p 7t 8j 9s Tp Jt Qj Ks Ap",
    "Dg 2t 3j 4s 5p 6t 7j 8s 9p Tt Jj Qs Kp At",
    "Ph 2j 3s 4p 5t 6j 7s 8p 9t Tj Js Qp Kt Aj",
    "Dr 2s 3p 4t 5j 6s 7p 8t 9j Ts Jp Qt Kj As",
)
# The same hands dealt as they are (the exchange case passes cards of its own).
LAYOUT_AS_DEAL: Deal = (
    tuple(cards_of(parse_cards(LAYOUT[0]))),
    tuple(cards_of(parse_cards(LAYOUT[1]))),
    tuple(cards_of(parse_cards(LAYOUT[2]))),
    tuple(cards_of(parse_cards(LAYOUT[3]))),
)


# ----------------------------------------------------------------------------- helpers


def deal_for(finals: Sequence[str]) -> tuple[Deal, list[Exchange]]:
    """A deal and four exchanges after which the seats hold ``finals``.

    Seat t passes the lowest card of the next seat's final hand, the second lowest of its
    partner's and the third lowest of the previous seat's, so each seat gets its own three
    lowest cards back.
    """
    hands = [sorted(cards_of(parse_cards(f))) for f in finals]
    gives = [
        Exchange(hands[(t + 1) & 3][0], hands[(t + 2) & 3][1], hands[(t + 3) & 3][2])
        for t in range(4)
    ]
    deal = [(*hands[t][3:], *gives[t]) for t in range(4)]
    return (deal[0], deal[1], deal[2], deal[3]), gives


def after_exchange(
    finals: Sequence[str] = LAYOUT, *, grand: Sequence[int] = (), options: Options | None = None
) -> Match:
    """A match dealt so that, after Grand Tichu answers and the exchange, seats hold ``finals``."""
    deal, gives = deal_for(finals)
    m = Match(options, deals=[deal])
    if m.phase is Phase.GRAND_TICHU:
        for s in range(4):
            m.apply(GrandTichu(s in grand))
    for s in range(4):
        m.apply(gives[s])
    assert m.hands == [parse_cards(f) for f in finals]
    return m


def play(m: Match, text: str) -> None:
    """The seat to act plays ``text`` (card notation, or ``pass``)."""
    m.apply(parse_play(text, m.top))


def expect(m: Match, *texts: str) -> tuple[Play, ...]:
    """The plays named by ``texts``, read against the current table."""
    return tuple(parse_play(t, m.top) for t in texts)


def reject(m: Match, action: Action) -> IllegalActionError:
    """Asserts that ``action`` is refused and leaves the state as it was."""
    before = (m.phase, m.seat, list(m.hands), list(m.trick), m.wish, len(m.actions), m.tichu[:])
    with pytest.raises(IllegalActionError) as info:
        m.apply(action)
    after = (m.phase, m.seat, list(m.hands), list(m.trick), m.wish, len(m.actions), m.tichu[:])
    assert after == before
    return info.value


def kinds(m: Match) -> list[int]:
    """The event kinds of the hand so far."""
    return [e.kind for e in m.events]


# ----------------------------------------------------------------------------- calls, exchange


def test_layout_is_a_bombless_deal() -> None:
    deal, _ = deal_for(LAYOUT)
    m = Match(deals=[deal])
    assert m.dealt == deal
    assert sum(parse_cards(h).bit_count() for h in LAYOUT) == 56
    for h in LAYOUT:
        assert not [p for p in combinations(parse_cards(h)) if p.kind >= Combo.FOUR_BOMB]


def test_case_01_grand_tichu_only_after_eight_cards() -> None:
    deal, gives = deal_for(LAYOUT)
    m = Match(deals=[deal])
    assert m.phase is Phase.GRAND_TICHU
    assert [h.bit_count() for h in m.hands] == [8, 8, 8, 8]
    assert m.hands[0] == sum(1 << c for c in deal[0][:8])
    assert m.legal_actions() == (NO_GRAND, GRAND)
    m.apply(GRAND)
    # Hidden until all four have answered.
    assert observe(m, 1).grand == (False, False, False, False)
    for _ in range(3):
        m.apply(NO_GRAND)
    assert m.phase is Phase.EXCHANGE
    assert m.grand == [True, False, False, False]
    assert [h.bit_count() for h in m.hands] == [14, 14, 14, 14]
    assert observe(m, 1).grand == (True, False, False, False)
    # The four decisions revealed in one event: bit s for seat s.
    assert [(e.kind, e.seat, e.called) for e in m.events[1:]] == [
        (EventKind.GRAND_TICHU, -1, (True, False, False, False))
    ]
    # With cards 9-14 taken, a Grand Tichu call is no longer an answer.
    reject(m, GRAND)
    m.apply(gives[0])
    reject(m, GRAND)
    assert m.grand == [True, False, False, False]


def test_case_02_tichu_after_only_passing() -> None:
    m = after_exchange()
    play(m, "2p")
    play(m, "pass")  # seat 1
    play(m, "Aj")
    play(m, "pass")
    play(m, "pass")
    assert m.seat == 1 and m.hands[1].bit_count() == 14
    assert m.can_call_tichu()
    m.apply(CALL_TICHU)
    assert m.tichu == [False, True, False, False]
    assert m.events[-1].kind == EventKind.TICHU and m.events[-1].seat == 1
    assert m.seat == 1 and m.phase is Phase.PLAY  # the call is not the answer
    play(m, "pass")
    assert m.seat == 2 and m.trick == []  # seat 2's Ace took the trick
    # Declining a bomb window is not playing either: a call is accepted there too.
    w = position(
        ["3j 9p", "Qj", "Kj Ks Kp Kt 2j 2s 4j 4s 6j 6s 8j 8s Tj Ts", "Qs"],
        to_act=0,
    )
    play(w, "3j")
    assert w.phase is Phase.BOMB_WINDOW and w.seat == 2
    w.apply(CALL_TICHU)
    assert w.tichu[2] and w.phase is Phase.BOMB_WINDOW
    play(w, "pass")
    assert w.phase is Phase.PLAY and w.seat == 1


def test_case_03_tichu_after_first_play_rejected() -> None:
    # The Mah Jong as the only play so far.
    m = after_exchange()
    play(m, "Mj")
    m.apply(NO_WISH)
    for _ in range(3):
        play(m, "pass")
    assert m.seat == 0 and m.trick == []
    assert not m.can_call_tichu()
    err = reject(m, CALL_TICHU)
    assert "already played" in err.rule
    # The Dog as the only play so far.
    finals = (
        "Mj Dg 2p 3t 4j 5s 6p 7t 8j 9s Tp Jt Qj Ks",
        "Ap 2t 3j 4s 5p 6t 7j 8s 9p Tt Jj Qs Kp At",
        LAYOUT[2],
        LAYOUT[3],
    )
    d = after_exchange(finals)
    play(d, "Dg")
    assert d.seat == 2
    play(d, "2j")
    play(d, "pass")  # seat 3
    assert d.seat == 0 and d.hands[0].bit_count() == 13
    reject(d, CALL_TICHU)
    assert d.tichu == [False, False, False, False]


def test_case_04_grand_tichu_caller_cannot_call_tichu() -> None:
    m = after_exchange(grand=[0])
    assert m.seat == 0 and m.hands[0].bit_count() == 14
    assert not m.can_call_tichu()
    err = reject(m, CALL_TICHU)
    assert "Grand Tichu" in err.rule
    # Also during the exchange, before any card moved.
    deal, gives = deal_for(LAYOUT)
    x = Match(deals=[deal])
    x.apply(NO_GRAND)
    x.apply(GRAND)
    x.apply(NO_GRAND)
    x.apply(NO_GRAND)
    x.apply(gives[0])
    assert x.seat == 1
    reject(x, CALL_TICHU)
    assert x.tichu == [False, False, False, False] and x.grand == [False, True, False, False]


def test_case_05_tichu_before_or_during_exchange() -> None:
    deal, gives = deal_for(LAYOUT)
    m = Match(deals=[deal])
    reject(m, CALL_TICHU)  # 8 cards: not yet (docs/rules.md §3.3: with 14 cards)
    for _ in range(4):
        m.apply(NO_GRAND)
    assert m.phase is Phase.EXCHANGE
    m.apply(CALL_TICHU)  # seat 0, before passing
    m.apply(gives[0])
    m.apply(gives[1])
    m.apply(CALL_TICHU)  # seat 2, while the exchange is under way
    m.apply(gives[2])
    m.apply(gives[3])
    assert m.tichu == [True, False, True, False]
    assert [(e.kind, e.seat) for e in m.events[1:]] == [
        (EventKind.GRAND_TICHU, -1),  # nobody called Grand Tichu
        (EventKind.TICHU, 0),
        (EventKind.TICHU, 2),
        (EventKind.EXCHANGE, -1),
    ]
    assert m.seat == 0 and m.phase is Phase.PLAY
    err = reject(m, CALL_TICHU)  # one bet per player
    assert "already called" in err.rule


def test_case_06_both_partners_call_tichu() -> None:
    m = after_exchange()
    m.apply(CALL_TICHU)  # seat 0
    play(m, LAYOUT[0])  # Mah Jong to Ace: out at once
    m.apply(NO_WISH)
    play(m, "pass")  # seat 1
    m.apply(CALL_TICHU)  # seat 2, still 14 cards
    play(m, "pass")
    play(m, "pass")  # seat 3: seat 0's trick; seat 1 leads
    assert m.seat == 1 and m.out == [0]
    play(m, LAYOUT[1].replace("Dg ", ""))
    play(m, "pass")
    play(m, "pass")
    play(m, "Dg")  # seat 1 out second; the lead goes to its partner
    assert m.out == [0, 1] and m.seat == 3
    play(m, LAYOUT[3].replace("Dr ", ""))
    play(m, "pass")
    play(m, "Dr")  # seat 3 out third: the Dragon trick is given away
    assert m.phase is Phase.DRAGON_GIFT
    m.apply(Gift(2))
    r = m.hand_results[0]
    assert r.tichu == (True, False, True, False)
    assert r.out == (0, 1, 3)
    assert r.bets == (0, 0)  # +100 for seat 0, -100 for seat 2
    # Seat 0: 25; seat 2's Dragon pile goes to seat 0: 25; seat 1 and 3: 25 each; seat 2's
    # hand (2..A and the Phoenix) is worth 0 to team B.
    assert r.card_points == (50, 50)
    assert m.scores == [50, 50]


def test_case_07_exchange_is_simultaneous_and_mahjong_may_move() -> None:
    m = Match(Options(grand_tichu=False), deals=[LAYOUT_AS_DEAL])
    start = list(m.hands)
    m.apply(Exchange(parse_card("2p"), parse_card("Mj"), parse_card("3t")))  # seat 0
    assert m.hands == start  # nothing moves before all four have passed
    assert observe(m, 2).received == ()
    # Seat 1 cannot pass on the card it is being given.
    reject(m, Exchange(parse_card("2p"), parse_card("2t"), parse_card("3j")))
    m.apply(Exchange(parse_card("2t"), parse_card("3j"), parse_card("4s")))
    m.apply(Exchange(parse_card("2j"), parse_card("3s"), parse_card("4p")))
    assert m.hands == start
    m.apply(Exchange(parse_card("2s"), parse_card("3p"), parse_card("4t")))
    assert m.hands[0] == parse_cards("4j 5s 6p 7t 8j 9s Tp Jt Qj Ks Ap 2s 3s 4s")
    assert m.hands[2] == parse_cards("Ph 5t 6j 7s 8p 9t Tj Js Qp Kt Aj 2t Mj 4t")
    # Received from the previous seat, the partner, the next seat.
    assert observe(m, 2).received == tuple(map(parse_card, ("2t", "Mj", "4t")))
    assert observe(m, 0).received == tuple(map(parse_card, ("2s", "3s", "4s")))
    assert m.phase is Phase.PLAY and m.seat == 2  # the Mah Jong's new holder leads
    assert m.events[-1].kind == EventKind.EXCHANGE


# ----------------------------------------------------------------------------- leads, shapes


def test_case_08_leader_cannot_pass_and_need_not_lead_the_mahjong() -> None:
    m = after_exchange()
    assert m.seat == 0 and m.lead
    assert PASS not in m.legal_actions()
    err = reject(m, PASS)
    assert "leader cannot pass" in err.rule
    legal = m.legal_actions()
    assert expect(m, "Mj")[0] in legal
    assert expect(m, "2p")[0] in legal
    assert expect(m, "2p 3t 4j 5s 6p")[0] in legal
    play(m, "2p")
    assert m.hands[0] & parse_cards("Mj")  # the Mah Jong stays in hand
    assert m.phase is Phase.PLAY and m.seat == 1 and m.wish == 0


def test_case_09_a_passed_player_may_play_again_in_the_trick() -> None:
    m = position(["3j 4s", "9j 2s", "5j 6s", "7j 8s"], to_act=0)
    play(m, "3j")
    play(m, "pass")  # seat 1
    play(m, "5j")
    play(m, "pass")
    assert m.legal_actions() == (PASS,)  # seat 0's 4 cannot beat the 5
    play(m, "pass")
    assert m.seat == 1
    assert m.legal_actions() == (PASS, *expect(m, "9j"))
    play(m, "9j")
    assert m.owner == 1 and m.top == parse_play("9j")


def test_case_10_trick_ends_when_every_other_active_player_passed() -> None:
    # Seat 1 is out: two passes end seat 0's trick.
    m = position(["9j 2s", "", "3j", "4j"], to_act=0, out=[1])
    play(m, "9j")
    assert m.seat == 2
    play(m, "pass")
    assert m.trick and m.seat == 3
    play(m, "pass")
    assert m.trick == [] and m.seat == 0 and m.won[0] & parse_cards("9j")
    # The owner has just gone out: three passes, then the next active seat leads.
    m = position(["9j", "2j", "3j", "4j"], to_act=0)
    play(m, "9j")
    assert m.out == [0]
    play(m, "pass")
    play(m, "pass")
    assert m.trick and m.seat == 3 and m.passes == 2
    play(m, "pass")
    assert m.trick == [] and m.seat == 1 and m.won[0] & parse_cards("9j")


def test_case_11_straights_keep_their_length_and_ace_is_high() -> None:
    m = position(["9p", "4j 5s 6p 7t 8j 9s", "2j", "2s"], trick=[(0, "3j 4s 5p 6t 7j")], to_act=1)
    assert m.legal_actions() == (PASS, *expect(m, "4j 5s 6p 7t 8j", "5s 6p 7t 8j 9s"))
    six = parse_play("4j 5s 6p 7t 8j 9s")
    assert six.length == 6
    assert "does not beat" in reject(m, six).rule
    assert readings(parse_cards("Aj 2s 3p 4t 5j")) == []
    with pytest.raises(InvalidActionError):
        parse_play("Aj 2s 3p 4t 5j")
    low = parse_play("Mj 2s 3p 4t 5j")
    assert (low.kind, low.length, low.rank) == (Combo.STRAIGHT, 5, 5)


def test_case_12_steps_need_consecutive_pairs_of_one_length() -> None:
    assert readings(parse_cards("5j 5s 7j 7s")) == []
    m = position(["9p", "6j 6s 7j 7s", "2j", "2s"], trick=[(0, "5j 5s 6p 6t")], to_act=1)
    assert m.legal_actions() == (PASS, *expect(m, "6j 6s 7j 7s"))
    m = position(["9p", "6j 6s 7j 7s", "2j", "2s"], trick=[(0, "3j 3s 4j 4s 5p 5t")], to_act=1)
    assert m.legal_actions() == (PASS,)
    assert "does not beat" in reject(m, parse_play("6j 6s 7j 7s")).rule


def test_case_13_full_house_ranked_by_its_triple() -> None:
    m = position(["9p", "3j 3s 3p 2j 2s", "4j", "4s"], trick=[(0, "2p 2t Ph=2 Aj As")], to_act=1)
    assert m.top is not None and m.top.rank == 2
    assert m.legal_actions() == (PASS, *expect(m, "3j 3s 3p 2j 2s"))
    # The same cards read as AAA-22 rank by the Aces: 333-22 no longer beats them.
    m = position(["9p", "3j 3s 3p 2j 2s", "4j", "4s"], trick=[(0, "2p 2t Ph=A Aj As")], to_act=1)
    assert m.top is not None and m.top.rank == 14
    assert m.legal_actions() == (PASS,)


def test_case_14_dog_and_dragon_only_alone_mahjong_single_or_straight_bottom() -> None:
    for text in ("Dg Ph", "Dg 2j", "Dr Ph", "Dr Aj", "Mj Ph", "Mj 2j", "Jj Qs Kp At Dr"):
        assert readings(parse_cards(text)) == [], text
    m = position(["Dg Dr Mj Ph 2j 3s 4p 5t Aj", "6j", "6s", "6p"], to_act=0)
    legal = [p for p in m.legal_actions() if isinstance(p, Play)]
    dog_dragon = parse_cards("Dg Dr")
    assert [p for p in legal if p.cards & dog_dragon] == list(expect(m, "Dg", "Dr"))
    mahjong = [p for p in legal if p.cards & parse_cards("Mj")]
    assert {p.kind for p in mahjong} == {Combo.SINGLE, Combo.STRAIGHT}
    assert all(p.rank == p.length for p in mahjong if p.kind == Combo.STRAIGHT)  # 1 at bottom


# ----------------------------------------------------------------------------- Phoenix


def test_case_15_phoenix_led_counts_one_and_a_half() -> None:
    m = position(["Ph 9j", "Mj 2j", "3j", "4j"], to_act=0)
    play(m, "Ph")
    assert m.top == Play(Combo.SINGLE, 1, 1, parse_cards("Ph"))
    assert m.seat == 1
    assert m.legal_actions() == (PASS, *expect(m, "2j"))
    assert "does not beat" in reject(m, parse_play("Mj")).rule


def test_case_16_phoenix_on_a_king_counts_king_and_a_half() -> None:
    m = position(["Kj 9j", "Ph 3j", "Ks As", "4j"], to_act=0)
    play(m, "Kj")
    play(m, "Ph")
    assert m.top is not None and m.top.rank == 13
    assert m.legal_actions() == (PASS, *expect(m, "As"))
    reject(m, parse_play("Ks"))


def test_case_17_phoenix_on_an_ace_beaten_only_by_dragon_or_bomb() -> None:
    m = position(["9j", "Ph 3j", "At Dr 5j 5s 5p 5t", "4j"], trick=[(0, "Aj")], to_act=1)
    play(m, "Ph")
    assert m.top is not None and m.top.rank == 14
    assert m.seat == 2
    assert m.legal_actions() == (PASS, *expect(m, "Dr", "5j 5s 5p 5t"))
    reject(m, parse_play("At"))


def test_case_18_phoenix_not_on_the_dragon_and_one_and_a_half_on_the_mahjong() -> None:
    m = position(["9j", "Ph 2j", "3j", "4j"], trick=[(0, "Dr")], to_act=1)
    assert m.legal_actions() == (PASS,)
    reject(m, Play(Combo.SINGLE, 1, 15, parse_cards("Ph")))
    reject(m, Play(Combo.SINGLE, 1, 1, parse_cards("Ph")))
    m = position(["Mj 9j", "Ph 3j", "2j Ks", "4j"], to_act=0)
    play(m, "Mj")
    m.apply(NO_WISH)
    assert Play(Combo.SINGLE, 1, 1, parse_cards("Ph")) in m.legal_actions()
    play(m, "Ph")
    assert m.top == Play(Combo.SINGLE, 1, 1, parse_cards("Ph"))
    assert m.legal_actions() == (PASS, *expect(m, "2j", "Ks"))


def test_case_19_four_of_a_kind_with_phoenix_is_nothing() -> None:
    assert readings(parse_cards("7j 7s 7p 7t Ph")) == []
    assert readings(parse_cards("7j 7s 7p Ph")) == []
    m = position(["7j 7s 7p 7t Ph", "2j", "3j", "4j"], to_act=0)
    big = [p for p in m.legal_actions() if isinstance(p, Play) and p.length >= 4]
    assert big == list(expect(m, "7j 7s 7p 7t"))
    assert big[0].kind == Combo.FOUR_BOMB
    reject(m, Play(Combo.FULL_HOUSE, 5, 7, parse_cards("7j 7s 7p 7t Ph")))


def test_case_20_suited_run_with_phoenix_is_a_plain_straight() -> None:
    (p,) = readings(parse_cards("3j 4j Ph 6j 7j"))
    assert (p.kind, p.rank, p.phoenix_rank) == (Combo.STRAIGHT, 7, 5)
    m = position(
        ["9p", "3j 4j 6j 7j Ph", "2p 3p 4p 5p 6p", "8p"], trick=[(0, "2s 3s 4s 5s 6t")], to_act=1
    )
    assert m.legal_actions() == (PASS, p)
    play(m, "3j 4j 6j 7j Ph")
    # Not a bomb: seat 2's low straight flush (to 6) beats it, as it would not beat a bomb.
    assert m.top == p and m.phase is Phase.PLAY and m.seat == 2
    assert m.legal_actions() == (PASS, *expect(m, "2p 3p 4p 5p 6p"))


def test_case_21_ambiguous_phoenix_readings_are_declared() -> None:
    straight = readings(parse_cards("Ts Js Qs Ks Ph"))
    assert [(p.kind, p.rank, p.phoenix_rank) for p in straight] == [
        (Combo.STRAIGHT, 13, 9),
        (Combo.STRAIGHT, 14, 14),
    ]
    house = readings(parse_cards("9j 9s 7j 7s Ph"))
    assert sorted((p.kind, p.rank, p.phoenix_rank) for p in house) == [
        (Combo.FULL_HOUSE, 7, 7),
        (Combo.FULL_HOUSE, 9, 9),
    ]
    assert [p.rank for p in readings(parse_cards("Jj Qs Kp At Ph"))] == [14]
    with pytest.raises(InvalidActionError, match="ambiguous"):
        parse_play("Ts Js Qs Ks Ph")
    hands = ["2t", "Tp Jp Qp Kp At 8j 8s 8p 2j 2s", "3t", "4t"]
    m = position(hands, trick=[(0, "Ts Js Qs Ks Ph=9")], to_act=1)
    assert m.legal_actions() == (PASS, *expect(m, "Tp Jp Qp Kp At"))
    m = position(hands, trick=[(0, "Ts Js Qs Ks Ph=A")], to_act=1)
    assert m.legal_actions() == (PASS,)
    m = position(hands, trick=[(0, "9j 9s 7j 7s Ph=7")], to_act=1)
    assert m.legal_actions() == (PASS, *expect(m, "8j 8s 8p 2j 2s"))
    m = position(hands, trick=[(0, "9j 9s 7j 7s Ph=9")], to_act=1)
    assert m.legal_actions() == (PASS,)


def test_case_22_phoenix_costs_25_to_whoever_takes_its_trick() -> None:
    m = position(["Ph 9j", "Kj Qs", "2j", "3s 4s"], to_act=0)
    play(m, "Ph")
    play(m, "Kj")
    for _ in range(3):
        play(m, "pass")
    assert m.won[1] == parse_cards("Ph Kj") and points_of(m.won[1]) == -15
    play(m, "Qs")  # seat 1 out first
    for _ in range(3):
        play(m, "pass")
    assert m.seat == 2
    play(m, "2j")  # seat 2 out second
    play(m, "3s")
    play(m, "9j")  # seat 0 out third; seat 3 keeps the 4 (0 points)
    r = m.hand_results[0]
    assert r.out == (1, 2, 0)
    assert r.card_points == (115, -15)


# ----------------------------------------------------------------------------- Dog, Dragon


def test_case_23_dog_only_leads_and_cannot_be_bombed() -> None:
    m = position(["9j", "2s", "Dg 9s", "4j"], trick=[(1, "5j")], to_act=2)
    assert m.legal_actions() == (PASS, *expect(m, "9s"))
    assert "only be led" in reject(m, Play(Combo.DOG, 1, 0, parse_cards("Dg"))).rule
    bomb = "6j 6s 6p 6t"
    m = position(["Dg 9j", f"{bomb} 2s", "3j 3s", "4j"], to_act=0)
    play(m, "Dg")
    # The partner leads a fresh trick at once; seat 1's bomb is never asked for.
    assert m.phase is Phase.PLAY and m.seat == 2 and m.trick == [] and m.lead
    assert PASS not in m.legal_actions()
    # Its trick ends at once, won by the Dog's player for 0 points.
    assert m.won[0] & DOG_BIT and not m.won[2]
    dog = m.events[-1]
    assert (dog.kind, dog.seat, dog.points, dog.cards) == (EventKind.TRICK_WON, 0, 0, DOG_BIT)
    assert not beats(parse_play(bomb), parse_play("Dg"))


def test_case_24_dog_with_partner_out_goes_to_next_active_after_partner() -> None:
    m = position(["Dg 9j", "2j", "", "3j"], to_act=0, out=[2])
    play(m, "Dg")
    assert m.seat == 3 and m.lead
    m = position(["Dg 9j", "2j", "", ""], to_act=0, out=[2, 3])
    play(m, "Dg")
    assert m.seat == 0 and m.lead


def test_case_25_dog_as_last_card() -> None:
    m = position(["Dg", "2j", "3j", "4j"], to_act=0)
    play(m, "Dg")
    assert m.out == [0] and m.seat == 2 and m.lead
    # With the partner already out, the Dog as last card makes a double victory.
    m = position(["Dg", "2j", "", "4j"], to_act=0, out=[2])
    play(m, "Dg")
    r = m.hand_results[0]
    assert r.out == (2, 0) and r.double_victory == 0 and r.card_points == (200, 0)


def test_case_26_dragon_beats_ace_and_phoenix_ace_only_bombs_beat_it() -> None:
    m = position(["9j", "Dr 3s", "2j", "4j"], trick=[(0, "Aj")], to_act=1)
    assert m.legal_actions() == (PASS, *expect(m, "Dr"))
    m = position(["9j", "4s", "Dr 3s", "4j"], trick=[(0, "Aj"), (1, "Ph")], to_act=2)
    assert m.legal_actions() == (PASS, *expect(m, "Dr"))
    m = position(["9j", "Ph As 5j 5s 5p 5t", "2j", "4j"], trick=[(0, "Dr")], to_act=1)
    assert m.legal_actions() == (PASS, *expect(m, "5j 5s 5p 5t"))


def test_case_27_dragon_trick_given_to_an_opponent_even_one_out() -> None:
    m = position(["Dr 4j", "", "3j", "2j"], to_act=0, out=[1])
    play(m, "Dr")
    play(m, "pass")
    play(m, "pass")
    assert m.phase is Phase.DRAGON_GIFT and m.seat == 0
    assert m.legal_actions() == (Gift(1), Gift(3))
    reject(m, Gift(2))
    m.apply(Gift(1))
    assert m.won[1] == DRAGON_BIT
    # One public event: the gift, its receiver, the trick's points and cards.
    gift = m.events[-1]
    assert (gift.kind, gift.seat, gift.value) == (EventKind.DRAGON_GIFT, 0, 1)
    assert (gift.points, gift.cards) == (25, DRAGON_BIT)
    assert m.phase is Phase.PLAY and m.seat == 0 and m.lead


def test_case_28_bombed_dragon_trick_is_kept_by_the_bomber() -> None:
    m = position(["Dr 4j", "6j 6s 6p 6t 2s", "3j", "2j"], to_act=0)
    play(m, "Dr")
    play(m, "6j 6s 6p 6t")
    for _ in range(3):
        play(m, "pass")
    assert m.phase is Phase.PLAY and m.seat == 1 and m.lead
    assert m.won[1] == parse_cards("Dr 6j 6s 6p 6t")
    assert EventKind.DRAGON_GIFT not in kinds(m)


def test_case_29_dragon_as_third_players_last_card() -> None:
    m = position(["Dr", "", "", "5j Kp"], to_act=0, out=[1, 2], tichu=[1])
    play(m, "Dr")
    # The hand ends at once: no pass is asked, only the gift.
    assert m.phase is Phase.DRAGON_GIFT and m.seat == 0
    assert m.legal_actions() == (Gift(1), Gift(3))
    m.apply(Gift(3))
    r = m.hand_results[0]
    assert r.out == (1, 2, 0)
    # Seat 3's Dragon pile goes to seat 1 (first out); its 5 and K go to team A.
    assert r.card_points == (75, 25)
    assert r.bets == (0, 100)
    assert m.scores == [75, 125]
    assert m.hand_no == 1 and m.phase is Phase.GRAND_TICHU


# ----------------------------------------------------------------------------- bombs


def test_case_30_four_of_a_kind_beats_everything_but_higher_bombs() -> None:
    m = position(["9j", "3j 3s 3p 3t", "2j", "4j"], trick=[(0, "Dr")], to_act=1)
    assert m.legal_actions() == (PASS, *expect(m, "3j 3s 3p 3t"))
    m = position(["9j", "2j 2s 2p 2t", "5j", "4j"], trick=[(0, "Aj As")], to_act=1)
    assert m.legal_actions() == (PASS, *expect(m, "2j 2s 2p 2t"))
    m = position(
        ["9j", "2j 2s 2p 2t 4j 4s 4p 4t", "5j", "6j"], trick=[(0, "3j 3s 3p 3t")], to_act=1
    )
    assert m.legal_actions() == (PASS, *expect(m, "4j 4s 4p 4t"))
    reject(m, parse_play("2j 2s 2p 2t"))


def test_case_31_straight_flush_order() -> None:
    six = "2s 3s 4s 5s 6s 7s"
    m = position(["9p", six, "8j", "8p"], trick=[(0, "Tj Jj Qj Kj Aj")], to_act=1)
    assert m.legal_actions() == (PASS, *expect(m, six))
    reject(m, parse_play("3s 4s 5s 6s 7s"))
    m = position(["9p", "3p 4p 5p 6p 7p", "8j", "8t"], trick=[(0, "2s 3s 4s 5s 6s")], to_act=1)
    assert m.legal_actions() == (PASS, *expect(m, "3p 4p 5p 6p 7p"))
    m = position(["9p", "2s 3s 4s 5s 6s", "8j", "8t"], trick=[(0, "Aj As Ap At")], to_act=1)
    assert m.legal_actions() == (PASS, *expect(m, "2s 3s 4s 5s 6s"))


def test_case_32_bombs_out_of_turn() -> None:
    # On another seat's play: the bomber need not be due; play goes on after him.
    m = position(["9j 2s", "Tj", "5j 5s 5p 5t 3j", "Jj"], to_act=0)
    play(m, "9j")
    assert m.phase is Phase.BOMB_WINDOW and m.seat == 2 and m.turn == 1
    assert m.legal_actions() == (PASS, *expect(m, "5j 5s 5p 5t"))
    play(m, "5j 5s 5p 5t")
    assert m.events[-1].kind == EventKind.PLAY and m.events[-1].value == 1
    assert m.owner == 2 and m.phase is Phase.PLAY and m.seat == 3
    # On one's own play.
    m = position(["9j 5j 5s 5p 5t", "Tj", "3j", "Jj"], to_act=0)
    play(m, "9j")
    assert m.phase is Phase.BOMB_WINDOW and m.seat == 0
    play(m, "5j 5s 5p 5t")
    assert m.trick[-1][0] == 0 and m.seat == 1
    # After the last pass, before the trick is collected.
    m = position(["9j 2s", "3s", "5j 5s 5p 5t 3j", "4s"], to_act=0)
    play(m, "9j")
    play(m, "pass")  # seat 2 declines the window
    play(m, "pass")  # seat 1
    play(m, "pass")  # seat 2, in turn
    play(m, "pass")  # seat 3: the trick would be collected
    assert m.phase is Phase.BOMB_WINDOW and m.seat == 2 and m.trick
    play(m, "5j 5s 5p 5t")
    assert m.owner == 2 and m.seat == 3 and m.phase is Phase.PLAY
    # On an empty table there is no window: the trick is taken, the winner leads.
    for _ in range(3):
        play(m, "pass")
    assert m.trick == [] and m.phase is Phase.PLAY and m.seat == 2 and m.lead


def test_case_33_a_bomb_may_be_led() -> None:
    m = position(["5j 5s 5p 5t 2j", "3j", "4j", "6j"], to_act=0)
    bomb = expect(m, "5j 5s 5p 5t")[0]
    assert bomb in m.legal_actions()
    m.apply(bomb)
    assert m.top == bomb and m.seat == 1
    assert m.legal_actions() == (PASS,)


def test_case_34_simultaneous_bombs_are_asked_in_a_fixed_order() -> None:
    hands = ["9j 2s", "Tj", "3j 3s 3p 3t 7j", "4j 4s 4p 4t 8j"]
    # After seat 0's play, seat 1 is due: seats 2 then 3 are asked, first bomb wins.
    m = position(hands, to_act=0)
    play(m, "9j")
    assert m.phase is Phase.BOMB_WINDOW and m.window == [2, 3] and m.seat == 2
    play(m, "3j 3s 3p 3t")
    assert m.owner == 2
    # Seat 3 is now due: no window, it may bomb in turn.
    assert m.phase is Phase.PLAY and m.seat == 3
    assert m.legal_actions() == (PASS, *expect(m, "4j 4s 4p 4t"))
    # If seat 2 declines, seat 3 is asked next.
    m = position(hands, to_act=0)
    play(m, "9j")
    play(m, "pass")
    assert m.phase is Phase.BOMB_WINDOW and m.seat == 3
    play(m, "4j 4s 4p 4t")
    assert m.owner == 3 and m.seat == 0
    # After a play the window starts after the player (skipping the seat due); after the
    # last pass it starts after the passer, who comes last.
    m = position(["9j 6j 6s 6p 6t", "Tj 2t", "3j 3s 3p 3t 7j", "2s"], to_act=1)
    play(m, "Tj")
    assert m.phase is Phase.BOMB_WINDOW and m.window == [0] and m.turn == 2
    play(m, "pass")  # seat 0 declines
    play(m, "pass")  # seat 2, in turn
    play(m, "pass")  # seat 3
    play(m, "pass")  # seat 0: the last pass
    assert m.phase is Phase.BOMB_WINDOW and m.window == [2, 0] and m.seat == 2
    play(m, "pass")
    assert m.seat == 0
    play(m, "6j 6s 6p 6t")
    assert m.owner == 0 and m.seat == 1


def test_case_35_mahjong_wish_is_a_rank_or_none() -> None:
    for lead in ("Mj", "Mj 2j 3s 4p 5t"):
        m = position(["Mj 2j 3s 4p 5t 9j", "6j", "7j", "8j"], to_act=0)
        play(m, lead)
        assert m.phase is Phase.WISH and m.seat == 0
        assert m.legal_actions() == (NO_WISH, *(Wish(r) for r in range(2, 15)))
        for bad in (Wish(1), Wish(15), Wish(-1)):
            reject(m, bad)
        m.apply(Wish(14))
        assert m.wish == 14 and m.phase is Phase.PLAY and m.seat == 1
        assert (m.events[-1].kind, m.events[-1].value) == (EventKind.WISH, 14)


# ----------------------------------------------------------------------------- the wish


def test_case_36_wished_card_must_be_played_when_it_can_beat() -> None:
    m = position(["9j", "8j 9s Ph Kp", "2j", "3j"], trick=[(0, "5j")], to_act=1, wish=8)
    assert m.legal_actions() == expect(m, "8j")
    assert "wish" in reject(m, PASS).rule
    reject(m, parse_play("9s"))
    reject(m, parse_play("Ph", m.top))
    m = position(["9j", "8j 8s 8p 8t 9s", "2j", "3j"], trick=[(0, "5j")], to_act=1, wish=8)
    assert m.legal_actions() == expect(m, "8j", "8s", "8p", "8t", "8j 8s 8p 8t")
    play(m, "8s")
    assert m.wish == 0
    assert (m.events[-1].kind, m.events[-1].seat, m.events[-1].value) == (
        EventKind.WISH_FULFILLED,
        1,
        8,
    )


def test_case_37_wished_single_card_is_not_forced_onto_a_pair() -> None:
    m = position(["9j", "8j 9s 9p", "2j", "3j"], trick=[(0, "5j 5s")], to_act=1, wish=8)
    assert m.legal_actions() == (PASS, *expect(m, "9s 9p"))
    play(m, "pass")
    assert m.wish == 8
    # With the Phoenix the pair 8-Phoenix beats the table, so it must be played.
    m = position(["9j", "8j 9s 9p Ph", "2j", "3j"], trick=[(0, "5j 5s")], to_act=1, wish=8)
    assert m.legal_actions() == expect(m, "8j Ph")


def test_case_38_wished_four_of_a_kind_must_bomb() -> None:
    m = position(["9j", "8j 8s 8p 8t 2s", "2j", "3j"], trick=[(0, "Aj")], to_act=1, wish=8)
    assert m.legal_actions() == expect(m, "8j 8s 8p 8t")
    reject(m, PASS)


def test_case_39_wish_forces_the_phoenix_straight() -> None:
    m = position(
        ["9j", "4j 5s 7p 8t Ph", "2p", "3t"], trick=[(0, "2j 3s 4p 5t 6j")], to_act=1, wish=7
    )
    assert m.legal_actions() == expect(m, "4j 5s Ph 7p 8t")
    assert expect(m, "4j 5s Ph 7p 8t")[0].phoenix_rank == 6
    reject(m, PASS)


def test_case_40_phoenix_never_fulfils_the_wish() -> None:
    m = position(["9j", "Ph 9s Dg", "2j 7j", "3j"], trick=[(0, "5j")], to_act=1, wish=7)
    assert m.legal_actions() == (PASS, *expect(m, "Ph", "9s"))
    play(m, "Ph")
    assert m.wish == 7
    m = position(["9j", "Ph 9s Dg", "2j 7j", "3j"], to_act=1, wish=7)
    assert expect(m, "Dg", "Ph", "9s") == tuple(m.legal_actions()[:3])


def test_case_41_lead_with_wish_must_contain_the_rank() -> None:
    m = position(["7j 7s 8p Dg", "2j", "3j", "4j"], to_act=0, wish=7)
    assert m.legal_actions() == expect(m, "7j", "7s", "7j 7s")
    reject(m, parse_play("Dg"))
    reject(m, parse_play("8p"))


def test_case_42_wish_stays_until_a_real_card_of_the_rank_is_played() -> None:
    # Seat 2 holds a 7 but never can play it: the wish survives two tricks.
    m = position(["Kj Qj 2s", "3s 4s", "7j Aj 2p", "9t 9p"], to_act=0, wish=7)
    play(m, "Kj")
    play(m, "pass")
    assert m.seat == 2 and m.legal_actions() == (PASS, *expect(m, "Aj"))
    for _ in range(2):
        play(m, "pass")
    play(m, "Qj")
    for _ in range(3):
        play(m, "pass")
    assert m.wish == 7 and m.seat == 0 and m.trick == []
    play(m, "2s")
    play(m, "3s")  # seat 1
    assert m.seat == 2 and m.legal_actions() == expect(m, "7j")
    play(m, "7j")
    assert m.wish == 0
    # A bomb with a real 7, out of turn, clears it for everyone.
    m = position(["Kj 2s", "Qs 5p", "3s 4s 5s 6s 7s 7j Aj", "9t 9p"], to_act=0, wish=7)
    play(m, "Kj")
    assert m.phase is Phase.BOMB_WINDOW and m.seat == 2
    play(m, "3s 4s 5s 6s 7s")
    assert m.wish == 0 and EventKind.WISH_FULFILLED in kinds(m)
    for _ in range(3):
        play(m, "pass")
    assert m.seat == 2 and m.lead
    assert expect(m, "Aj")[0] in m.legal_actions()  # the 7 held is no longer forced


def test_case_43_obliged_player_cannot_bomb_without_the_wished_rank() -> None:
    hands = ["9j", "8j 9s 9p 9t 9j", "2j", "3j"]
    m = position(["Tj", *hands[1:]], trick=[(0, "5j")], to_act=1, wish=8)
    assert m.legal_actions() == expect(m, "8j")
    assert "wish" in reject(m, parse_play("9s 9p 9t 9j")).rule
    # Leading with the wish active, the lead must contain the wished rank too.
    m = position(["Tj", *hands[1:]], to_act=1, wish=8)
    assert m.legal_actions() == expect(m, "8j")
    reject(m, parse_play("9s 9p 9t 9j"))


def test_case_44_out_of_turn_bomb_ignores_the_wish() -> None:
    m = position(["5j 2s", "Tj", "8j 9j 9s 9p 9t", "Jj"], to_act=0, wish=8)
    play(m, "5j")
    assert m.phase is Phase.BOMB_WINDOW and m.seat == 2
    assert m.legal_actions() == (PASS, *expect(m, "9j 9s 9p 9t"))
    play(m, "9j 9s 9p 9t")
    assert m.wish == 8 and m.owner == 2 and m.seat == 3
    # Declining the window is allowed as well.
    m = position(["5j 2s", "Tj", "8j 9j 9s 9p 9t", "Jj"], to_act=0, wish=8)
    play(m, "5j")
    play(m, "pass")
    assert m.phase is Phase.PLAY and m.seat == 1 and m.wish == 8


# ----------------------------------------------------------------------------- going out, scores


def test_case_45_player_out_takes_the_trick_next_active_leads() -> None:
    m = position(["Aj", "2j 3j", "4j 5j", "6j 7j"], to_act=0)
    play(m, "Aj")
    assert m.out == [0]
    for _ in range(3):
        play(m, "pass")
    assert m.won[0] & parse_cards("Aj") and m.trick == []
    assert m.seat == 1 and m.lead
    won = m.events[-1]
    assert (won.kind, won.seat, won.points) == (EventKind.TRICK_WON, 0, 0)
    assert won.cards == parse_cards("Aj")


def test_case_46_double_victory() -> None:
    m = position(["", "5j", "Aj", "Kp"], to_act=2, out=[0], tichu=[0], grand=[1])
    play(m, "Aj")
    r = m.hand_results[0]
    assert r.out == (0, 2) and r.double_victory == 0
    assert r.card_points == (200, 0)
    assert r.bets == (100, -200)
    assert m.scores == [300, -200]


def test_case_47_third_out_ends_the_hand_last_players_cards_move() -> None:
    m = position(["", "5p Tp", "Aj", "9s"], to_act=3, out=[0], won=["", "Kt", "", "Ks"])
    play(m, "9s")  # seat 3 out second
    play(m, "pass")
    play(m, "pass")
    assert m.seat == 1
    play(m, "5p")
    play(m, "Aj")  # seat 2 out third: the hand ends
    r = m.hand_results[0]
    assert r.out == (0, 3, 2)
    # Seat 1 is last: its 10 goes to team A, its pile (the K) to seat 0 (first out).
    assert r.card_points == (90, 10)
    assert sum(r.card_points) == 100


def test_case_48_tichu_lost_even_when_the_partner_goes_out_first() -> None:
    m = position(["", "Kj", "2s", "3s"], to_act=1, out=[0], tichu=[2], grand=[3])
    play(m, "Kj")
    play(m, "pass")
    play(m, "pass")
    play(m, "2s")
    r = m.hand_results[0]
    assert r.out == (0, 1, 2)
    assert r.card_points == (90, 10)
    assert r.bets == (-100, -200)
    assert r.score == (-10, -190)
    # In a double victory the partner's lost Tichu counts too.
    m = position(["", "5j", "Aj", "Kp"], to_act=2, out=[0], tichu=[2])
    play(m, "Aj")
    assert m.hand_results[0].score == (100, 0)


def random_hands(seed: int, hands: int) -> list[tuple[tuple[int, int], int]]:
    """Plays ``hands`` hands with random legal answers; returns (card points, double)."""
    rng = random.Random(seed)
    m = Match(Options(hands=hands), seed=seed)
    while not m.over:
        if m.can_call_tichu() and rng.random() < 0.05:
            m.apply(CALL_TICHU)
        m.apply(rng.choice(m.legal_actions()))
        if m.phase is not Phase.MATCH_OVER:
            assert total_cards(m) == FULL_DECK or m.phase is Phase.GRAND_TICHU
    return [(r.card_points, r.double_victory) for r in m.hand_results]


def test_case_49_card_points_sum_to_100_in_steps_of_5() -> None:
    results = [r for seed in range(8) for r in random_hands(seed, 3)]
    assert len(results) == 24
    plain = [p for p, double in results if double < 0]
    assert len(plain) >= 12
    for a, b in plain:
        assert a + b == 100
        assert -25 <= a <= 125 and -25 <= b <= 125
        assert a % 5 == 0 and b % 5 == 0
    for p, double in results:
        if double >= 0:
            assert p == ((200, 0) if double == 0 else (0, 200))


def _last_card(scores: tuple[int, int], b_pile: str) -> Match:
    """Seat 2 plays its last card, third out; team B scores ``b_pile``, team A the rest."""
    m = position(["", "", "2j", "3j"], to_act=2, out=[0, 1], won=["", b_pile], scores=scores)
    play(m, "2j")
    return m


def test_case_50_both_teams_past_the_target() -> None:
    # Level at 1000: play goes on with a new hand.
    m = _last_card((950, 950), "Dr Kj Ks 5j")
    assert m.hand_results[0].score == (50, 50)
    assert m.scores == [1000, 1000]
    assert not m.over and m.hand_no == 1 and m.phase is Phase.GRAND_TICHU
    # Level above the target: still on.
    m = _last_card((990, 990), "Dr Kj Ks 5j")
    assert m.scores == [1040, 1040] and not m.over
    # Both past it, not level: the higher total wins and the match is over.
    m = _last_card((980, 960), "Dr Kj Ks Tj Tp 5j")
    assert m.hand_results[0].score == (30, 70)
    assert m.scores == [1010, 1030]
    assert m.over and m.phase is Phase.MATCH_OVER


def test_tournament_double_victory_counts_100() -> None:
    """In the turnier mode a 1-2 scores 100 points (not 200) and 3 victory points."""
    m = position(["5j", "3j 3s", "6j", "4j 4s"], to_act=0, options=Options.turnier())
    m.apply(parse_play("5j"))  # seat 0 goes out
    m.apply(PASS)  # seat 1
    m.apply(parse_play("6j"))  # seat 2 goes out: a 1-2 for team A
    r = m.hand_results[-1]
    assert r.double_victory == 0
    assert r.card_points == (100, 0)
    assert r.victory_points == (3, 0)
