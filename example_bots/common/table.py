"""Small readings of an ``Observation`` that every bot needs: seats, the trick, the bets."""

from __future__ import annotations

from arena.rules import PASS_K, Observation, Play, points_of


def partner(seat: int) -> int:
    """The partner's seat."""
    return (seat + 2) & 3


def opponents(seat: int) -> tuple[int, int]:
    """The next and the previous seat: the two opponents."""
    return (seat + 1) & 3, (seat + 3) & 3


def owner(obs: Observation) -> int:
    """Seat whose play leads the trick now, or -1 when the table is empty."""
    return obs.trick[-1][0] if obs.trick else -1


def trick_points(obs: Observation) -> int:
    """Card points on the table."""
    cards = 0
    for _, p in obs.trick:
        cards |= p.cards
    return points_of(cards)


def called(obs: Observation, seat: int) -> bool:
    """Whether ``seat`` called Tichu or Grand Tichu."""
    return obs.tichu[seat] or obs.grand[seat]


def bet_alive(obs: Observation, seat: int) -> bool:
    """Whether ``seat`` called and can still win its bet (nobody is out yet)."""
    return called(obs, seat) and not obs.out


def plays_of(obs: Observation) -> list[Play]:
    """The legal plays other than the pass."""
    return [a for a in obs.legal if isinstance(a, Play) and a.kind != PASS_K]


def can_pass(obs: Observation) -> bool:
    """Whether passing is among the legal answers."""
    return any(isinstance(a, Play) and a.kind == PASS_K for a in obs.legal)


def active(obs: Observation, seat: int) -> bool:
    """Whether ``seat`` still holds cards."""
    return obs.card_counts[seat] > 0
