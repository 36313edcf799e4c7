"""The playout policy of ``StrongBot``: a greedy player on card masks, for ``sdk.playout``.

Every seat of a playout plays it. Following an opponent, a seat beats the trick with its
lowest plain play (singles, pairs and triples read straight from the hand's bits, other
kinds from the legal list), the Phoenix only when nothing else beats, a bomb only on a
threat (an opponent about to go out or with a live bet); on its partner's trick it passes.
Leading, it goes out when its hand is one play, leads the Dog to an active partner, and
otherwise leads the longest plain play holding its lowest card (a straight, steps, a full
house, a triple, a pair or the single), read from the bits as well, so most decisions never
list the hand's combinations. With chance ``epsilon`` a follower passes instead and a
leader starts from a random card: playouts then vary beyond the deal. The wish is the
highest rank the seat lacks, the Dragon's trick goes to the opponent holding more cards.
A wish the seat must fulfil is answered from the legal list.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from arena.rules import (
    DOG_BIT,
    DOG_K,
    DRAGON_BIT,
    FOUR_BOMB,
    FULL_HOUSE,
    MAHJONG_BIT,
    PAIR,
    PASS,
    PASS_K,
    PHOENIX_BIT,
    RANK_MASKS,
    SINGLE,
    STEPS,
    STRAIGHT,
    SUIT_MASKS,
    TRIPLE,
    Mask,
    Play,
    may_hold_bomb,
    readings,
)
from sdk.playout import BOMB_WINDOW, GIFT, OVER, PLAY, FastHand

__all__ = [
    "answer",
    "follow",
    "gift_to",
    "lead",
    "rollout",
    "threat",
    "turn_answer",
    "window_answer",
    "wish_rank",
]

_new = tuple.__new__
_DOG_PLAY: Play = _new(Play, (DOG_K, 1, 0, DOG_BIT))
_DRAGON_PLAY: Play = _new(Play, (SINGLE, 1, 15, DRAGON_BIT))
_MAHJONG_PLAY: Play = _new(Play, (SINGLE, 1, 1, MAHJONG_BIT))
_PHOENIX_LEAD: Play = _new(Play, (SINGLE, 1, 1, PHOENIX_BIT))
_ONE = {
    DOG_BIT: _DOG_PLAY,
    DRAGON_BIT: _DRAGON_PLAY,
    MAHJONG_BIT: _MAHJONG_PLAY,
    PHOENIX_BIT: _PHOENIX_LEAD,
}
#: Natural cards of a rank above ``r`` (``r`` = 0..15).
_ABOVE = tuple(sum(RANK_MASKS[k] for k in range(r + 1, 15)) for r in range(16))


def _rank(card_bit: Mask) -> int:
    """The rank of one natural card given as its bit."""
    return ((card_bit.bit_length() - 3) >> 2) + 2


def _lowest(nibble_cards: Mask, n: int) -> Mask:
    """The ``n`` lowest bits of ``nibble_cards``."""
    out = 0
    for _ in range(n):
        b = nibble_cards & -nibble_cards
        out |= b
        nibble_cards ^= b
    return out


def threat(h: FastHand, o: int) -> bool:
    """Whether opponent ``o`` is about to go out or has a live bet."""
    n = h.hands[o].bit_count()
    return 0 < n <= 2 or (h.stakes[o] > 0 and not h.out)


def wish_rank(hand: Mask) -> int:
    """The highest rank of which ``hand`` holds no card (the wish never binds its maker)."""
    for r in range(14, 1, -1):
        if not hand & RANK_MASKS[r]:
            return r
    return 0


def gift_to(h: FastHand) -> int:
    """The Dragon's trick to the opponent holding more cards (the likelier last one)."""
    s = h.seat
    left, right = (s + 1) & 3, (s + 3) & 3
    hands = h.hands
    return left if hands[left].bit_count() >= hands[right].bit_count() else right


def window_answer(h: FastHand) -> Play:
    """A bomb window: the lowest bomb over an opponent who threatens, else pass."""
    s = h.seat
    o = h.owner
    if (o ^ s) & 1 and threat(h, o):
        return h.plays()[1]
    return PASS


