"""Playout benchmark: the search bots' simulation speed, interleaved, on one core.

Run with ``arena bench playouts``; it prints figures and is not part of the test suite.
Positions are turns taken from hands the heuristic bot plays against itself. Per round, in
turn (interleaved, so a drift in the machine's speed touches all alike):

* ``old``: ``SearchBot``'s playout: a deal by ``Determinizer.sample`` (a ``Match``) and its
  greedy rollout on the rules core;
* ``core``: ``StrongBot``'s playout policy on the rules core (a ``Match`` behind
  ``MatchHand``), dealt the same way: the engine comparison with the same policy;
* ``fast``: the same policy on ``sdk.playout.FastHand``, dealt by ``Determinizer.deal``
  with the inferred weights, as ``StrongBot`` deals;
* the two bots' full searches (tree, deals and playouts) at a fixed time per decision.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass, field
from typing import cast

from arena.rules import (
    PASS,
    Gift,
    Match,
    Observation,
    Options,
    Phase,
    Play,
    Wish,
    observe,
)
from example_bots.heuristic.bot import HeuristicBot
from example_bots.search.bot import SearchBot
from example_bots.search.bot import rollout as old_rollout
from example_bots.strong.bot import StrongBot
from example_bots.strong.infer import card_weights
from example_bots.strong.policy import rollout
from sdk.playout import BOMB_WINDOW, GIFT, OVER, PLAY, WISH, FastHand
from sdk.sim import Determinizer

_PHASES = {
    Phase.PLAY: PLAY,
    Phase.BOMB_WINDOW: BOMB_WINDOW,
    Phase.WISH: WISH,
    Phase.DRAGON_GIFT: GIFT,
}


class MatchHand:
    """``FastHand``'s interface over a rules-core ``Match``: the playout policy on the
    reference engine, for a like-for-like speed comparison."""

    def __init__(self, m: Match) -> None:
        self.m = m
        self.stakes = [200 if m.grand[t] else 100 if m.tichu[t] else 0 for t in range(4)]

    @property
    def phase(self) -> int:
        """``FastHand``'s phase codes; over once the hand has a result."""
        m = self.m
        return OVER if m.hand_results else _PHASES[m.phase]

    @property
    def hands(self) -> list[int]:
        """The four hands."""
        return self.m.hands

    @property
    def seat(self) -> int:
        """The seat to act."""
        return self.m.seat

    @property
    def top(self) -> Play | None:
        """The play to beat."""
        return self.m.top

    @property
    def wish(self) -> int:
        """The active wish (0: none)."""
        return self.m.wish

    @property
    def owner(self) -> int:
        """The seat owning the trick."""
        return self.m.owner

    @property
    def out(self) -> list[int]:
        """The seats out, in order."""
        return self.m.out

    def plays(self) -> tuple[Play, ...]:
        """The legal plays."""
        return cast(tuple[Play, ...], self.m.legal_actions())

    def combos_of(self, seat: int) -> tuple[Play, ...]:
        """Every play ``seat`` could lead."""
        return self.m.combos(seat)

    def play(self, seat: int, play: Play) -> None:
        """A play by the seat to act."""
        self.m.apply(play)

    def pass_turn(self, seat: int) -> None:
        """A pass by the seat to act."""
        self.m.apply(PASS)

    def apply(self, answer: Play | int) -> None:
        """Any answer, as ``FastHand.apply`` takes it."""
        m = self.m
        if isinstance(answer, Play):
            m.apply(answer)
        elif m.phase is Phase.WISH:
            m.apply(Wish(answer))
        else:
            m.apply(Gift(answer))


@dataclass
class PlayoutFigures:
    """Per round, playouts (or search iterations) per second of each kind."""

    positions: int
    deals: int
    old: list[float] = field(default_factory=list)
    core: list[float] = field(default_factory=list)
    fast: list[float] = field(default_factory=list)
    search_old: list[float] = field(default_factory=list)
    search_strong: list[float] = field(default_factory=list)

    @staticmethod
    def median(xs: list[float]) -> float:
        """The median of a series."""
        return statistics.median(xs)


def positions(hands: int, seed: int) -> list[Observation]:
    """Turns with a choice from ``hands`` hands of heuristic self-play (about one in three)."""
    rng = random.Random(seed)
    out = []
    for k in range(hands):
        m = Match(Options(hands=1), seed=seed * 1000 + k)
        bots = [HeuristicBot() for _ in range(4)]
        while not m.over:
            obs = observe(m, m.seat)
            if m.phase is Phase.PLAY and len(obs.legal) > 1 and rng.random() < 0.35:
                out.append(obs)
            m.apply(bots[m.seat].act(obs))
    return out


def _old(obs: list[Observation], deals: int, rng: random.Random) -> float:
    t0 = time.perf_counter()
    for o in obs:
        det = Determinizer(o)
        for _ in range(deals):
            old_rollout(det.sample(rng), rng, 0, 0.1)
    return len(obs) * deals / (time.perf_counter() - t0)


def _core(obs: list[Observation], deals: int, rng: random.Random) -> float:
    t0 = time.perf_counter()
    for o in obs:
        det = Determinizer(o)
        for _ in range(deals):
            rollout(cast(FastHand, MatchHand(det.sample(rng))), rng.random, 0.1)
    return len(obs) * deals / (time.perf_counter() - t0)


def _fast(obs: list[Observation], deals: int, rng: random.Random) -> float:
    t0 = time.perf_counter()
    for o in obs:
        det = Determinizer(o)
        weights = card_weights(o)
        template = FastHand.from_observation(o, det.deal(rng, weights))
        for _ in range(deals):
            hands = det.deal(rng, weights)
            hands[o.seat] = o.hand
            rollout(template.with_hands(hands), rng.random, 0.1)
    return len(obs) * deals / (time.perf_counter() - t0)


def _search(bot: SearchBot, obs: list[Observation]) -> float:
    iters = 0
    t0 = time.perf_counter()
    for o in obs:
        bot.search(o)
        iters += bot.last_iterations
    return iters / (time.perf_counter() - t0)


def bench_playouts(
    hands: int = 6, deals: int = 40, rounds: int = 3, think: float = 0.2, seed: int = 1
) -> PlayoutFigures:
    """Measures the kinds of playout and the two searches, interleaved over ``rounds``."""
    obs = positions(hands, seed)
    f = PlayoutFigures(len(obs), deals)
    old_bot = SearchBot(time_limit=think)
    strong_bot = StrongBot(time_limit=think, early_stop=False)
    for r in range(rounds):
        rng = random.Random(seed + r)
        f.old.append(_old(obs, deals, rng))
        f.core.append(_core(obs, deals, rng))
        f.fast.append(_fast(obs, deals, rng))
        some = obs[: max(1, len(obs) // 4)]
        f.search_old.append(_search(old_bot, some))
        f.search_strong.append(_search(strong_bot, some))
    return f
