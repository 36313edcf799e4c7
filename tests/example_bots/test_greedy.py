"""GreedyBot: legal answers in every seat, each of its simple rules, and its edge over random."""

from __future__ import annotations

import itertools

import pytest

from arena.rules import (
    GRAND,
    NO_GRAND,
    PASS,
    Exchange,
    Match,
    Options,
    Phase,
    Play,
    Wish,
    parse_card,
    parse_play,
)
from arena.rules.cards import DRAGON
from arena.rules.combos import FOUR_BOMB
from arena.rules.position import position
from example_bots.common.duel import duel
from example_bots.greedy.bot import GreedyBot
from example_bots.heuristic.bot import HeuristicBot
from example_bots.random.bot import RandomBot
from sdk import Bot
from tests.helpers import deal_with, play_checked_hand, to_act


@pytest.mark.slow
def test_plays_legal_hands_in_every_seat() -> None:
    """Greedy in all four seats, and mixed with random and heuristic bots: every answer is a
    member of ``obs.legal`` (three different cards of the hand for the exchange)."""
    rng = itertools.count()
    for seed in range(120):
        lineups: list[list[Bot]] = [
            [GreedyBot(), GreedyBot(), GreedyBot(), GreedyBot()],
            [GreedyBot(), RandomBot(next(rng)), GreedyBot(), RandomBot(next(rng))],
            [RandomBot(next(rng)), GreedyBot(), HeuristicBot(), GreedyBot()],
        ]
        m = play_checked_hand(lineups[seed % 3], seed)
        assert len(m.hand_results[0].out) >= 2


def test_follows_with_the_lowest_play_that_beats_the_table() -> None:
    m = position(["2j 3j", "4s 4t 9j", "6s 9p Kt Ph Dr", "2p 3p 5s"], trick=[(1, "5j")], to_act=2)
    assert GreedyBot().act(to_act(m)) == parse_play("6s")


def test_keeps_the_phoenix_for_last() -> None:
    m = position(["2j 3j", "4s 4t 9j", "Ph Dr 3s", "2p 3p 5s"], trick=[(1, "Aj")], to_act=2)
    assert GreedyBot().act(to_act(m)) == parse_play("Dr")


def test_leads_the_longest_combination_holding_its_lowest_card() -> None:
    m = position(["3j 4s 5p 6t 7j 9s Ks", "2j 2s", "8p 8t", "Ts Tt"], to_act=0)
    assert GreedyBot().act(to_act(m)) == parse_play("3j 4s 5p 6t 7j")


def test_never_overtakes_its_partner() -> None:
    m = position(["2j 3j", "4s 4t 9j", "Tj Aj Dr", "2p 3p 5s"], trick=[(0, "9s")], to_act=2)
    assert GreedyBot().act(to_act(m)) == PASS


def test_bombs_out_of_turn_only_against_an_opponent_about_to_go_out() -> None:
    # Seat 1 leads its King and keeps one card: the bomb window asks seat 0 (seat 2 acts
    # next). With many cards left the same lead gets no bomb.
    for seat1, bombs in (("Kp 3t", True), ("Kp 3t 4t 6t 8t 9t", False)):
        m = position(["7j 7s 7p 7t 2s", seat1, "Js Qs", "2j 3j 4j"], to_act=1)
        m.apply(parse_play("Kp"))
        assert m.phase is Phase.BOMB_WINDOW and m.seat == 0
        answer = GreedyBot().act(to_act(m))
        assert isinstance(answer, Play)
        assert (answer.kind == FOUR_BOMB) is bombs


def test_exchange_gives_the_best_card_to_the_partner_and_low_cards_away() -> None:
    hand = "Dr 3s 2j Kt Ks 9p 9t Tj Js Qs Aj 8t 6t 7p"
    m = Match(Options(hands=1, grand_tichu=False), deals=[deal_with(hand)])
    answer = GreedyBot().act(to_act(m))
    assert answer == Exchange(parse_card("2j"), DRAGON, parse_card("3s"))


def test_wishes_the_highest_rank_it_does_not_hold() -> None:
    m = position(["Mj 2s Aj Ap Kt", "4s 9j", "6s 9p", "2p 3p"], to_act=0)
    m.apply(parse_play("Mj"))
    assert m.phase is Phase.WISH
    assert GreedyBot().act(to_act(m)) == Wish(13 - 1)  # holds As and a K: wishes a Queen


def test_calls_only_with_dragon_aces_and_phoenix_or_bomb() -> None:
    strong = Match(deals=[deal_with("Dr Ph Aj As 2j 3s 5p 7t")])
    weak = Match(deals=[deal_with("Dr Aj Kt 2j 3s 5p 7t 9p")])
    assert GreedyBot().act(to_act(strong)) == GRAND
    assert GreedyBot().act(to_act(weak)) == NO_GRAND
    hand14 = "Dr Ph Aj 2j 3s 5p 7t 9p Tj Js Qs 4t 6t 8t"
    m = position([hand14, "2p 3p", "2s 3t", "4s 4p"], to_act=0)
    assert to_act(m).may_call_tichu and GreedyBot().call_tichu(to_act(m))
    m = position(["Dr Kj 2j 3s 5p 7t 9p Tj Js Qs 4t 6t 8t 9j", "2p", "2s", "4s"], to_act=0)
    assert not GreedyBot().call_tichu(to_act(m))


def test_greedy_beats_random_by_a_wide_margin() -> None:
    seeds = itertools.count(1000)
    result = duel(GreedyBot, lambda: RandomBot(next(seeds)), boards=60, first_seed=500)
    assert result.mean - result.half_width > 140, result.summary()
