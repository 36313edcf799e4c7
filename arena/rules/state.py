"""The match state machine: deal, calls, exchange, tricks, bomb windows, scoring.

``Match`` is mutable for speed but ``apply`` is atomic: it validates first and raises
``IllegalActionError`` without touching the state, so a referee can re-ask. ``copy()`` is
cheap (a few list copies), which is what search bots use to simulate.

Simultaneous decisions (Grand Tichu, the exchange) are asked seat by seat, 0 to 3, and
revealed together when the last seat has answered. Out-of-turn bombs are asked in bomb
windows: after every play, the seats other than the one due to act that hold a bomb beating
the table are asked in seat order starting after the player; after the pass that would end a
trick, every seat holding such a bomb is asked in seat order starting after the passer. The
first seat to bomb plays; a new window follows that bomb.
"""

from __future__ import annotations

import hashlib
import random
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

from arena.rules.actions import (
    NO_WISH,
    WISHES,
    Action,
    CallTichu,
    Exchange,
    Gift,
    GrandTichu,
    Phase,
    Wish,
)
from arena.rules.cards import (
    DOG_BIT,
    DRAGON_BIT,
    FULL_DECK,
    MAHJONG_BIT,
    RANK_MASKS,
    Mask,
    cards_of,
    format_cards,
    points_of,
)
from arena.rules.combos import (
    DOG_K,
    FOUR_BOMB,
    PASS,
    PASS_K,
    SINGLE,
    Play,
    beats,
    combinations,
    may_hold_bomb,
    readings,
)
from arena.rules.errors import IllegalActionError
from arena.rules.events import Event, EventKind, called_mask
from arena.rules.scoring import score_hand, team_of

_new = tuple.__new__


@dataclass(frozen=True)
class Options:
    """Rules options: match length, Grand Tichu, tournament (``turnier``) scoring."""

    target_score: int = 1000
    hands: int = 0
    grand_tichu: bool = True
    tournament: bool = False

    def __post_init__(self) -> None:
        if self.target_score <= 0:
            raise ValueError(f"target_score must be positive, not {self.target_score}")
        if self.hands < 0:
            raise ValueError(f"hands must be 0 (play to the target) or more, not {self.hands}")

    @classmethod
    def turnier(cls) -> Options:
        """The tournament mode: 9 hands, victory points, no Grand Tichu."""
        return cls(hands=9, grand_tichu=False, tournament=True)


@dataclass(frozen=True)
class HandResult:
    """The outcome of one hand, per team (index 0 = team A, 1 = team B)."""

    hand: int
    out: tuple[int, ...]
    double_victory: int  # the winning team, or -1
    card_points: tuple[int, int]
    bets: tuple[int, int]
    grand: tuple[bool, bool, bool, bool]
    tichu: tuple[bool, bool, bool, bool]
    victory_points: tuple[int, int]

    @property
    def score(self) -> tuple[int, int]:
        """Card points plus bets, per team."""
        return (self.card_points[0] + self.bets[0], self.card_points[1] + self.bets[1])


Deal = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def deal_from_seed(seed: int, hand: int) -> Deal:
    """Shuffles the deck for hand ``hand`` of a match seeded ``seed`` (stable everywhere)."""
    deck = list(range(56))
    random.Random(f"tichu/{seed}/{hand}").shuffle(deck)
    return (tuple(deck[0:14]), tuple(deck[14:28]), tuple(deck[28:42]), tuple(deck[42:56]))


