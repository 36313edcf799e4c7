"""Decision kinds and the action values that answer them.

Each decision is answered by one action value. ``Play`` (with ``PASS``) answers a turn and
a bomb window; the other decisions have their own small frozen types. A Tichu call is its
own action (``CALL_TICHU``), accepted before the caller's answer to any decision while the
caller has not played a card, so ``(seed, actions)`` replays a match with every call in place.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple, TypeAlias

from arena.rules.cards import card_name
from arena.rules.combos import Play, rank_name


class Phase(IntEnum):
    """What the state waits for; also the kind of decision the current seat faces."""

    GRAND_TICHU = 1
    EXCHANGE = 2
    PLAY = 3
    BOMB_WINDOW = 4
    WISH = 5
    DRAGON_GIFT = 6
    MATCH_OVER = 7


class GrandTichu(NamedTuple):
    """Answer after the first eight cards: call Grand Tichu or not."""

    call: bool

    def __str__(self) -> str:
        return "grand tichu" if self.call else "no grand tichu"


class Exchange(NamedTuple):
    """The three cards a seat passes: to the next seat, to the partner, to the previous seat."""

    to_next: int
    to_partner: int
    to_prev: int

    def __str__(self) -> str:
        a, b, c = (card_name(x) for x in self)
        return f"{a} to next, {b} to partner, {c} to previous"


class Wish(NamedTuple):
    """The Mah Jong wish: a rank 2..14, or 0 for no wish."""

    rank: int

    def __str__(self) -> str:
        return f"wish {rank_name(self.rank)}" if self.rank else "no wish"


class Gift(NamedTuple):
    """Gives a Dragon trick to the opponent in seat ``to``."""

    to: int

    def __str__(self) -> str:
        return f"give dragon trick to seat {self.to}"


class CallTichu(NamedTuple):
    """Calls Tichu (a bet of 100 on going out first)."""

    def __str__(self) -> str:
        return "tichu"


CALL_TICHU = CallTichu()

Action: TypeAlias = Play | GrandTichu | Exchange | Wish | Gift | CallTichu

NO_GRAND = GrandTichu(False)
GRAND = GrandTichu(True)
NO_WISH = Wish(0)
WISHES: tuple[Wish, ...] = (NO_WISH, *(Wish(r) for r in range(2, 15)))
