"""StrongBot: ``SearchBot``'s tree search on a fast simulator, with inference and a clock.

Three things set it apart from ``example_bots.search``, each switchable for measurement:

* **Inference** (``inference``): the hidden cards are dealt weighted by what the seats'
  bets, exchange and plays suggest (``infer.card_weights`` through
  ``Determinizer.deal``), not uniformly.
* **Speed**: every deal and playout runs on ``sdk.playout.FastHand`` with the greedy policy
  of ``policy`` that reads most answers straight from the hand's bits, several times more
  playouts per second than on ``Match``.
* **Time management**: the budget is the decision's deadline (less a margin for a loaded
  machine), plus a share of the hand's time bank spread over the cards still in hand; a
  decision with one answer, or whose only sensible answer is going out, is answered at once;
  the search stops early when its most visited answer can no longer be overtaken; the
  garbage collector waits until the answer is given.

The tree (``tree``) is ``SearchBot``'s information-set tree shared by all deals (figures as
moves, progressive widening, UCB); with ``tree=False`` only the root's answers keep
statistics (flat determinized Monte Carlo). The search alone decides the Tichu call
(``tichu_bar``): each decision before the seat's first card is searched with the bet in
place and answered from that search whether the call is made or not (searching the answer
again without the bet played worse); Grand Tichu, the exchange, the wish and the gift follow
``SearchBot``. At the end of each match the bot logs how many searches it ran, how long
they thought and how many iterations they reached (the seat's log of an event).
"""

from __future__ import annotations

import gc
import logging
import math
import random
import time
from collections.abc import Callable

from arena.rules import PASS_K, Mask, Observation, Phase, Play
from example_bots.search.bot import Figure, Node, SearchBot, _prior, _representatives, figure
from example_bots.strong.infer import card_weights
from example_bots.strong.policy import answer, rollout
from sdk.playout import BOMB_WINDOW, GIFT, OVER, WISH, FastHand
from sdk.sim import Determinizer

__all__ = ["StrongBot"]

log = logging.getLogger("strong")

DEADLINE_SHARE = 0.8  # of the decision's own time: the rest absorbs a loaded machine
DEADLINE_MARGIN = 0.03  # seconds kept back besides
NO_CLOCK = 0.8  # seconds per decision when no clock is known (in-process play)
BANK_SPREAD = 2  # the bank is spread over at least this many decisions
TICHU_BAR = 0.7  # share of playouts going out first that makes the search call Tichu


