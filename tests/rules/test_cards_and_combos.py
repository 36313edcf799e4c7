"""Card notation, card points, play comparison, ``parse_play`` readings, and a differential test
of ``combinations`` against a slow brute-force classifier written from docs/rules.md §5.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations as subsets_of_size

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.rules import (
    DOG,
    DRAGON,
    MAHJONG,
    PASS,
    PHOENIX,
    CardSet,
    Combo,
    InvalidActionError,
    Play,
    beats,
    card,
    card_name,
    cards_of,
    combinations,
    format_cards,
    mask_of,
    parse_card,
    parse_cards,
    parse_play,
    points_of,
    readings,
)
from arena.rules.cards import CARD_POINTS, FULL_DECK, Mask

PH_BIT = 1 << PHOENIX
ALL_CARDS = range(56)

# ---------------------------------------------------------------- notation and points


def test_every_card_round_trips() -> None:
    """``parse_card(card_name(c)) == c`` for all 56 cards, in any letter case."""
    names = [card_name(c) for c in ALL_CARDS]
    assert len(set(names)) == 56
    for c in ALL_CARDS:
        assert parse_card(names[c]) == c
        assert parse_card(names[c].upper()) == c
        assert parse_card(names[c].lower()) == c
    assert [card_name(c) for c in (DOG, MAHJONG, DRAGON, PHOENIX)] == ["Dg", "Mj", "Dr", "Ph"]
    assert card_name(card(10, 1)) == "Ts" and parse_card("10s") == card(10, 1)
    assert card_name(card(14, 3)) == "At" and card_name(card(2, 0)) == "2j"


@pytest.mark.parametrize("bad", ["", "1j", "Tx", "Ph=9", "Dragonfly", "15s"])
def test_bad_card_names_rejected(bad: str) -> None:
    """Unknown card names raise ``InvalidActionError``."""
    with pytest.raises(InvalidActionError):
        parse_card(bad)


def test_parse_cards_rejects_repeats() -> None:
    """A card written twice is an error; ``-`` is the empty set."""
    with pytest.raises(InvalidActionError):
        parse_cards("2j 3j 2J")
    assert parse_cards("-") == 0 and format_cards(0) == "-"


@pytest.mark.slow
@given(st.sets(st.integers(0, 55)))
@settings(max_examples=300, deadline=None)
def test_card_set_notation_round_trips(ids: set[int]) -> None:
    """Formatting a random set and parsing it back gives the same set, ascending by id."""
    mask = mask_of(ids)
    text = format_cards(mask)
    assert parse_cards(text) == mask
    assert parse_cards(text.replace(" ", ",")) == mask
    assert list(cards_of(mask)) == sorted(ids)
    cs = CardSet.parse(text)
    assert cs.mask == mask and len(cs) == len(ids) and str(cs) == text
    assert all(c in cs for c in ids)


def test_card_points_total_100() -> None:
    """Card points: 5s 5, 10s and Ks 10, Dragon 25, Phoenix -25; 100 in all."""
    assert sum(CARD_POINTS) == 100
    assert points_of(FULL_DECK) == 100
    assert points_of(parse_cards("5j Ts Kp Dr Ph")) == 5 + 10 + 10 + 25 - 25
    assert Counter(CARD_POINTS) == Counter({0: 42, 5: 4, 10: 8, 25: 1, -25: 1})


@given(st.integers(0, FULL_DECK))
def test_points_of_any_set_is_the_sum_of_its_cards(mask: Mask) -> None:
    assert points_of(mask) == sum(CARD_POINTS[c] for c in cards_of(mask))


# ---------------------------------------------------------------- comparison


def _flushes() -> list[Play]:
    """Every straight flush of the deck (all suits, lengths, tops)."""
    out = []
    for suit in range(4):
        for lo in range(2, 11):
            for hi in range(lo + 4, 15):
                cards = mask_of(card(r, suit) for r in range(lo, hi + 1))
                out.append(Play(Combo.FLUSH_BOMB, hi - lo + 1, hi, cards))
    return out


FOUR_ACES = parse_play("Aj As Ap At")
DRAGON_SINGLE = parse_play("Dr")


def test_any_straight_flush_beats_four_aces() -> None:
    """Every straight flush beats every four of a kind; no four beats a straight flush."""
    flushes = _flushes()
    assert len(flushes) == 4 * 45
    fours = [parse_play(" ".join(f"{r}{s}" for s in "jspt")) for r in "23456789TJQKA"]
    for f in flushes:
        assert f.kind == Combo.FLUSH_BOMB and readings(f.cards) == [f]
        for four in fours:
            assert beats(f, four) and not beats(four, f)


def test_flush_order_length_then_rank() -> None:
    """A longer straight flush beats a shorter one; at equal length the higher top wins."""
    flushes = _flushes()
    for a in flushes:
        for b in flushes:
            expected = a.length > b.length or (a.length == b.length and a.rank > b.rank)
            assert beats(a, b) == expected, (str(a), str(b))
    assert beats(parse_play("2j 3j 4j 5j 6j 7j"), parse_play("Ts Js Qs Ks As"))


def test_four_bombs_by_rank() -> None:
    """Higher four of a kind beats lower; equal does not; fours beat the Dragon, not the Dog."""
    assert beats(FOUR_ACES, parse_play("2j 2s 2p 2t"))
    assert not beats(parse_play("2j 2s 2p 2t"), FOUR_ACES)
    assert not beats(FOUR_ACES, FOUR_ACES)
    assert beats(parse_play("2j 2s 2p 2t"), DRAGON_SINGLE)
    assert not beats(parse_play("2j 2s 2p 2t"), parse_play("Dg"))


def test_phoenix_on_ace_beaten_only_by_dragon_or_bomb() -> None:
    """Phoenix on an A (A½): no natural single beats it; the Dragon and every bomb do."""
    ph_on_ace = parse_play("Ph", top=parse_play("Aj"))
    assert ph_on_ace == Play(Combo.SINGLE, 1, 14, PH_BIT)
    for c in ALL_CARDS:
        if c in (DOG, PHOENIX):
            continue
        single = parse_play(card_name(c))
        assert beats(single, ph_on_ace) == (c == DRAGON), card_name(c)
    for bomb in [*_flushes(), FOUR_ACES]:
        assert beats(bomb, ph_on_ace)
    assert beats(ph_on_ace, parse_play("Aj")) and not beats(
        Play(Combo.SINGLE, 1, 15, PH_BIT), DRAGON_SINGLE
    )


def test_single_order_and_phoenix_half() -> None:
    """Mah Jong < 2 < ... < A < Dragon; a led Phoenix is 1½; on a K it is K½."""
    led = parse_play("Ph")
    assert led.rank == 1
    assert not beats(parse_play("Mj"), led) and beats(parse_play("2j"), led)
    ph_on_king = parse_play("Ph", top=parse_play("Kj"))
    assert not beats(parse_play("Ks"), ph_on_king) and beats(parse_play("As"), ph_on_king)
    order = ["Mj", "2j", "3s", "9p", "Tt", "Jj", "Qs", "Kp", "At", "Dr"]
    for i, lo in enumerate(order):
        for hi in order[i + 1 :]:
            assert beats(parse_play(hi), parse_play(lo)) and not beats(
                parse_play(lo), parse_play(hi)
            )


def test_shapes_must_match() -> None:
    """Same kind and length only: steps, straights and full houses per the rule cases."""
    assert beats(parse_play("6j 6s 7j 7s"), parse_play("5j 5s 6p 6t"))
    assert not beats(parse_play("6j 6s 7j 7s"), parse_play("3j 3s 4j 4s 5j 5s"))
    assert not beats(parse_play("2j 3s 4p 5t 6j 7s"), parse_play("3j 4s 5p 6t 7j"))
    assert beats(parse_play("3j 3s 3p 2j 2s"), parse_play("2j 2s 2p Aj As"))  # by the triple
    assert not beats(parse_play("2j 2s 2p Aj As"), parse_play("3j 3s 3p 2j 2s"))
    assert not beats(parse_play("Aj As"), parse_play("2j"))
    assert not beats(parse_play("Aj"), parse_play("2j 2s"))
    assert not beats(PASS, parse_play("2j"))


# ---------------------------------------------------------------- parse_play and readings


def test_phoenix_straight_needs_a_reading() -> None:
    """``Ts Js Qs Ks Ph`` is 9-K or T-A; without ``Ph=`` it is ambiguous."""
    low = parse_play("Ts Js Qs Ks Ph=9")
    high = parse_play("Ts Js Qs Ks Ph=A")
    assert (low.kind, low.length, low.rank, low.phoenix_rank) == (Combo.STRAIGHT, 5, 13, 9)
    assert (high.kind, high.length, high.rank, high.phoenix_rank) == (Combo.STRAIGHT, 5, 14, 14)
    assert low.cards == high.cards and beats(high, low)
    with pytest.raises(InvalidActionError, match="ambiguous"):
        parse_play("Ts Js Qs Ks Ph")
    with pytest.raises(InvalidActionError):
        parse_play("Ts Js Qs Ks Ph=8")
    assert str(low) == "Ts Js Qs Ks Ph=9" and parse_play(str(high)) == high


def test_phoenix_full_house_readings() -> None:
    """``9j 9s 7j 7s Ph`` is 999-77 (rank 9) or 777-99 (rank 7)."""
    nine = parse_play("9j 9s 7j 7s Ph=9")
    seven = parse_play("9j 9s 7j 7s Ph=7")
    assert (nine.kind, nine.rank, nine.phoenix_rank) == (Combo.FULL_HOUSE, 9, 9)
    assert (seven.kind, seven.rank, seven.phoenix_rank) == (Combo.FULL_HOUSE, 7, 7)
    with pytest.raises(InvalidActionError, match="ambiguous"):
        parse_play("9j 9s 7j 7s Ph")
    assert parse_play("9j 9s 9p 7s Ph").phoenix_rank == 7


@pytest.mark.parametrize(
    ("text", "kind", "length", "rank", "phoenix_rank"),
    [
        ("Jj Qs Kp At Ph", Combo.STRAIGHT, 5, 14, 10),
        ("2j 3s 4p 5t Ph", Combo.STRAIGHT, 5, 6, 6),
        ("Mj 2j 3s 4p 5t", Combo.STRAIGHT, 5, 5, 0),
        ("Mj 2j 3s Ph 5t", Combo.STRAIGHT, 5, 5, 4),
        ("5j 6j Ph 8j 9j", Combo.STRAIGHT, 5, 9, 7),
        ("5j 6j 7j 8j 9j", Combo.FLUSH_BOMB, 5, 9, 0),
        ("Mj 2j 3j 4j 5j", Combo.STRAIGHT, 5, 5, 0),
        ("7j 7s 7p 7t", Combo.FOUR_BOMB, 4, 7, 0),
        ("7j Ph", Combo.PAIR, 2, 7, 7),
        ("7j 7s Ph", Combo.TRIPLE, 3, 7, 7),
        ("3j 3s 4j Ph", Combo.STEPS, 4, 4, 4),
        ("3j 4s 4j Ph", Combo.STEPS, 4, 4, 3),
        ("5j 5s 6j 6s 7j 7s", Combo.STEPS, 6, 7, 0),
        ("3j 3s 3p 2j 2s", Combo.FULL_HOUSE, 5, 3, 0),
        ("Ph", Combo.SINGLE, 1, 1, 0),
        ("Dg", Combo.DOG, 1, 0, 0),
        ("Dr", Combo.SINGLE, 1, 15, 0),
        ("Mj", Combo.SINGLE, 1, 1, 0),
    ],
)
def test_parse_play_readings(
    text: str, kind: Combo, length: int, rank: int, phoenix_rank: int
) -> None:
    """Unambiguous sets read as exactly one play with the stated Phoenix rank."""
    play = parse_play(text)
    assert (play.combo, play.length, play.rank, play.phoenix_rank) == (
        kind,
        length,
        rank,
        phoenix_rank,
    )
    assert play.cards == parse_cards(_bare(text))
    assert play.is_bomb == (kind >= Combo.FOUR_BOMB)


def _bare(text: str) -> str:
    """Drops ``=R`` readings from a play's text."""
    return " ".join(t.partition("=")[0] for t in text.split())


