"""A seat's view of a match, built from scratch and redacted: what RULES.md §7 lets it know."""

from __future__ import annotations

from dataclasses import dataclass

from arena.rules.actions import Action, Exchange, Phase
from arena.rules.cards import Mask, points_of
from arena.rules.combos import Play
from arena.rules.state import Event, Match, Options


@dataclass(frozen=True)
class Observation:
    """Everything one seat may know now; never another seat's hidden card.

    ``received`` lists the cards received from the previous seat, the partner and the next
    seat (empty until the exchange is complete). ``legal`` lists the answers of the seat to
    act (empty for the others); for the exchange, where any three different cards of the
    hand are an answer, it is left empty rather than listing all 2,184 choices.
    """

    seat: int
    phase: Phase
    to_act: int
    hand_no: int
    hand: Mask
    card_counts: tuple[int, int, int, int]
    grand: tuple[bool, bool, bool, bool]
    tichu: tuple[bool, bool, bool, bool]
    trick: tuple[tuple[int, Play], ...]
    wish: int
    out: tuple[int, ...]
    played: Mask
    won_points: tuple[int, int, int, int]
    given: Exchange | None
    received: tuple[int, ...]
    scores: tuple[int, int]
    options: Options
    events: tuple[Event, ...]
    legal: tuple[Action, ...]
    may_call_tichu: bool

    @property
    def top(self) -> Play | None:
        """The play to beat, or ``None`` when the table is empty."""
        return self.trick[-1][1] if self.trick else None

    @property
    def unseen(self) -> Mask:
        """Cards this seat has not seen: in other hands (or not yet dealt)."""
        known = self.hand | self.played
        if self.given is not None:
            known |= sum(1 << c for c in self.given)
        return ((1 << 56) - 1) & ~known


def observe(match: Match, seat: int) -> Observation:
    """Builds ``seat``'s view of ``match``."""
    m = match
    grand_public = m.phase is not Phase.GRAND_TICHU
    grand = tuple(m.grand[t] if (grand_public or t == seat) else False for t in range(4))
    exchange_done = m.phase is not Phase.EXCHANGE and m.phase is not Phase.GRAND_TICHU
    given = m.exchanges[seat]
    received: tuple[int, ...] = ()
    if exchange_done and all(e is not None for e in m.exchanges):
        received = tuple(
            m.exchanges[(seat - k) & 3][k - 1]  # type: ignore[index]
            for k in (1, 2, 3)
        )
    # Everything played this hand lies on the table or in a won pile.
    played = m.trick_cards | m.won[0] | m.won[1] | m.won[2] | m.won[3]
    dealt = 14 if m.phase is not Phase.GRAND_TICHU else 8
    counts = tuple(h.bit_count() if m.phase is not Phase.GRAND_TICHU else dealt for h in m.hands)
    acting = m.seat == seat and not m.over
    return Observation(
        seat=seat,
        phase=m.phase,
        to_act=m.seat,
        hand_no=m.hand_no,
        hand=m.hands[seat],
        card_counts=(counts[0], counts[1], counts[2], counts[3]),
        grand=(grand[0], grand[1], grand[2], grand[3]),
        tichu=(m.tichu[0], m.tichu[1], m.tichu[2], m.tichu[3]),
        trick=tuple(m.trick),
        wish=m.wish,
        out=tuple(m.out),
        played=played,
        won_points=(
            points_of(m.won[0]),
            points_of(m.won[1]),
            points_of(m.won[2]),
            points_of(m.won[3]),
        ),
        given=given,
        received=received,
        scores=(m.scores[0], m.scores[1]),
        options=m.options,
        events=tuple(m.events),
        legal=m.legal_actions() if acting and m.phase is not Phase.EXCHANGE else (),
        may_call_tichu=acting and m.can_call_tichu(seat),
    )
