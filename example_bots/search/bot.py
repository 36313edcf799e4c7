"""SearchBot: information-set Monte Carlo tree search (ISMCTS) over the rules core.

Each iteration deals the cards the bot has not seen at random (``sdk.sim.Determinizer``),
walks one tree shared by all deals, opens one new node and plays the hand out with a cheap
greedy policy for all four seats (``rollout``). The reward is the team's hand score margin
(card points and bets, so the finishing order, a 1-2 and Tichus all count), scaled to about
0..1. The answer is the most visited move. These follow Pestalozzi's best settings: random
determinization, an outcome reward rather than raw trick points, most visited.

Only plays, passes and bomb windows are searched. The tree keys moves by *figure* (kind,
length, rank and the ranks used, suits ignored), so one node stands for all suit variants
and a lead with hundreds of card-level plays has a few dozen children; progressive widening
opens them best-first by a cheap prior. Grand Tichu, the exchange, the wish and the Dragon
gift follow ``HeuristicBot``'s rules; its Tichu calls are checked by the search. A decision
with one legal answer is answered at once.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence

from arena.rules import (
    CALL_TICHU,
    DOG_K,
    DRAGON_BIT,
    FOUR_BOMB,
    PASS_K,
    PHOENIX_BIT,
    RANK_MASKS,
    SPECIALS,
    Action,
    Exchange,
    Gift,
    Mask,
    Match,
    Observation,
    Phase,
    Play,
    Wish,
    combinations,
)
from example_bots.heuristic.bot import HeuristicBot
from sdk import Bot
from sdk.sim import Determinizer

__all__ = ["Node", "SearchBot", "figure", "rollout"]

Figure = tuple[int, int, int, int]
"""A move up to suits: kind, length, rank and the rank profile of its cards."""

_NIB_COUNT = tuple(n.bit_count() for n in range(16))
_FIGURES: dict[Play, Figure] = {}
_FIGURE_CACHE_MAX = 1 << 17
_SEARCHED = (Phase.PLAY, Phase.BOMB_WINDOW)


def figure(p: Play) -> Figure:
    """The move ``p`` up to suits (cached): plays with equal figures are interchangeable
    except for the straight flushes they might leave in hand."""
    f = _FIGURES.get(p)
    if f is None:
        if len(_FIGURES) >= _FIGURE_CACHE_MAX:
            _FIGURES.clear()
        cards = p.cards
        prof = cards & SPECIALS
        nat = cards >> 2
        shift = 56
        for _ in range(13):
            nib = nat & 15
            if nib:
                prof |= _NIB_COUNT[nib] << shift
            nat >>= 4
            shift += 3
        f = _FIGURES[p] = (p.kind, p.length, p.rank, prof)
    return f


def _prior(f: Figure, hand_size: int, leading: bool) -> float:
    """Order in which a node opens its children: going out, then cheap plays, bombs last."""
    kind, length, rank, prof = f
    if kind == PASS_K:
        return 0.0
    if length == hand_size:
        return 10.0
    if kind >= FOUR_BOMB:
        return -1.5
    score = -rank / 15.0
    if leading:
        score += 0.3 * length
        if kind == DOG_K:
            score += 0.3
    if prof & PHOENIX_BIT:
        score -= 0.4
    if prof & DRAGON_BIT:
        score -= 0.3
    return score


class Node:
    """A tree node: statistics of the move that led here, from its mover's team's view.

    ``children`` is keyed by (seat to act, whether it is a bomb window), then by figure:
    which seat decides next can depend on the deal (a bomb window opens only for a seat
    holding a bomb).
    """

    __slots__ = ("avail", "children", "n", "w")

    def __init__(self) -> None:
        self.n = 0
        self.w = 0.0
        self.avail = 0
        self.children: dict[tuple[int, bool], dict[Figure, Node]] = {}


# ----------------------------------------------------------------- fast policies


def _gift(m: Match) -> Gift:
    """The Dragon trick to the opponent holding more cards (the likelier last one)."""
    s = m.seat
    left, right = (s + 1) & 3, (s + 3) & 3
    return Gift(left if m.hands[left].bit_count() >= m.hands[right].bit_count() else right)


def _wish_rank(hand: Mask) -> int:
    """The highest rank of which ``hand`` holds no card (the wish never binds its maker)."""
    for r in range(14, 1, -1):
        if not hand & RANK_MASKS[r]:
            return r
    return 0


def _other_answer(m: Match) -> Action:
    """The answer to a decision that is not searched (wish, Dragon gift)."""
    if m.phase is Phase.WISH:
        return Wish(_wish_rank(m.hands[m.seat]))
    if m.phase is Phase.DRAGON_GIFT:
        return _gift(m)
    return m.legal_actions()[0]


def rollout(m: Match, rng: random.Random, hands_done: int, epsilon: float = 0.1) -> None:
    """Plays the current hand of ``m`` to its end with a cheap greedy policy for every seat.

    With probability ``epsilon`` a seat plays a random legal answer; otherwise, following,
    it passes on its partner and beats an opponent with its lowest plain play (the Phoenix
    only when nothing else beats, a bomb only on a threat: an opponent about to go out or
    with a live bet, also out of turn); leading, it
    goes out if it can, else leads the longest plain play holding its lowest card. The hand
    is over when ``m.hand_results`` grows past ``hands_done``.
    """
    results = m.hand_results
    rand = rng.random
    hands = m.hands
    bets = [m.tichu[t] or m.grand[t] for t in range(4)]
    out = m.out
    while len(results) == hands_done:
        ph = m.phase
        if ph is Phase.PLAY:
            legal: tuple[Play, ...] = m.legal_actions()  # type: ignore[assignment]
            n = len(legal)
            a: Action = legal[0]
            if n == 1:
                pass
            elif rand() < epsilon:
                a = legal[int(rand() * n)]
            elif legal[0].kind == PASS_K:
                owner = m.owner
                if (owner ^ m.seat) & 1:
                    phoenix: Play | None = None
                    for p in legal[1:]:
                        if p.kind >= FOUR_BOMB:
                            if phoenix is None and (
                                0 < hands[owner].bit_count() <= 2 or (bets[owner] and not out)
                            ):
                                a = p
                            break
                        if p.cards & PHOENIX_BIT:
                            if phoenix is None:
                                phoenix = p
                            continue
                        a = p
                        break
                    else:
                        if phoenix is not None:
                            a = phoenix
                    if a is legal[0] and phoenix is not None:
                        a = phoenix
            else:
                hand = hands[m.seat]
                plain = hand & ~PHOENIX_BIT
                low = plain & -plain if plain else hand
                best_len = 0
                for p in legal:
                    cards = p.cards
                    if cards == hand:
                        a = p
                        break
                    if (
                        cards & low
                        and p.length > best_len
                        and p.kind < FOUR_BOMB
                        and not cards & PHOENIX_BIT
                    ):
                        a = p
                        best_len = p.length
        elif ph is Phase.BOMB_WINDOW:
            legal = m.legal_actions()  # type: ignore[assignment]
            owner = m.owner
            a = legal[0]
            threat = 0 < hands[owner].bit_count() <= 2 or (bets[owner] and not out)
            if ((owner ^ m.seat) & 1 and threat) or rand() < epsilon:
                a = legal[1 + int(rand() * (len(legal) - 1))]
        else:
            a = _other_answer(m)
        m.apply(a)


# ----------------------------------------------------------------- the bot


class SearchBot(Bot):
    """ISMCTS player: searches plays and bomb windows, heuristic rules for the rest.

    Args:
        iterations: Most iterations per searched decision (``None``: limited by time only).
        time_limit: Most seconds per searched decision (``None``: by iterations only; one of
            the two must be set). A tighter referee deadline, when known, takes precedence.
        seed: Seeds the per-decision random streams; with ``time_limit=None`` the bot is a
            deterministic function of (seed, observation).
        exploration: UCB exploration constant (rewards are about 0..1).
        widening: Progressive widening: a node opens ``widening * sqrt(visits) + 2`` children.
        reward_scale: Score margin that counts as a full reward swing.
        epsilon: Chance of a random answer at each decision of a playout.
        tichu_veto: Drop a Tichu call when this seat goes out first in fewer than this
            share of the playouts of the chosen move.
    """

    name = "search"

    def __init__(
        self,
        iterations: int | None = None,
        time_limit: float | None = 0.8,
        seed: int = 0,
        exploration: float = 0.3,
        widening: float = 2.0,
        reward_scale: float = 400.0,
        epsilon: float = 0.1,
        tichu_veto: float = 0.45,
    ) -> None:
        super().__init__()
        if iterations is None and time_limit is None:
            raise ValueError("give an iteration budget, a time limit, or both")
        if iterations is not None and iterations < 1:
            raise ValueError(f"iterations must be at least 1, not {iterations}")
        self.iterations = iterations
        self.time_limit = time_limit
        self.seed = seed
        self.exploration = exploration
        self.widening = widening
        self.reward_scale = reward_scale
        self.epsilon = epsilon
        #: Statistics of the last search: iterations run and seconds spent.
        self.last_iterations = 0
        self.last_seconds = 0.0
        self.tichu_veto = tichu_veto
        self._rules = HeuristicBot()
        self._last: tuple[tuple[int, int, int, Phase, Mask], Action, float] | None = None

    # ------------------------------------------------------------- decisions

    def act(self, obs: Observation) -> Action:
        """Searches plays and bomb windows; other decisions use the per-decision rules."""
        if obs.phase in _SEARCHED:
            if len(obs.legal) == 1:
                return obs.legal[0]
            return self._searched(obs)[0]
        return super().act(obs)

    def play(self, obs: Observation) -> Play:
        """Your turn: the searched play."""
        a = self._searched(obs)[0] if len(obs.legal) > 1 else obs.legal[0]
        assert isinstance(a, Play)
        return a

    def bomb(self, obs: Observation) -> Play:
        """A bomb window: the searched answer."""
        return self.play(obs)

    def grand_tichu(self, obs: Observation) -> bool:
        """The heuristic bot's Grand Tichu rule (counted controls in the first eight)."""
        return self._rules.grand_tichu(obs)

    def call_tichu(self, obs: Observation) -> bool:
        """Tichu when the heuristic bot would call and the search agrees.

        The search then plays the hand with the bet in place and vetoes the call when this
        seat goes out first in fewer than ``tichu_veto`` of the playouts of its chosen move.
        That search also answers the decision (asked right after), so one decision costs
        one search either way.
        """
        if not obs.may_call_tichu or obs.phase not in _SEARCHED:
            return False
        if not self._rules.call_tichu(obs):
            return False
        return self._searched(obs, with_tichu=True)[1] >= self.tichu_veto

    def exchange(self, obs: Observation) -> Exchange:
        """The heuristic bot's exchange (plan-aware: bombs whole, low cards to opponents)."""
        return self._rules.exchange(obs)

    def wish(self, obs: Observation) -> int:
        """The heuristic bot's wish: a rank passed to an opponent, else the highest lacking."""
        return self._rules.wish(obs)

    def gift(self, obs: Observation) -> int:
        """The heuristic bot's Dragon gift: the opponent with no live bet and more cards."""
        return self._rules.gift(obs)

    # ------------------------------------------------------------- search

    def budget(self, obs: Observation) -> float | None:
        """Seconds this decision may use: the time limit, cut to fit a known deadline."""
        limit = self.time_limit
        left = self.time_left_ms  # set before each decision, the bank included
        if left is not None:
            fit = max(0.01, 0.7 * left / 1000.0 - 0.05)
            limit = fit if limit is None else min(limit, fit)
        return limit

    def _searched(self, obs: Observation, with_tichu: bool = False) -> tuple[Action, float]:
        """The search result for ``obs``, reused when the same decision is asked again."""
        key = (obs.hand_no, len(obs.events), obs.seat, obs.phase, obs.hand)
        if self._last is None or self._last[0] != key:
            self._last = (key, *self.search(obs, with_tichu))
        return self._last[1], self._last[2]

    def search(self, obs: Observation, with_tichu: bool = False) -> tuple[Action, float]:
        """Runs ISMCTS from ``obs``: the most visited legal answer, and how often this seat
        went out first in the playouts that began with it.

        ``with_tichu`` plays every deal as if this seat called Tichu now.
        """
        t0 = time.perf_counter()
        limit = self.budget(obs)
        stop = None if limit is None else t0 + limit
        max_iter = self.iterations if self.iterations is not None else 1 << 30
        rng = random.Random(f"search/{self.seed}/{obs.hand_no}/{len(obs.events)}/{obs.hand}")
        det = Determinizer(obs)
        me = obs.seat
        reps = _representatives(obs.legal, obs.hand)
        root = Node()
        bucket = root.children.setdefault((obs.to_act, obs.phase is Phase.BOMB_WINDOW), {})
        root_figs = sorted(reps, key=lambda f: -_prior(f, obs.hand.bit_count(), obs.top is None))
        first: dict[Figure, int] = dict.fromkeys(reps, 0)
        c = self.exploration
        scale = 2.0 * self.reward_scale
        iters = 0
        clock = time.perf_counter
        while iters < max_iter:
            if stop is not None and iters & 7 == 0 and iters and clock() >= stop:
                break
            iters += 1
            root.n += 1
            m = det.sample(rng)
            if with_tichu:
                m.apply(CALL_TICHU)
            # The root: its legal answers are the observed ones in every deal.
            f, child, fresh = self._select(root, bucket, root_figs, c)
            m.apply(reps[f])
            path: list[tuple[Node, int]] = [(child, me)]
            if not fresh:
                self._descend(m, child, path, c)
            rollout(m, rng, 0, self.epsilon)
            res = m.hand_results[0]
            first[f] += res.out[0] == me
            r0 = 0.5 + (res.score[0] - res.score[1]) / scale
            for nd, seat in path:
                nd.n += 1
                nd.w += 1.0 - r0 if seat & 1 else r0
        self.last_iterations = iters
        self.last_seconds = clock() - t0
        best, node = max(bucket.items(), key=lambda kv: (kv[1].n, kv[1].w))
        return reps[best], first[best] / node.n

    def _descend(self, m: Match, node: Node, path: list[tuple[Node, int]], c: float) -> None:
        """Follows the tree below the root until a node is expanded or the hand ends."""
        results = m.hand_results
        while not results:
            ph = m.phase
            if ph is not Phase.PLAY and ph is not Phase.BOMB_WINDOW:
                m.apply(_other_answer(m))
                continue
            legal = m.legal_actions()
            if len(legal) == 1:
                m.apply(legal[0])
                continue
            s = m.seat
            reps: dict[Figure, Play] = {}
            for a in legal:
                f = figure(a)  # type: ignore[arg-type]
                if f not in reps:
                    reps[f] = a  # type: ignore[assignment]
            leading = not m.trick
            size = m.hands[s].bit_count()
            figs = sorted(reps, key=lambda f: -_prior(f, size, leading))
            bucket = node.children.setdefault((s, ph is Phase.BOMB_WINDOW), {})
            f, child, was_new = self._select(node, bucket, figs, c)
            m.apply(reps[f])
            path.append((child, s))
            node = child
            if was_new:
                return

    def _select(
        self, node: Node, bucket: dict[Figure, Node], figs: Sequence[Figure], c: float
    ) -> tuple[Figure, Node, bool]:
        """Progressive widening over ``figs`` (best prior first), then UCB among them.

        Returns the figure, its child node and whether the child was just created.
        """
        k = int(self.widening * math.sqrt(node.n + 1)) + 2
        allowed = figs[:k]
        fresh: Figure | None = None
        for f in allowed:
            child = bucket.get(f)
            if child is None:
                if fresh is None:
                    fresh = f
            else:
                child.avail += 1
        if fresh is not None:
            child = bucket[fresh] = Node()
            child.avail = 1
            return fresh, child, True
        best_f = allowed[0]
        best_child = bucket[best_f]
        best = -math.inf
        log = math.log
        sqrt = math.sqrt
        for f in allowed:
            ch = bucket[f]
            u = ch.w / ch.n + c * sqrt(log(ch.avail) / ch.n)
            if u > best:
                best = u
                best_f = f
                best_child = ch
        return best_f, best_child, False


# ----------------------------------------------------------------- rules


def _representatives(legal: Sequence[Action], hand: Mask) -> dict[Figure, Play]:
    """One play per figure: the variant that breaks the fewest bombs of ``hand``."""
    bombs = [p.cards for p in combinations(hand) if p.kind >= FOUR_BOMB]
    reps: dict[Figure, Play] = {}
    cost: dict[Figure, int] = {}
    for a in legal:
        assert isinstance(a, Play)
        f = figure(a)
        broken = sum(1 for b in bombs if b & a.cards and b != a.cards)
        if f not in reps or broken < cost[f]:
            reps[f] = a
            cost[f] = broken
    return reps
