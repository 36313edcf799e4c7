"""Simulation helpers for search bots: rebuild a full ``Match`` from one seat's view.

``determinize(obs, rng)`` deals the cards the seat has not seen (``obs.unseen``) at random to
the other seats and returns a ``Match`` in exactly the observed position, ready for
``legal_actions``/``apply`` and cheap ``copy``. ``Determinizer(obs)`` does the public part of
that work once, so a search can draw many deals per decision with ``sample(rng)``.

The deal respects the card counts and what the seat knows:

* a card the seat passed to another seat is in that seat's hand unless played since;
* the Mah Jong, while unplayed, is with the seat that led the first trick (or must lead it);
* a seat that led, or answered a single it could beat, without the wished rank while the wish
  was active holds no natural card of that rank (it would have been forced to play it).

``observe(m, obs.seat) == obs`` and ``m.legal_actions() == obs.legal`` hold for the result of
any view taken from a real match. (A position set up without its history, such as
``arena.rules.position``, has unseen and played cards that no hand or event places: they go to
the won piles, and its view may differ in ``won_points``.) Every sample is built with
``Match.from_position``. What no seat can see is made up: the other seats'
hidden Grand Tichu answers (``False``), the cards passed between two other seats, the original
deal behind them, and the match history (``actions``, ``log``, ``hand_results`` are empty and
``vp`` is ``[0, 0]``). The events are the observed ones, so the rebuilt match continues the
current hand exactly; the hands after it are dealt from a made-up seed.

The rules core's basics are re-exported here so a bot needs one import to simulate:
``Match`` (``legal_actions``, ``apply``, ``copy``), ``Options``, ``observe``, ``Play``,
``PASS``, ``CALL_TICHU``, ``combinations(hand)`` (every play a hand can lead) and
``beats(play, top)``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from arena.rules import (
    AFTER_PLAY,
    BEFORE_COLLECT,
    CALL_TICHU,
    CARD_POINTS,
    FOUR_BOMB,
    MAHJONG,
    PASS,
    RANK_MASKS,
    SINGLE,
    Deal,
    Event,
    EventKind,
    Exchange,
    Mask,
    Match,
    Observation,
    Options,
    Phase,
    Play,
    beats,
    cards_of,
    combinations,
    mask_of,
    may_hold_bomb,
    next_active,
    observe,
    points_of,
)

__all__ = [
    "CALL_TICHU",
    "PASS",
    "Determinizer",
    "Match",
    "Observation",
    "Options",
    "Play",
    "PublicHistory",
    "beats",
    "combinations",
    "determinize",
    "observe",
]

_RETRIES = 20  # attempts at a deal that honours every inferred void before dropping voids


class PublicHistory:
    """What the public events of the current hand imply, read once.

    Attributes:
        played_by: The cards each seat has played.
        won: The cards in each seat's won pile, as the ``TRICK_WON`` and ``DRAGON_GIFT``
            events say.
        passes: Passes since the last play of the running trick.
        last_passer: The seat that passed last in the running trick (-1 if none).
        first_leader: The seat that made the hand's first play (-1 before it).
        voids: Per seat, natural cards it cannot hold (inferred from the wish).
    """

    __slots__ = ("first_leader", "last_passer", "passes", "played_by", "voids", "won")

    def __init__(self, events: Sequence[Event]) -> None:
        self.played_by = [0, 0, 0, 0]
        self.won = [0, 0, 0, 0]
        self.voids = [0, 0, 0, 0]
        self.passes = 0
        self.last_passer = -1
        self.first_leader = -1
        top: Play | None = None
        wish = 0
        for e in events:
            k = e.kind
            s = e.seat
            if k == EventKind.PLAY:
                play = e.play
                assert play is not None
                self.played_by[s] |= play.cards
                if self.first_leader < 0:
                    self.first_leader = s
                wished = RANK_MASKS[wish] if wish else 0
                if (
                    wished
                    and not e.value
                    and not play.cards & wished
                    and (top is None or (top.kind == SINGLE and top.rank < wish))
                ):
                    # In turn, a seat holding the wished rank must play it when it can; a
                    # single of that rank can always be led and beats a lower single.
                    self.voids[s] |= wished
                top = play
                self.passes = 0
                self.last_passer = -1
            elif k == EventKind.PASS:
                if wish and top is not None and top.kind == SINGLE and top.rank < wish:
                    self.voids[s] |= RANK_MASKS[wish]
                self.passes += 1
                self.last_passer = s
            elif k == EventKind.WISH:
                wish = e.value
            elif k == EventKind.WISH_FULFILLED:
                wish = 0
            elif k == EventKind.TRICK_WON or k == EventKind.DRAGON_GIFT:
                self.won[e.value if k == EventKind.DRAGON_GIFT else s] |= e.cards
                top = None
                self.passes = 0
                self.last_passer = -1


class Determinizer:
    """Rebuilds matches in the position ``obs`` describes; ``sample`` deals the hidden cards.

    Raises ``ValueError`` when the match is over (there is no position to rebuild).
    """

    def __init__(self, obs: Observation) -> None:
        if obs.phase is Phase.MATCH_OVER:
            raise ValueError("the match is over: nothing to determinize")
        self.obs = obs
        self.history = PublicHistory(obs.events)
        self._public = self._public_part()
        self._counts = self._hidden_counts()
        self._forced = self._forced_cards()
        self._pool = obs.unseen & ~_or(self._forced)
        # Unseen cards beyond the hidden hands: only in views without the full history (a
        # position set up directly); they are taken to lie in the won piles.
        self._spare = self._pool.bit_count() - sum(self._counts) + _or(self._forced).bit_count()
        # Likewise, cards the view shows played but no event put on the table or in a pile.
        on_table = _or([p.cards for _, p in obs.trick])
        self._unlogged = obs.played & ~on_table & ~_or(self.history.won)
        self._weights: Sequence[Sequence[float]] | None = None
        self._weight_rows: dict[int, tuple[float, ...]] = {}
        self._restricted: list[int] = []
        self._free: list[int] = []

    # ----------------------------------------------------------------- public part

    def _public_part(self) -> dict[str, Any]:
        """The ``Match.from_position`` arguments every sample shares: what the view shows."""
        obs = self.obs
        h = self.history
        ph = obs.phase
        owner = obs.trick[-1][0] if obs.trick else -1
        passes = h.passes if obs.trick else 0
        turn = obs.to_act
        resume = AFTER_PLAY
        if ph is Phase.GRAND_TICHU or ph is Phase.EXCHANGE:
            turn = -1
        elif ph is Phase.BOMB_WINDOW:
            if passes:
                resume = BEFORE_COLLECT
                turn = h.last_passer
            else:
                turn = next_active(owner, obs.card_counts)
        elif ph is Phase.DRAGON_GIFT:
            turn = h.last_passer if passes else owner
        if ph is Phase.GRAND_TICHU:
            grand = [t == obs.seat and obs.grand[t] for t in range(4)]
        else:
            grand = list(obs.grand)
        return {
            "phase": ph,
            "seat": obs.to_act,
            "turn": turn,
            "options": obs.options,
            "hand_no": obs.hand_no,
            "scores": obs.scores,
            "grand": grand,
            "tichu": obs.tichu,
            "trick": obs.trick,
            "passes": passes,
            "resume": resume,
            "wish": obs.wish,
            "out": obs.out,
            "events": obs.events,
        }

    def _hidden_counts(self) -> list[int]:
        """How many hidden cards each seat holds (this seat: the 6 still to come at 8)."""
        obs = self.obs
        if obs.phase is Phase.GRAND_TICHU:
            return [6 if t == obs.seat else 14 for t in range(4)]
        return [0 if t == obs.seat else obs.card_counts[t] for t in range(4)]

    def _forced_cards(self) -> list[Mask]:
        """Hidden cards whose seat is known: passed cards not played since, the Mah Jong."""
        obs = self.obs
        forced = [0, 0, 0, 0]
        if obs.phase is Phase.GRAND_TICHU or obs.phase is Phase.EXCHANGE:
            return forced
        played = obs.played
        if obs.given is not None:
            for k, c in enumerate(obs.given, 1):
                if not played >> c & 1:
                    forced[(obs.seat + k) & 3] |= 1 << c
        mj = 1 << MAHJONG
        if not (played | obs.hand | _or(forced)) & mj:
            leader = self.history.first_leader
            if leader < 0:
                leader = obs.to_act  # nobody has played yet: the seat to act leads
            forced[leader] |= mj
        return forced

    # ----------------------------------------------------------------- sampling

    def sample(self, rng: random.Random) -> Match:
        """Returns a match in the observed position with the hidden cards dealt at random."""
        return self.build(self._deal(rng), rng)

    def _deal(self, rng: random.Random) -> list[Mask]:
        """The hidden cards of each seat: forced ones plus a random share of the pool."""
        voids = self.history.voids
        for attempt in range(_RETRIES + 1):
            use_voids = attempt < _RETRIES
            deal = self._try_deal(rng, voids if use_voids else [0, 0, 0, 0])
            if deal is not None:
                return deal
        raise AssertionError("no deal fits the card counts")  # pragma: no cover

    def deal(
        self, rng: random.Random, weights: Sequence[Sequence[float]] | None = None
    ) -> list[Mask]:
        """The hidden cards of each seat for one sample (``hidden`` of ``build``), without
        building a match: for simulators of their own, such as ``sdk.playout.FastHand``.

        ``weights[t][c]`` (default: all equal) is how much likelier seat ``t`` is to hold card
        ``c`` than another seat with room for it: the cards whose seat is not known are then
        dealt one by one, in random order, each to a seat with chance proportional to the
        seat's room times its weight. Forced cards and inferred voids hold either way.
        """
        if weights is None or self.obs.phase is Phase.GRAND_TICHU:
            return self._deal(rng)
        for _ in range(_RETRIES):
            deal = self._weighted_deal(rng, weights)
            if deal is not None:
                return deal
        return self._deal(rng)

    def _weighted_deal(
        self, rng: random.Random, weights: Sequence[Sequence[float]]
    ) -> list[Mask] | None:
        if self._spare:
            return None  # a view without its history: leave it to the plain deal
        rows = self._rows(weights)
        need = [self._counts[t] - self._forced[t].bit_count() for t in range(4)]
        n0, n1, n2, n3 = need
        h0, h1, h2, h3 = self._forced
        order = self._restricted + rng.sample(self._free, len(self._free))
        rand = rng.random
        for c in order:
            a, b, d, e = rows[c]
            r0 = n0 * a
            r1 = r0 + n1 * b
            r2 = r1 + n2 * d
            total = r2 + n3 * e
            if total <= 0.0:
                return None
            x = rand() * total
            bit = 1 << c
            if x < r0 and n0:
                h0 |= bit
                n0 -= 1
            elif x < r1 and n1:
                h1 |= bit
                n1 -= 1
            elif x < r2 and n2:
                h2 |= bit
                n2 -= 1
            elif n3 and e:
                h3 |= bit
                n3 -= 1
            else:
                return None  # rounding at a boundary: draw again
        return [h0, h1, h2, h3]

    def _try_deal(self, rng: random.Random, voids: list[Mask]) -> list[Mask] | None:
        need = [self._counts[t] - self._forced[t].bit_count() for t in range(4)]
        spare = self._spare
        hidden = self._forced.copy()
        pool = list(cards_of(self._pool))
        restricted = [c for c in pool if any(v >> c & 1 for v in voids)]
        free = [c for c in pool if not any(v >> c & 1 for v in voids)]
        # Cards some seat cannot hold go first, to the seats that may, weighted by room.
        rng.shuffle(restricted)
        for c in restricted:
            seats = [t for t in range(4) if need[t] and not voids[t] >> c & 1]
            if not seats:
                if spare:
                    spare -= 1
                    continue
                return None
            total = sum(need[t] for t in seats)
            x = rng.randrange(total)
            for t in seats:
                x -= need[t]
                if x < 0:
                    break
            hidden[t] |= 1 << c
            need[t] -= 1
        rng.shuffle(free)
        i = 0
        for t in range(4):
            for c in free[i : i + need[t]]:
                hidden[t] |= 1 << c
            i += need[t]
        if len(free) - i != spare:
            return None
        return hidden

    def _rows(self, weights: Sequence[Sequence[float]]) -> dict[int, tuple[float, ...]]:
        """Per hidden card, the four seats' weights with the voids folded in (cached)."""
        if self._weights is not weights:
            voids = self.history.voids
            self._weights = weights
            self._weight_rows = {
                c: tuple(0.0 if voids[t] >> c & 1 else weights[t][c] for t in range(4))
                for c in cards_of(self._pool)
            }
            # Cards some seat cannot hold go first, so that the others still find room.
            union = voids[0] | voids[1] | voids[2] | voids[3]
            self._restricted = [c for c in cards_of(self._pool) if union >> c & 1]
            self._free = [c for c in cards_of(self._pool) if not union >> c & 1]
        return self._weight_rows

    def build(self, hidden: Sequence[Mask], rng: random.Random | None = None) -> Match:
        """Returns the observed position with ``hidden[t]`` as the cards this seat cannot see.

        For the seat itself ``hidden`` is empty, except at the Grand Tichu decision, where it
        holds the six cards still to be dealt to it. ``rng`` draws the exchanges that the seat
        did not see (default: a fixed stream).
        """
        obs = self.obs
        rng = rng or random.Random(0)
        me = obs.seat
        ph = obs.phase
        undealt = [0, 0, 0, 0]
        exchanges: list[Exchange | None] = [None, None, None, None]
        if ph is Phase.GRAND_TICHU:
            hands = [0, 0, 0, 0]
            for t in range(4):
                cards = list(cards_of(hidden[t]))
                rng.shuffle(cards)
                if t == me:
                    hands[t] = obs.hand
                    undealt[t] = hidden[t]
                else:
                    hands[t] = mask_of(cards[:8])
                    undealt[t] = mask_of(cards[8:])
            dealt = _deal_tuple([(*cards_of(hands[t]), *cards_of(undealt[t])) for t in range(4)])
        elif ph is Phase.EXCHANGE:
            hands = [obs.hand if t == me else hidden[t] for t in range(4)]
            dealt = _deal_tuple([tuple(cards_of(h)) for h in hands])
            for t in range(obs.to_act):
                if t == me:
                    exchanges[t] = obs.given
                else:
                    a, b, c = rng.sample(list(cards_of(hands[t])), 3)
                    exchanges[t] = Exchange(a, b, c)
        else:
            hands = [obs.hand if t == me else hidden[t] for t in range(4)]
            exchanges, dealt = self._past_exchange(hands, rng)
        won = self.history.won
        if self._spare > 0 or self._unlogged:
            won = self._piles(self._pool & ~_or(hidden) | self._unlogged)
        m = Match.from_position(
            hands, undealt=undealt, exchanges=exchanges, won=won, dealt=dealt, **self._public
        )
        if ph is Phase.BOMB_WINDOW:
            m.window = self._window(m)
        return m

    def _piles(self, extra: Mask) -> list[Mask]:
        """The won piles with ``extra`` added, each card where its points are missing."""
        won = self.history.won.copy()
        short = [self.obs.won_points[t] - points_of(won[t]) for t in range(4)]
        for c in sorted(cards_of(extra), key=lambda c: -abs(CARD_POINTS[c])):
            t = max(range(4), key=lambda t: (short[t] * (1 if CARD_POINTS[c] >= 0 else -1), -t))
            won[t] |= 1 << c
            short[t] -= CARD_POINTS[c]
        return won

    def _past_exchange(
        self, hands: list[Mask], rng: random.Random
    ) -> tuple[list[Exchange | None], Deal]:
        """Exchanges and a deal that lead to these hands: the unseen passes drawn at random."""
        obs = self.obs
        me = obs.seat
        played_by = self.history.played_by
        holdings = [hands[t] | played_by[t] for t in range(4)]
        if obs.given is None or len(obs.received) != 3:  # a view with no exchange
            return [None, None, None, None], _deal_tuple([tuple(cards_of(h)) for h in holdings])
        # passed[t][k - 1]: the card seat t passed to seat t + k.
        passed: list[list[int]] = [[-1, -1, -1] for _ in range(4)]
        passed[me] = list(obs.given)
        for k in (1, 2, 3):
            passed[(me - k) & 3][k - 1] = obs.received[k - 1]
        for u in range(4):
            if u == me:
                continue
            incoming = [(u - k) & 3 for k in (1, 2, 3)]  # seat u - k passed with index k - 1
            known = 0
            for k, t in enumerate(incoming, 1):
                if passed[t][k - 1] >= 0:
                    known |= 1 << passed[t][k - 1]
            choices = list(cards_of(holdings[u] & ~known))
            rng.shuffle(choices)
            for k, t in enumerate(incoming, 1):
                if passed[t][k - 1] < 0:
                    passed[t][k - 1] = choices.pop()
        exchanges: list[Exchange | None] = [Exchange(p[0], p[1], p[2]) for p in passed]
        dealt = []
        for t in range(4):
            inc = 0
            for k in (1, 2, 3):
                inc |= 1 << passed[(t - k) & 3][k - 1]
            dealt.append(tuple(cards_of((holdings[t] & ~inc) | mask_of(passed[t]))))
        return exchanges, _deal_tuple(dealt)

    def _window(self, m: Match) -> list[int]:
        """The seat to act, then the seats after it in the window's order that may bomb."""
        h = self.history
        top = m.trick[-1][1]
        base = h.last_passer if m.resume == BEFORE_COLLECT else m.owner
        order = [(base + 1) & 3, (base + 2) & 3, (base + 3) & 3, base]
        if m.resume == AFTER_PLAY and m.turn in order:
            order.remove(m.turn)
        me = m.seat
        window = [me]
        for t in order[order.index(me) + 1 :]:
            if m.hands[t] and may_hold_bomb(m.hands[t]) and _bombs_beat(m.combos(t), top):
                window.append(t)
        return window


def determinize(obs: Observation, rng: random.Random) -> Match:
    """Returns a ``Match`` in the position ``obs`` shows, the unseen cards dealt at random."""
    return Determinizer(obs).sample(rng)


def _bombs_beat(combos: Sequence[Play], top: Play) -> bool:
    """Whether a bomb in ``combos`` (sorted: bombs last) beats ``top``."""
    for p in reversed(combos):
        if p.kind < FOUR_BOMB:
            return False
        if beats(p, top):
            return True
    return False


def _or(masks: Sequence[Mask]) -> Mask:
    acc = 0
    for x in masks:
        acc |= x
    return acc


def _deal_tuple(hands: Sequence[tuple[int, ...]]) -> Deal:
    return (tuple(hands[0]), tuple(hands[1]), tuple(hands[2]), tuple(hands[3]))
