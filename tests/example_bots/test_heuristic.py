"""HeuristicBot and its shared helpers: legality in every seat, the purposeful decisions on
hand-built positions, the partition and the card counting, and its strength over random."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from arena.rules import (
    GRAND,
    NO_GRAND,
    PASS,
    Exchange,
    Gift,
    Match,
    Options,
    Phase,
    Play,
    Wish,
    deal_from_seed,
    parse_card,
    parse_cards,
    parse_play,
)
from arena.rules.cards import DRAGON, PHOENIX, RANK_MASKS, points_of
from arena.rules.combos import FOUR_BOMB, FULL_HOUSE, PAIR, SINGLE, STRAIGHT
from arena.rules.position import position
from example_bots.common.duel import Timing, duel
from example_bots.common.odds import BOMB_RISK, Odds
from example_bots.common.partition import plan, realize
from example_bots.common.strength import grand_score, hand_strength
from example_bots.greedy.bot import GreedyBot
from example_bots.heuristic.bot import HeuristicBot
from example_bots.random.bot import RandomBot
from sdk import Bot
from tests.helpers import deal_with, play_checked_hand, to_act


def _rank(card: int) -> int:
    return (card - 2) // 4 + 2


def _act(m: Match) -> object:
    return HeuristicBot().act(to_act(m))


# ---------------------------------------------------------------- legality


@pytest.mark.slow
def test_plays_legal_hands_in_every_seat() -> None:
    """Heuristic in all four seats and mixed with greedy and random bots."""
    rng = itertools.count()
    timing: dict[str, Timing] = {}
    for seed in range(150):
        lineups: list[list[Bot]] = [
            [HeuristicBot(), HeuristicBot(), HeuristicBot(), HeuristicBot()],
            [HeuristicBot(), GreedyBot(), HeuristicBot(), RandomBot(next(rng))],
            [RandomBot(next(rng)), HeuristicBot(), GreedyBot(), HeuristicBot()],
        ]
        play_checked_hand(lineups[seed % 3], seed, timing)
    assert timing["heuristic"].decisions > 5000
    # A generous bound for a shared CI machine: the median decision takes about 0.02 ms.
    assert timing["heuristic"].quantile(0.5) < 0.002


# ---------------------------------------------------------------- partnership


def test_does_not_overtake_the_partners_ace_with_nothing_to_gain() -> None:
    m = position(
        ["Dr 3j 3s 7p 8p 9t Qs Ks", "2j 4j 5s 6p 9s Js Jt", "2s 4s 5p 6t 8s Tj", "2p 4p 5t 6j"],
        trick=[(2, "Ap")],
        to_act=0,
    )
    assert parse_play("Dr") in to_act(m).legal
    assert _act(m) == PASS


def test_goes_out_over_its_partner() -> None:
    m = position(["9s", "2j 4j 5s", "2s 4s 5p 6t 8s", "2p 4p 5t 6j"], trick=[(2, "4t")], to_act=0)
    assert _act(m) == parse_play("9s")


def test_leaves_the_lead_to_a_partner_who_called() -> None:
    m = position(
        ["6s 8p Ks As 3j 3t", "2j 4j 5s 7j", "2s 4s 5p 6t 8s Tj", "2p 4p 5t 6j"],
        trick=[(2, "4t")],
        to_act=0,
        tichu=[2],
    )
    assert _act(m) == PASS


def test_raises_the_bar_when_an_opponent_could_go_out_over_the_partner() -> None:
    # Seat 1 is out and seat 3 holds one card: over the partner's 2 it would go out for a
    # double victory. The Ace stops any single card but the Dragon, which is gone.
    m = position(
        ["3j 4s 8p Aj", "", "2s 4t 6t 8s Tj", "Qt"],
        trick=[(2, "2p")],
        to_act=0,
        out=[1],
    )
    assert _act(m) == parse_play("Aj")


# ---------------------------------------------------------------- bombs


def test_bombs_an_opponent_about_to_go_out_in_turn() -> None:
    m = position(
        ["2s 5p 6t 9p", "3t", "7j 7s 7p 7t 4j 9s Js", "2p 4p 5t 6j 8t"],
        trick=[(1, "Kp")],
        to_act=2,
    )
    answer = _act(m)
    assert isinstance(answer, Play) and answer.kind == FOUR_BOMB


def test_bombs_out_of_turn_only_when_it_matters() -> None:
    # Seat 1 leads its King keeping one card: the window asks seat 0, which bombs. The same
    # King from a long hand is left alone.
    for seat1, bombs in (("Kp 3t", True), ("Kp 3t 4t 6t 8t 9t", False)):
        m = position(["7j 7s 7p 7t 2s 9j", seat1, "Js Qs", "2j 3j 4j"], to_act=1)
        m.apply(parse_play("Kp"))
        assert m.phase is Phase.BOMB_WINDOW and m.seat == 0
        answer = _act(m)
        assert isinstance(answer, Play)
        assert (answer.kind == FOUR_BOMB) is bombs


def test_never_bombs_its_partner() -> None:
    m = position(["7j 7s 7p 7t 2s", "4t 5t", "Kp 3t", "2j 3j 4j"], to_act=2)
    m.apply(parse_play("Kp"))
    assert m.phase is Phase.BOMB_WINDOW and m.seat == 0
    assert _act(m) == PASS


# ---------------------------------------------------------------- leads


def test_leads_no_low_single_into_an_opponent_with_one_card() -> None:
    m = position(["3j 3s 4p 9t", "Qt", "2s 4t 6t 8s Tj", "2p 5t 6j 8p"], to_act=0)
    answer = _act(m)
    assert isinstance(answer, Play) and answer.kind == PAIR
    m = position(["3j 7s Jt", "Qt", "2s 4t 6t 8s Tj", "2p 5t 6j 8p"], to_act=0)
    assert _act(m) == parse_play("Jt")


def test_leads_the_dog_to_an_active_partner_and_not_to_an_opponent() -> None:
    m = position(["Dg 3j 5s 8p Kt", "2j 4j", "2s 4t 6t", "2p 4p 5t"], to_act=0)
    assert _act(m) == parse_play("Dg")
    m = position(["Dg 3j 5s 8p Kt", "2j 4j", "", "2p 4p 5t"], to_act=0, out=[2])
    assert _act(m) != parse_play("Dg")


def test_cashes_sure_winners_before_the_last_loser() -> None:
    # Dragon and Phoenix are gone (in the won piles): the Ace is sure, the 3 is not.
    m = position(["3j Aj", "2j 4j 5s Qt", "2s 4t 6t 8s", "2p 4p 5t 6j"], to_act=0)
    played = m.hands[0] | m.hands[1] | m.hands[2] | m.hands[3]
    assert not played & (1 << DRAGON | 1 << PHOENIX)
    assert _act(m) == parse_play("Aj")


# ---------------------------------------------------------------- bets


def test_grand_tichu_with_a_monster_and_not_with_a_weak_hand() -> None:
    monster = Match(deals=[deal_with("Dr Ph Aj As At Ks Kp 2j")])
    weak = Match(deals=[deal_with("2j 3s 5p 6t 8s 9j Tp Jt")])
    assert _act(monster) == GRAND
    assert _act(weak) == NO_GRAND
    assert grand_score(to_act(monster).hand) > grand_score(to_act(weak).hand)


def test_tichu_after_the_exchange_with_a_strong_hand_only() -> None:
    strong = "Dr Ph Aj As Ks Kp Qj Qs Jj Tj 9j 8j 7s 2s"
    weak = "2j 3s 4p 6t 7s 8j 9p Tt Jj Qs 2p 3t 5j 6j"
    for hand, calls in ((strong, True), (weak, False)):
        others = [c for c in range(56) if not parse_cards(hand) >> c & 1]
        rest = [sum(1 << c for c in others[i * 14 : (i + 1) * 14]) for i in range(3)]
        m = position([hand, rest[0], rest[1], rest[2]], to_act=0)
        obs = to_act(m)
        assert obs.may_call_tichu
        assert HeuristicBot().call_tichu(obs) is calls
        # Never beside a partner's bet.
        m = position([hand, rest[0], rest[1], rest[2]], to_act=0, tichu=[2])
        assert not HeuristicBot().call_tichu(to_act(m))
    assert hand_strength(parse_cards(strong)).margin > hand_strength(parse_cards(weak)).margin


def test_waits_for_the_received_cards_before_calling() -> None:
    m = Match(Options(hands=1, grand_tichu=False), deals=[deal_with("Dr Ph Aj As Ks Kp Qj")])
    obs = to_act(m)
    assert obs.phase is Phase.EXCHANGE and obs.may_call_tichu
    assert not HeuristicBot().call_tichu(obs)


# ---------------------------------------------------------------- exchange, wish, gift


def test_exchange_helps_the_partner_and_gives_opponents_nothing() -> None:
    hand = "9j 9s 9p 9t Dr Aj Kt 2j 3s 6p 8t Jp 4p 4t"
    m = Match(Options(hands=1, grand_tichu=False), deals=[deal_with(hand)])
    obs = to_act(m)
    answer = HeuristicBot().act(obs)
    assert isinstance(answer, Exchange)
    assert len(set(answer)) == 3 and all(obs.hand >> c & 1 for c in answer)
    assert answer.to_partner in (DRAGON, PHOENIX) or _rank(answer.to_partner) >= 11
    for c in (answer.to_next, answer.to_prev):
        assert not points_of(1 << c), "no point card to an opponent"
        assert not (1 << c) & RANK_MASKS[9], "the bomb stays whole"
        assert c not in (DRAGON, PHOENIX) and _rank(c) < 14


def test_exchange_keeps_the_dog_for_a_partner_who_called_grand() -> None:
    deal = deal_with("Dg 2j 3s 5t 7j 8s 9p Tt Jj Qs Kp Aj 4p 6s")
    m = Match(Options(hands=1), deals=[deal])
    for call in (NO_GRAND, NO_GRAND, GRAND, NO_GRAND):  # seat 2, the partner, calls Grand
        m.apply(call)
    kept = HeuristicBot().act(to_act(m))
    assert isinstance(kept, Exchange) and 0 not in (kept.to_next, kept.to_prev)
    plain = Match(Options(hands=1, grand_tichu=False), deals=[deal])
    passed = HeuristicBot().act(to_act(plain))
    assert isinstance(passed, Exchange) and 0 in (passed.to_next, passed.to_prev)


def test_wishes_a_rank_passed_to_an_opponent_or_a_high_one_it_lacks() -> None:
    m = position(["Mj 2s Aj Ap Kt 6s", "4s 9j Jj", "6t 9p", "2p 3p Jt"], to_act=0)
    m.apply(parse_play("Mj"))
    assert m.phase is Phase.WISH
    obs = to_act(m)
    plain = HeuristicBot().act(obs)
    assert plain == Wish(11)  # holds As and a K, no Q is left: the highest rank still out
    given = Exchange(parse_card("9j"), parse_card("6t"), parse_card("3p"))
    told = HeuristicBot().act(dataclasses.replace(obs, given=given))
    assert told == Wish(9), "the 9 it passed to the next seat"


def test_gives_the_dragon_trick_to_the_weaker_opponent() -> None:
    for tichu, expected in (((), 3), ((3,), 1)):
        m = position(["Dr 2s", "4s 9j", "6t 9p 5p", "2p 3p 5t 6j 8p 8t Tp"], to_act=0, tichu=tichu)
        m.apply(parse_play("Dr"))
        while m.phase is not Phase.DRAGON_GIFT:
            m.apply(PASS)
        assert HeuristicBot().act(to_act(m)) == Gift(expected)


# ---------------------------------------------------------------- helpers


def test_plan_keeps_straights_bombs_and_full_houses() -> None:
    straight = plan(parse_cards("2j 3s 4p 5t 6j Kp"))
    assert any(p.kind == STRAIGHT and p.length == 5 for p in straight.parts)
    bomb = plan(parse_cards("7j 7s 7p 7t 8j 9j"))
    assert [b.kind for b in bomb.bombs] == [FOUR_BOMB]
    full = plan(parse_cards("Jj Jt Ph 4s 4t"))
    assert [p.kind for p in full.parts] == [FULL_HOUSE]
    # Every card lands in exactly one play.
    for seed in range(30):
        hand = sum(1 << c for c in deal_from_seed(seed, 0)[0])
        plays = realize(hand)
        covered = 0
        for p in plays:
            assert not covered & p.cards
            covered |= p.cards
        assert covered == hand


def test_counting_knows_a_sure_ace() -> None:
    gone = position(["Aj 3s", "4s 9j", "6t 9p", "2p 3p"], to_act=0)
    odds = Odds(to_act(gone))
    ace = Play(SINGLE, 1, 14, parse_cards("Aj"))
    assert odds.beat_chance(ace) < 2.5 * BOMB_RISK
    live = position(["Aj 3s", "4s Dr", "6t 9p", "2p 3p"], to_act=0)
    assert Odds(to_act(live)).beat_chance(ace) > 0.3


# ---------------------------------------------------------------- strength


@pytest.mark.slow
def test_heuristic_beats_random_by_a_clear_margin() -> None:
    seeds = itertools.count(7000)
    result = duel(HeuristicBot, lambda: RandomBot(next(seeds)), boards=100, first_seed=1)
    assert result.mean - result.half_width > 150, result.summary()