class StrongBot(SearchBot):
    """ISMCTS on ``FastHand`` with inference and time management (see the module docstring).

    Args (besides ``SearchBot``'s):
        inference: Weigh the deals by the seats' behaviour (else uniform deals).
        tree: Below the root, keep a shared tree of this seat's own decisions only (1, the
            other seats play the policy there), of every seat's (2), or none (0: flat
            Monte Carlo at the root).
        early_stop: Stop once the most visited answer cannot be overtaken in the time left.
        random_playouts: Play the playouts uniformly at random instead of by the policy
            (slow: for measuring what the policy is worth).
        tichu_bar: Call Tichu whenever this seat goes out first in at least this share of
            the searched playouts (``None``: the heuristic's call with the search's veto).
    """

    name = "strong"

    def __init__(
        self,
        iterations: int | None = None,
        time_limit: float | None = None,
        seed: int = 0,
        exploration: float = 0.3,
        widening: float = 2.0,
        reward_scale: float = 400.0,
        epsilon: float = 0.1,
        tichu_veto: float = 0.45,
        inference: bool = True,
        tree: int = 1,
        early_stop: bool = True,
        random_playouts: bool = False,
        tichu_bar: float | None = TICHU_BAR,
    ) -> None:
        super().__init__(
            iterations=iterations,
            time_limit=time_limit if time_limit is not None or iterations else NO_CLOCK,
            seed=seed,
            exploration=exploration,
            widening=widening,
            reward_scale=reward_scale,
            epsilon=epsilon,
            tichu_veto=tichu_veto,
        )
        self._explicit_limit = time_limit
        self.inference = inference
        self.tree = tree
        self.early_stop = early_stop
        self.random_playouts = random_playouts
        self.tichu_bar = tichu_bar
        self._searches: list[tuple[int, float]] = []  # (iterations, seconds) this match

    def on_match_start(self, seat: int) -> None:
        """Starts the match's search statistics afresh."""
        self._searches = []

    def on_match_end(self, scores: tuple[int, int]) -> None:
        """Logs what the searches of the match did: how long they thought, how deep."""
        done = [s for s in self._searches if s[0]]
        if done:
            iters = sum(n for n, _ in done)
            secs = sum(t for _, t in done)
            log.info(
                "%d searches: %.0f iterations and %.0f ms each on average, %.0f ms at most,"
                " %.0f iterations/s",
                len(done),
                iters / len(done),
                1000 * secs / len(done),
                1000 * max(t for _, t in done),
                iters / secs if secs else 0.0,
            )
        self._searches = []

    def call_tichu(self, obs: Observation) -> bool:
        """Tichu when the search's playouts with the bet in place go out first often enough.

        Without ``tichu_bar``: ``SearchBot``'s rule (the heuristic's call, vetoed by the
        search). With it, every first play is searched with the bet in place and the call is
        made when this seat went out first in at least ``tichu_bar`` of the playouts of the
        chosen answer (``tichu_veto`` when the heuristic would call too); never beside a
        partner's bet.
        """
        if self.tichu_bar is None:
            return super().call_tichu(obs)
        if not obs.may_call_tichu or obs.phase not in (Phase.PLAY, Phase.BOMB_WINDOW):
            return False
        mate = (obs.seat + 2) & 3
        if obs.tichu[mate] or obs.grand[mate] or obs.out:
            return False
        bar = self.tichu_veto if self._rules.call_tichu(obs) else self.tichu_bar
        return self._searched(obs, with_tichu=True)[1] >= bar

    def budget(self, obs: Observation) -> float | None:
        """Seconds this decision may use: most of its deadline plus a share of the bank.

        Without a known clock: ``time_limit`` (0.8 s by default). An explicit
        ``time_limit`` also caps the clock's budget.
        """
        left = self.time_left_ms
        if left is None:
            return self.time_limit
        own = min(left, self.deadline_ms if self.deadline_ms is not None else left)
        bank = max(0.0, left - own)
        share = bank / max(BANK_SPREAD, obs.hand.bit_count())
        fit = max(0.005, (DEADLINE_SHARE * own + 0.5 * share) / 1000.0 - DEADLINE_MARGIN)
        cap = self._explicit_limit
        return fit if cap is None else min(cap, fit)

    def search(self, obs: Observation, with_tichu: bool = False) -> tuple[Play, float]:
        """The most visited answer from ``obs``, and how often this seat went out first in
        the playouts that began with it (``with_tichu``: as if it called Tichu now)."""
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._search(obs, with_tichu)
        finally:
            self._searches.append((self.last_iterations, self.last_seconds))
            if enabled:
                gc.enable()

    def _search(self, obs: Observation, with_tichu: bool) -> tuple[Play, float]:
        t0 = time.perf_counter()
        clock = time.perf_counter
        me = obs.seat
        reps = _representatives(obs.legal, obs.hand)
        obvious = _obvious(obs, reps)
        if obvious is not None:
            self.last_iterations = 0
            self.last_seconds = clock() - t0
            return obvious, 1.0 if obs.hand == obvious.cards else 0.0
        limit = self.budget(obs)
        stop = math.inf if limit is None else t0 + limit
        max_iter = self.iterations if self.iterations is not None else 1 << 30
        rng = random.Random(f"strong/{self.seed}/{obs.hand_no}/{len(obs.events)}/{obs.hand}")
        rand = rng.random
        det = Determinizer(obs)
        weights = card_weights(obs) if self.inference else None
        hand = obs.hand
        deal = self.deal
        template = FastHand.from_observation(obs, deal(det, rng, weights))
        if with_tichu:
            template.stakes[me] = 100
        root = Node()
        bucket = root.children.setdefault((obs.to_act, obs.phase is Phase.BOMB_WINDOW), {})
        size = obs.hand.bit_count()
        root_figs = sorted(reps, key=lambda f: -_prior(f, size, obs.top is None))
        first: dict[Figure, int] = dict.fromkeys(reps, 0)
        c = self.exploration
        scale = 2.0 * self.reward_scale
        epsilon = self.epsilon
        tree = self.tree
        iters = 0
        while iters < max_iter:
            if iters & 3 == 0 and iters:
                now = clock()
                if now >= stop:
                    break
                if self.early_stop and iters & 63 == 0 and stop < math.inf:
                    rate = iters / (now - t0)
                    if _settled(bucket, rate * (stop - now)):
                        break
            iters += 1
            root.n += 1
            hands = deal(det, rng, weights)
            hands[me] = hand
            h = template.with_hands(hands)
            f, child, fresh = self._select(root, bucket, root_figs, c)
            h.apply(reps[f])
            path: list[tuple[Node, int]] = [(child, me)]
            if tree and not fresh:
                self._descend_fast(h, child, path, c, me if tree == 1 else -1, rand)
            if self.random_playouts:
                _random_rollout(h, rng)
            else:
                rollout(h, rand, epsilon)
            first[f] += h.out[0] == me
            s0, s1 = h.score
            r0 = 0.5 + (s0 - s1) / scale
            for nd, seat in path:
                nd.n += 1
                nd.w += 1.0 - r0 if seat & 1 else r0
        self.last_iterations = iters
        self.last_seconds = clock() - t0
        best, node = max(bucket.items(), key=lambda kv: (kv[1].n, kv[1].w))
        return reps[best], first[best] / max(1, node.n)

    def deal(
        self, det: Determinizer, rng: random.Random, weights: list[list[float]] | None
    ) -> list[Mask]:
        """The hidden hands of one iteration (a hook for measurements that replace it)."""
        return det.deal(rng, weights)

    def _descend_fast(
        self,
        h: FastHand,
        node: Node,
        path: list[tuple[Node, int]],
        c: float,
        only: int,
        rand: Callable[[], float],
    ) -> None:
        """Follows the tree below the root until a node is opened or the hand ends; with
        ``only`` a seat, the other seats answer by the policy instead."""
        epsilon = self.epsilon
        while h.phase != OVER:
            ph = h.phase
            if ph in (WISH, GIFT) or (only >= 0 and h.seat != only):
                h.apply(answer(h, rand, epsilon))
                continue
            legal = h.plays()
            if len(legal) == 1:
                h.apply(legal[0])
                continue
            s = h.seat
            reps: dict[Figure, Play] = {}
            for a in legal:
                f = figure(a)
                if f not in reps:
                    reps[f] = a
            leading = h.top is None
            size = h.hands[s].bit_count()
            figs = sorted(reps, key=lambda f: -_prior(f, size, leading))
            bucket = node.children.setdefault((s, ph == BOMB_WINDOW), {})
            f, child, was_new = self._select(node, bucket, figs, c)
            h.apply(reps[f])
            path.append((child, s))
            node = child
            if was_new:
                return


def _random_rollout(h: FastHand, rng: random.Random) -> None:
    """Plays ``h`` to its end with uniformly random answers (the policy's baseline)."""
    while h.phase != OVER:
        if h.phase in (WISH, GIFT):
            h.apply(answer(h, rng.random, 0.0))
        else:
            h.apply(rng.choice(h.plays()))


def _obvious(obs: Observation, reps: dict[Figure, Play]) -> Play | None:
    """An answer that needs no search: the only figure, or going out with the whole hand
    while the partner has no live bet."""
    if len(reps) == 1:
        return next(iter(reps.values()))
    partner = (obs.seat + 2) & 3
    partner_bet = (obs.tichu[partner] or obs.grand[partner]) and partner not in obs.out
    if not partner_bet:
        for p in reps.values():
            if p.cards == obs.hand and p.kind != PASS_K:
                return p
    return None


def _settled(bucket: dict[Figure, Node], remaining: float) -> bool:
    """Whether the most visited child leads the next by more than ``remaining`` visits."""
    if len(bucket) < 2:
        return False
    first = second = 0
    for nd in bucket.values():
        n = nd.n
        if n > first:
            first, second = n, first
        elif n > second:
            second = n
    return first - second > remaining
