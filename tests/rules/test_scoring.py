"""``arena.rules.scoring``: hand scores, failed bets and victory points, pinned by hand."""

from __future__ import annotations

from arena.rules import FULL_DECK, failed_bet, parse_cards, score_hand, victory_points
from arena.rules.scoring import HandScore


def test_a_double_victory_scores_200_or_100_in_the_tournament_mode() -> None:
    nothing = [0, 0, 0, 0]
    hands = [0, FULL_DECK, 0, 0]  # only the order out matters
    grand = [False] * 4
    tichu = [False, True, False, False]  # seat 1 loses its Tichu
    assert score_hand([0, 2], nothing, hands, grand, tichu) == HandScore(
        0, (200, 0), (0, -100), (3, 0)
    )
    assert score_hand([0, 2], nothing, hands, grand, tichu, tournament=True).card_points == (
        100,
        0,
    )


def test_a_double_victory_with_a_lost_own_bet_earns_two_victory_points() -> None:
    tichu = [False, False, True, False]  # seat 2 called, seat 0 went out first
    scored = score_hand([0, 2], [0] * 4, [0] * 4, [False] * 4, tichu)
    assert scored.bets == (-100, 0)
    assert scored.victory_points == (2, 0)


def test_the_last_seat_gives_its_pile_to_the_first_and_its_hand_to_the_opponents() -> None:
    won = [parse_cards("5j"), parse_cards("Kj Dr"), parse_cards("Ts"), 0]
    hands = [0, 0, 0, parse_cards("5s Ks Ph")]
    scored = score_hand([1, 0, 2], won, hands, [True, False, False, False], [False] * 4)
    # A: 5 + 10 (piles) + 5 + 10 - 25 (seat 3's hand) = 5; B: 10 + 25 = 35. Seat 0 lost 200.
    assert scored.card_points == (5, 35)
    assert scored.bets == (-200, 0)
    assert scored.score == (-195, 35)
    assert scored.victory_points == (0, 2)


def test_victory_points_and_failed_bets() -> None:
    assert victory_points((60, 40)) == (2, 0)
    assert victory_points((50, 50)) == (1, 1)
    assert victory_points((0, 100), 0, winner_failed_bet=False) == (3, 0)
    assert victory_points((0, 100), 1, winner_failed_bet=True) == (0, 2)
    assert failed_bet(0, [False, False, True, False], first_out=0)
    assert not failed_bet(0, [False, False, True, False], first_out=2)
    assert not failed_bet(1, [True, False, True, False], first_out=None)
