"""Tests of victory-point standings for the 'turnier' mode."""

from __future__ import annotations

import pytest

from arena.ratings import HandOutcome, Standing, TurnierHand, victory_points, vp_standings

TABLE = [
    # A+C beat B+D 150 : −50 → A, C 2 VP.
    TurnierHand(("A", "B", "C", "D"), 150, -50),
    # A+B tie C+D 50 : 50 → 1 VP each.
    TurnierHand(("A", "C", "B", "D"), 50, 50),
    # B+C (team B here) make a double victory, scored 100 → 3 VP.
    TurnierHand(("A", "B", "D", "C"), 0, 100, double_victory="B"),
    # A+C double victory, but C's Tichu failed: 100 − 100 = 0 : 0, still won, only 2 VP.
    TurnierHand(("A", "B", "C", "D"), 0, 0, double_victory="A", failed_bet_a=True),
    # C+D beat A+B 70 : 30.
    TurnierHand(("A", "C", "B", "D"), 30, 70),
]


def test_victory_points_per_hand() -> None:
    assert [victory_points(hand) for hand in TABLE] == [(2, 0), (1, 1), (0, 3), (2, 0), (0, 2)]
    # A failed bet of the losing team does not reduce the winners' double victory.
    assert victory_points(TurnierHand(("A", "B", "C", "D"), 100, -100, "A", False, True)) == (3, 0)


def test_hand_made_vp_table() -> None:
    assert vp_standings(TABLE) == (
        Standing("C", victory_points=10, tichu_points=370, hands=5),
        Standing("A", victory_points=5, tichu_points=230, hands=5),
        Standing("B", victory_points=4, tichu_points=130, hands=5),
        Standing("D", victory_points=3, tichu_points=70, hands=5),
    )


def test_tichu_points_break_vp_ties_then_names() -> None:
    table = [
        TurnierHand(("A", "B", "C", "D"), 100, 0),
        TurnierHand(("A", "B", "C", "D"), -100, 200),
    ]
    assert [(s.bot, s.victory_points, s.tichu_points) for s in vp_standings(table)] == [
        ("B", 2, 200),
        ("D", 2, 200),
        ("A", 2, 0),
        ("C", 2, 0),
    ]


def test_from_rating_input_and_bad_hands() -> None:
    hand = TurnierHand.from_outcome(HandOutcome("b7", ("A", "B", "C", "D"), 25, 75))
    assert victory_points(hand) == (0, 2)
    with pytest.raises(ValueError):
        TurnierHand(("A", "B", "C", "D"), 0, 0, double_victory="C")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="both teams"):
        vp_standings([TurnierHand(("A", "A", "C", "D"), 10, 0)])
