"""The in-process strength script: boards played both ways, the oracle's true deals."""

from __future__ import annotations

import random

from arena.rules import Match, Options, Phase, observe
from example_bots.search.strength import OracleStrongBot, make_bot, play_board
from sdk.sim import Determinizer


def test_a_board_is_played_in_both_seatings() -> None:
    first, second = play_board((3, "strong:iterations=5,time_limit=none", "greedy"))
    assert first.searches > 0 and second.searches > 0
    assert first.search_iterations <= 5 * first.searches


def test_the_oracle_searches_the_true_deal() -> None:
    bot = make_bot("oracle:iterations=5,time_limit=none", 0)
    assert isinstance(bot, OracleStrongBot)
    m = Match(Options(hands=1), 4)
    while m.phase is not Phase.PLAY:
        m.apply(bot.act(observe(m, m.seat)))
    bot.true_hands = tuple(m.hands)
    obs = observe(m, m.seat)
    assert bot.deal(Determinizer(obs), random.Random(0), None) == list(m.hands)
    bot.act(obs)
    assert bot.last_iterations == 5
