"""SearchBot: legal answers in every seat, a clearly winning line, determinism, budgets."""

from __future__ import annotations

import time

import pytest

from arena.rules import (
    PASS,
    Match,
    Observation,
    Options,
    Phase,
    Play,
    observe,
)
from arena.rules.combos import FOUR_BOMB
from arena.rules.position import position
from example_bots.heuristic.bot import HeuristicBot
from example_bots.search.bot import SearchBot, figure
from sdk.testing import check_bot_local
from tests.helpers import play_checked_hand


def test_plays_seeded_hands_in_all_seats() -> None:
    for seed in (1, 2):
        bots = [SearchBot(iterations=12, time_limit=None, seed=s) for s in range(4)]
        answers = play_checked_hand(bots, seed).actions
        assert any(isinstance(a, Play) and a.kind != PASS.kind for _, a in answers)


@pytest.mark.slow
def test_same_seed_same_answers() -> None:
    def bots(seed: int) -> list[SearchBot]:
        return [SearchBot(iterations=15, time_limit=None, seed=seed + s) for s in range(4)]

    assert play_checked_hand(bots(5), 3).actions == play_checked_hand(bots(5), 3).actions


def test_goes_out_with_a_bomb_to_win_its_tichu() -> None:
    # Seat 0 called Tichu and holds only a bomb; seat 3 leads the trick with an Ace and
    # has one card left. Passing lets seat 3 win the trick and go out first; the bomb
    # takes seat 0 out first.
    m = position(
        ["7j 7s 7p 7t", "Kp Kt 9j", "Qj Qs 3p", "4j"],
        trick=[(3, "Aj")],
        to_act=0,
        tichu=[0],
    )
    obs = observe(m, 0)
    assert len(obs.legal) == 2
    bot = SearchBot(iterations=60, time_limit=None)
    action = bot.act(obs)
    assert isinstance(action, Play) and action.kind == FOUR_BOMB


def test_takes_the_only_winning_lead() -> None:
    # Seat 0 (Tichu) leads with a pair of Aces and a 2. Nobody beats the pair; seat 1 would
    # go out first on the 2 with its last card. Only the pair first wins the bet.
    m = position(
        ["Aj As 2j", "3s", "6p 7p 8p", "Kp Kt Dr"],
        to_act=0,
        tichu=[0],
    )
    obs = observe(m, 0)
    bot = SearchBot(iterations=150, time_limit=None)
    action = bot.act(obs)
    assert isinstance(action, Play) and action.length == 2


def test_one_legal_answer_is_given_without_search() -> None:
    m = position(["2j 3s", "Kp", "Qj", "Ap"], trick=[(3, "Dr")], to_act=0)
    obs = observe(m, 0)
    assert obs.legal == (PASS,)
    bot = SearchBot(iterations=1000, time_limit=None)
    assert bot.act(obs) == PASS
    assert bot.last_iterations == 0


def opening_view(seed: int) -> Observation:
    m = Match(Options(hands=1), seed)
    bot = SearchBot(iterations=1, time_limit=None)
    while m.phase is not Phase.PLAY:
        m.apply(bot.act(observe(m, m.seat)))
    return observe(m, m.seat)


def test_time_limit_and_deadline_bound_the_search() -> None:
    obs = opening_view(9)
    bot = SearchBot(time_limit=0.15)
    t0 = time.perf_counter()
    bot.act(obs)
    assert time.perf_counter() - t0 < 2.0  # generous: CI machines are shared
    assert 0.15 <= bot.last_seconds < 1.5
    bot.time_left_ms = 100.0  # a runner's clock tighter than the time limit wins
    assert bot.budget(obs) is not None and bot.budget(obs) <= 0.03  # type: ignore[operator]


def test_tichu_asked_first_reuses_the_search() -> None:
    # A hand the heuristic rules would call Tichu with: the search checks the call, and
    # its result answers the decision without a second search.
    rules = HeuristicBot()
    obs = next(o for o in map(opening_view, range(300)) if o.may_call_tichu and rules.call_tichu(o))
    bot = SearchBot(iterations=40, time_limit=None)
    bot.call_tichu(obs)
    assert bot.last_iterations == 40
    bot.last_iterations = -1
    action = bot.act(obs)
    assert action in obs.legal
    assert bot.last_iterations == -1


def test_figures_ignore_suits_only() -> None:
    hand = 0
    for c in (2, 3, 6, 7):  # 2j 2s 3j 3s
        hand |= 1 << c
    from arena.rules import combinations

    pairs = [p for p in combinations(hand) if p.length == 2]
    assert len({figure(p) for p in pairs if p.rank == 2}) == 1
    assert len({figure(p) for p in pairs}) == 2


def test_rule_answers_are_legal() -> None:
    bot = SearchBot(iterations=1, time_limit=None)
    calls = 0
    for seed in range(60):
        m = Match(Options(hands=1, grand_tichu=False), seed)
        obs = observe(m, 0)
        ex = bot.exchange(obs)
        assert len(set(ex)) == 3 and all(obs.hand >> c & 1 for c in ex)
        calls += bot.grand_tichu(observe(Match(Options(hands=1), seed), 0))
        assert 0 <= bot.wish(obs) <= 14
    assert calls < 10  # Grand Tichu is rare


def test_passes_the_sdk_conformance_check_over_the_wire_encoding() -> None:
    matches = check_bot_local(SearchBot(iterations=8, time_limit=None), options=Options(hands=1))
    assert len(matches) == 4
