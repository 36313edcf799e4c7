"""Cards as small ints 0..55, card sets as int bitmasks, and the one text notation.

Card ids follow rank order, so a set's bits read low to high from the Dog to the Phoenix:

* ``0`` Dog (``Dg``), ``1`` Mah Jong (``Mj``),
* ``2..53`` the normal cards, ``id = 2 + (rank - 2) * 4 + suit`` for rank 2..14 (J = 11,
  Q = 12, K = 13, A = 14) and suit 0 Jade (``j``), 1 Sword (``s``), 2 Pagoda (``p``),
  3 Star (``t``) — written rank then suit: ``2j``, ``Ts``, ``Ap``,
* ``54`` Dragon (``Dr``), ``55`` Phoenix (``Ph``).

A card set is an ``int`` whose bit ``i`` is card ``i``; the four cards of rank ``r`` are the
nibble at bit ``4r - 6``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeAlias

from arena.rules.errors import InvalidActionError

Card: TypeAlias = int
Mask: TypeAlias = int

DOG: Card = 0
MAHJONG: Card = 1
DRAGON: Card = 54
PHOENIX: Card = 55

DOG_BIT: Mask = 1 << DOG
MAHJONG_BIT: Mask = 1 << MAHJONG
DRAGON_BIT: Mask = 1 << DRAGON
PHOENIX_BIT: Mask = 1 << PHOENIX
SPECIALS: Mask = DOG_BIT | MAHJONG_BIT | DRAGON_BIT | PHOENIX_BIT
FULL_DECK: Mask = (1 << 56) - 1

SUITS = "jspt"
SUIT_NAMES = ("Jade", "Sword", "Pagoda", "Star")
RANK_CHARS = "23456789TJQKA"
SPECIAL_NAMES = {DOG: "Dg", MAHJONG: "Mj", DRAGON: "Dr", PHOENIX: "Ph"}

MAHJONG_RANK = 1
DRAGON_RANK = 15


def card(rank: int, suit: int) -> Card:
    """Returns the id of the normal card of ``rank`` (2..14) and ``suit`` (0..3)."""
    return 2 + (rank - 2) * 4 + suit


def rank_shift(rank: int) -> int:
    """Returns the bit offset of the nibble holding the four cards of ``rank`` (2..14)."""
    return 4 * rank - 6


def _rank_of(c: Card) -> int:
    if c == DOG:
        return 0
    if c == MAHJONG:
        return MAHJONG_RANK
    if c == DRAGON:
        return DRAGON_RANK
    if c == PHOENIX:
        return 0
    return (c - 2) // 4 + 2


#: Rank of each card for play: Dog 0, Mah Jong 1, 2..14, Dragon 15, Phoenix 0 (it has none).
CARD_RANKS: tuple[int, ...] = tuple(_rank_of(c) for c in range(56))
#: Suit of each normal card (0..3); -1 for the four special cards.
CARD_SUITS: tuple[int, ...] = tuple(
    -1 if c in (DOG, MAHJONG, DRAGON, PHOENIX) else (c - 2) % 4 for c in range(56)
)
#: Card points: 5s are 5, 10s and Ks 10, Dragon 25, Phoenix -25; all others 0 (sum 100).
CARD_POINTS: tuple[int, ...] = tuple(
    25
    if c == DRAGON
    else -25
    if c == PHOENIX
    else 5
    if CARD_RANKS[c] == 5 and CARD_SUITS[c] >= 0
    else 10
    if CARD_RANKS[c] in (10, 13) and CARD_SUITS[c] >= 0
    else 0
    for c in range(56)
)
#: The natural (non-special) cards of each rank as a mask; index by rank 2..14.
RANK_MASKS: tuple[Mask, ...] = tuple(
    (0xF << rank_shift(r)) if 2 <= r <= 14 else 0 for r in range(16)
)
#: All the cards of a suit (normal cards only).
SUIT_MASKS: tuple[Mask, ...] = tuple(sum(1 << card(r, s) for r in range(2, 15)) for s in range(4))
POINT_CARDS: Mask = sum(1 << c for c in range(56) if CARD_POINTS[c])
_FIVES: Mask = sum(1 << c for c in range(56) if CARD_POINTS[c] == 5)
_TENS_AND_KINGS: Mask = sum(1 << c for c in range(56) if CARD_POINTS[c] == 10)


def card_name(c: Card) -> str:
    """Returns the notation of one card, e.g. ``Ts`` or ``Ph``."""
    if c in SPECIAL_NAMES:
        return SPECIAL_NAMES[c]
    if not 0 <= c < 56:
        raise InvalidActionError(f"no card with id {c!r}")
    return RANK_CHARS[CARD_RANKS[c] - 2] + SUITS[CARD_SUITS[c]]


_BY_NAME: dict[str, Card] = {card_name(c).lower(): c for c in range(56)}
_BY_NAME.update({"10" + s: card(10, i) for i, s in enumerate(SUITS)})
_BY_NAME.update({"dog": DOG, "mahjong": MAHJONG, "dragon": DRAGON, "phoenix": PHOENIX})


def parse_card(text: str) -> Card:
    """Parses one card in the notation (case-insensitive; ``10s`` is accepted for ``Ts``)."""
    try:
        return _BY_NAME[text.strip().lower()]
    except KeyError:
        raise InvalidActionError(
            f"unknown card {text!r}: use e.g. 2j Ts Qp At, or Dg Mj Dr Ph"
        ) from None


def cards_of(mask: Mask) -> Iterator[Card]:
    """Yields the card ids in ``mask`` in ascending order."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def mask_of(cards: Iterable[Card]) -> Mask:
    """Returns the mask of the given card ids."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def format_cards(mask: Mask) -> str:
    """Formats a card set in ascending order, e.g. ``Mj 2j 2s Ph``; ``-`` when empty."""
    return " ".join(card_name(c) for c in cards_of(mask)) or "-"


def parse_cards(text: str) -> Mask:
    """Parses space- or comma-separated cards; ``-`` or an empty string is the empty set."""
    mask = 0
    for token in text.replace(",", " ").split():
        if token == "-":
            continue
        c = parse_card(token)
        if mask >> c & 1:
            raise InvalidActionError(f"card {token!r} appears twice in {text!r}")
        mask |= 1 << c
    return mask


def points_of(mask: Mask) -> int:
    """Returns the card points in a set."""
    return (
        5 * (mask & _FIVES).bit_count()
        + 10 * (mask & _TENS_AND_KINGS).bit_count()
        + (25 if mask & DRAGON_BIT else 0)
        - (25 if mask & PHOENIX_BIT else 0)
    )


class CardSet:
    """A read-only view of a card mask: iteration, ``in``, ``len``, set operators.

    >>> CardSet.parse("Ph 2j Mj")
    CardSet('Mj 2j Ph')
    """

    __slots__ = ("mask",)

    def __init__(self, mask: Mask = 0) -> None:
        self.mask = mask

    @classmethod
    def parse(cls, text: str) -> CardSet:
        """Parses the notation into a set."""
        return cls(parse_cards(text))

    def __iter__(self) -> Iterator[Card]:
        return cards_of(self.mask)

    def __len__(self) -> int:
        return self.mask.bit_count()

    def __contains__(self, c: object) -> bool:
        return isinstance(c, int) and 0 <= c < 56 and bool(self.mask >> c & 1)

    def __or__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask | other.mask)

    def __and__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask & other.mask)

    def __sub__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask & ~other.mask)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CardSet) and other.mask == self.mask

    def __hash__(self) -> int:
        return hash(self.mask)

    def __str__(self) -> str:
        return format_cards(self.mask)

    def __repr__(self) -> str:
        return f"CardSet({format_cards(self.mask)!r})"

    @property
    def points(self) -> int:
        """Card points in the set."""
        return points_of(self.mask)
