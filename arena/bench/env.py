"""Learning-environment benchmark: env steps/s beside the rules core's own step.

Run with ``arena bench env``. Both sides play the same random hands (uniform over the legal
answers, never a bet): the core as the referee asks a seat (``observe`` with its legal
answers, then ``apply``), the environment through ``step`` and ``last()`` (the observation
vector and the mask). What the environment costs beyond the core per answer is the encoding.
A third side, the floor, plays the same hands through the environment with a constant
observation vector and no view built (the mask kept, or the hands could not be played): what
the AEC protocol, the decision's bookkeeping and the mask cost before any encoding. Last, the
cheapest way known here to turn the vector's card blocks into floats (the masks packed in one
integer, unpacked by numpy into a float vector made beforehand), timed alone: the floor plus
that is what any observation costs before a single field of the seat's view is read.
"""

from __future__ import annotations

import random
import time
import timeit
from dataclasses import dataclass
from typing import Any

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
    floor_seconds: float  # the same steps with a constant observation vector and no view
    blocks_us: float  # the card blocks alone, unpacked into floats, per observation

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

    @property
    def floor_us(self) -> float:
        """Microseconds per answer through the environment without any observation."""
        return 1e6 * self.floor_seconds / self.env_answers

    @property
    def floor_share(self) -> float:
        """What the environment costs beyond the core without any observation, as a
        fraction of the core's step (which builds one): a floor under ``encoding_share``."""
        return (self.floor_us - self.core_us) / self.core_us

    @property
    def bound_share(self) -> float:
        """The floor plus the card blocks, as a fraction of the core's step: a lower bound
        on ``encoding_share`` for an observation built in Python with numpy."""
        return self.floor_share + self.blocks_us / self.core_us


def _blocks_us(repeat: int = 5, number: int = 5000) -> float:
    """Microseconds to unpack the card blocks of one observation into floats, fastest of
    ``repeat`` runs."""
    from arena.env.encoding import N_CARD_BLOCKS, OBS_SIZE

    masks = [((1 << 56) - 1) ^ (1 << i) for i in range(N_CARD_BLOCKS)]
    out = np.zeros(OBS_SIZE, np.float32)
    width = 56 * N_CARD_BLOCKS

    def blocks() -> None:
        big = 0
        for i, m in enumerate(masks):
            big |= m << (56 * i)
        raw = np.frombuffer(big.to_bytes(7 * N_CARD_BLOCKS, "little"), np.uint8)
        out[:width] = np.unpackbits(raw, bitorder="little")

    return 1e6 * min(timeit.repeat(blocks, number=number, repeat=repeat)) / number


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


def _floor_env() -> Any:
    """The environment with a constant observation vector and no view: only the mask."""
    from arena.env.encoding import N_ACTIONS, OBS_SIZE
    from arena.env.tichu_v0 import raw_env

    class FloorEnv(raw_env):
        zeros = np.zeros(OBS_SIZE, dtype=np.float32)
        no_mask = np.zeros(N_ACTIONS, dtype=np.int8)

        def observe(self, agent: str) -> dict[str, Any]:
            decision = self.decision if agent == self.agent_selection else None
            mask = decision.mask() if decision is not None else self.no_mask
            return {"observation": self.zeros, "action_mask": mask}

    return FloorEnv()


def _env(hands: int, seed: int, floor: bool = False) -> tuple[int, int, float]:
    from arena.env.encoding import GRAND_BASE, TICHU_ACTION
    from arena.env.tichu_v0 import raw_env

    env = _floor_env() if floor else raw_env()
    rng = random.Random(seed)  # as the core's side picks: the pick costs both sides alike
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
            legal = mask.nonzero()[0].tolist()
            env.step(legal[rng.randrange(len(legal))])
            steps += 1
        answers += len(env.match.actions) - before
    return steps, answers, clock() - t0


def bench_env(hands: int = 200, seed: int = 1, rounds: int = 3) -> EnvFigures:
    """Plays ``hands`` random hands on the core and through the environment, interleaved
    ``rounds`` times; keeps each side's fastest round (the least disturbed)."""
    best_core: tuple[int, float] | None = None
    best_env: tuple[int, int, float] | None = None
    best_floor = float("inf")
    for _ in range(rounds):
        c = _core(hands, seed)
        e = _env(hands, seed)
        best_floor = min(best_floor, _env(hands, seed, floor=True)[2])
        if best_core is None or c[1] / c[0] < best_core[1] / best_core[0]:
            best_core = c
        if best_env is None or e[2] / e[1] < best_env[2] / best_env[1]:
            best_env = e
    assert best_core is not None and best_env is not None
    return EnvFigures(
        hands,
        best_core[0],
        best_core[1],
        best_env[0],
        best_env[1],
        best_env[2],
        best_floor,
        _blocks_us(),
    )