@pytest.mark.parametrize(
    "text",
    [
        "Aj 2s 3p 4t 5j",  # A is high only
        "7j 7s 7p 7t Ph",  # four + Phoenix: no bomb, no full house
        "7j 7s 7p Ph",  # three + Phoenix: no 4-card play
        "5j 5s 7j 7s",  # steps need consecutive ranks
        "Dg 2j",
        "Dr Ph",
        "Mj Ph",
        "Mj 2j",
        "Dr Aj Kj Qj Jj",
        "2j 3s 4p 5t 6j Ph Ph",
        "2j 3s 4p 6t 7j",
        "Ph 2j 3s 4p",  # a 4-card straight
    ],
)
def test_not_a_combination(text: str) -> None:
    """Sets that form no play are rejected (``InvalidActionError``)."""
    with pytest.raises(InvalidActionError):
        parse_play(text)


def test_phoenix_single_follows_the_table() -> None:
    """A lone Phoenix reads as ½ above a single on the table, else 1½."""
    assert parse_play("Ph", top=parse_play("8j")).rank == 8
    assert parse_play("Ph", top=parse_play("Mj")).rank == 1
    assert parse_play("Ph", top=parse_play("8j 8s")).rank == 1
    assert parse_play("pass") == PASS and str(PASS) == "pass"
    assert parse_play("Ph").phoenix_rank == 0


