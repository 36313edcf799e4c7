"""Determinization: a rebuilt match is the observed position, with the hidden cards re-dealt.

The key check replays random seeded matches and, at every decision, rebuilds the position
from the acting seat's view (and from another seat's): the rebuilt match must look the same
to that seat (``observe`` equal in every field) and offer the same legal answers.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from arena.rules import (
    CALL_TICHU,
    NO_GRAND,
    Match,
    Observation,
    Options,
    Phase,
    cards_of,
    observe,
)
from arena.rules.cards import FULL_DECK, MAHJONG_BIT, RANK_MASKS
from arena.rules.state import total_cards
from sdk.sim import Determinizer, PublicHistory, determinize
from tests.helpers import random_answer

# Slots of a rebuilt match that must equal the real one when it is given the real hands.
PUBLIC_SLOTS = (
    "phase",
    "seat",
    "hand_no",
    "scores",
    "tichu",
    "trick",
    "trick_cards",
    "owner",
    "passes",
    "lead",
    "turn",
    "wish",
    "won",
    "out",
    "events",
)


def positions(matches: int, seed: int, options: Options) -> Iterator[Match]:
    """Every decision point of ``matches`` random matches (the live match: do not keep it)."""
    rng = random.Random(seed)
    for k in range(matches):
        m = Match(options, seed * 1000 + k)
        while not m.over:
            if m.can_call_tichu() and rng.random() < 0.04:
                m.apply(CALL_TICHU)
            yield m
            m.apply(random_answer(m, rng, grand=0.05))


def true_hidden(m: Match, seat: int) -> list[int]:
    """What ``seat`` cannot see of the real match, in ``Determinizer.build``'s format."""
    if m.phase is Phase.GRAND_TICHU:
        dealt = [sum(1 << c for c in h) for h in m.dealt]
        return [dealt[t] & ~m.hands[t] if t == seat else dealt[t] for t in range(4)]
    return [0 if t == seat else m.hands[t] for t in range(4)]


def check_view(m: Match, seat: int, rng: random.Random) -> Match:
    """Determinizes ``seat``'s view of ``m`` and checks the rebuilt match against it."""
    obs = observe(m, seat)
    d = determinize(obs, rng)
    assert observe(d, seat) == obs
    if seat == m.seat and m.phase is not Phase.EXCHANGE:
        assert d.legal_actions() == obs.legal
    assert d.can_call_tichu(seat) == m.can_call_tichu(seat)
    assert [h.bit_count() for h in d.hands] == [h.bit_count() for h in m.hands]
    if m.phase is not Phase.GRAND_TICHU:
        assert total_cards(d) == FULL_DECK
    assert d.hands[seat] == m.hands[seat]
    return d


@pytest.mark.slow
@pytest.mark.parametrize("options", [Options(hands=2), Options(hands=1, grand_tichu=False)])
def test_rebuilt_position_looks_the_same_to_the_seat(options: Options) -> None:
    rng = random.Random(7)
    checked = 0
    for i, m in enumerate(positions(30, 11, options)):
        d = check_view(m, m.seat, rng)
        other = (m.seat + 1 + i % 3) & 3
        check_view(m, other, rng)
        checked += 1
        if i % 9 == 0:  # the rebuilt match plays on to the end of the hand without error
            hands_done = len(d.hand_results)
            while len(d.hand_results) == hands_done and not d.over:
                d.apply(random_answer(d, rng, grand=0.05))
            res = d.hand_results[-1]
            if res.double_victory < 0:
                assert sum(res.card_points) == 100
    assert checked > 2500, checked


def test_real_hands_rebuild_the_real_match() -> None:
    rng = random.Random(3)
    for m in positions(15, 5, Options(hands=1)):
        seat = m.seat
        det = Determinizer(observe(m, seat))
        d = det.build(true_hidden(m, seat), rng)
        for name in PUBLIC_SLOTS:
            assert getattr(d, name) == getattr(m, name), name
        if m.phase is not Phase.GRAND_TICHU:
            assert d.hands == m.hands
            assert d.grand == m.grand
        if m.phase is Phase.BOMB_WINDOW:
            assert (d.window, d.resume) == (m.window, m.resume)
        if m.phase not in (Phase.GRAND_TICHU, Phase.EXCHANGE):
            assert d.exchanges[seat] == m.exchanges[seat]


