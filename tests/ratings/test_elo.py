"""Tests of logistic Elo conversions and sequential team Elo."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ratings import HandOutcome, elo_from_score, elo_update, expected_score, sequential_elo

START = {"A": 1560.0, "B": 1500.0, "C": 1500.0, "D": 1480.0}
# Team A (seats 0 and 2) is A+B, team B (seats 1 and 3) is C+D.
SEATS = ("A", "C", "B", "D")


def test_expected_score_and_inverse() -> None:
    assert expected_score(0.0) == 0.5
    assert expected_score(400.0) == pytest.approx(10 / 11)
    assert expected_score(40.0) == pytest.approx(0.557, abs=5e-4)
    assert elo_from_score(10 / 11) == pytest.approx(400.0)
    assert elo_from_score(expected_score(-123.4)) == pytest.approx(-123.4)
    with pytest.raises(ValueError):
        elo_from_score(1.0)


def test_design_note_example_win() -> None:
    """K = 16, AB (1530) beat CD (1490): E = 0.557, A and B gain 7.1, C and D lose 7.1."""
    after = elo_update(START, HandOutcome("b1", SEATS, 120, -20), k=16.0)
    for bot in "AB":
        assert after[bot] - START[bot] == pytest.approx(7.1, abs=0.05)
    for bot in "CD":
        assert after[bot] - START[bot] == pytest.approx(-7.1, abs=0.05)
    assert START["A"] == 1560.0  # the input is not changed


def test_loss_and_tie_move_the_right_way() -> None:
    lost = elo_update(START, HandOutcome("b1", SEATS, 0, 100), k=16.0)
    assert lost["A"] - START["A"] == pytest.approx(-16 * 0.557, abs=0.01)
    assert lost["C"] > START["C"]
    tied = elo_update(START, HandOutcome("b1", SEATS, 50, 50), k=16.0)
    # The favourite loses a little on a tie, the underdog gains.
    assert tied["A"] < START["A"] and tied["D"] > START["D"]


def test_self_partnered_team_mean_moves_by_delta() -> None:
    hand = HandOutcome("b1", ("cand", "ref", "cand", "ref"), 100, 0)
    after = elo_update({}, hand, k=20.0, initial=1000.0)
    assert after == {"cand": 1010.0, "ref": 990.0}


def test_sequential_elo_separates_a_stronger_bot() -> None:
    splits = [("S", "x", "y", "z"), ("S", "y", "x", "z"), ("S", "z", "x", "y")]
    hands = [
        HandOutcome(f"b{i}", (a1, b1, a2, b2), 100, 0)
        for i, (a1, a2, b1, b2) in enumerate(splits * 10)
    ]
    ratings = sequential_elo(hands)
    assert max(ratings, key=ratings.__getitem__) == "S"
    assert ratings["S"] > 1500.0 > min(ratings.values())
    assert sum(ratings.values()) == pytest.approx(4 * 1500.0)


@settings(max_examples=100, deadline=None)
@given(
    results=st.lists(
        st.tuples(st.permutations("ABCD"), st.integers(-200, 400), st.integers(-200, 400)),
        max_size=30,
    ),
    k=st.floats(1.0, 64.0),
)
def test_sequential_elo_conserves_the_rating_sum(
    results: list[tuple[list[str], int, int]], k: float
) -> None:
    hands = [HandOutcome("b", (n, e, s, w), a, b) for (n, e, s, w), a, b in results]
    ratings = sequential_elo(hands, k=k, ratings=START)
    assert sum(ratings.values()) == pytest.approx(sum(START.values()))
