"""The in-process strength script: boards played both ways, the oracle's true deals."""

from __future__ import annotations

from arena.rules import observe
from arena.rules.position import position
from example_bots.search.strength import OracleStrongBot, make_bot, play_board
from example_bots.strong.bot import StrongBot


def test_a_board_is_played_in_both_seatings() -> None:
    first, second = play_board((3, "strong:iterations=5,time_limit=none", "greedy"))
    assert first.searches > 0 and second.searches > 0
    assert first.search_iterations <= 5 * first.searches


def test_the_oracle_searches_the_true_deal() -> None:
    # Seat 1's one card is the Dragon: over any single of seat 0 it goes out first. Sampled
    # deals often put the Dragon elsewhere; the oracle's playouts never do.
    m = position(["Aj Kj", "Dr", "3s 4s", "5s 6s"], to_act=0)
    obs = observe(m, 0)
    oracle = make_bot("oracle:iterations=200,time_limit=none,epsilon=0.0", 0)
    assert isinstance(oracle, OracleStrongBot)
    oracle.true_hands = tuple(m.hands)
    assert oracle.search(obs)[1] == 0.0
    assert oracle.last_iterations == 200
    assert StrongBot(iterations=200, epsilon=0.0).search(obs)[1] > 0.2
