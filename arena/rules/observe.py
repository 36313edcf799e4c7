"""A seat's view of a match, built from scratch and redacted: what the rules let it know
(docs/rules.md §11).

During a simultaneous decision (Grand Tichu, the exchange) every seat that has still to
answer sees itself to act, with its own legal answers and Tichu right: the view the four
seats are asked from before any answer is applied.

``observe(match, seat)`` builds it; ``default_action(obs)`` is the answer the referee applies
(and the SDK sends) when a seat gives none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

from arena.rules.actions import Action, Exchange, Phase
from arena.rules.cards import CARD_RANKS, DRAGON, MAHJONG_BIT, PHOENIX, Mask, cards_of, points_of
from arena.rules.combos import PASS, Play
from arena.rules.events import Event, EventKind
from arena.rules.state import Match, Options, next_active

_new = tuple.__new__


class TrickEntry(NamedTuple):
    """One turn of the running trick: the seat, its play (``PASS`` for a pass), out of turn."""

    seat: int
    play: Play
    out_of_turn: bool = False


@dataclass(frozen=True)
class Observation:
    """Everything one seat may know now; never another seat's hidden card.

    ``received`` lists the cards received from the previous seat, the partner and the next
    seat (empty until the exchange is complete). ``legal`` lists the answers of the seat to
    act (empty for the others); for the exchange, where any three different cards of the
    hand are an answer, it is left empty rather than listing all 2,184 choices.

    ``entries`` is the running trick turn by turn, passes included (``trick`` lists its
    plays only). ``turn`` is the seat that plays next if nobody bombs: in a turn the seat to
    act; after a play (its bomb window, the wish) the seat due next; once the trick is over
    (the bomb window after its last pass, the Dragon gift) the seat that leads the next one;
    -1 before the play phase.
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
    entries: tuple[TrickEntry, ...] = ()
    turn: int = -1

    @property
    def top(self) -> Play | None:
        """The play to beat, or ``None`` when the table is empty."""
        return self.trick[-1][1] if self.trick else None

    @property
    def leader(self) -> int:
        """The seat that led the running trick, or -1 when the table is empty."""
        return self.trick[0][0] if self.trick else -1

    @property
    def trick_points(self) -> int:
        """The card points of the running trick."""
        cards = 0
        for _, p in self.trick:
            cards |= p[3]
        return points_of(cards)

    @property
    def mahjong_played(self) -> bool:
        """Whether the Mah Jong has been played this hand (``wish == 0`` then: none or met)."""
        return bool(self.played & MAHJONG_BIT)

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
    """``Observation(*values)``, all its fields in order, at half the cost.

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


_PLAY = EventKind.PLAY
_PASS = EventKind.PASS
_TRICK_ENDS = frozenset(
    (EventKind.TRICK_WON, EventKind.DRAGON_GIFT, EventKind.EXCHANGE, EventKind.HAND_START)
)
_AFTER_PLAY = 0  # Match.resume: a bomb window after a play


def trick_entries(events: Sequence[Event]) -> tuple[TrickEntry, ...]:
    """The running trick turn by turn, read back from the hand's events to the trick's start."""
    entries: list[TrickEntry] = []
    add = entries.append
    for i in range(len(events) - 1, -1, -1):
        e = events[i]
        k = e[0]
        if k == _PLAY:
            add(_new(TrickEntry, (e[1], e[2], e[3] == 1)))
        elif k == _PASS:
            add(_new(TrickEntry, (e[1], PASS, False)))
        elif k in _TRICK_ENDS:
            break
    entries.reverse()
    return tuple(entries)


def turn_of(m: Match) -> int:
    """Who plays next in the trick if nobody bombs (see ``Observation.turn``)."""
    ph = m.phase
    if ph is Phase.PLAY:
        return m.seat
    hands = m.hands
    if ph is Phase.BOMB_WINDOW:
        if m.resume == _AFTER_PLAY:
            return m.turn
        owner = m.owner  # the last pass ends the trick: its owner leads next
    elif ph is Phase.WISH:
        return next_active(m.seat, hands)
    elif ph is Phase.DRAGON_GIFT:
        owner = m.seat
    else:
        return -1
    return owner if hands[owner] else next_active(owner, hands)


def default_action(obs: Observation) -> Action:
    """The answer applied when a seat gives no acceptable one (docs/protocol.md §6).

    Entry 0 of the legal list: no Grand Tichu, the pass when passing is legal (else the first
    play listed), declining a bomb window, no wish, the Dragon trick to the next seat. For the
    exchange, the three lowest card ids of the hand, in ascending order, to the next seat, the
    partner and the previous seat. A default action never calls Tichu.
    """
    if obs.phase is Phase.EXCHANGE:
        low = cards_of(obs.hand)
        return _new(Exchange, (next(low), next(low), next(low)))
    return obs.legal[0]


def plain_exchange(obs: Observation) -> Exchange:
    """A plain, sensible exchange: the two lowest cards to the opponents, the strongest (the
    Dragon, then the Phoenix, then by rank) to the partner. What ``sdk.Bot`` and the
    referee's fallback player pass unless told otherwise."""
    by_strength = sorted(cards_of(obs.hand), key=_strength)
    return _new(Exchange, (by_strength[0], by_strength[-1], by_strength[1]))


def plain_gift(obs: Observation) -> int:
    """The seat a plain player gives its Dragon trick: the opponent holding more cards."""
    left, right = (obs.seat + 1) & 3, (obs.seat + 3) & 3
    return left if obs.card_counts[left] >= obs.card_counts[right] else right


def _strength(card: int) -> tuple[int, int]:
    if card == DRAGON:
        return (17, card)
    if card == PHOENIX:
        return (16, card)
    return (CARD_RANKS[card], card)


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
    events = tuple(m.events)
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
        events,
        legal,
        acting and m.can_call_tichu(seat),
        trick_entries(events) if m.trick else (),
        m.seat if phase is Phase.PLAY else turn_of(m),
    )