# ---------------------------------------------------------------- brute-force differential

_SINGLE, _PAIR, _TRIPLE, _STEPS, _FULL, _STRAIGHT, _FOUR, _FLUSH = (
    int(Combo.SINGLE),
    int(Combo.PAIR),
    int(Combo.TRIPLE),
    int(Combo.STEPS),
    int(Combo.FULL_HOUSE),
    int(Combo.STRAIGHT),
    int(Combo.FOUR_BOMB),
    int(Combo.FLUSH_BOMB),
)


def _rank(c: int) -> int:
    """Rank of a normal card (2..14), computed from its id independently of the engine."""
    return (c - 2) // 4 + 2


def _suit(c: int) -> int:
    return (c - 2) % 4


def _classify(ranks: list[int]) -> tuple[int, int] | None:
    """Classifies a multiset of ranks (1 = Mah Jong) as (kind, rank), ignoring suits."""
    n = len(ranks)
    count = Counter(ranks)
    top = max(ranks)
    if len(count) == 1:
        if top == 1:
            return None
        return {2: (_PAIR, top), 3: (_TRIPLE, top), 4: (_FOUR, top)}.get(n)
    if n == 5 and sorted(count.values()) == [2, 3]:
        return (_FULL, next(r for r, k in count.items() if k == 3))
    consecutive = top - min(ranks) + 1 == len(count)
    if n >= 5 and consecutive and all(k == 1 for k in count.values()):
        return (_STRAIGHT, top)
    if n >= 4 and consecutive and min(ranks) >= 2 and all(k == 2 for k in count.values()):
        return (_STEPS, top)
    return None


