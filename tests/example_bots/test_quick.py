"""QuickBot: legal answers in every seat, deterministic, its searches equal to the heuristic's
at the heuristic's weights, its own exchange weights, and the heuristic's rules on hand-built
positions."""

from __future__ import annotations

import itertools

import pytest

from arena.rules import (
    DOG,
    DRAGON,
    PASS,
    Exchange,
    Match,
    Observation,
    Options,
    Phase,
    Play,
    deal_from_seed,
    format_cards,
    observe,
    parse_card,
)
from arena.rules.combos import FOUR_BOMB, PAIR
from arena.rules.position import position
from example_bots.common.duel import Timing
from example_bots.greedy.bot import GreedyBot
from example_bots.heuristic.bot import DOG_PASS, HeuristicBot
from example_bots.quick.bot import QuickBot
from example_bots.random.bot import RandomBot
from sdk import Bot
from tests.helpers import play_checked_hand, to_act


def _act(m: Match) -> object:
    return QuickBot().act(to_act(m))


# ---------------------------------------------------------------- legality


@pytest.mark.slow
def test_plays_legal_hands_in_every_seat() -> None:
    """Quick in all four seats and mixed with heuristic, greedy and random bots."""
    rng = itertools.count()
    timing: dict[str, Timing] = {}
    for seed in range(120):
        lineups: list[list[Bot]] = [
            [QuickBot(), QuickBot(), QuickBot(), QuickBot()],
            [QuickBot(), HeuristicBot(), QuickBot(), RandomBot(next(rng))],
            [RandomBot(next(rng)), QuickBot(), GreedyBot(), QuickBot()],
        ]
        play_checked_hand(lineups[seed % 3], seed, timing)
    assert timing["quick"].decisions > 4000


def test_plays_legal_hands_quickly_checked() -> None:
    for seed in range(6):
        play_checked_hand([QuickBot(), HeuristicBot(), QuickBot(), GreedyBot()], seed)


def test_is_deterministic() -> None:
    first = play_checked_hand([QuickBot(), HeuristicBot(), QuickBot(), HeuristicBot()], 7)
    again = play_checked_hand([QuickBot(), HeuristicBot(), QuickBot(), HeuristicBot()], 7)
    assert first.actions == again.actions


# ---------------------------------------------------------------- exchange


class _HeuristicWeights(QuickBot):
    """QuickBot's exchange search with the heuristic's weights."""

    weak_generosity = 1.2  # the heuristic's generosity to the partner from a weak hand
    dog_pass = DOG_PASS


def test_exchange_search_finds_the_heuristics_exchange() -> None:
    """The branch and bound over the opponents' pair prunes; it never changes the answer."""
    differs = 0
    for seed in range(40):
        m = Match(Options(hands=1), deals=[deal_from_seed(seed, 0)])
        while m.phase is not Phase.EXCHANGE:
            m.apply(HeuristicBot().act(to_act(m)))
        for s in range(4):
            obs = observe(m, s)
            theirs = HeuristicBot().exchange(obs)
            assert _HeuristicWeights().exchange(obs) == theirs
            mine = QuickBot().exchange(obs)
            assert isinstance(mine, Exchange)
            differs += mine != theirs
    assert differs  # QuickBot's own weights do change some exchanges


# ---------------------------------------------------------------- play


def test_leads_no_low_single_into_an_opponent_with_one_card() -> None:
    m = position(["3j 3s 4p 9t", "Qt", "2s 4t 6t 8s Tj", "2p 5t 6j 8p"], to_act=0)
    answer = _act(m)
    assert isinstance(answer, Play) and answer.kind == PAIR


def test_does_not_overtake_the_partners_ace_with_nothing_to_gain() -> None:
    m = position(
        ["Dr 3j 3s 7p 8p 9t Qs Ks", "2j 4j 5s 6p 9s Js Jt", "2s 4s 5p 6t 8s Tj", "2p 4p 5t 6j"],
        trick=[(2, "Ap")],
        to_act=0,
    )
    assert _act(m) == PASS


def test_bombs_an_opponent_about_to_go_out_in_turn() -> None:
    m = position(
        ["2s 5p 6t 9p", "3t", "7j 7s 7p 7t 4j 9s Js", "2p 4p 5t 6j 8t"],
        trick=[(1, "Kp")],
        to_act=2,
    )
    answer = _act(m)
    assert isinstance(answer, Play) and answer.kind == FOUR_BOMB


def _exchange_view(seed: int, seat: int) -> Observation:
    """The exchange decision of ``seat`` on board ``seed`` after heuristic Grand Tichu calls."""
    m = Match(Options(hands=1), deals=[deal_from_seed(seed, 0)])
    while m.phase is not Phase.EXCHANGE:
        m.apply(HeuristicBot().act(to_act(m)))
    return observe(m, seat)


def test_a_weak_hand_keeps_the_dragon_and_gives_a_card_its_plan_spares() -> None:
    obs = _exchange_view(0, 2)
    assert format_cards(obs.hand) == "2t 3p 4j 5t 6p 8j 9p 9t Tt Js Qs Qt Kj Dr"
    assert HeuristicBot().exchange(obs).to_partner == DRAGON
    mine = QuickBot().exchange(obs)
    assert mine.to_partner == parse_card("Qs") and DRAGON not in mine


def test_keeps_the_dog_from_the_opponents() -> None:
    obs = _exchange_view(2, 0)
    assert obs.hand >> DOG & 1
    assert DOG in HeuristicBot().exchange(obs)
    assert DOG not in QuickBot().exchange(obs)
