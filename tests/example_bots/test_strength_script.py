"""The in-process strength script: boards played both ways, the oracle's true deals."""

from __future__ import annotations

import pytest

from arena.rules import observe
from arena.rules.position import position
from example_bots.search.strength import OracleStrongBot, main, make_bot, play_board
from example_bots.strong.bot import StrongBot


def test_a_board_is_played_in_both_seatings() -> None:
    first, second = play_board((3, "strong:iterations=5,time_limit=none", "greedy"))
    assert first.searches > 0 and second.searches > 0
    assert first.search_iterations <= 5 * first.searches
    for hand in (first, second):  # the margin splits into its parts
        assert hand.margin == hand.cards + hand.double + hand.bets
        assert hand.double in (-200, 0, 200)
        assert hand.double <= 0 or hand.first


def test_the_script_prints_the_margin_by_its_parts(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--x", "greedy", "--y", "random", "--boards", "3", "--workers", "1"])
    out = capsys.readouterr().out
    for part in ("card points", "double victories", "bets"):
        assert f"of which {part}: " in out
    assert "X out first in " in out


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