def brute_readings(cards: Mask) -> set[tuple[int, int, int, int]]:
    """Every (kind, length, rank, cards) reading of exactly ``cards``, from the rule book."""
    ids = list(cards_of(cards))
    if len(ids) == 1:
        c = ids[0]
        special = {DOG: 0, MAHJONG: 1, PHOENIX: 1, DRAGON: 15}
        rank = special[c] if c in special else _rank(c)
        return {(int(Combo.DOG) if c == DOG else _SINGLE, 1, rank, cards)}
    if DOG in ids or DRAGON in ids:
        return set()
    naturals = [c for c in ids if c not in (MAHJONG, PHOENIX)]
    base = [1] * (MAHJONG in ids) + [_rank(c) for c in naturals]
    has_ph = PHOENIX in ids
    out = set()
    for ph in range(2, 15) if has_ph else [0]:
        ranks = [*base, ph] if ph else base
        found = _classify(ranks)
        if found is None:
            continue
        kind, rank = found
        if kind == _FOUR and has_ph:
            continue  # the Phoenix is never in a bomb
        suited = len({_suit(c) for c in naturals}) == 1 and len(naturals) == len(ids)
        if kind == _STRAIGHT and suited:
            kind = _FLUSH  # five or more suited in a row: only a bomb
        out.add((kind, len(ids), rank, cards))
    return out


