"""Builds a mid-hand ``Match`` from a short description, for tests and compliance checks.

``position(["Mj 2j", "Kp", "", "Ph"], trick=[(3, "9s")], to_act=0, out=[2])`` is the play
phase with those hands, a 9 on the table and seat 0 to act. Every card not in a hand or on the
table lies in a won pile (seat 0's unless ``won`` places it), so all 56 cards are accounted for.
The result is an ordinary ``Match``: ``legal_actions`` and ``apply`` play on from there to the
end of the match. It has no action history, so it cannot be replayed from its deal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from arena.rules.actions import Exchange, Phase
from arena.rules.cards import (
    DOG_BIT,
    FULL_DECK,
    MAHJONG_BIT,
    RANK_CHARS,
    RANK_MASKS,
    Mask,
    card_name,
    cards_of,
    format_cards,
    mask_of,
    parse_card,
    parse_cards,
    points_of,
)
from arena.rules.combos import DOG_K, Play, beats, parse_play, parse_rank, readings
from arena.rules.events import Event, EventKind
from arena.rules.state import (
    AFTER_PLAY,
    BEFORE_COLLECT,
    Match,
    Options,
    team_of,
)

__all__ = ["format_position", "parse_position", "position"]


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

    return Match.from_position(
        masks,
        phase=Phase.PLAY,
        seat=to_act,
        turn=to_act,
        options=opts,
        scores=scores,
        grand=[s in grand for s in range(4)],
        tichu=[s in tichu for s in range(4)],
        trick=table,
        passes=len(passed),
        wish=wish,
        won=piles,
        out=out_list,
        events=events,
    )


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


# ---------------------------------------------------------------------- the position notation

_PHASES: dict[Phase, str] = {
    Phase.GRAND_TICHU: "grand",
    Phase.EXCHANGE: "exchange",
    Phase.PLAY: "play",
    Phase.BOMB_WINDOW: "bomb",
    Phase.WISH: "wish",
    Phase.DRAGON_GIFT: "gift",
}
_PHASE_OF = {name: phase for phase, name in _PHASES.items()}
_RESUMES = {AFTER_PLAY: "a", BEFORE_COLLECT: "c"}
_RESUME_OF = {code: resume for resume, code in _RESUMES.items()}
# Event kind -> its letter; a play out of turn (``value`` 1, a bomb window) is written "!".
_EVENT_CODES: dict[int, str] = {
    EventKind.HAND_START: "H",
    EventKind.GRAND_TICHU: "G",
    EventKind.TICHU: "T",
    EventKind.EXCHANGE: "X",
    EventKind.PLAY: ":",
    EventKind.PASS: "-",
    EventKind.WISH: "w",
    EventKind.WISH_FULFILLED: "f",
    EventKind.TRICK_WON: "t",
    EventKind.DRAGON_GIFT: "d",
    EventKind.OUT: "o",
    EventKind.HAND_END: "E",
}
_EVENT_OF = {code: kind for kind, code in _EVENT_CODES.items()}
_BOMB_CODE = "!"


def format_position(match: Match) -> str:
    """The match's position in the notation of docs/rules.md ("Positions"): one line, eleven
    fields, everything ``parse_position`` needs to rebuild it (every seat's view included)."""
    m = match
    if m.over:
        raise ValueError("the match is over: there is no position to write")
    o = m.options
    opts = f"{o.target_score}{f'h{o.hands}' if o.hands else ''}"
    opts += ("g" if o.grand_tichu else "") + ("t" if o.tournament else "")
    game = f"{m.seed}:{m.hand_no}:{m.scores[0]},{m.scores[1]}:{m.vp[0]},{m.vp[1]}"
    decision = f"{_PHASES[m.phase]}:{_seat(m.seat)}:{_seat(m.turn)}"
    if m.phase is Phase.BOMB_WINDOW:
        decision += ":" + "".join(map(str, m.window)) + _RESUMES[m.resume]
    if m.phase is Phase.GRAND_TICHU:
        undealt = [mask_of(d) & ~h for d, h in zip(m.dealt, m.hands, strict=True)]
        hands = "/".join(f"{_cards(h)}+{_cards(u)}" for h, u in zip(m.hands, undealt, strict=True))
    else:
        hands = "/".join(_cards(h) for h in m.hands)
    trick = ",".join(f"{s}:{_play(p)}" for s, p in m.trick) or "-"
    if m.passes:
        trick += f"+{m.passes}"
    calls = "".join("G" if g else "T" if t else "-" for g, t in zip(m.grand, m.tichu, strict=True))
    exchanges = "/".join("".join(map(card_name, e)) if e else "-" for e in m.exchanges)
    return " ".join(
        (
            opts,
            game,
            decision,
            hands,
            "/".join(_cards(w) for w in m.won),
            trick,
            calls,
            exchanges,
            RANK_CHARS[m.wish - 2] if m.wish else "-",
            "".join(map(str, m.out)) or "-",
            ",".join(_event(e) for e in m.events),
        )
    )


def parse_position(text: str) -> Match:
    """Rebuilds the match ``format_position`` wrote (``Match.from_position``); the hands after
    the current one are dealt from the seed. Raises ``ValueError`` on a malformed position."""
    fields = text.split()
    if len(fields) != 11:
        raise ValueError(f"a position has 11 fields separated by spaces, not {len(fields)}")
    opts, game, decision, hands, won, trick, calls, exchanges, wish, out, events = fields
    try:
        return _parse(opts, game, decision, hands, won, trick, calls, exchanges, wish, out, events)
    except (KeyError, IndexError) as e:
        raise ValueError(f"malformed position {text!r}: {e!r}") from None


def _parse(
    opts: str,
    game: str,
    decision: str,
    hands: str,
    won: str,
    trick: str,
    calls: str,
    exchanges: str,
    wish: str,
    out: str,
    events: str,
) -> Match:
    head = re.fullmatch(r"(\d+)(?:h(\d+))?(g?)(t?)", opts)
    if head is None:
        raise ValueError(f"options {opts!r}: write e.g. 1000g or 1000h9t")
    options = Options(int(head[1]), int(head[2] or 0), bool(head[3]), bool(head[4]))
    seed, hand_no, scores, vp = game.split(":")
    parts = decision.split(":")
    phase = _PHASE_OF[parts[0]]
    window: list[int] = []
    resume = AFTER_PLAY
    if phase is Phase.BOMB_WINDOW:
        window = [int(c) for c in parts[3][:-1]]
        resume = _RESUME_OF[parts[3][-1]]
    hand_masks, undealt = [], []
    for h in _four(hands, "hands"):
        held, _, rest = h.partition("+")
        hand_masks.append(_parse_cards(held))
        undealt.append(_parse_cards(rest))
    body, _, passes = trick.partition("+")
    table: list[tuple[int, Play]] = []
    for item in body.split(",") if body != "-" else ():
        top = table[-1][1] if table else None
        seat, _, play = item.partition(":")
        table.append((_parse_seat(seat), _parse_play(play, top)))
    if len(calls) != 4 or set(calls) - set("GT-"):
        raise ValueError(f"calls {calls!r}: four of G, T or -")
    swaps: list[Exchange | None] = []
    for e in _four(exchanges, "exchanges"):
        cards = _parse_card_list(e)
        if len(cards) not in (0, 3):
            raise ValueError(f"an exchange is three cards, not {e!r}")
        swaps.append(Exchange(*cards) if cards else None)
    return Match.from_position(
        hand_masks,
        phase=phase,
        seat=_parse_seat(parts[1]),
        turn=_parse_seat(parts[2]),
        options=options,
        seed=int(seed),
        hand_no=int(hand_no),
        scores=_pair(scores),
        vp=_pair(vp),
        undealt=undealt,
        grand=[c == "G" for c in calls],
        tichu=[c == "T" for c in calls],
        exchanges=swaps,
        trick=table,
        passes=int(passes or 0),
        window=window,
        resume=resume,
        wish=0 if wish == "-" else parse_rank(wish),
        won=[_parse_cards(w) for w in _four(won, "won piles")],
        out=[] if out == "-" else [int(c) for c in out],
        events=_parse_events(events),
    )


def _seat(s: int) -> str:
    return "-" if s < 0 else str(s)


def _parse_seat(text: str) -> int:
    if text == "-":
        return -1
    if text not in ("0", "1", "2", "3"):
        raise ValueError(f"{text!r} is not a seat 0..3")
    return int(text)


def _pair(text: str) -> tuple[int, int]:
    a, b = text.split(",")
    return (int(a), int(b))


def _four(text: str, what: str) -> list[str]:
    items = text.split("/")
    if len(items) != 4:
        raise ValueError(f"{what} {text!r}: four entries separated by /")
    return items


def _cards(mask: Mask) -> str:
    """A card set as card names without spaces (every name has two letters); - when empty."""
    return "".join(card_name(c) for c in cards_of(mask)) or "-"


def _parse_card_list(text: str) -> list[int]:
    if text == "-":
        return []
    if len(text) % 2:
        raise ValueError(f"{text!r}: cards are two letters each, e.g. Mj2jTsPh")
    return [parse_card(text[i : i + 2]) for i in range(0, len(text), 2)]


def _parse_cards(text: str) -> Mask:
    cards = _parse_card_list(text)
    mask = mask_of(cards)
    if mask.bit_count() != len(cards):
        raise ValueError(f"{text!r} names a card twice")
    return mask


def _play(play: Play) -> str:
    """A play in the card notation without spaces, with the Phoenix's reading (``Ph=9``)."""
    return str(play).replace(" ", "")


def _parse_play(text: str, top: Play | None) -> Play:
    if "=" in text:  # Ph=9: the Phoenix and its reading
        cards, _, rank = text.partition("=")
        return parse_play(f"{' '.join(_names(cards[:-2]))} Ph={rank}", top)
    return parse_play(" ".join(_names(text)), top)


def _names(text: str) -> list[str]:
    return [card_name(c) for c in _parse_card_list(text)] if text else []


def _event(e: Event) -> str:
    """One event: the seat (- for none), the kind's letter, then the play or the value."""
    code = _BOMB_CODE if e.kind == EventKind.PLAY and e.value else _EVENT_CODES[e.kind]
    if e.play is not None:
        return f"{_seat(e.seat)}{code}{_play(e.play)}"
    return f"{_seat(e.seat)}{code}{e.value or ''}"


def _parse_events(text: str) -> list[Event]:
    """The events of a position; a trick's end gets the cards played since the last one
    (the notation leaves them out: they are the plays before it) and their points."""
    events = []
    top: Play | None = None
    trick = 0  # the cards of the running trick
    for token in text.split(","):
        seat, code, rest = _parse_seat(token[0]), token[1], token[2:]
        if code in (":", _BOMB_CODE):
            play = _parse_play(rest, top)
            top = None if play.kind == DOG_K else play
            trick |= play.cards
            events.append(Event(EventKind.PLAY, seat, play, int(code == _BOMB_CODE)))
            continue
        kind = _EVENT_OF[code]
        if kind in (EventKind.TRICK_WON, EventKind.DRAGON_GIFT):
            events.append(Event(kind, seat, None, int(rest or 0), points_of(trick), trick))
            top, trick = None, 0
            continue
        events.append(Event(kind, seat, None, int(rest or 0)))
    return events
