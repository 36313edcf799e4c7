"""Engine benchmark: random self-play speed and play-generation speed on one core.

Run with ``arena bench engine``; it prints figures and is not part of the test suite.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from arena.rules import NO_GRAND, Action, Exchange, Match, Options, Phase, cards_of
from arena.rules.combos import generate


def random_answer(match: Match, rng: random.Random) -> Action:
    """Uniform over the legal answers, except that it never bets.

    The exchange is sampled (three distinct cards, uniform over the 2,184 ordered choices)
    instead of listed. Grand Tichu is always declined and Tichu never called: a random caller
    nearly always loses its bet, so random matches to a target would never end.
    """
    phase = match.phase
    if phase is Phase.EXCHANGE:
        a, b, c = rng.sample(list(cards_of(match.hands[match.seat])), 3)
        return Exchange(a, b, c)
    if phase is Phase.GRAND_TICHU:
        return NO_GRAND
    legal = match.legal_actions()
    return legal[rng.randrange(len(legal))]


@dataclass(frozen=True)
class EngineFigures:
    """What ``bench_engine`` measured."""

    matches: int
    hands: int
    decisions: int
    seconds: float
    legal_calls: int
    legal_seconds: float
    gen_hands: int
    gen_plays: int
    gen_seconds: float

    @property
    def hands_per_second(self) -> float:
        """Random self-play hands per second on one core."""
        return self.hands / self.seconds

    @property
    def decisions_per_hand(self) -> float:
        """Mean decisions (answers) per hand."""
        return self.decisions / self.hands

    @property
    def legal_us(self) -> float:
        """Mean microseconds per legal-action generation during play."""
        return 1e6 * self.legal_seconds / self.legal_calls

    @property
    def gen_hands_per_second(self) -> float:
        """Random 14-card hands whose every play was generated, per second."""
        return self.gen_hands / self.gen_seconds


def bench_engine(matches: int = 100, gen_hands: int = 20_000, seed: int = 1) -> EngineFigures:
    """Plays ``matches`` random matches to 1000, then generates plays for random hands."""
    rng = random.Random(seed)
    clock = time.perf_counter
    hands = decisions = legal_calls = 0
    legal_seconds = 0.0
    t0 = clock()
    for k in range(matches):
        m = Match(Options(), seed=seed * 1_000_003 + k)
        while m.phase is not Phase.MATCH_OVER:
            if m.phase is Phase.PLAY or m.phase is Phase.BOMB_WINDOW:
                t = clock()
                m.legal_actions()
                legal_seconds += clock() - t
                legal_calls += 1
            m.apply(random_answer(m, rng))
            decisions += 1
        hands += len(m.hand_results)
    seconds = clock() - t0
    deals = []
    for _ in range(gen_hands):
        deck = list(range(56))
        rng.shuffle(deck)
        mask = 0
        for c in deck[:14]:
            mask |= 1 << c
        deals.append(mask)
    t0 = clock()
    plays = 0
    for mask in deals:
        plays += len(generate(mask))
    gen_seconds = clock() - t0
    return EngineFigures(
        matches,
        hands,
        decisions,
        seconds,
        legal_calls,
        legal_seconds,
        gen_hands,
        plays,
        gen_seconds,
    )
