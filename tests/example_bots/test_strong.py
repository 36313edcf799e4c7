"""StrongBot: legal answers, clear winning lines, inference, weighted deals, the clock."""

from __future__ import annotations

import logging
import random
from dataclasses import replace

import pytest

from arena.rules import (
    CARD_RANKS,
    PASS,
    RANK_MASKS,
    SINGLE,
    STEPS,
    STRAIGHT,
    Match,
    Observation,
    Options,
    Phase,
    Play,
    observe,
    parse_cards,
)
from arena.rules.combos import FOUR_BOMB, PAIR
from arena.rules.position import position
from example_bots.heuristic.bot import HeuristicBot
from example_bots.strong.bot import StrongBot
from example_bots.strong.infer import (
    FOLLOW_MATES,
    GIVEN_MATES,
    GRAND_CONTROL,
    LED_MATES,
    card_weights,
)
from example_bots.strong.policy import follow, lead
from sdk.playout import FastHand
from sdk.sim import Determinizer
from sdk.testing import check_bot_local
from tests.helpers import play_checked_hand


def mask(text: str) -> int:
    return parse_cards(text)


def fast(m: Match) -> FastHand:
    return FastHand.from_observation(observe(m, m.seat), m.hands)


def test_plays_seeded_hands_in_all_seats() -> None:
    for seed in (1, 2):
        bots = [StrongBot(iterations=20, seed=s) for s in range(4)]
        answers = play_checked_hand(bots, seed).actions
        assert any(isinstance(a, Play) and a.kind != PASS.kind for _, a in answers)


@pytest.mark.slow
def test_same_seed_same_answers() -> None:
    def bots(seed: int) -> list[StrongBot]:
        return [StrongBot(iterations=25, seed=seed + s) for s in range(4)]

    assert play_checked_hand(bots(5), 3).actions == play_checked_hand(bots(5), 3).actions


@pytest.mark.parametrize("tree", [0, 1, 2])
def test_goes_out_with_a_bomb_to_win_its_tichu(tree: int) -> None:
    # Seat 0 called Tichu and holds only a bomb; seat 3 leads an Ace with one card left.
    m = position(
        ["7j 7s 7p 7t", "Kp Kt 9j", "Qj Qs 3p", "4j"], trick=[(3, "Aj")], to_act=0, tichu=[0]
    )
    action = StrongBot(iterations=60, tree=tree).act(observe(m, 0))
    assert isinstance(action, Play) and action.kind == FOUR_BOMB


@pytest.mark.parametrize("tree", [0, 1, 2])
def test_takes_the_only_winning_lead(tree: int) -> None:
    # Seat 0 (Tichu) leads with a pair of Aces and a 2; seat 1 would go out on the 2.
    m = position(["Aj As 2j", "3s", "6p 7p 8p", "Kp Kt Dr"], to_act=0, tichu=[0])
    bot = StrongBot(iterations=150, tree=tree)
    action = bot.act(observe(m, 0))
    assert isinstance(action, Play) and action.length == 2
    assert bot.last_iterations == 150


def test_obvious_answers_need_no_search() -> None:
    # The whole hand beats the table: out at once.
    m = position(["9j 9s", "Kp 3s", "Qj", "Ap"], trick=[(3, "5j 5s")], to_act=0)
    bot = StrongBot(iterations=1000)
    action = bot.act(observe(m, 0))
    assert isinstance(action, Play) and action.cards == mask("9j 9s")
    assert bot.last_iterations == 0
    # Not while the partner's bet is alive: then the search decides.
    m = position(["9j 9s", "Kp 3s", "Qj Qs", "Ap"], trick=[(3, "5j 5s")], to_act=0, tichu=[2])
    bot.act(observe(m, 0))
    assert bot.last_iterations == 1000


def opening_view(seed: int) -> Observation:
    m = Match(Options(hands=1), seed)
    bot = StrongBot(iterations=1)
    while m.phase is not Phase.PLAY:
        m.apply(bot.act(observe(m, m.seat)))
    return observe(m, m.seat)


