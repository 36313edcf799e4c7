"""Builds a mid-hand ``Match`` from a short description, for tests and compliance checks.

``position(["Mj 2j", "Kp", "", "Ph"], trick=[(3, "9s")], to_act=0, out=[2])`` is the play
phase with those hands, a 9 on the table and seat 0 to act. Every card not in a hand or on the
table lies in a won pile (seat 0's unless ``won`` places it), so all 56 cards are accounted for.
The result is an ordinary ``Match``: ``legal_actions`` and ``apply`` play on from there to the
end of the match. It has no action history, so it cannot be replayed from its deal.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.rules.actions import Phase
from arena.rules.cards import (
    DOG_BIT,
    FULL_DECK,
    MAHJONG_BIT,
    RANK_MASKS,
    Mask,
    cards_of,
    format_cards,
    parse_cards,
)
from arena.rules.combos import Play, beats, parse_play, readings
from arena.rules.events import Event, EventKind
from arena.rules.state import Deal, Match, Options, team_of

__all__ = ["position"]


def position(
    hands: Sequence[str | Mask],
    *,
    to_act: int,
    trick: Sequence[tuple[int, str | Play]] = (),
    wish: int = 0,
    out: Sequence[int] = (),
    tichu: Sequence[int] = (),
    grand: Sequence[int] = (),
    won: Sequence[str | Mask] = (),
    scores: tuple[int, int] = (0, 0),
    options: Options | None = None,
) -> Match:
    """Returns a match in the play phase of its first hand, with ``to_act`` to play or lead.

    * ``hands``: the four hands, in card notation or as masks; a seat with no cards must be
      listed in ``out`` (in the order the seats went out).
    * ``trick``: the plays on the table, lowest first, as ``(seat, play)``; each must beat
      the one below. The seats between the last player and ``to_act`` that hold cards have
      passed since. Empty: ``to_act`` leads.
    * ``wish``: the active Mah Jong wish (2..14), 0 for none.
    * ``tichu``, ``grand``: the seats that called Tichu or Grand Tichu.
    * ``won``: won piles by seat (missing entries empty); every other card goes to seat 0's.
    * ``scores``: the teams' totals before this hand.

    Raises ``ValueError`` (``InvalidActionError`` for bad notation) on any impossible position.
    """
    if len(hands) != 4:
        raise ValueError(f"give four hands, not {len(hands)}")
    if len(won) > 4:
        raise ValueError(f"give at most four won piles, not {len(won)}")
    masks = [_mask(h, f"hand {s}") for s, h in enumerate(hands)]
    piles = [_mask(w, f"won pile {s}") for s, w in enumerate(won)] + [0] * (4 - len(won))
    seen = 0
    for s in range(4):
        _claim(seen, masks[s], f"hand {s}")
        seen |= masks[s]
    for s in range(4):
        _claim(seen, piles[s], f"won pile {s}")
        seen |= piles[s]

    # The trick: each play parsed against the one below and checked to beat it.
    table: list[tuple[int, Play]] = []
    on_table = 0
    for s, p in trick:
        _check_seat(s, "a trick play")
        top = table[-1][1] if table else None
        play = parse_play(p, top) if isinstance(p, str) else p
        if play not in readings(play.cards, top):
            raise ValueError(f"{p!r} is not a play")
        if play.cards & DOG_BIT:
            raise ValueError("the Dog is never on the table: it hands the lead on at once")
        if top is not None and not beats(play, top):
            raise ValueError(f"{play.describe()} (seat {s}) does not beat {top.describe()}")
        _claim(seen | on_table, play.cards, f"the play {play} of seat {s}")
        on_table |= play.cards
        table.append((s, play))
    piles[0] |= FULL_DECK & ~(seen | on_table)

    # Seats: who is out, who acts, who called.
    out_list = list(out)
    for s in out_list:
        _check_seat(s, "an out seat")
        if masks[s]:
            raise ValueError(f"seat {s} is listed as out but holds {format_cards(masks[s])}")
    if len(set(out_list)) != len(out_list):
        raise ValueError(f"a seat is out twice in {out_list}")
    for s in range(4):
        if not masks[s] and s not in out_list:
            raise ValueError(f"seat {s} has no cards: list it in out")
    if len(out_list) >= 3 or (len(out_list) == 2 and team_of(out_list[0]) == team_of(out_list[1])):
        raise ValueError(f"the hand is over when seats {out_list} are out")
    _check_seat(to_act, "to_act")
    if not masks[to_act]:
        raise ValueError(f"seat {to_act} is to act but has no cards")
    owner = table[-1][0] if table else -1
    if to_act == owner:
        raise ValueError(f"seat {to_act} made the last play: the others would all have passed")
    for s in range(4):
        own = masks[s] | sum(p.cards for t, p in table if t == s)
        if own.bit_count() > 14:
            raise ValueError(f"seat {s} holds and played {own.bit_count()} cards, over 14")
    opts = options or Options()
    for s in [*tichu, *grand]:
        _check_seat(s, "a caller")
    if set(tichu) & set(grand):
        raise ValueError(f"seats {sorted(set(tichu) & set(grand))} called Tichu and Grand Tichu")
    if grand and not opts.grand_tichu:
        raise ValueError("Grand Tichu is off in these options")

    # The wish: the Mah Jong has been played and no card of the wished rank since.
    mj_at = next((i for i, (_, p) in enumerate(table) if p.cards & MAHJONG_BIT), -1)
    if wish:
        if not 2 <= wish <= 14:
            raise ValueError(f"a wish is a rank 2..14, not {wish}")
        if any(m & MAHJONG_BIT for m in masks):
            raise ValueError("a wish needs the Mah Jong played, but a hand holds it")
        if any(p.cards & RANK_MASKS[wish] for _, p in table[mj_at + 1 :]):
            raise ValueError(f"a card of the wished rank {wish} on the table fulfilled it")

    # Events: what the seats have seen, as far as the position tells.
    events = [Event(EventKind.HAND_START, -1, None, 0)]
    # Grand Tichu calls show in ``grand``: a position's events hold no reveal.
    events.append(Event(EventKind.EXCHANGE, -1))
    events += [Event(EventKind.TICHU, s) for s in sorted(set(tichu))]
    last_play = {s: i for i, (s, _) in enumerate(table)}
    early = [s for s in out_list if s not in last_play]
    events += [Event(EventKind.OUT, s, None, k) for k, s in enumerate(early, 1)]
    if wish and mj_at < 0:
        events.append(Event(EventKind.WISH, -1, None, wish))  # made before this trick
    places = early.copy()
    for i, (s, play) in enumerate(table):
        events.append(Event(EventKind.PLAY, s, play, 0))
        if i == mj_at:
            events.append(Event(EventKind.WISH, s, None, wish))
        if s in out_list and last_play[s] == i:
            places.append(s)
            events.append(Event(EventKind.OUT, s, None, len(places)))
    if places != out_list:
        raise ValueError(f"out order {out_list} contradicts the trick (it implies {places})")
    passed = _between(owner, to_act, masks) if table else []
    events += [Event(EventKind.PASS, s) for s in passed]

    dealt = _plausible_deal(masks, piles, table)
    m = Match(opts, deals=[dealt])
    m.phase = Phase.PLAY
    m.seat = m.turn = to_act
    m.hands = masks
    m.grand = [s in grand for s in range(4)]
    m.tichu = [s in tichu for s in range(4)]
    m.trick = table
    m.trick_cards = on_table
    m.owner = owner
    m.passes = len(passed)
    m.lead = not table
    m.wish = wish
    m.won = piles
    m.out = out_list
    m.events = events
    m.scores = [scores[0], scores[1]]
    m.clear_caches()  # the caches of the hands dealt are all invalid now
    return m


def _mask(cards: str | Mask, what: str) -> Mask:
    if isinstance(cards, str):
        return parse_cards(cards)
    if not 0 <= cards <= FULL_DECK:
        raise ValueError(f"{what}: {cards!r} is not a card mask")
    return cards


def _claim(seen: Mask, cards: Mask, what: str) -> None:
    if seen & cards:
        raise ValueError(f"{format_cards(seen & cards)} in {what} already placed elsewhere")


def _check_seat(s: int, what: str) -> None:
    if not (type(s) is int and 0 <= s < 4):
        raise ValueError(f"{what}: seat {s!r} is not 0..3")


def _between(owner: int, to_act: int, hands: list[Mask]) -> list[int]:
    """The seats with cards after ``owner`` and before ``to_act``: they passed."""
    seats = []
    s = (owner + 1) & 3
    while s != to_act:
        if hands[s]:
            seats.append(s)
        s = (s + 1) & 3
    return seats


def _plausible_deal(hands: list[Mask], piles: list[Mask], table: list[tuple[int, Play]]) -> Deal:
    """A deal that could lead here: each hand and its plays, filled up from the won piles."""
    own = [hands[s] | sum(p.cards for t, p in table if t == s) for s in range(4)]
    spare = list(cards_of(piles[0] | piles[1] | piles[2] | piles[3]))
    deal = []
    for s in range(4):
        need = 14 - own[s].bit_count()
        deal.append((*cards_of(own[s]), *spare[:need]))
        del spare[:need]
    return (deal[0], deal[1], deal[2], deal[3])
