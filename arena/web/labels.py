"""Plays named for people: one unambiguous phrase per combination.

``Play.describe`` is the engine's reading (``full house of 6s 6s 6p 6t Qs Qt``: sixes, or the
six of swords?). The table says ``full house: three Sixes and two Queens`` instead, names the
Phoenix's value (``Phoenix as 9``) and the bombs as bombs.
"""

from __future__ import annotations

from arena.rules import CARD_RANKS, CARD_SUITS, DOG, DRAGON, MAHJONG, PHOENIX, Play, cards_of
from arena.rules.cards import SUIT_NAMES
from arena.rules.combos import Combo, parse_play, rank_name
from arena.rules.errors import ArenaError

__all__ = [
    "dog_note",
    "fulfilled_note",
    "gift_note",
    "out_note",
    "pass_note",
    "play_label",
    "play_note",
    "play_text_label",
    "rank_with_article",
    "rank_word",
    "ranks",
    "says",
    "tichu_note",
    "trick_note",
    "wish_note",
]

_SINGLES = {DOG: "the Dog", MAHJONG: "the Mah Jong", DRAGON: "the Dragon"}


def rank_word(rank: int) -> str:
    """A rank as people write it: ``2``..``10``, ``J``, ``Q``, ``K``, ``A``."""
    return "10" if rank == 10 else rank_name(rank)


_PLURALS = [
    "Twos",
    "Threes",
    "Fours",
    "Fives",
    "Sixes",
    "Sevens",
    "Eights",
    "Nines",
    "Tens",
    "Jacks",
    "Queens",
    "Kings",
    "Aces",
]


def ranks(rank: int) -> str:
    """A rank in the plural, in words: ``Sixes``, ``Queens`` (``6s`` would read as a card)."""
    return _PLURALS[rank - 2] if 2 <= rank <= 14 else rank_word(rank)


def play_label(play: Play) -> str:
    """Names a play without ambiguity, e.g. ``full house: three Sixes and two Queens``."""
    kind = play.kind
    if kind == Combo.PASS:
        return "pass"
    cards = list(cards_of(play.cards))
    if kind == Combo.DOG:
        return "the Dog"
    if kind == Combo.SINGLE:
        c = cards[0]
        if c == PHOENIX:
            return "the Phoenix"
        return _SINGLES.get(c, f"single {rank_word(CARD_RANKS[c])}")
    ph = play.phoenix_rank
    with_ph = f", Phoenix as {rank_word(ph)}" if ph else ""
    if kind == Combo.PAIR:
        return f"pair of {ranks(play.rank)}{with_ph}"
    if kind == Combo.TRIPLE:
        return f"three {ranks(play.rank)}{with_ph}"
    if kind == Combo.FULL_HOUSE:
        counts: dict[int, int] = {}
        for c in cards:
            r = ph if c == PHOENIX else CARD_RANKS[c]
            counts[r] = counts.get(r, 0) + 1
        pair = next(r for r, n in counts.items() if n == 2)
        return f"full house: three {ranks(play.rank)} and two {ranks(pair)}{with_ph}"
    low_width = 2 if kind == Combo.STEPS else 1
    low = play.rank - play.length // low_width + 1
    span = f"{rank_word(low)} to {rank_word(play.rank)}"
    if kind == Combo.STEPS:
        return f"steps of {play.length // 2} pairs, {span}{with_ph}"
    if kind == Combo.STRAIGHT:
        return f"straight of {play.length}, {span}{with_ph}"
    if kind == Combo.FOUR_BOMB:
        return f"bomb: four {ranks(play.rank)}"
    suit = SUIT_NAMES[CARD_SUITS[cards[0]]]
    return f"bomb: straight flush of {play.length} in {suit}, {span}"


def play_text_label(text: str) -> str:
    """The label of a play written in the notation (``Ts Js Ph=Q``); the text if unreadable."""
    if text in ("", "pass"):
        return "pass"
    try:
        return play_label(parse_play(text, None))
    except ArenaError:
        return text


# ---------------------------------------------------------------------------- what happened

_PLACES = ("first", "second", "third", "fourth")


def says(name: str, verb: str, plain: str) -> str:
    """``name`` with a verb in the right person: ``Ann plays``, but ``You play``."""
    return f"{name} {plain if name.casefold() == 'you' else verb}"


def rank_with_article(rank: int) -> str:
    """A rank with its article as read aloud: ``a 7``, ``an 8``, ``an A``."""
    word = rank_word(rank)
    return f"an {word}" if word in ("8", "A") else f"a {word}"


def play_note(name: str, label: str, out_of_turn: bool = False) -> str:
    """A play said aloud: ``Ann plays pair of Eights``, ``Bob bombs out of turn: four Twos``."""
    if label.startswith("bomb: "):
        how = " out of turn" if out_of_turn else ""
        return f"{says(name, 'bombs', 'bomb')}{how}: {label.removeprefix('bomb: ')}"
    if label == "the Dog":
        return f"{says(name, 'leads', 'lead')} the Dog"
    return f"{says(name, 'plays', 'play')} {label}"


def pass_note(name: str) -> str:
    """A pass said aloud."""
    return says(name, "passes", "pass")


def tichu_note(name: str) -> str:
    """A Tichu call said aloud."""
    return f"{says(name, 'calls', 'call')} Tichu"


def wish_note(name: str, rank: int) -> str:
    """The Mah Jong's wish said aloud: ``Ann wishes for an 8``, or no wish."""
    if not rank:
        return f"{says(name, 'makes', 'make')} no wish"
    return f"{says(name, 'wishes', 'wish')} for {rank_with_article(rank)}"


def fulfilled_note(name: str, rank: int) -> str:
    """The wish fulfilled, said aloud."""
    return f"{says(name, 'fulfils', 'fulfil')} the wish ({rank_word(rank)})"


def trick_note(name: str, points: int) -> str:
    """A trick taken, said aloud."""
    return f"{says(name, 'takes', 'take')} the trick: {points} point{'' if points == 1 else 's'}"


def dog_note(lead: str) -> str:
    """The Dog's "trick": it only passes the lead (to the partner, or the next seat in)."""
    return f"the Dog passes the lead to {lead}" if lead else "the Dog passes the lead"


def gift_note(name: str, points: int, to: str) -> str:
    """The Dragon's trick given away, said aloud."""
    return f"{says(name, 'gives', 'give')} the Dragon trick ({points} points) to {to}"


def out_note(name: str, place: int) -> str:
    """A seat out of cards: ``Ann is out (first)``, ``You are out (third)``."""
    verb = "are" if name.casefold() == "you" else "is"
    word = _PLACES[place - 1] if 1 <= place <= 4 else str(place)
    return f"{name} {verb} out ({word})"
