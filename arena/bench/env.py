"""Learning-environment benchmark: env steps/s beside the rules core's own step.

Run with ``arena bench env``. Both sides play the same random hands (uniform over the legal
answers, never a bet): the core as the referee asks a seat (``observe`` with its legal
answers, then ``apply``), the environment through ``step`` and ``last()`` (the observation
vector and the mask). What the environment costs beyond the core per answer is the encoding.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

import numpy as np

from arena.bench.engine import random_answer
from arena.rules import Match, Options, observe


@dataclass(frozen=True)
class EnvFigures:
    """What ``bench_env`` measured: the core's answers and the environment's steps."""

    hands: int
    core_answers: int
    core_seconds: float
    env_steps: int
    env_answers: int
    env_seconds: float

    @property
    def core_us(self) -> float:
        """Microseconds per answer on the rules core (observe, then apply)."""
        return 1e6 * self.core_seconds / self.core_answers

    @property
    def env_us(self) -> float:
        """Microseconds per answer through the environment (its steps for that answer)."""
        return 1e6 * self.env_seconds / self.env_answers

    @property
    def encoding_share(self) -> float:
        """The encoding's cost per answer as a fraction of the core's step."""
        return (self.env_us - self.core_us) / self.core_us


def _core(hands: int, seed: int) -> tuple[int, float]:
    rng = random.Random(seed)
    clock = time.perf_counter
    answers = 0
    t0 = clock()
    for k in range(hands):
        m = Match(Options(hands=1), seed + k)
        while not m.over:
            observe(m, m.seat)
            m.apply(random_answer(m, rng))
            answers += 1
    return answers, clock() - t0


def _env(hands: int, seed: int) -> tuple[int, int, float]:
    from arena.env.encoding import GRAND_BASE, TICHU_ACTION
    from arena.env.tichu_v0 import raw_env

    env = raw_env()
    rng = np.random.default_rng(seed)
    clock = time.perf_counter
    steps = 0
    answers = 0
    t0 = clock()
    for k in range(hands):
        env.reset(seed=seed + k)
        before = len(env.match.actions)
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            mask = obs["action_mask"]
            mask[TICHU_ACTION] = mask[GRAND_BASE + 1] = 0  # never bet, as the core's player
            legal = np.flatnonzero(mask)
            env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
        answers += len(env.match.actions) - before
    return steps, answers, clock() - t0


def bench_env(hands: int = 200, seed: int = 1, rounds: int = 3) -> EnvFigures:
    """Plays ``hands`` random hands on the core and through the environment, interleaved
    ``rounds`` times; keeps each side's fastest round (the least disturbed)."""
    best_core: tuple[int, float] | None = None
    best_env: tuple[int, int, float] | None = None
    for _ in range(rounds):
        c = _core(hands, seed)
        e = _env(hands, seed)
        if best_core is None or c[1] / c[0] < best_core[1] / best_core[0]:
            best_core = c
        if best_env is None or e[2] / e[1] < best_env[2] / best_env[1]:
            best_env = e
    assert best_core is not None and best_env is not None
    return EnvFigures(hands, best_core[0], best_core[1], best_env[0], best_env[1], best_env[2])
