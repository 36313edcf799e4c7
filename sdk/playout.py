"""A fast simulator of the rest of one hand, for search bots' playouts.

``FastHand`` holds the play phase of one hand as plain ints and lists: four hands, the top
play, the trick's points and owner, the passes, the wish, the seats out, the points each
seat has won and each seat's stake. It has no events, no validation and no match around it,
so a playout costs a fraction of one on ``Match``. Its answers and transitions are the rules
core's: the legal list is ``arena.rules.turn_plays`` on the same cards, bomb windows ask the
same seats in the same order, and a hand played on it scores as ``Match`` scores it (the
suite replays playouts of random positions through ``Match`` and compares every step and
the score).

``FastHand.from_observation(obs, hidden)`` builds the position a view shows with
``hidden[t]`` as seat ``t``'s cards; ``FastHand.copy`` is a few list copies. A decision is
answered with ``apply`` (a ``Play``, ``PASS``, a wished rank or a gift's seat, by
``phase``); ``plays()`` lists the legal answers in ``PLAY`` and ``BOMB_WINDOW``. The hand is
over when ``phase`` is ``OVER``; ``score`` then holds each team's points (card points and
bets), as ``HandResult.score`` would.

Only the current hand is simulated: calls after the first play are not possible here (a
seat that may still call Tichu does so before ``from_observation``, by its ``stakes``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arena.rules import (
    AFTER_PLAY,
    BEFORE_COLLECT,
    CARD_POINTS,
    DOG_K,
    DRAGON_BIT,
    FOUR_BOMB,
    MAHJONG_BIT,
    PASS,
    PASS_K,
    RANK_MASKS,
    Mask,
    Observation,
    Phase,
    Play,
    beats,
    combinations,
    may_hold_bomb,
    next_active,
    turn_plays,
)
from sdk.sim import PublicHistory

__all__ = ["BOMB_WINDOW", "GIFT", "OVER", "PLAY", "WISH", "FastHand", "points_of_mask"]

PLAY, BOMB_WINDOW, WISH, GIFT, OVER = range(5)
"""``FastHand.phase``: a turn, a bomb window, the Mah Jong's wish, the Dragon's gift, over."""

_POINTS_5 = sum(1 << c for c in range(56) if CARD_POINTS[c] == 5)
_POINTS_10 = sum(1 << c for c in range(56) if CARD_POINTS[c] == 10)
_PHOENIX_BIT = 1 << 55
_POINTS = _POINTS_5 | _POINTS_10 | DRAGON_BIT | _PHOENIX_BIT


def points_of_mask(cards: Mask) -> int:
    """Card points of ``cards`` (Kings and Tens 10, Fives 5, Dragon 25, Phoenix -25)."""
    return (
        5 * (cards & _POINTS_5).bit_count()
        + 10 * (cards & _POINTS_10).bit_count()
        + (25 if cards & DRAGON_BIT else 0)
        - (25 if cards & _PHOENIX_BIT else 0)
    )


class FastHand:
    """The play phase of one hand; see the module docstring."""

    __slots__ = (
        "bombish",
        "combos",
        "hands",
        "later",
        "out",
        "owner",
        "passes",
        "phase",
        "points",
        "resume",
        "score",
        "seat",
        "stakes",
        "top",
        "trick_points",
        "turn",
        "window",
        "wish",
    )

    hands: list[Mask]
    later: tuple[int, ...]
    combos: list[tuple[Play, ...] | None]
    bombish: list[bool]
    top: Play | None
    trick_points: int
    owner: int
    seat: int
    turn: int
    passes: int
    phase: int
    window: list[int]
    resume: int
    wish: int
    out: list[int]
    points: list[int]
    stakes: list[int]
    score: tuple[int, int]

    @classmethod
    def from_observation(cls, obs: Observation, hidden: Sequence[Mask]) -> FastHand:
        """The position ``obs`` shows (a turn or a bomb window), ``hidden[t]`` as seat ``t``'s
        cards (``hidden[obs.seat]`` is ignored)."""
        h = cls.__new__(cls)
        me = obs.seat
        h.hands = [obs.hand if t == me else hidden[t] for t in range(4)]
        h.combos = [None, None, None, None]
        h.bombish = [may_hold_bomb(x) for x in h.hands]
        h.top = obs.trick[-1][1] if obs.trick else None
        h.trick_points = points_of_mask(_or(p.cards for _, p in obs.trick))
        h.owner = obs.trick[-1][0] if obs.trick else -1
        h.wish = obs.wish
        h.out = list(obs.out)
        h.points = list(obs.won_points)
        h.stakes = [200 if obs.grand[t] else 100 if obs.tichu[t] else 0 for t in range(4)]
        h.score = (0, 0)
        h.window = []
        h.later = ()
        h.resume = AFTER_PLAY
        history = PublicHistory(obs.events)
        passes = history.passes if obs.trick else 0
        last_passer = history.last_passer
        h.passes = passes
        if obs.phase is Phase.PLAY:
            h.phase = PLAY
            h.seat = h.turn = obs.to_act
        elif obs.phase is Phase.BOMB_WINDOW:
            assert h.top is not None
            h.phase = BOMB_WINDOW
            h.seat = me
            if passes:
                h.resume = BEFORE_COLLECT
                base = h.turn = last_passer
                order = [(base + 1) & 3, (base + 2) & 3, (base + 3) & 3, base]
            else:
                base = h.owner
                h.turn = next_active(base, h.hands)
                order = [(base + 1) & 3, (base + 2) & 3, (base + 3) & 3, base]
                order.remove(h.turn)
            h.later = tuple(order[order.index(me) + 1 :])
            h.window = [me] + [t for t in h.later if h._can_bomb(t)]
        else:
            raise ValueError(f"a fast hand starts at a turn or a bomb window, not {obs.phase}")
        return h

    def copy(self) -> FastHand:
        """An independent copy (lists copied, plays shared)."""
        h = FastHand.__new__(FastHand)
        h.hands = self.hands.copy()
        h.combos = self.combos.copy()
        h.bombish = self.bombish.copy()
        h.top = self.top
        h.trick_points = self.trick_points
        h.owner = self.owner
        h.seat = self.seat
        h.turn = self.turn
        h.passes = self.passes
        h.phase = self.phase
        h.window = self.window.copy()
        h.later = self.later
        h.resume = self.resume
        h.wish = self.wish
        h.out = self.out.copy()
        h.points = self.points.copy()
        h.stakes = self.stakes.copy()
        h.score = self.score
        return h

    def with_hands(self, hands: Sequence[Mask]) -> FastHand:
        """A copy in the same position with ``hands`` as the four hands: a new deal of the
        hidden cards. A bomb window that the position starts in asks the seats that can bomb
        with these hands; once answered in, a window keeps its seats."""
        h = self.copy()
        h.hands = list(hands)
        h.combos = [None, None, None, None]
        h.bombish = [may_hold_bomb(x) for x in hands]
        if h.later:  # the bomb window it starts in: the seats after this one that can bomb
            h.window = [h.window[0]] + [t for t in h.later if h._can_bomb(t)]
        return h

    # ------------------------------------------------------------- queries

    def combos_of(self, seat: int) -> tuple[Play, ...]:
        """Every play ``seat`` could lead from its hand (cached until it plays)."""
        c = self.combos[seat]
        if c is None:
            c = self.combos[seat] = combinations(self.hands[seat])
        return c

    def plays(self) -> tuple[Play, ...]:
        """The legal answers of the seat to act in a turn or a bomb window, in the rules
        core's canonical order (``PASS`` first when allowed)."""
        s = self.seat
        if self.phase == PLAY:
            return turn_plays(self.combos_of(s), self.hands[s], self.top, self.wish)
        top = self.top
        assert top is not None
        return (PASS, *_bombs_beating(self.combos_of(s), top))

    def _can_bomb(self, t: int) -> bool:
        """Whether seat ``t`` holds a bomb that beats the top play."""
        if not self.bombish[t]:
            return False
        top = self.top
        assert top is not None
        return bool(_bombs_beating(self.combos_of(t), top))

    # ------------------------------------------------------------- answers

    def apply(self, answer: Play | int) -> None:
        """Applies the seat to act's answer: a play or ``PASS`` in a turn or bomb window, a
        rank (0: none) for the wish, a seat for the Dragon's gift. Not validated."""
        ph = self.phase
        if ph == PLAY:
            assert isinstance(answer, Play)
            if answer.kind == PASS_K:
                self.pass_turn(self.seat)
            else:
                self.play(self.seat, answer)
        elif ph == BOMB_WINDOW:
            assert isinstance(answer, Play)
            if answer.kind == PASS_K:
                self._decline()
            else:
                self.play(self.seat, answer)
        elif ph == WISH:
            assert isinstance(answer, int)
            self.wish = answer
            self._after_play(self.seat)
        elif ph == GIFT:
            assert isinstance(answer, int)
            self.points[answer] += self.trick_points
            self._after_trick(self.seat)
        else:
            raise ValueError("the hand is over")

    def play(self, s: int, play: Play) -> None:
        """A play (not a pass) by ``s``, the seat to act, in a turn or a bomb window."""
        self.later = ()
        cards = play.cards
        hand = self.hands[s] = self.hands[s] & ~cards
        combos = self.combos[s]
        if combos is not None:
            self.combos[s] = tuple([p for p in combos if not p[3] & cards])
        if self.bombish[s]:
            self.bombish[s] = may_hold_bomb(hand)  # a bomb may have been broken
        wish = self.wish
        if wish and cards & RANK_MASKS[wish]:
            self.wish = 0
        if not hand:
            self.out.append(s)
        if play.kind == DOG_K:
            partner = (s + 2) & 3
            leader = partner if self.hands[partner] else next_active(partner, self.hands)
            if not hand and self._hand_ended():
                return
            self._new_trick(leader)
            return
        self.top = play
        if cards & _POINTS:
            self.trick_points += points_of_mask(cards)
        self.owner = s
        self.passes = 0
        if not hand and self._hand_ended():
            return
        if cards & MAHJONG_BIT:
            self.phase = WISH
            self.seat = s
            return
        self._after_play(s)

    def _after_play(self, s: int) -> None:
        hands = self.hands
        bombish = self.bombish
        nxt = next_active(s, hands)
        self.turn = nxt
        if True in bombish:
            window = [
                t
                for t in ((s + 1) & 3, (s + 2) & 3, (s + 3) & 3, s)
                if bombish[t] and t != nxt and self._can_bomb(t)
            ]
        else:
            window = []
        if window:
            self.window = window
            self.resume = AFTER_PLAY
            self.phase = BOMB_WINDOW
            self.seat = window[0]
        else:
            self.phase = PLAY
            self.seat = nxt

    def pass_turn(self, s: int) -> None:
        """A pass by ``s``, the seat to act, in a turn."""
        self.passes += 1
        hands = self.hands
        owner = self.owner
        needed = (
            (hands[0] != 0)
            + (hands[1] != 0)
            + (hands[2] != 0)
            + (hands[3] != 0)
            - (owner >= 0 and hands[owner] != 0)
        )
        if self.passes < needed:
            self.seat = self.turn = next_active(s, hands)
            return
        bombish = self.bombish
        window = [
            t
            for t in ((s + 1) & 3, (s + 2) & 3, (s + 3) & 3, s)
            if bombish[t] and self._can_bomb(t)
        ]
        if window:
            self.window = window
            self.resume = BEFORE_COLLECT
            self.phase = BOMB_WINDOW
            self.seat = window[0]
        else:
            self._collect()

    def _decline(self) -> None:
        self.later = ()
        window = self.window
        del window[0]
        if window:
            self.seat = window[0]
        elif self.resume == BEFORE_COLLECT:
            self._collect()
        else:
            self.phase = PLAY
            self.seat = self.turn

    def _collect(self) -> None:
        owner = self.owner
        top = self.top
        assert top is not None
        if top.cards == DRAGON_BIT:
            self.phase = GIFT
            self.seat = owner
            return
        self.points[owner] += self.trick_points
        self._after_trick(owner)

    def _after_trick(self, owner: int) -> None:
        if len(self.out) >= 3:
            self._end()
            return
        hands = self.hands
        self._new_trick(owner if hands[owner] else next_active(owner, hands))

    def _new_trick(self, leader: int) -> None:
        self.top = None
        self.trick_points = 0
        self.owner = -1
        self.passes = 0
        self.phase = PLAY
        self.seat = self.turn = leader

    def _hand_ended(self) -> bool:
        out = self.out
        if len(out) == 2 and not (out[0] ^ out[1]) & 1:
            self._end()
            return True
        if len(out) == 3:
            if self.top is not None:
                self._collect()
            else:
                self._end()
            return True
        return False

    def _end(self) -> None:
        """Scores the hand as ``arena.rules.score_hand`` does (the usual mode)."""
        out = self.out
        cp = [0, 0]
        if len(out) == 2:
            cp[out[0] & 1] = 200
        else:
            last = 6 - out[0] - out[1] - out[2]
            pts = self.points
            cp[out[0] & 1] += pts[last]
            cp[(last & 1) ^ 1] += points_of_mask(self.hands[last])
            for t in range(4):
                if t != last:
                    cp[t & 1] += pts[t]
        first = out[0]
        for t in range(4):
            stake = self.stakes[t]
            if stake:
                cp[t & 1] += stake if t == first else -stake
        self.score = (cp[0], cp[1])
        self.phase = OVER
        self.seat = -1
        self.top = None


def _bombs_beating(combos: tuple[Play, ...], top: Play) -> list[Play]:
    """The bombs in ``combos`` (sorted: bombs last) that beat ``top``, in order."""
    out = []
    for p in combos[::-1]:
        if p.kind < FOUR_BOMB:
            break
        out.append(p)
    out.reverse()
    return out if top.kind < FOUR_BOMB else [p for p in out if beats(p, top)]


def _or(masks: Iterable[Mask]) -> Mask:
    acc = 0
    for x in masks:
        acc |= x
    return acc