def test_budget_uses_the_deadline_and_spreads_the_bank() -> None:
    obs = opening_view(9)  # 14 cards in hand
    bot = StrongBot()
    assert bot.budget(obs) == 0.8  # no clock known: in-process play
    bot.deadline_ms, bot.time_left_ms = 1000.0, 975.0
    assert bot.budget(obs) == pytest.approx(0.8 * 975 / 1000 - 0.03)
    bot.time_left_ms = 1000.0 + 14_000.0  # a bank of 14 s over 14 cards: half of 1 s each
    assert bot.budget(obs) == pytest.approx(0.8 + 0.5 - 0.03)
    bot.time_left_ms = 10.0  # nearly out of time: still a tiny positive budget
    assert bot.budget(obs) == pytest.approx(0.005)
    assert StrongBot(time_limit=0.2).budget(obs) == 0.2


def test_tichu_bar_calls_by_the_search_and_never_beside_a_partners_bet() -> None:
    obs = opening_view(9)
    assert obs.may_call_tichu and not any(obs.tichu) and not any(obs.grand)
    assert not HeuristicBot().call_tichu(obs)  # the search alone decides
    assert StrongBot(iterations=40, tichu_bar=0.0).call_tichu(obs)
    assert not StrongBot(iterations=40, tichu_bar=1.01).call_tichu(obs)
    mate = (obs.seat + 2) & 3
    partner_bet = replace(obs, tichu=(mate == 0, mate == 1, mate == 2, mate == 3))
    assert not StrongBot(iterations=40, tichu_bar=0.0).call_tichu(partner_bet)


def test_the_first_decision_is_answered_from_the_search_with_the_bet_either_way() -> None:
    obs = opening_view(9)
    for bar, calls in ((0.0, True), (1.01, False)):
        bot = StrongBot(iterations=40, tichu_bar=bar)
        assert bot.call_tichu(obs) is calls
        bot.act(obs)
        assert len(bot._searches) == 1  # one search, with the bet in place, answers both
    assert StrongBot().tichu_bar is not None  # by default the search decides the call


def test_logs_its_searches_at_the_end_of_a_match(caplog: pytest.LogCaptureFixture) -> None:
    bot = StrongBot(iterations=30)
    bot.on_match_start(0)
    bot.act(opening_view(3))
    bot.act(opening_view(5))
    with caplog.at_level(logging.INFO, logger="strong"):
        bot.on_match_end((0, 0))
        bot.on_match_end((0, 0))  # nothing searched since: nothing logged
    assert len(caplog.messages) == 1
    assert caplog.messages[0].startswith("2 searches: 30 iterations and ")


def test_a_time_budget_stops_the_search() -> None:
    obs = opening_view(4)
    bot = StrongBot(time_limit=0.1, early_stop=False)
    bot.act(obs)
    assert 0.1 <= bot.last_seconds < 2.0  # generous: CI machines are shared
    assert bot.last_iterations > 0


def test_policy_reads_plays_from_the_bits() -> None:
    m = position(["3j 4s 5p 6t 7j 9s Kp", "2j", "2s", "2p"], to_act=0)
    h = fast(m)
    p = lead(h, 0, h.hands[0], 0)
    assert (p.kind, p.length, p.rank) == (STRAIGHT, 5, 7)
    m = position(["3j 3s 4p 4t 5j 5s Kp", "2j", "2s", "2p"], to_act=0)
    h = fast(m)
    p = lead(h, 0, h.hands[0], 0)
    assert (p.kind, p.length, p.rank) == (STEPS, 6, 5)
    # A straight all in one suit would be a bomb: the policy leads a plain one or none.
    m = position(["3j 4j 5j 6j 7j 9s", "2j", "2s", "2p"], to_act=0)
    h = fast(m)
    p = lead(h, 0, h.hands[0], 0)
    assert p.kind != STRAIGHT and p in h.plays()
    # Following a pair: the lowest natural pair above it, the Phoenix only if none.
    m = position(["9j 9s Qj Qs Ph 4j", "2j", "8j", "2p"], trick=[(2, "7j 7s")], to_act=0)
    h = fast(m)
    assert h.top is not None
    pair = follow(h.hands[0], h.top)
    assert pair is not None and (pair.kind, pair.rank, pair.cards) == (PAIR, 9, mask("9j 9s"))
    m = position(["4j Ph", "2j", "8j", "2p"], trick=[(2, "7j 7s")], to_act=0)
    h = fast(m)
    assert h.top is not None and follow(h.hands[0], h.top) is None
    m = position(["Tj Ph 3s", "2j", "7j", "2p"], trick=[(1, "Aj")], to_act=0)
    h = fast(m)
    assert h.top is not None
    single = follow(h.hands[0], h.top)
    assert single is not None and single.kind == SINGLE and single.cards == mask("Ph")
    assert single in h.plays()


