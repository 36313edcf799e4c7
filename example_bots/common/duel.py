"""In-process duplicate matches between two bot types, for strength tests and tuning.

A *board* is one deal played twice: team A (seats 0 and 2) against team B, then again with
the deal rotated by one seat so each team holds the cards the other held. Card luck cancels,
so a board's margin (A's score minus B's, averaged over its two hands) measures play. Every
hand is ``Options(hands=1)``; Tichu is asked whenever ``may_call_tichu`` holds, and the call
is applied before the bot's answer, as the referee does.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from arena.rules import (
    CALL_TICHU,
    Deal,
    HandResult,
    Match,
    Options,
    deal_from_seed,
    observe,
)
from sdk import Bot

BotFactory = Callable[[], Bot]


@dataclass
class Timing:
    """Decisions answered by one bot type and the time each took (seconds)."""

    times: list[float] = field(default_factory=list)

    def add(self, seconds: float) -> None:
        """Records one decision."""
        self.times.append(seconds)

    @property
    def decisions(self) -> int:
        """Number of decisions."""
        return len(self.times)

    @property
    def seconds(self) -> float:
        """Total time."""
        return sum(self.times)

    @property
    def slowest(self) -> float:
        """The slowest decision."""
        return max(self.times, default=0.0)

    def quantile(self, q: float) -> float:
        """The ``q`` quantile of the decision times (0 <= q <= 1)."""
        if not self.times:
            return 0.0
        ordered = sorted(self.times)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    @property
    def per_second(self) -> float:
        """Decisions per second."""
        total = self.seconds
        return self.decisions / total if total else float("inf")


@dataclass
class BetTally:
    """Tichu and Grand Tichu calls of one side and how many it won."""

    tichu: int = 0
    tichu_won: int = 0
    grand: int = 0
    grand_won: int = 0


@dataclass
class DuelResult:
    """Margins per board (A minus B, points per hand) and bookkeeping."""

    margins: list[float] = field(default_factory=list)
    a_scores: list[float] = field(default_factory=list)
    timing: dict[str, Timing] = field(default_factory=dict)
    bets: dict[str, BetTally] = field(default_factory=dict)
    first_out: dict[str, int] = field(default_factory=dict)
    double_wins: dict[str, int] = field(default_factory=dict)

    @property
    def boards(self) -> int:
        """Number of boards played."""
        return len(self.margins)

    @property
    def mean(self) -> float:
        """Mean margin per hand."""
        return sum(self.margins) / len(self.margins)

    @property
    def half_width(self) -> float:
        """Half-width of the 95% normal interval of the mean (boards are independent)."""
        n = len(self.margins)
        if n < 2:
            return float("inf")
        m = self.mean
        var = sum((x - m) ** 2 for x in self.margins) / (n - 1)
        return 1.96 * math.sqrt(var / n)

    def summary(self) -> str:
        """One line: mean margin ± 95% half-width over n boards."""
        return f"{self.mean:+.1f} ± {self.half_width:.1f} points per hand ({self.boards} boards)"


def rotate(deal: Deal) -> Deal:
    """The deal moved one seat on: seat ``s`` gets the hand seat ``s - 1`` had."""
    return (deal[3], deal[0], deal[1], deal[2])


def play_hand(
    deal: Deal,
    bots: Sequence[Bot],
    timing: dict[str, Timing] | None = None,
) -> HandResult:
    """Plays one hand of ``deal`` with ``bots[s]`` in seat ``s``; returns its result."""
    m = Match(Options(hands=1), seed=0, deals=[deal])
    for s, bot in enumerate(bots):
        bot.on_match_start(s)
    clock = time.perf_counter
    while not m.over:
        s = m.seat
        bot = bots[s]
        obs = observe(m, s)
        t0 = clock()
        calls = obs.may_call_tichu and bot.call_tichu(obs)
        asked = clock() - t0
        if calls:
            m.apply(CALL_TICHU)
            obs = observe(m, s)
        t1 = clock()
        action = bot.act(obs)
        if timing is not None:
            timing.setdefault(bot.name, Timing()).add(clock() - t1 + asked)
        m.apply(action)
    result = m.hand_results[0]
    for bot in bots:
        bot.on_match_end((m.scores[0], m.scores[1]))
    return result


def duel(
    make_a: BotFactory,
    make_b: BotFactory,
    boards: int,
    first_seed: int = 0,
) -> DuelResult:
    """Plays ``boards`` duplicate boards (seeds ``first_seed``...) of A against B."""
    res = DuelResult()
    for k in range(boards):
        deal = deal_from_seed(first_seed + k, 0)
        total = 0.0
        a_total = 0.0
        for d in (deal, rotate(deal)):
            bots = [make_a(), make_b(), make_a(), make_b()]
            r = play_hand(d, bots, res.timing)
            total += r.score[0] - r.score[1]
            a_total += r.score[0]
            _tally(res, r, bots)
        res.margins.append(total / 2)
        res.a_scores.append(a_total / 2)
    return res


def _tally(res: DuelResult, r: HandResult, bots: Sequence[Bot]) -> None:
    first = r.out[0]
    name = bots[first].name
    res.first_out[name] = res.first_out.get(name, 0) + 1
    if r.double_victory >= 0:
        winner = bots[r.double_victory].name
        res.double_wins[winner] = res.double_wins.get(winner, 0) + 1
    for s, bot in enumerate(bots):
        tally = res.bets.setdefault(bot.name, BetTally())
        if r.tichu[s]:
            tally.tichu += 1
            tally.tichu_won += int(first == s)
        if r.grand[s]:
            tally.grand += 1
            tally.grand_won += int(first == s)