def test_inferences_hold_in_real_matches() -> None:
    """Passed cards, the Mah Jong and wish voids are where the determinizer puts them."""
    voids_seen = forced_seen = 0
    for m in positions(25, 8, Options(hands=1)):
        if m.phase in (Phase.GRAND_TICHU, Phase.EXCHANGE):
            continue
        obs = observe(m, m.seat)
        hist = PublicHistory(obs.events)
        det = Determinizer(obs)
        for t in range(4):
            assert not m.hands[t] & hist.voids[t]
            forced = det._forced[t]
            assert forced & m.hands[t] == forced
            voids_seen += bool(hist.voids[t])
            forced_seen += bool(forced)
        assert hist.won == m.won
    assert voids_seen > 20 and forced_seen > 500, (voids_seen, forced_seen)


def view_after_exchange(seed: int) -> tuple[Match, Observation]:
    rng = random.Random(seed)
    m = Match(Options(hands=1), seed)
    while m.phase is not Phase.PLAY:
        m.apply(random_answer(m, rng, grand=0.05))
    return m, observe(m, m.seat)


def test_samples_honour_passed_cards_and_spread_the_rest() -> None:
    _, obs = view_after_exchange(4)
    assert obs.given is not None
    det = Determinizer(obs)
    rng = random.Random(1)
    where: dict[int, set[int]] = {c: set() for c in cards_of(obs.unseen)}
    for _ in range(300):
        d = det.sample(rng)
        for k, c in enumerate(obs.given, 1):
            assert d.hands[(obs.seat + k) & 3] >> c & 1
        for c in where:
            where[c].update(t for t in range(4) if d.hands[t] >> c & 1)
    others = {t for t in range(4) if t != obs.seat}
    free = [c for c in where if not (1 << c) & MAHJONG_BIT]
    assert all(where[c] == others for c in free)


def test_mahjong_stays_with_the_first_leader() -> None:
    for seed in range(40):
        m, _ = view_after_exchange(seed)
        leader = m.seat
        m.apply(next(a for a in m.legal_actions() if not a.cards & MAHJONG_BIT))  # type: ignore[union-attr]
        while m.phase is not Phase.PLAY:
            m.apply(m.legal_actions()[0])
        seat = m.seat
        if m.hands[seat] & MAHJONG_BIT or leader == seat:
            continue
        d = determinize(observe(m, seat), random.Random(seed))
        assert d.hands[leader] & MAHJONG_BIT


def test_grand_tichu_view_deals_six_more_to_the_seat() -> None:
    m = Match(Options(hands=1), 2)
    m.apply(NO_GRAND)
    obs = observe(m, 1)
    d = determinize(obs, random.Random(0))
    assert d.hands[1] == obs.hand and [h.bit_count() for h in d.hands] == [8] * 4
    dealt = [sum(1 << c for c in h) for h in d.dealt]
    assert all(len(h) == 14 for h in d.dealt) and sum(dealt) == FULL_DECK
    assert dealt[1] & obs.hand == obs.hand
    assert d.grand == [False] * 4  # seat 0's answer is hidden


def test_lead_without_the_wished_rank_makes_a_void() -> None:
    # Find a real lead with an active wish and no wished card played: a void follows.
    rng = random.Random(2)
    for m in positions(200, 21, Options(hands=1)):
        if m.phase is Phase.PLAY and m.wish and not m.trick:
            wished = RANK_MASKS[m.wish]
            if m.hands[m.seat] & wished:
                continue
            seat = m.seat
            m2 = m.copy()
            m2.apply(random_answer(m2, rng, grand=0.05))
            hist = PublicHistory(observe(m2, (seat + 1) & 3).events)
            assert hist.voids[seat] & wished == wished
            return
    pytest.fail("no lead under an active wish found")


def test_over_match_cannot_be_determinized() -> None:
    rng = random.Random(0)
    m = Match(Options(hands=1), 0)
    while not m.over:
        m.apply(random_answer(m, rng, grand=0.05))
    with pytest.raises(ValueError, match="over"):
        Determinizer(observe(m, 0))