def test_inference_weighs_bets() -> None:
    # A Grand Tichu caller likely holds the controls.
    g = position(["2j 3j", "Aj Dr", "4j", "5j"], to_act=0, grand=[1])
    wg = card_weights(observe(g, 0))
    assert wg[1][54] == GRAND_CONTROL and wg[3][54] == 1.0


def test_inference_weighs_the_rank_mates_of_sets_played() -> None:
    # Seat 0 led a five, seat 1 played a six on it, seat 2 a nine on that: seat 3 looks on.
    g = position(
        ["2s 3s", "9j Tj", "4s 6s", "7s 8s"],
        to_act=3,
        trick=[(0, "5j"), (1, "6j"), (2, "9p")],
    )
    w = card_weights(observe(g, 3))
    five, six, nine = (
        _cards(RANK_MASKS[r] & ~mask(p)) for r, p in ((5, "5j"), (6, "6j"), (9, "9p"))
    )
    assert [w[0][c] for c in five] == [LED_MATES] * 3  # led
    assert [w[1][c] for c in six] == [FOLLOW_MATES] * 3  # played on an opponent's play
    assert [w[2][c] for c in nine] == [FOLLOW_MATES] * 3
    assert w[0][six[0]] == w[2][five[0]] == 1.0  # nothing about the other ranks
    # A pair led: its rank's two other cards.
    p = position(["2s 3s", "9j Tj", "4s 6s", "7s 8s"], to_act=0, trick=[(1, "5j 5s")])
    wp = card_weights(observe(p, 0))
    assert [wp[1][c] for c in _cards(RANK_MASKS[5] & ~mask("5j 5s"))] == [LED_MATES] * 2
    # A single played on the partner's play says nothing.
    q = position(["2s 3s", "9j Tj", "4s 6s", "7s 8s"], to_act=0, trick=[(1, "5j"), (3, "6t")])
    assert all(card_weights(observe(q, 0))[3][c] == 1.0 for c in _cards(RANK_MASKS[6]))


def test_inference_weighs_the_rank_mates_of_cards_passed_by_opponents() -> None:
    m = Match(Options(hands=1), 4)
    while m.phase is not Phase.PLAY:
        m.apply(StrongBot(iterations=1).act(observe(m, m.seat)))
    obs = observe(m, 0)  # nobody has played yet
    assert obs.received is not None
    w = card_weights(obs)
    weighed = 0
    for k, c in enumerate(obs.received, 1):
        giver = (0 - k) & 3
        mates = _cards(RANK_MASKS[CARD_RANKS[c]] & ~(1 << c)) if 2 <= c <= 53 else []
        expected = 1.0 if giver == 2 else GIVEN_MATES  # the partner's gift says nothing here
        assert [w[giver][d] for d in mates] == [expected] * len(mates)
        weighed += giver != 2 and bool(mates)
    assert weighed  # this deal's opponents pass natural cards


def _cards(m: int) -> list[int]:
    return [c for c in range(56) if m >> c & 1]


def test_weighted_deals_keep_counts_and_follow_the_weights() -> None:
    obs = opening_view(21)
    det = Determinizer(obs)
    me = obs.seat
    other = (me + 1) & 3
    weights = [[1.0] * 56 for _ in range(4)]
    dragon_elsewhere = 54 if not obs.hand >> 54 & 1 else 55
    weights[other][dragon_elsewhere] = 20.0
    rng = random.Random(5)
    held = 0
    n = 400
    for _ in range(n):
        hands = det.deal(rng, weights)
        assert hands[me] == 0
        for t in range(4):
            if t != me:
                assert hands[t].bit_count() == obs.card_counts[t]
        assert sum(hands) | obs.hand == (1 << 56) - 1 - obs.played
        held += hands[other] >> dragon_elsewhere & 1
    # Uniform: a third of the deals. Weight 20 with equal room: 20 / 22 of them.
    assert held / n > 0.8
    uniform = sum(det.deal(rng)[other] >> dragon_elsewhere & 1 for _ in range(n)) / n
    assert 0.2 < uniform < 0.47


def test_passes_the_sdk_conformance_check_over_the_wire_encoding() -> None:
    matches = check_bot_local(StrongBot(iterations=8), options=Options(hands=1))
    assert len(matches) == 4