def bot_seed(match_seed: int, seat: int) -> int:
    """The seed of the bot at ``seat`` in a match seeded ``match_seed``, when none is given.

    The same match seed gives every seat the same seed every time, and the four seats
    different ones (a 64-bit BLAKE2b digest, stable across Python versions).
    """
    digest = hashlib.blake2b(f"seat/{match_seed}/{seat}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def check_deal(deal: Sequence[Sequence[int]]) -> Deal:
    """Validates an explicit deal: four hands of 14 distinct cards covering the deck."""
    if len(deal) != 4 or any(len(h) != 14 for h in deal):
        raise ValueError("a deal is four hands of 14 cards")
    seen = 0
    for h in deal:
        for c in h:
            if not 0 <= c < 56 or seen >> c & 1:
                raise ValueError(f"card {c} is repeated or unknown in the deal")
            seen |= 1 << c
    t = tuple(tuple(h) for h in deal)
    return (t[0], t[1], t[2], t[3])


_ANSWER_TYPES: dict[Phase, type] = {
    Phase.GRAND_TICHU: GrandTichu,
    Phase.PLAY: Play,
    Phase.BOMB_WINDOW: Play,
    Phase.WISH: Wish,
    Phase.DRAGON_GIFT: Gift,
}
_GRAND_ANSWERS = (GrandTichu(False), GrandTichu(True))
_BOMB_KINDS = FOUR_BOMB
_FIRST_BOMB = (FOUR_BOMB,)
#: ``Match.resume`` of a bomb window after a play: if nobody bombs, ``Match.turn`` acts.
AFTER_PLAY = 0
#: ``Match.resume`` of a bomb window after the pass that would end the trick: if nobody
#: bombs, the trick is collected.
BEFORE_COLLECT = 1


def turn_plays(
    combos: tuple[Play, ...], hand: Mask, top: Play | None, wish: int
) -> tuple[Play, ...]:
    """The legal answers in turn of a seat holding ``hand`` (``combos``: its
    ``combinations``) with ``top`` on the table (``None``: it leads) and ``wish`` active.

    The one home of the turn's rules (what beats what, the Phoenix on a single, the wish's
    obligation), shared by ``Match`` and fast simulators.
    """
    wished = RANK_MASKS[wish] & hand if wish else 0
    if top is None:
        if wished:
            return tuple(p for p in combos if p.cards & wished)
        return combos
    tk = top.kind
    # ``combos`` is sorted by (kind, length, rank, cards): what beats ``top`` is a slice.
    bombs = combos[bisect_left(combos, _FIRST_BOMB) :]
    if tk < _BOMB_KINDS:
        tl = top.length
        tr = top.rank
        same = combos[bisect_left(combos, (tk, tl, tr + 1)) : bisect_left(combos, (tk, tl + 1))]
        if tk == SINGLE and tr < 15 and hand >> 55:
            plays = (PASS, _new(Play, (SINGLE, 1, tr, 1 << 55)), *same, *bombs)
        else:
            plays = (PASS, *same, *bombs)
    else:
        plays = (PASS, *(p for p in bombs if beats(p, top)))
    if wished:
        forced = tuple(p for p in plays if p.cards & wished)
        if forced:
            return forced
    return plays


def next_active(seat: int, holdings: Sequence[int]) -> int:
    """The first seat after ``seat`` that still holds cards (``holdings``: masks or card
    counts by seat), or -1 when no other seat does."""
    for k in (1, 2, 3):
        t = (seat + k) & 3
        if holdings[t]:
            return t
    return -1


class Match:
    """A whole match: hands are dealt until the target (or the set number of hands)."""

    __slots__ = (
        "_bombish",
        "_combos",
        "_legal",
        "actions",
        "deals",
        "dealt",
        "events",
        "exchanges",
        "grand",
        "hand_no",
        "hand_results",
        "hands",
        "lead",
        "log",
        "options",
        "out",
        "owner",
        "passes",
        "phase",
        "resume",
        "scores",
        "seat",
        "seed",
        "tichu",
        "trick",
        "trick_cards",
        "turn",
        "vp",
        "window",
        "wish",
        "won",
    )

    options: Options
    seed: int
    deals: tuple[Deal, ...]
    hand_no: int
    scores: list[int]
    vp: list[int]
    hand_results: list[HandResult]
    phase: Phase
    seat: int
    hands: list[Mask]
    dealt: Deal
    grand: list[bool]
    tichu: list[bool]
    exchanges: list[Exchange | None]
    trick: list[tuple[int, Play]]
    trick_cards: Mask
    owner: int
    passes: int
    lead: bool
    turn: int
    window: list[int]
    resume: int
    wish: int
    won: list[Mask]
    out: list[int]
    events: list[Event]
    log: list[tuple[Event, ...]]
    actions: list[tuple[int, Action]]
    _combos: list[tuple[Play, ...] | None]
    _bombish: list[bool | None]
    _legal: tuple[Action, ...] | None

    def __init__(
        self,
        options: Options | None = None,
        seed: int = 0,
        deals: Sequence[Sequence[Sequence[int]]] = (),
    ) -> None:
        self.options = options or Options()
        self.seed = seed
        self.deals = tuple(check_deal(d) for d in deals)
        self.hand_no = 0
        self.scores = [0, 0]
        self.vp = [0, 0]
        self.hand_results = []
        self.actions = []
        self.log = []
        self._start_hand()

    @classmethod
    def from_position(
        cls,
        hands: Sequence[Mask],
        *,
        phase: Phase,
        seat: int,
        turn: int = -1,
        options: Options | None = None,
        seed: int = 0,
        hand_no: int = 0,
        scores: Sequence[int] = (0, 0),
        vp: Sequence[int] = (0, 0),
        undealt: Sequence[Mask] = (0, 0, 0, 0),
        grand: Sequence[bool] = (False, False, False, False),
        tichu: Sequence[bool] = (False, False, False, False),
        exchanges: Sequence[Exchange | None] = (None, None, None, None),
        trick: Sequence[tuple[int, Play]] = (),
        passes: int = 0,
        window: Sequence[int] = (),
        resume: int = AFTER_PLAY,
        wish: int = 0,
        won: Sequence[Mask] = (0, 0, 0, 0),
        out: Sequence[int] = (),
        events: Sequence[Event] | None = None,
        dealt: Deal | None = None,
    ) -> Match:
        """A match in the middle of hand ``hand_no``: the one way to build a position.

        ``phase`` and ``seat`` are the decision and the seat asked (the next to answer in a
        simultaneous one); ``turn`` the seat whose turn it is (in a bomb window, the seat that
        plays on if nobody bombs; -1 before the first play). ``hands``, ``won`` (the won
        piles), the ``trick`` on the table (``(seat, play)``, lowest first, with ``passes``
        since its last play) and, at the Grand Tichu decision, ``undealt`` (the six cards
        each seat still gets) must hold all 56 cards once. ``window`` lists the seats a bomb
        window still asks (``seat`` first) and ``resume`` what follows it (``AFTER_PLAY`` or
        ``BEFORE_COLLECT``); ``exchanges`` the cards passed so far (next seat, partner,
        previous seat); ``out`` the seats out, in order; ``events`` the hand's public events
        (default: the hand's start only). ``dealt`` is the hand's deal (default: one that
        could lead here). The hands after this one are dealt from ``seed``. Raises
        ``ValueError`` for cards missing or placed twice, or a seat or phase out of range.
        """
        if phase is Phase.MATCH_OVER:
            raise ValueError("a position is a decision: the match is over")
        if not 0 <= seat < 4 or not -1 <= turn < 4:
            raise ValueError(f"seat {seat} or turn {turn} is not a seat")
        if len(hands) != 4 or len(won) != 4 or len(undealt) != 4:
            raise ValueError("give four hands, won piles and undealt parts")
        on_table = 0
        for _, play in trick:
            on_table |= play.cards
        seen = 0
        for cards in (*hands, *undealt, *won, on_table):
            if seen & cards or not 0 <= cards <= FULL_DECK:
                raise ValueError(f"{format_cards(seen & cards)} placed twice")
            seen |= cards
        if seen != FULL_DECK:
            raise ValueError(f"{format_cards(FULL_DECK & ~seen)} placed nowhere")
        if dealt is None:
            dealt = _plausible_deal(hands, undealt, won, trick)
        m = cls.__new__(cls)
        m.options = options or Options()
        m.seed = seed
        m.deals = (dealt,) if hand_no == 0 else ()
        m.dealt = dealt
        m.hand_no = hand_no
        m.scores = [scores[0], scores[1]]
        m.vp = [vp[0], vp[1]]
        m.hand_results = []
        m.actions = []
        m.log = []
        m.phase = phase
        m.seat = seat
        m.turn = turn
        m.hands = list(hands)
        m.grand = list(grand)
        m.tichu = list(tichu)
        m.exchanges = list(exchanges)
        m.trick = list(trick)
        m.trick_cards = on_table
        m.owner = trick[-1][0] if trick else -1
        m.passes = passes
        m.lead = not trick
        bombing = phase is Phase.BOMB_WINDOW
        m.window = list(window) if bombing else []
        m.resume = resume if bombing else AFTER_PLAY
        m.wish = wish
        m.won = list(won)
        m.out = list(out)
        start = Event(EventKind.HAND_START, -1, None, hand_no)
        m.events = list(events) if events is not None else [start]
        m.clear_caches()
        return m

    # ----------------------------------------------------------------- copying

    def copy(self) -> Match:
        """Returns an independent copy (lists copied, immutable values shared)."""
        m = Match.__new__(Match)
        for name in Match.__slots__:
            v = getattr(self, name)
            setattr(m, name, v.copy() if type(v) is list else v)
        return m

    def clear_caches(self) -> None:
        """Forgets what is derived from the hands; call after changing slots directly."""
        self._combos = [None, None, None, None]
        self._bombish = [None, None, None, None]
        self._legal = None

    # ----------------------------------------------------------------- queries

    @property
    def over(self) -> bool:
        """Whether the match has ended."""
        return self.phase is Phase.MATCH_OVER

    @property
    def top(self) -> Play | None:
        """The play to beat, or ``None`` when the table is empty."""
        return self.trick[-1][1] if self.trick else None

    def where(self) -> str:
        """Names the position for messages: hand, trick, seat and phase."""
        trick = 1 + sum(
            1
            for e in self.events
            if (e.kind == EventKind.TRICK_WON and e.cards != DOG_BIT)
            or e.kind == EventKind.DRAGON_GIFT
        )
        return (
            f"hand {self.hand_no + 1}, trick {trick}, seat {self.seat},"
            f" {self.phase.name.lower().replace('_', ' ')}"
        )

    @property
    def simultaneous(self) -> bool:
        """Whether the decision is asked of the four seats at once: Grand Tichu, the exchange.

        The core takes the answers seat by seat, 0 to 3 (``seat`` is the next to answer), and
        reveals them together; every seat from ``seat`` on has still to answer, so
        ``observe`` shows it to act with its own legal answers (``legal_actions_of``).
        """
        ph = self.phase
        return ph is Phase.GRAND_TICHU or ph is Phase.EXCHANGE

    def asks(self, seat: int) -> bool:
        """Whether ``seat`` has a decision to answer now (one of several when simultaneous)."""
        return seat == self.seat or (seat > self.seat >= 0 and self.simultaneous)

    def legal_actions_of(self, seat: int) -> tuple[Action, ...]:
        """The answers ``seat`` may give now: ``legal_actions()`` for the seat to act, the
        same list for a seat still to answer a simultaneous decision, else none."""
        if seat == self.seat:
            return self.legal_actions()
        if not self.asks(seat):
            return ()
        if self.phase is Phase.GRAND_TICHU:
            return _GRAND_ANSWERS
        return _exchanges(self.hands[seat])

    def can_call_tichu(self, seat: int | None = None) -> bool:
        """Whether ``seat`` (default: the seat to act) may call Tichu with its next answer."""
        s = self.seat if seat is None else seat
        return (
            self.asks(s)
            and self.phase in (Phase.EXCHANGE, Phase.PLAY, Phase.BOMB_WINDOW)
            and self.hands[s].bit_count() == 14
            and not self.grand[s]
            and not self.tichu[s]
        )

    def combos(self, seat: int) -> tuple[Play, ...]:
        """Every play ``seat`` could lead from its current hand (cached per hand)."""
        c = self._combos[seat]
        if c is None:
            c = self._combos[seat] = combinations(self.hands[seat])
        return c

    def legal_actions(self) -> tuple[Action, ...]:
        """The answers the seat to act may give, in canonical order (never empty).

        Tichu calls are not listed: see ``can_call_tichu``.
        """
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    def _compute_legal(self) -> tuple[Action, ...]:
        ph = self.phase
        s = self.seat
        if ph is Phase.PLAY:
            return self._turn_plays(s)
        if ph is Phase.BOMB_WINDOW:
            return (PASS, *self._bombs_beating(s, self.trick[-1][1]))
        if ph is Phase.GRAND_TICHU:
            return _GRAND_ANSWERS
        if ph is Phase.EXCHANGE:
            return _exchanges(self.hands[s])
        if ph is Phase.WISH:
            return WISHES
        if ph is Phase.DRAGON_GIFT:
            return (Gift((s + 1) & 3), Gift((s + 3) & 3))
        return ()

    def _turn_plays(self, s: int) -> tuple[Play, ...]:
        return turn_plays(self.combos(s), self.hands[s], self.top, self.wish)

    def _bombs_beating(self, s: int, top: Play) -> list[Play]:
        return [p for p in self.combos(s) if p.kind >= _BOMB_KINDS and beats(p, top)]

    def _has_bomb_beating(self, s: int, top: Play) -> bool:
        bombish = self._bombish[s]
        if bombish is None:
            bombish = self._bombish[s] = may_hold_bomb(self.hands[s])
        if not bombish:
            return False
        return any(p.kind >= _BOMB_KINDS and beats(p, top) for p in self.combos(s))

    # ----------------------------------------------------------------- applying

    def apply(self, action: Action) -> None:
        """Applies the seat to act's answer, or raises ``IllegalActionError`` (state unchanged)."""
        s = self.seat
        if type(action) is CallTichu:
            if not self.can_call_tichu(s):
                raise IllegalActionError(self._why_no_tichu(s), self.where())
            self.tichu[s] = True
            self.events.append(_new(Event, (EventKind.TICHU, s, None, 0, 0, 0)))
            self.actions.append((s, action))
            return
        ph = self.phase
        if ph is Phase.EXCHANGE:
            self._check_exchange(action)
        elif ph is Phase.MATCH_OVER:
            raise IllegalActionError("the match is over", self.where())
        else:
            legal = self.legal_actions()
            if type(action) is not Play and any(type(x) not in (int, bool) for x in action):
                raise IllegalActionError(f"{action!r} is malformed", self.where())
            if type(action) is not _ANSWER_TYPES[ph]:
                raise self._not_legal(action)
            try:  # one scan of the list (a lead has dozens of plays)
                # Equal is not identical (Wish(8.0) == Wish(8)): keep the canonical value.
                action = legal[legal.index(action)]
            except ValueError:
                raise self._not_legal(action) from None
        self.actions.append((s, action))
        self._legal = None
        if isinstance(action, Play):
            if ph is Phase.PLAY:
                if action.kind == PASS_K:
                    self._pass(s)
                else:
                    self._play(s, action, False)
            elif action.kind == PASS_K:
                self._decline(s)
            else:
                self._play(s, action, True)
        elif isinstance(action, GrandTichu):
            self._grand(s, action.call)
        elif isinstance(action, Exchange):
            self._exchange(s, action)
        elif isinstance(action, Wish):
            self._wish(s, action.rank)
        elif isinstance(action, Gift):
            self._gift(s, action.to)

    def _not_legal(self, action: Action) -> IllegalActionError:
        ph = self.phase
        if ph is Phase.PLAY or ph is Phase.BOMB_WINDOW:
            return IllegalActionError(self._why_illegal(action), self.where())
        return IllegalActionError(
            f"{action!r} is not a legal answer to a {ph.name.lower()} decision", self.where()
        )

    # ----------------------------------------------------------------- hand flow

    def _start_hand(self) -> None:
        k = self.hand_no
        deal = self.deals[k] if k < len(self.deals) else deal_from_seed(self.seed, k)
        self.dealt = deal
        first = 8 if self.options.grand_tichu else 14
        self.hands = [_mask(h[:first]) for h in deal]
        self.grand = [False] * 4
        self.tichu = [False] * 4
        self.exchanges = [None] * 4
        self.trick = []
        self.trick_cards = 0
        self.owner = -1
        self.passes = 0
        self.lead = True
        self.turn = -1
        self.window = []
        self.resume = AFTER_PLAY
        self.wish = 0
        self.won = [0, 0, 0, 0]
        self.out = []
        self.events = [Event(EventKind.HAND_START, -1, None, k)]
        self.clear_caches()
        self.seat = 0
        self.phase = Phase.GRAND_TICHU if self.options.grand_tichu else Phase.EXCHANGE

    def _grand(self, s: int, call: bool) -> None:
        self.grand[s] = call  # hidden from the others until the last seat answered
        if s < 3:
            self.seat = s + 1
            return
        self.events.append(Event(EventKind.GRAND_TICHU, -1, None, called_mask(self.grand)))
        self.hands = [_mask(h) for h in self.dealt]
        self.seat = 0
        self.phase = Phase.EXCHANGE

    def _check_exchange(self, action: Action) -> None:
        if type(action) is not Exchange:
            raise IllegalActionError(f"{action!r} is not an exchange", self.where())
        hand = self.hands[self.seat]
        cards = set(action)
        if len(cards) != 3:
            raise IllegalActionError("the three passed cards must differ", self.where())
        for c in action:
            if type(c) is not int or not (0 <= c < 56 and hand >> c & 1):
                raise IllegalActionError(f"card {c!r} to pass is not in hand", self.where())

    def _exchange(self, s: int, action: Exchange) -> None:
        self.exchanges[s] = action
        if s < 3:
            self.seat = s + 1
            return
        hands = self.hands
        for t in range(4):
            given = self.exchanges[t]
            assert given is not None
            for k, c in enumerate(given, 1):
                hands[t] &= ~(1 << c)
                hands[(t + k) & 3] |= 1 << c
        self.clear_caches()
        self.events.append(Event(EventKind.EXCHANGE, -1))
        leader = next(t for t in range(4) if hands[t] & MAHJONG_BIT)
        self.phase = Phase.PLAY
        self.seat = self.turn = leader
        self.lead = True

    def _play(self, s: int, play: Play, out_of_turn: bool) -> None:
        cards = play.cards
        hand = self.hands[s] & ~cards
        self.hands[s] = hand
        combos = self._combos[s]
        if combos is not None:
            self._combos[s] = tuple([p for p in combos if not p[3] & cards])
        if self._bombish[s]:
            self._bombish[s] = None  # a bomb may have been broken: screen again when needed
        ev = self.events
        ev.append(_new(Event, (EventKind.PLAY, s, play, int(out_of_turn), 0, 0)))
        wish = self.wish
        if wish and cards & RANK_MASKS[wish]:
            self.wish = 0
            ev.append(_new(Event, (EventKind.WISH_FULFILLED, s, None, wish, 0, 0)))
        if not hand:
            self.out.append(s)
            ev.append(_new(Event, (EventKind.OUT, s, None, len(self.out), 0, 0)))
        if play.kind == DOG_K:
            # The Dog hands the lead to the partner (or the next seat with cards after them).
            partner = (s + 2) & 3
            leader = partner if self.hands[partner] else next_active(partner, self.hands)
            # Its trick ends at once: won by the Dog's player, worth 0 points.
            self.won[s] |= DOG_BIT
            ev.append(_new(Event, (EventKind.TRICK_WON, s, None, 0, 0, DOG_BIT)))
            if self._hand_ended():
                return
            self._new_trick(leader)
            return
        self.trick.append((s, play))
        self.trick_cards |= cards
        self.owner = s
        self.passes = 0
        self.lead = False
        if self._hand_ended():
            return
        if cards & MAHJONG_BIT:
            self.phase = Phase.WISH
            self.seat = s
            return
        self._after_play(s)

    def _after_play(self, s: int) -> None:
        nxt = next_active(s, self.hands)
        top = self.trick[-1][1]
        window = [
            t
            for t in ((s + 1) & 3, (s + 2) & 3, (s + 3) & 3, s)
            if t != nxt and self.hands[t] and self._has_bomb_beating(t, top)
        ]
        self.turn = nxt
        if window:
            self.window = window
            self.resume = AFTER_PLAY
            self.phase = Phase.BOMB_WINDOW
            self.seat = window[0]
        else:
            self.phase = Phase.PLAY
            self.seat = nxt

    def _pass(self, s: int) -> None:
        self.events.append(_new(Event, (EventKind.PASS, s, None, 0, 0, 0)))
        self.passes += 1
        owner = self.owner
        hands = self.hands
        needed = (
            (hands[0] != 0)
            + (hands[1] != 0)
            + (hands[2] != 0)
            + (hands[3] != 0)
            - (owner >= 0 and hands[owner] != 0)
        )
        if self.passes < needed:
            self.seat = self.turn = next_active(s, self.hands)
            return
        top = self.trick[-1][1]
        window = [
            t
            for t in ((s + 1) & 3, (s + 2) & 3, (s + 3) & 3, s)
            if hands[t] and self._has_bomb_beating(t, top)
        ]
        if window:
            self.window = window
            self.resume = BEFORE_COLLECT
            self.phase = Phase.BOMB_WINDOW
            self.seat = window[0]
        else:
            self._collect()

    def _decline(self, s: int) -> None:
        window = self.window = self.window[1:]
        if window:
            self.seat = window[0]
        elif self.resume == BEFORE_COLLECT:
            self._collect()
        else:
            self.phase = Phase.PLAY
            self.seat = self.turn

    def _collect(self) -> None:
        owner = self.owner
        if self.trick[-1][1].cards == DRAGON_BIT:
            self.phase = Phase.DRAGON_GIFT
            self.seat = owner
            return
        cards = self.trick_cards
        self.won[owner] |= cards
        self.events.append(
            _new(Event, (EventKind.TRICK_WON, owner, None, 0, points_of(cards), cards))
        )
        self._after_trick(owner)

    def _after_trick(self, owner: int) -> None:
        self.trick = []
        self.trick_cards = 0
        if len(self.out) >= 3:
            self._end_hand()
            return
        leader = owner if self.hands[owner] else next_active(owner, self.hands)
        self._new_trick(leader)

    def _new_trick(self, leader: int) -> None:
        self.trick = []
        self.trick_cards = 0
        self.owner = -1
        self.passes = 0
        self.lead = True
        self.phase = Phase.PLAY
        self.seat = self.turn = leader

    def _wish(self, s: int, rank: int) -> None:
        self.wish = rank
        self.events.append(Event(EventKind.WISH, s, None, rank))
        self._after_play(s)

    def _gift(self, s: int, to: int) -> None:
        cards = self.trick_cards
        self.won[to] |= cards
        self.events.append(Event(EventKind.DRAGON_GIFT, s, None, to, points_of(cards), cards))
        self._after_trick(s)

    def _hand_ended(self) -> bool:
        """Ends the hand after a seat went out, if it is over; returns whether it was."""
        out = self.out
        if len(out) == 2 and team_of(out[0]) == team_of(out[1]):
            self._end_hand()
            return True
        if len(out) == 3:
            if self.trick:
                self._collect()  # ends the hand, or asks for the Dragon gift first
            else:
                self._end_hand()
            return True
        return False

    def _end_hand(self) -> None:
        out = self.out
        scored = score_hand(
            out, self.won, self.hands, self.grand, self.tichu, self.options.tournament
        )
        card_points, bets, vp = scored.card_points, scored.bets, scored.victory_points
        score = scored.score
        result = HandResult(
            hand=self.hand_no,
            out=tuple(out),
            double_victory=scored.double_victory,
            card_points=card_points,
            bets=bets,
            grand=(self.grand[0], self.grand[1], self.grand[2], self.grand[3]),
            tichu=(self.tichu[0], self.tichu[1], self.tichu[2], self.tichu[3]),
            victory_points=vp,
        )
        self.hand_results.append(result)
        self.scores = [self.scores[0] + score[0], self.scores[1] + score[1]]
        self.vp = [self.vp[0] + vp[0], self.vp[1] + vp[1]]
        self.events.append(Event(EventKind.HAND_END, -1, None, self.hand_no))
        self.log.append(tuple(self.events))
        self.wish = 0
        if self._match_over():
            self.phase = Phase.MATCH_OVER
            self.seat = -1
            self._legal = None
            return
        self.hand_no += 1
        self._start_hand()

    def _match_over(self) -> bool:
        opts = self.options
        if opts.hands:
            return self.hand_no + 1 >= opts.hands
        a, b = self.scores
        return (a >= opts.target_score or b >= opts.target_score) and a != b

    # ----------------------------------------------------------------- messages

    def _why_no_tichu(self, s: int) -> str:
        if self.grand[s]:
            return f"seat {s} called Grand Tichu and cannot also call Tichu"
        if self.tichu[s]:
            return f"seat {s} has already called Tichu"
        if self.phase not in (Phase.EXCHANGE, Phase.PLAY, Phase.BOMB_WINDOW):
            return f"Tichu cannot be called during {self.phase.name.lower()}"
        return f"seat {s} has already played a card and can no longer call Tichu"

    def _why_illegal(self, action: Action) -> str:
        s = self.seat
        if type(action) is not Play:
            return f"{action!r} is not a play; seat {s} must play or pass"
        if not all(isinstance(x, int) for x in action) or not 0 <= action.cards < 1 << 56:
            return f"{action!r} is not a well-formed play"
        hand = self.hands[s]
        if action.cards & ~hand:
            return f"{format_cards(action.cards & ~hand)} not in seat {s}'s hand"
        if self.phase is Phase.BOMB_WINDOW:
            return (
                "only a bomb that beats the table (or pass) is allowed out of turn, not"
                f" {format_cards(action.cards)}"
            )
        top = self.top
        if action.kind == PASS_K:
            if top is None:
                return "the leader cannot pass"
            return f"seat {s} must fulfil the wish for {self.wish}"
        if action not in readings(action.cards, top):
            options = " or ".join(p.describe() for p in readings(action.cards, top))
            if not options:
                return f"{format_cards(action.cards)} is not a combination"
            return f"{action!r} misreads {format_cards(action.cards)}: it is {options}"
        if action.kind == DOG_K and top is not None:
            return "the Dog can only be led"
        if self.wish and hand & RANK_MASKS[self.wish] and not action.cards & RANK_MASKS[self.wish]:
            legal = self.legal_actions()
            if any(type(p) is Play and p.cards & RANK_MASKS[self.wish] for p in legal):
                return f"a wish for rank {self.wish} is active and seat {s} can fulfil it"
        if top is not None and not beats(action, top):
            return f"{action.describe()} does not beat {top.describe()}"
        return f"{action!r} is not a legal reading of these cards here"


def _exchanges(hand: Mask) -> tuple[Exchange, ...]:
    """Every exchange from ``hand``: three different cards, in canonical order."""
    cards = list(cards_of(hand))
    return tuple(
        Exchange(a, b, c)
        for a in cards
        for b in cards
        if b != a
        for c in cards
        if c != a and c != b
    )


def _mask(cards: Sequence[int]) -> Mask:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def _plausible_deal(
    hands: Sequence[Mask],
    undealt: Sequence[Mask],
    won: Sequence[Mask],
    trick: Sequence[tuple[int, Play]],
) -> Deal:
    """A deal that could lead to a position: each hand, its undealt part and its plays on the
    table, filled up to 14 from the won piles."""
    own = [hands[s] | undealt[s] for s in range(4)]
    for s, play in trick:
        own[s] |= play.cards
    spare = list(cards_of(won[0] | won[1] | won[2] | won[3]))
    deal = []
    for s in range(4):
        need = max(0, 14 - own[s].bit_count())
        deal.append((*cards_of(own[s]), *spare[:need]))
        del spare[:need]
    return (deal[0], deal[1], deal[2], deal[3])


def total_cards(m: Match) -> Mask:
    """Every card the state accounts for: hands, piles, the running trick (a test aid)."""
    acc = 0
    for h in m.hands:
        acc |= h
    for w in m.won:
        acc |= w
    return acc | m.trick_cards


__all__ = [
    "AFTER_PLAY",
    "BEFORE_COLLECT",
    "FULL_DECK",
    "NO_WISH",
    "Deal",
    "Event",
    "EventKind",
    "HandResult",
    "Match",
    "Options",
    "bot_seed",
    "check_deal",
    "deal_from_seed",
    "next_active",
    "team_of",
    "total_cards",
]