def turn_answer(h: FastHand, rand: Callable[[], float], epsilon: float) -> Play:
    """The policy's answer in a turn (see the module docstring)."""
    s = h.seat
    hand = h.hands[s]
    top = h.top
    wish = h.wish
    bound = wish and hand & RANK_MASKS[wish]
    if top is not None and not bound and not (h.owner ^ s) & 1:
        return PASS  # the partner's trick
    if bound:
        legal = h.plays()
        if legal[0].kind != PASS_K:  # the wish binds (or the seat leads): a wished play
            for p in legal:
                if p.kind < FOUR_BOMB:
                    return p
            return legal[0]
    if top is None:
        if epsilon and rand() < epsilon:
            return lead(h, s, hand, _random_card(hand, rand))
        return lead(h, s, hand, 0)
    o = h.owner
    if not (o ^ s) & 1 or (epsilon and rand() < epsilon):
        return PASS
    beat = follow(hand, top)
    if beat is not None:
        return beat
    if threat(h, o) and may_hold_bomb(hand):
        for q in h.plays():
            if q.kind >= FOUR_BOMB:
                return q
    return PASS


def follow(hand: Mask, top: Play) -> Play | None:
    """The lowest plain play of ``hand`` beating ``top`` (the Phoenix only when nothing else
    beats)."""
    tk = top.kind
    tr = top.rank
    if tk == SINGLE:
        if tr >= 15:
            return None
        nat = hand & _ABOVE[tr]
        if nat:
            b = nat & -nat
            return _new(Play, (SINGLE, 1, _rank(b), b))
        if hand & DRAGON_BIT:
            return _DRAGON_PLAY
        if hand & PHOENIX_BIT:
            return _new(Play, (SINGLE, 1, tr, PHOENIX_BIT))
        return None
    if tk in (PAIR, TRIPLE):
        n = top.length
        phoenix = hand & PHOENIX_BIT
        fallback: Play | None = None
        for r in range(tr + 1, 15):
            cards = hand & RANK_MASKS[r]
            if not cards:
                continue
            c = cards.bit_count()
            if c >= n:
                return _new(Play, (tk, n, r, _lowest(cards, n)))
            if phoenix and fallback is None and c == n - 1:
                fallback = _new(Play, (tk, n, r, cards | PHOENIX_BIT))
        return fallback
    if tk == FULL_HOUSE:
        return _follow_full_house(hand, tr)
    if tk in (STRAIGHT, STEPS):
        return _follow_run(hand, tk, top.length, tr)
    return None


def _follow_full_house(hand: Mask, tr: int) -> Play | None:
    """The lowest plain full house whose triple ranks above ``tr``."""
    for r in range(tr + 1, 15):
        own = hand & RANK_MASKS[r]
        if own.bit_count() >= 3:
            for k in range(2, 15):
                other = hand & RANK_MASKS[k]
                if k != r and other.bit_count() >= 2:
                    return _new(Play, (FULL_HOUSE, 5, r, _lowest(own, 3) | _lowest(other, 2)))
            return None
    return None


def _follow_run(hand: Mask, kind: int, length: int, tr: int) -> Play | None:
    """The lowest plain straight or steps of ``length`` cards ranking above ``tr``."""
    width = 2 if kind == STEPS else 1
    n = length // width
    for r in range(max(tr + 1, n + 1), 15):
        picks = [hand & RANK_MASKS[k] for k in range(r - n + 1, r + 1)]
        if any(p.bit_count() < width for p in picks):
            continue
        if width == 2:
            cards = 0
            for p in picks:
                cards |= _lowest(p, 2)
        else:
            cards = _unsuited(picks)
            if not cards:
                continue
        return _new(Play, (kind, length, r, cards))
    return None


def _random_card(hand: Mask, rand: Callable[[], float]) -> Mask:
    """One plain card of ``hand`` at random (its bit), or 0."""
    plain = hand & ~(DOG_BIT | PHOENIX_BIT)
    n = plain.bit_count()
    if not n:
        return 0
    k = int(rand() * n)
    for _ in range(k):
        plain &= plain - 1
    return plain & -plain


def lead(h: FastHand, s: int, hand: Mask, start: Mask) -> Play:
    """A lead: out with the whole hand, the Dog to an active partner, else the longest plain
    play holding ``start`` (a card's bit; 0: the lowest plain card)."""
    if hand.bit_count() <= 6:
        whole = _whole(hand)
        if whole is not None:
            return whole
    if hand & DOG_BIT and h.hands[(s + 2) & 3]:
        return _DOG_PLAY
    plain = hand & ~(DOG_BIT | PHOENIX_BIT)
    if not plain:
        return _PHOENIX_LEAD if hand & PHOENIX_BIT else _DOG_PLAY
    low = start or plain & -plain
    if low == DRAGON_BIT:
        return _DRAGON_PLAY
    if low == MAHJONG_BIT:
        p = _straight(hand, 1)
        return p if p is not None else _MAHJONG_PLAY
    r = _rank(low)
    best = _straight(hand, r)
    steps = _steps(hand, r)
    if steps is not None and (best is None or steps.length > best.length):
        best = steps
    if best is None:
        cards = hand & RANK_MASKS[r]
        c = cards.bit_count()
        if c >= 2:
            best = _full_house(hand, r, c)
        if best is None:
            if c >= 3:
                best = _new(Play, (TRIPLE, 3, r, _lowest(cards, 3)))
            elif c == 2:
                best = _new(Play, (PAIR, 2, r, cards))
            else:
                best = _new(Play, (SINGLE, 1, r, low))
    return best