def brute_combinations(hand: Mask) -> set[tuple[int, int, int, int]]:
    """Every play from every non-empty subset of ``hand``."""
    ids = list(cards_of(hand))
    out: set[tuple[int, int, int, int]] = set()
    for k in range(1, len(ids) + 1):
        for sub in subsets_of_size(ids, k):
            out |= brute_readings(mask_of(sub))
    return out


def test_brute_classifier_on_known_sets() -> None:
    """The brute-force classifier itself agrees with the rule cases it is used to check."""
    assert brute_readings(parse_cards("Ts Js Qs Ks Ph")) == {
        (_STRAIGHT, 5, 13, parse_cards("Ts Js Qs Ks Ph")),
        (_STRAIGHT, 5, 14, parse_cards("Ts Js Qs Ks Ph")),
    }
    assert brute_readings(parse_cards("5j 6j 7j 8j 9j")) == {
        (_FLUSH, 5, 9, parse_cards("5j 6j 7j 8j 9j"))
    }
    assert brute_readings(parse_cards("7j 7s 7p 7t Ph")) == set()
    assert brute_readings(parse_cards("Aj 2s 3p 4t 5j")) == set()
    assert {r[2] for r in brute_readings(parse_cards("9j 9s 7j 7s Ph"))} == {7, 9}
    assert len(brute_combinations(parse_cards("Ph 7j 7s"))) == 3 + 3 + 1


_SPECIALS = [DOG, MAHJONG, DRAGON, PHOENIX]


@st.composite
def small_hands(draw: st.DrawFn) -> Mask:
    """Hands of 1..9 cards: uniform, bunched in 5 ranks (pairs, steps, full houses), or
    mostly one suit in a run of 8 ranks (straights and straight flushes)."""
    shape = draw(st.sampled_from(["uniform", "bunched", "suited"]))
    if shape == "uniform":
        pool = list(range(56))
    elif shape == "bunched":
        lo = draw(st.integers(2, 10))
        pool = [card(r, s) for r in range(lo, lo + 5) for s in range(4)] + _SPECIALS
    else:
        lo, suit = draw(st.integers(2, 7)), draw(st.integers(0, 3))
        pool = [card(r, suit) for r in range(lo, lo + 8)]
        pool += [card(lo + 2, (suit + 1) % 4), card(lo + 5, (suit + 2) % 4), MAHJONG, PHOENIX]
    return mask_of(draw(st.sets(st.sampled_from(pool), min_size=1, max_size=9)))


@pytest.mark.slow
@given(small_hands())
@settings(max_examples=300, deadline=None)
def test_combinations_match_brute_force(hand: Mask) -> None:
    """``combinations(hand)`` is exactly the brute-force set, sorted, without repeats."""
    got = combinations(hand)
    assert list(got) == sorted(got)
    assert len(set(got)) == len(got)
    assert {tuple(p) for p in got} == brute_combinations(hand)
    for p in got:
        assert readings(p.cards).count(p) == 1
        assert parse_play(str(p)) == p  # the text names the Phoenix reading where needed


def test_combinations_of_fixed_hands() -> None:
    """Brute force also agrees on a few hand-picked hands rich in Phoenix readings."""
    for text in [
        "Ph 2j 2s 3j 3s 4j",
        "Mj 2j 3j 4j 5j Ph 6s",
        "Ph Tj Js Qp Kt Aj",
        "Ph 7j 7s 7p 7t 8j 8s",
        "Dg Mj Dr Ph 5j 5s 5p",
    ]:
        hand = parse_cards(text)
        assert {tuple(p) for p in combinations(hand)} == brute_combinations(hand), text
