"""Combinations: the frozen ``Play`` value, comparison, and card-level enumeration.

A ``Play`` is ``(kind, length, rank, cards)``. These four fields fix the Phoenix's reading:
``Ts Js Qs Ks Ph`` is the straight 9-K at rank 13 or 10-A at rank 14, and
``9j 9s 7j 7s Ph`` is the full house 999-77 at rank 9 or 777-99 at rank 7. A Phoenix single
carries as ``rank`` the rank it counts half above: 1 when led (1½), ``r`` when played on a
single of rank ``r``. Tuples sort by kind, then length, rank and cards, which is the canonical
order of every legal-action list.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum
from functools import lru_cache
from typing import NamedTuple

from arena.rules.cards import (
    CARD_RANKS,
    DOG_BIT,
    DRAGON_BIT,
    MAHJONG_BIT,
    PHOENIX_BIT,
    RANK_CHARS,
    RANK_MASKS,
    SUIT_MASKS,
    Mask,
    format_cards,
    parse_cards,
)
from arena.rules.errors import InvalidActionError


class Combo(IntEnum):
    """Kinds of play, in the order legal lists are sorted (pass first, bombs last)."""

    PASS = 0
    DOG = 1
    SINGLE = 2
    PAIR = 3
    TRIPLE = 4
    STEPS = 5
    FULL_HOUSE = 6
    STRAIGHT = 7
    FOUR_BOMB = 8
    FLUSH_BOMB = 9


# Plain ints for the hot paths (IntEnum attribute access is slower).
PASS_K, DOG_K, SINGLE, PAIR, TRIPLE, STEPS, FULL_HOUSE, STRAIGHT, FOUR_BOMB, FLUSH_BOMB = range(10)

_ANY_SUIT: tuple[Mask, ...] = SUIT_MASKS


class Play(NamedTuple):
    """One play: a kind, its number of cards, its rank and the cards (a mask)."""

    kind: int
    length: int
    rank: int
    cards: Mask

    @property
    def combo(self) -> Combo:
        """The kind as a ``Combo``."""
        return Combo(self.kind)

    @property
    def is_bomb(self) -> bool:
        """Whether the play is a bomb (four of a kind or straight flush)."""
        return self.kind >= FOUR_BOMB

    @property
    def phoenix_rank(self) -> int:
        """The rank the Phoenix stands for in a multi-card play; 0 when it is not in one."""
        if not self.cards & PHOENIX_BIT or self.length == 1:
            return 0
        nat = self.cards & ~PHOENIX_BIT
        if self.kind in (PAIR, TRIPLE):
            return self.rank
        if self.kind == FULL_HOUSE:
            if (nat & RANK_MASKS[self.rank]).bit_count() == 2:
                return self.rank
            other = nat & ~RANK_MASKS[self.rank]
            return CARD_RANKS[other.bit_length() - 1]
        width = 2 if self.kind == STEPS else 1
        for r in range(self.rank - self.length // width + 1, self.rank + 1):
            have = (nat & RANK_MASKS[r]).bit_count() if r >= 2 else int(bool(nat & MAHJONG_BIT))
            if have < width:
                return r
        raise AssertionError(f"no Phoenix slot in {self!r}")  # pragma: no cover

    def __str__(self) -> str:
        if self.kind == PASS_K:
            return "pass"
        text = format_cards(self.cards)
        ph = self.phoenix_rank
        if ph:
            text = text.replace("Ph", "Ph=" + RANK_CHARS[ph - 2])
        return text

    def describe(self) -> str:
        """A longer reading, e.g. ``straight 9-K Ts Js Qs Ks Ph=9`` or ``pair 8j 8s``."""
        if self.kind == PASS_K:
            return "pass"
        name = Combo(self.kind).name.lower().replace("_", " ")
        if self.kind in (STEPS, STRAIGHT, FLUSH_BOMB):
            width = 2 if self.kind == STEPS else 1
            low = self.rank - self.length // width + 1
            name += f" {rank_name(low)}-{rank_name(self.rank)}"
        elif self.kind == FULL_HOUSE:
            name += f" of {rank_name(self.rank)}s"
        return f"{name} {self}"


PASS = Play(PASS_K, 0, 0, 0)

_new = tuple.__new__


def rank_name(rank: int) -> str:
    """Names a rank: ``1`` for the Mah Jong, ``2``..``A``, ``Dragon``."""
    if rank == 1:
        return "1"
    if rank == 15:
        return "Dragon"
    if 2 <= rank <= 14:
        return RANK_CHARS[rank - 2]
    return str(rank)


def parse_rank(text: str) -> int:
    """Parses a rank 2..14 written as ``2``..``9``, ``T``/``10``, ``J``, ``Q``, ``K``, ``A``."""
    t = text.strip().upper()
    if t == "10":
        t = "T"
    if len(t) == 1 and t in RANK_CHARS:
        return RANK_CHARS.index(t) + 2
    raise InvalidActionError(f"unknown rank {text!r}: use 2..9, T, J, Q, K or A")


def beats(play: Play, top: Play) -> bool:
    """Whether ``play`` may be played on ``top`` (same shape and higher, or a higher bomb)."""
    pk = play.kind
    tk = top.kind
    if pk >= FOUR_BOMB:
        if tk < FOUR_BOMB:
            return tk != DOG_K
        if pk != tk:
            return pk > tk
        if pk == FLUSH_BOMB and play.length != top.length:
            return play.length > top.length
        return play.rank > top.rank
    if pk != tk or play.length != top.length:
        return False
    if pk == SINGLE and play.cards == PHOENIX_BIT:
        return top.rank < 15
    return play.rank > top.rank


# SUBSETS[n][k]: the sub-nibbles of nibble n with k bits, ascending.
SUBSETS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(s for s in range(16) if s & ~n == 0 and s.bit_count() == k) for k in range(5))
    for n in range(16)
)


def _cross(acc: list[Mask], options: tuple[Mask, ...]) -> list[Mask]:
    return [a | b for a in acc for b in options]


def _tables() -> tuple[list[list[tuple[Mask, ...]]], ...]:
    """Per rank and nibble: masks of its singles, pairs and triples (shifted into place)."""
    singles: list[list[tuple[Mask, ...]]] = [[()] * 16 for _ in range(15)]
    pairs: list[list[tuple[Mask, ...]]] = [[()] * 16 for _ in range(15)]
    trips: list[list[tuple[Mask, ...]]] = [[()] * 16 for _ in range(15)]
    for r in range(2, 15):
        sh = 4 * r - 6
        for n in range(16):
            singles[r][n] = tuple(x << sh for x in SUBSETS[n][1])
            pairs[r][n] = tuple(x << sh for x in SUBSETS[n][2])
            trips[r][n] = tuple(x << sh for x in SUBSETS[n][3])
    return singles, pairs, trips


_SINGLE_MASKS, _PAIR_MASKS, _TRIPLE_MASKS = _tables()


def _plays(
    kind: int, length: int, table: list[list[tuple[Mask, ...]]], extra: Mask
) -> list[list[tuple[Play, ...]]]:
    return [
        [tuple(_new(Play, (kind, length, r, m | extra)) for m in table[r][n]) for n in range(16)]
        for r in range(15)
    ]


_SINGLE_PLAYS = _plays(SINGLE, 1, _SINGLE_MASKS, 0)
_PAIR_PLAYS = _plays(PAIR, 2, _PAIR_MASKS, 0)
_PH_PAIR_PLAYS = _plays(PAIR, 2, _SINGLE_MASKS, PHOENIX_BIT)
_TRIPLE_PLAYS = _plays(TRIPLE, 3, _TRIPLE_MASKS, 0)
_PH_TRIPLE_PLAYS = _plays(TRIPLE, 3, _PAIR_MASKS, PHOENIX_BIT)
_FOUR_PLAYS = [_new(Play, (FOUR_BOMB, 4, r, RANK_MASKS[r])) for r in range(15)]
_DOG_PLAY = _new(Play, (DOG_K, 1, 0, DOG_BIT))
_MAHJONG_PLAY = _new(Play, (SINGLE, 1, 1, MAHJONG_BIT))
_PHOENIX_PLAY = _new(Play, (SINGLE, 1, 1, PHOENIX_BIT))
_DRAGON_PLAY = _new(Play, (SINGLE, 1, 15, DRAGON_BIT))
_EMPTY: tuple[Mask, ...] = ()


def generate(hand: Mask) -> list[Play]:
    """Returns every play that can be led from ``hand``, card-level, in canonical order.

    Suit variants are distinct plays (they keep different cards in hand); every Phoenix
    reading is its own play; a straight flush is listed only as a bomb.
    """
    ph = hand & PHOENIX_BIT
    nibs = [0] * 15
    singles: list[tuple[Mask, ...]] = [_EMPTY] * 15
    pairs: list[tuple[Mask, ...]] = [_EMPTY] * 15
    ph_pairs: list[tuple[Mask, ...]] = [_EMPTY] * 15
    out: list[Play] = []
    if hand & DOG_BIT:
        out.append(_DOG_PLAY)
    if hand & MAHJONG_BIT:
        singles[1] = (MAHJONG_BIT,)
        out.append(_MAHJONG_PLAY)
    if ph:
        out.append(_PHOENIX_PLAY)
    x = hand >> 2
    for r in range(2, 15):
        n = x & 15
        x >>= 4
        if n:
            nibs[r] = n
            singles[r] = _SINGLE_MASKS[r][n]
            pairs[r] = _PAIR_MASKS[r][n]
            out.extend(_SINGLE_PLAYS[r][n])
    if hand & DRAGON_BIT:
        out.append(_DRAGON_PLAY)
    ranks = [r for r in range(2, 15) if nibs[r]]
    for r in ranks:
        out.extend(_PAIR_PLAYS[r][nibs[r]])
        if ph:
            out.extend(_PH_PAIR_PLAYS[r][nibs[r]])
    for r in ranks:
        out.extend(_TRIPLE_PLAYS[r][nibs[r]])
        if ph:
            out.extend(_PH_TRIPLE_PLAYS[r][nibs[r]])
    if ph:
        for r in ranks:
            ph_pairs[r] = tuple(m | ph for m in singles[r])
    # Steps: runs of two or more consecutive pairs; the Phoenix completes at most one pair.
    section: list[Play] = []
    _steps(pairs, ph_pairs, bool(ph), section.append)
    section.sort()
    out.extend(section)
    # Full houses, ranked by the triple; the pair is of another rank.
    section = []
    add = section.append
    trip_ranks = [r for r in ranks if nibs[r].bit_count() >= (2 if ph else 3)]
    if trip_ranks:
        pair_ranks = [r for r in ranks if ph or nibs[r].bit_count() >= 2]
        for t in trip_ranks:
            nat_t = _TRIPLE_MASKS[t][nibs[t]]
            phx_t = tuple(m | ph for m in pairs[t]) if ph else _EMPTY
            for p in pair_ranks:
                if p == t:
                    continue
                nat_p = pairs[p]
                for a in nat_t:
                    for b in nat_p:
                        add(_new(Play, (FULL_HOUSE, 5, t, a | b)))
                    for b in ph_pairs[p]:
                        add(_new(Play, (FULL_HOUSE, 5, t, a | b)))
                for a in phx_t:
                    for b in nat_p:
                        add(_new(Play, (FULL_HOUSE, 5, t, a | b)))
        section.sort()
        out.extend(section)
    # Straights (5+), then bombs.
    if len(ranks) + (1 if hand & MAHJONG_BIT else 0) + (1 if ph else 0) >= 5:
        section = []
        flushes = _straights(singles, bool(ph), hand, section.append)
        section.sort()
        out.extend(section)
    else:
        flushes = []
    for r in ranks:
        if nibs[r] == 15:
            out.append(_FOUR_PLAYS[r])
    if flushes:
        flushes.sort()
        out.extend(flushes)
    return out


def _steps(
    pairs: list[tuple[Mask, ...]],
    ph_pairs: list[tuple[Mask, ...]],
    ph: bool,
    add: Callable[[Play], None],
) -> None:
    for lo in range(2, 14):
        missing = 0  # the one rank the Phoenix must complete, 0 if none yet
        for hi in range(lo, 15):
            if not pairs[hi]:
                if not ph or not ph_pairs[hi] or missing:
                    break
                missing = hi
            if hi == lo:
                continue
            length = 2 * (hi - lo + 1)
            if missing:
                slots = [missing]
            else:
                acc: list[Mask] = [0]
                for r in range(lo, hi + 1):
                    acc = _cross(acc, pairs[r])
                for m in acc:
                    add(_new(Play, (STEPS, length, hi, m)))
                slots = list(range(lo, hi + 1)) if ph else []
            for j in slots:
                acc = [0]
                for r in range(lo, hi + 1):
                    acc = _cross(acc, ph_pairs[r] if r == j else pairs[r])
                for m in acc:
                    add(_new(Play, (STEPS, length, hi, m)))


def _straights(
    singles: list[tuple[Mask, ...]], ph: bool, hand: Mask, add: Callable[[Play], None]
) -> list[Play]:
    """Adds the straights (5+ cards) and returns the straight flushes, which are bombs."""
    flushes: list[Play] = []
    flush_set: set[Mask] = set()
    if may_hold_bomb(hand):
        for suit_mask in _ANY_SUIT:
            suited = hand & suit_mask
            if suited.bit_count() < 5:
                continue
            for lo in range(2, 11):
                m = 0
                for hi in range(lo, 15):
                    bit = suited & RANK_MASKS[hi]
                    if not bit:
                        break
                    m |= bit
                    if hi - lo >= 4:
                        flush_set.add(m)
                        flushes.append(_new(Play, (FLUSH_BOMB, hi - lo + 1, hi, m)))
    gaps_allowed = 1 if ph else 0
    present = 0
    for r in range(1, 15):
        if singles[r]:
            present |= 1 << r
    need = 5 - gaps_allowed
    for lo in range(1, 11):
        if ((present >> lo) & 31).bit_count() < need or (lo == 1 and not present & 2):
            continue
        # How far a straight starting at ``lo`` can reach (the Phoenix fills one gap, never 1).
        gaps = 0
        reach = lo - 1
        for r in range(lo, 15):
            if not singles[r]:
                if r == 1 or gaps == gaps_allowed:
                    break
                gaps += 1
            reach = r
        if reach - lo < 4:
            continue
        # Grow the window one rank at a time: ``nat`` without the Phoenix, ``phx`` with it.
        nat: list[Mask] = list(singles[lo])
        phx: list[Mask] = [PHOENIX_BIT] if ph and lo >= 2 else []
        for hi in range(lo + 1, reach + 1):
            cards = singles[hi]
            grown = [a | b for a in phx for b in cards]
            if ph:
                grown += [a | PHOENIX_BIT for a in nat]
            phx = grown
            nat = [a | b for a in nat for b in cards]
            if hi - lo >= 4:
                length = hi - lo + 1
                for m in nat:
                    if m not in flush_set:
                        add(_new(Play, (STRAIGHT, length, hi, m)))
                for m in phx:
                    add(_new(Play, (STRAIGHT, length, hi, m)))
    return flushes


_LOW_NIBBLE_BITS = sum(1 << (4 * k) for k in range(13))


def may_hold_bomb(hand: Mask) -> bool:
    """Cheap screen: whether ``hand`` has four of a rank or five suited consecutive ranks."""
    x = hand >> 2
    if x & (x >> 1) & (x >> 2) & (x >> 3) & _LOW_NIBBLE_BITS:
        return True
    for s in range(4):
        z = x >> s & _LOW_NIBBLE_BITS
        if z & (z >> 4) & (z >> 8) & (z >> 12) & (z >> 16):
            return True
    return False


@lru_cache(maxsize=1 << 10)
def combinations(hand: Mask) -> tuple[Play, ...]:
    """Cached ``generate``: every play that can be led from ``hand``.

    The cache is small on purpose: ``Play`` tuples are tracked by the garbage collector, and
    a large cache of them makes full collections slow in long-running processes.
    """
    return tuple(generate(hand))


def readings(cards: Mask, top: Play | None = None) -> list[Play]:
    """Every way the exact set ``cards`` forms one play (several only with the Phoenix).

    A lone Phoenix reads as ½ above ``top`` when ``top`` is a single, else as 1½.
    """
    if cards == PHOENIX_BIT:
        rank = top.rank if top is not None and top.kind == SINGLE else 1
        return [Play(SINGLE, 1, rank, PHOENIX_BIT)]
    return [p for p in combinations(cards) if p.cards == cards]


def parse_play(text: str, top: Play | None = None) -> Play:
    """Parses ``pass`` or cards with an optional Phoenix reading, e.g. ``Ts Js Qs Ks Ph=9``.

    The reading is needed only where the cards allow two (``Ph=9`` or ``Ph=A`` above).
    """
    t = text.strip()
    if t.lower() == "pass":
        return PASS
    ph_rank = 0
    tokens = []
    for token in t.replace(",", " ").split():
        if token.lower().startswith("ph="):
            ph_rank = parse_rank(token[3:])
            token = "Ph"
        tokens.append(token)
    cards = parse_cards(" ".join(tokens))
    options = readings(cards, top)
    if ph_rank:
        options = [p for p in options if p.phoenix_rank == ph_rank]
    if not options:
        raise InvalidActionError(f"{text!r} is not a combination")
    if len(options) > 1:
        alts = " or ".join(str(p) for p in options)
        raise InvalidActionError(f"{text!r} is ambiguous: write {alts}")
    return options[0]