@lru_cache(maxsize=1 << 14)
def _whole(hand: Mask) -> Play | None:
    """The play that is all of ``hand``, if there is one (a bomb or the lowest reading)."""
    if hand & -hand == hand:
        return _ONE.get(hand) or _new(Play, (SINGLE, 1, _rank(hand), hand))
    if hand & (DOG_BIT | DRAGON_BIT):
        return None  # the Dog and the Dragon combine with nothing
    ways = readings(hand)
    return ways[-1] if ways else None


def _straight(hand: Mask, r: int) -> Play | None:
    """The longest plain straight starting at rank ``r`` (1: the Mah Jong), not a bomb."""
    picks: list[Mask] = []
    k = r
    while k <= 14:
        cards = MAHJONG_BIT & hand if k == 1 else hand & RANK_MASKS[k]
        if not cards:
            break
        picks.append(cards)
        k += 1
    while len(picks) >= 5:
        chosen = _unsuited(picks)
        if chosen:
            n = len(picks)
            return _new(Play, (STRAIGHT, n, r + n - 1, chosen))
        picks.pop()
    return None


def _unsuited(picks: list[Mask]) -> Mask:
    """One card per rank (the lowest suit), not all of one suit (a bomb), or 0."""
    cards = 0
    for p in picks:
        cards |= p & -p
    if cards & MAHJONG_BIT or not any(cards & ~m == 0 for m in SUIT_MASKS):
        return cards  # the Mah Jong has no suit
    for p in picks:
        if p.bit_count() > 1:
            low = p & -p
            other = p ^ low
            return cards ^ low | (other & -other)
    return 0


def _steps(hand: Mask, r: int) -> Play | None:
    """The longest steps (consecutive pairs) starting at rank ``r``, at least two pairs."""
    cards = 0
    k = r
    while k <= 14:
        rank_cards = hand & RANK_MASKS[k]
        if rank_cards.bit_count() < 2:
            break
        cards |= _lowest(rank_cards, 2)
        k += 1
    pairs = k - r
    if pairs < 2:
        return None
    return _new(Play, (STEPS, 2 * pairs, k - 1, cards))


def _full_house(hand: Mask, r: int, c: int) -> Play | None:
    """A full house with the cards of rank ``r`` (``c`` of them) as its triple or pair."""
    own = hand & RANK_MASKS[r]
    for k in range(2, 15):
        if k == r:
            continue
        other = hand & RANK_MASKS[k]
        n = other.bit_count()
        if c >= 3 and n >= 2:
            return _new(Play, (FULL_HOUSE, 5, r, _lowest(own, 3) | _lowest(other, 2)))
        if c == 2 and n >= 3:
            return _new(Play, (FULL_HOUSE, 5, k, own | _lowest(other, 3)))
    return None


def answer(h: FastHand, rand: Callable[[], float], epsilon: float) -> Play | int:
    """The policy's answer to the decision ``h`` is at."""
    ph = h.phase
    if ph == PLAY:
        return turn_answer(h, rand, epsilon)
    if ph == BOMB_WINDOW:
        return window_answer(h)
    if ph == GIFT:
        return gift_to(h)
    return wish_rank(h.hands[h.seat])


def rollout(h: FastHand, rand: Callable[[], float], epsilon: float = 0.1) -> None:
    """Plays ``h`` to the end of the hand with the policy for every seat."""
    play = h.play
    pass_turn = h.pass_turn
    apply = h.apply
    while True:
        ph = h.phase
        if ph == PLAY:
            a = turn_answer(h, rand, epsilon)
            if a.kind:
                play(h.seat, a)
            else:
                pass_turn(h.seat)
        elif ph == BOMB_WINDOW:
            apply(window_answer(h))
        elif ph == OVER:
            return
        elif ph == GIFT:
            apply(gift_to(h))
        else:
            apply(wish_rank(h.hands[h.seat]))
