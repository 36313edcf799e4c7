"""The public events of a hand, in the shape every seat sees them (docs/protocol.md §12).

``Match.events`` lists the current hand's events and ``Match.log`` those of the hands
played; both are what every seat is told, in order, with nothing left to derive:

* a trick won carries its card points and cards; the Dog's lead ends its trick at once, as a
  ``TRICK_WON`` by the Dog's player worth 0 points whose cards are the Dog;
* a Dragon gift is one ``DRAGON_GIFT`` with the receiving seat, the points and the cards;
* the Grand Tichu calls are one ``GRAND_TICHU`` event when the last seat has answered, with
  the four decisions (bit ``s`` of ``value`` set when seat ``s`` called).

The wire maps each event to one ``Event`` message (``arena.wire.events``); the referee adds
only its own events (failures, the match's end) and numbers them all.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from arena.rules.cards import Mask
from arena.rules.combos import Play


class EventKind(IntEnum):
    """Public events of a hand, as every seat sees them."""

    HAND_START = 1  # value: hand number (from 0)
    GRAND_TICHU = 2  # the four Grand Tichu decisions revealed; value: bit s = seat s called
    TICHU = 3  # seat called Tichu
    EXCHANGE = 4  # all four passed their cards
    PLAY = 5  # seat played ``play``; value 1 when out of turn (a bomb window)
    PASS = 6  # seat passed
    WISH = 7  # seat wished rank ``value`` (0: no wish)
    WISH_FULFILLED = 8  # seat played a card of the wished rank ``value``
    TRICK_WON = 9  # seat took the trick: ``points`` and ``cards``
    DRAGON_GIFT = 10  # seat gave its Dragon trick (``points``, ``cards``) to seat ``value``
    OUT = 11  # seat went out in place ``value`` (1..3)
    HAND_END = 12  # value: hand number (from 0)


class Event(NamedTuple):
    """One public event: its kind, the seat it concerns, and what the kind says it carries."""

    kind: int
    seat: int
    play: Play | None = None
    value: int = 0
    points: int = 0
    cards: Mask = 0

    @property
    def called(self) -> tuple[bool, bool, bool, bool]:
        """The four Grand Tichu decisions of a ``GRAND_TICHU`` event, by seat."""
        v = self.value
        return (bool(v & 1), bool(v & 2), bool(v & 4), bool(v & 8))


def called_mask(called: tuple[bool, ...] | list[bool]) -> int:
    """The ``value`` of a ``GRAND_TICHU`` event from the decisions by seat."""
    return sum(1 << s for s, c in enumerate(called) if c)


__all__ = ["Event", "EventKind", "called_mask"]
