"""A seat's view of a match, built from scratch and redacted: what RULES.md §7 lets it know.

During a simultaneous decision (Grand Tichu, the exchange) every seat that has still to
answer sees itself to act, with its own legal answers and Tichu right: the view the four
seats are asked from before any answer is applied.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

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


_FIELD_NAMES = tuple(f.name for f in fields(Observation))
_FIELD_SET = frozenset(_FIELD_NAMES)
_FIELD_COUNT = len(_FIELD_NAMES)
_blank = object.__new__


def new_observation(*values: Any) -> Observation:
    """``Observation(*values)``, all twenty fields in order, at half the cost.

    A frozen dataclass sets each field through ``object.__setattr__``; this fills the new
    instance's ``__dict__`` at once. Every decision builds an observation (the referee's
    ``observe``, a bot's decoded request), so the difference shows.
    """
    if len(values) != _FIELD_COUNT:  # cheaper than a strict zip
        raise ValueError(f"an Observation has {_FIELD_COUNT} fields, not {len(values)}")
    obs: Observation = _blank(Observation)
    obs.__dict__.update(zip(_FIELD_NAMES, values, strict=False))
    return obs


def replace_observation(obs: Observation, **changes: Any) -> Observation:
    """``dataclasses.replace(obs, **changes)`` without the constructor (see ``new_observation``)."""
    unknown = changes.keys() - _FIELD_SET
    if unknown:
        raise TypeError(f"Observation has no field {', '.join(sorted(unknown))}")
    new: Observation = _blank(Observation)
    d = new.__dict__
    d.update(obs.__dict__)
    d.update(changes)
    return new


class _WonPoints(dict[tuple[Mask, Mask, Mask, Mask], tuple[int, int, int, int]]):
    """Card points of the four won piles, remembered: the piles change only when a trick ends."""

    def __missing__(self, won: tuple[Mask, Mask, Mask, Mask]) -> tuple[int, int, int, int]:
        if len(self) >= 10_000:
            self.clear()
        a, b, c, d = won
        points = self[won] = (points_of(a), points_of(b), points_of(c), points_of(d))
        return points


_WON_POINTS = _WonPoints()


def observe(match: Match, seat: int) -> Observation:
    """Builds ``seat``'s view of ``match``."""
    m = match
    phase = m.phase
    hands = m.hands
    g = m.grand
    if phase is Phase.GRAND_TICHU:  # the calls are revealed together once all have decided
        grand = (g[0] and seat == 0, g[1] and seat == 1, g[2] and seat == 2, g[3] and seat == 3)
        counts = (8, 8, 8, 8)
    else:
        grand = (g[0], g[1], g[2], g[3])
        counts = (
            hands[0].bit_count(),
            hands[1].bit_count(),
            hands[2].bit_count(),
            hands[3].bit_count(),
        )
    ex = m.exchanges
    received: tuple[int, ...] = ()
    if phase is not Phase.EXCHANGE and phase is not Phase.GRAND_TICHU and None not in ex:
        received = (
            ex[(seat - 1) & 3][0],  # type: ignore[index]
            ex[(seat - 2) & 3][1],  # type: ignore[index]
            ex[(seat - 3) & 3][2],  # type: ignore[index]
        )
    won = m.won
    t = m.tichu
    to_act = m.seat
    if to_act == seat:
        acting = not m.over
        legal = m.legal_actions() if acting and phase is not Phase.EXCHANGE else ()
    elif m.asks(seat):  # a seat still to answer the simultaneous decision
        acting = True
        to_act = seat
        legal = m.legal_actions_of(seat) if phase is Phase.GRAND_TICHU else ()
    else:
        acting = False
        legal = ()
    return new_observation(  # in field order
        seat,
        phase,
        to_act,
        m.hand_no,
        hands[seat],
        counts,
        grand,
        (t[0], t[1], t[2], t[3]),
        tuple(m.trick),
        m.wish,
        tuple(m.out),
        # Everything played this hand lies on the table or in a won pile.
        m.trick_cards | won[0] | won[1] | won[2] | won[3],
        _WON_POINTS[(won[0], won[1], won[2], won[3])],
        ex[seat],
        received,
        (m.scores[0], m.scores[1]),
        m.options,
        tuple(m.events),
        legal,
        acting and m.can_call_tichu(seat),
    )
