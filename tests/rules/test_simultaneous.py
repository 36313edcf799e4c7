"""The rules core owns the simultaneous decisions: each seat still to answer sees itself asked."""

from __future__ import annotations

from arena.rules import GRAND, NO_GRAND, Exchange, Match, Options, Phase, cards_of, observe


def test_every_seat_is_asked_grand_tichu_until_it_answers() -> None:
    m = Match(Options(), seed=3)
    assert m.phase is Phase.GRAND_TICHU and m.simultaneous
    for s in range(4):
        obs = observe(m, s)
        assert (obs.to_act, obs.legal, obs.may_call_tichu) == (s, (NO_GRAND, GRAND), False)
        assert m.legal_actions_of(s) == (NO_GRAND, GRAND)
    m.apply(GRAND)  # seat 0 answers; its call stays hidden from the others
    done = observe(m, 0)
    assert (done.to_act, done.legal, done.grand[0]) == (1, (), True)
    assert m.legal_actions_of(0) == ()
    later = observe(m, 2)
    assert (later.to_act, later.legal, later.grand[0]) == (2, (NO_GRAND, GRAND), False)


def test_every_seat_is_asked_the_exchange_with_its_own_tichu_right() -> None:
    m = Match(Options(), seed=3)
    for call in (True, False, False, False):
        m.apply(GRAND if call else NO_GRAND)
    assert m.phase is Phase.EXCHANGE
    views = [observe(m, s) for s in range(4)]
    assert [v.to_act for v in views] == [0, 1, 2, 3]
    assert [v.may_call_tichu for v in views] == [False, True, True, True]  # seat 0 bet Grand
    assert all(v.legal == () for v in views)  # any three different cards: not listed
    assert len(m.legal_actions_of(2)) == 14 * 13 * 12
    a, b, c = list(cards_of(m.hands[0]))[:3]
    m.apply(Exchange(a, b, c))
    assert observe(m, 0).to_act == 1 and not observe(m, 0).may_call_tichu
    assert m.legal_actions_of(0) == ()


def test_a_sequential_decision_asks_only_the_seat_to_act() -> None:
    m = Match(Options(grand_tichu=False), seed=5)
    for s in range(4):
        a, b, c = list(cards_of(m.hands[s]))[:3]
        m.apply(Exchange(a, b, c))
    assert m.phase is Phase.PLAY and not m.simultaneous
    others = [s for s in range(4) if s != m.seat]
    assert all(observe(m, s).to_act == m.seat and observe(m, s).legal == () for s in others)
    assert all(m.legal_actions_of(s) == () and not m.asks(s) for s in others)
    assert m.legal_actions_of(m.seat) == m.legal_actions()
