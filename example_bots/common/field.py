"""In-process events of the reference bots and variants, for calibration on real games.

A *field* is a list of named bots. An event seats them at tables of four round after round,
as ``arena.ratings.calibration`` seats its simulated bots (the three partnerships in turn for
four bots, a fresh random seating otherwise), and every table plays ``boards`` duplicate
boards in rotations 0 and 1: a deal, then the same deal one seat on, so each team holds the
cards the other held. Each play is one hand (``example_bots.common.duel.play_hand``) with
fresh bot objects, as the arena's sessions start fresh processes.

The variants are the bots the gate is meant for: a change that makes a bot play almost like
its baseline. ``greedy-no-calls`` and ``heuristic-no-calls`` never call Tichu or Grand Tichu
and play otherwise exactly as their bases.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arena.rules import Observation, deal_from_seed
from example_bots.common.duel import play_hand, rotate
from example_bots.greedy.bot import GreedyBot
from example_bots.heuristic.bot import HeuristicBot
from sdk import Bot
from sdk.testing import RandomBot

_PARTNERSHIPS = ((0, 1, 2, 3), (0, 2, 1, 3), (0, 1, 3, 2))


class GreedyNoCalls(GreedyBot):
    """Greedy without Tichu or Grand Tichu calls."""

    name = "greedy-no-calls"

    def grand_tichu(self, obs: Observation) -> bool:
        """Never calls."""
        return False

    def call_tichu(self, obs: Observation) -> bool:
        """Never calls."""
        return False


class HeuristicNoCalls(HeuristicBot):
    """Heuristic without Tichu or Grand Tichu calls."""

    name = "heuristic-no-calls"

    def grand_tichu(self, obs: Observation) -> bool:
        """Never calls."""
        return False

    def call_tichu(self, obs: Observation) -> bool:
        """Never calls."""
        return False


BOTS: dict[str, Callable[[int], Bot]] = {
    "greedy": lambda seed: GreedyBot(),
    "greedy-no-calls": lambda seed: GreedyNoCalls(),
    "heuristic": lambda seed: HeuristicBot(),
    "heuristic-no-calls": lambda seed: HeuristicNoCalls(),
    "random": RandomBot,
}
"""The bot types by name, each made from a seed (only the random bot uses it); a field names
a type, optionally suffixed ``#k`` for a copy."""


@dataclass(frozen=True)
class Play:
    """One recorded hand: board, the four seats' bot names, the teams' scores, rotation."""

    board: str
    seats: tuple[str, str, str, str]
    score_a: int
    score_b: int
    rotation: int


def make_bot(name: str, seed: int) -> Bot:
    """Returns a fresh bot of the type ``name`` names (``random#2`` is a ``random``)."""
    return BOTS[name.split("#")[0]](seed)


def _line_up(names: Sequence[str], seed: int, board: int, rotation: int) -> list[Bot]:
    """Fresh bots for one play, seeded from the event, board, rotation and seat, so that a
    play's result does not depend on which events or rows ran before it."""
    base = ((seed * 1_000_003 + board) * 2 + rotation) * 4
    return [make_bot(name, base + seat) for seat, name in enumerate(names)]


def play_event(field: Sequence[str], rounds: int, boards: int, seed: int) -> list[Play]:
    """Plays one event of ``field``: ``rounds`` rounds of ``boards`` boards per table."""
    n = len(field)
    if n < 4 or len(set(field)) != n:
        raise ValueError(f"a field needs at least 4 distinct names, got {field!r}")
    rng = random.Random(seed)
    plays: list[Play] = []
    board = 0
    for k in range(rounds):
        order = list(_PARTNERSHIPS[k % 3]) if n == 4 else rng.sample(range(n), n)
        for t in range(n // 4):
            seats = tuple(field[i] for i in order[4 * t : 4 * t + 4])
            assert len(seats) == 4
            line_up = (seats[0], seats[1], seats[2], seats[3])
            for _ in range(boards):
                deal = deal_from_seed(seed * 1_000_003 + board, 0)
                for rotation, cards in enumerate((deal, rotate(deal))):
                    result = play_hand(cards, _line_up(line_up, seed, board, rotation))
                    plays.append(
                        Play(str(board), line_up, result.score[0], result.score[1], rotation)
                    )
                board += 1
    return plays


def gate_pairs(candidate: str, baseline: str, boards: int, first_seed: int) -> list[Play]:
    """Plays ``boards`` gate boards, candidate + candidate against baseline + baseline."""
    line_up = (candidate, baseline + "#1", candidate + "#2", baseline + "#2")
    plays: list[Play] = []
    for k in range(boards):
        deal = deal_from_seed(first_seed + k, 0)
        for rotation, cards in enumerate((deal, rotate(deal))):
            result = play_hand(cards, _line_up(line_up, first_seed, k, rotation))
            plays.append(Play(str(k), line_up, result.score[0], result.score[1], rotation))
    return plays
