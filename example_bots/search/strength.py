"""Strength of SearchBot on duplicate boards, in-process (a script, not a test).

A board is one seeded deal played twice with ``Options(hands=1)``: team X in seats 0 and 2,
then in seats 1 and 3, against team Y. The board's result is X's mean hand-score margin over
the two plays, ``d = (margin_1 + margin_2) / 2`` (card luck cancels), reported with a 95%
interval over boards and split into its parts (card points, double victories, bets): where a
bot's edge comes from. Run, e.g.::

    python -m example_bots.search.strength --x search:iterations=200 --y greedy --boards 100

Bots: ``search[:key=value,...]`` (``SearchBot`` keyword arguments), ``strong[:key=value,...]``
(``StrongBot``'s; 0/1 for its switches), ``random``, ``greedy``
(``example_bots.greedy``), ``heuristic`` (``example_bots.heuristic``), ``local-greedy``,
``oracle[:key=value,...]`` (``StrongBot`` searching the true deal instead of sampled ones:
what perfect inference of the hidden hands could win).
"""

from __future__ import annotations

import argparse
import importlib
import math
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing import Pool

from arena.rules import (
    CALL_TICHU,
    FOUR_BOMB,
    PASS,
    PASS_K,
    Action,
    Match,
    Observation,
    Options,
    Phase,
    Play,
    deal_from_seed,
    observe,
)
from example_bots.search.bot import SearchBot
from example_bots.strong.bot import StrongBot
from sdk import Bot
from sdk.sim import Determinizer


class RandomBot(Bot):
    """Uniform over the legal plays; sdk defaults for the rest."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self.rng = random.Random(seed)

    def play(self, obs: Observation) -> Play:
        """A random legal play."""
        a = self.rng.choice(obs.legal)
        assert isinstance(a, Play)
        return a

    def bomb(self, obs: Observation) -> Play:
        """Never bombs out of turn."""
        return PASS


class LocalGreedyBot(Bot):
    """Lowest non-bomb play that beats the table; passes on its partner; leads lowest."""

    name = "local-greedy"

    def play(self, obs: Observation) -> Play:
        """The lowest non-bomb legal play (pass on the partner's trick)."""
        plays = [a for a in obs.legal if isinstance(a, Play)]
        if plays[0].kind == PASS_K:
            if obs.trick and obs.trick[-1][0] == (obs.seat + 2) & 3:
                return PASS
            plain = [p for p in plays[1:] if p.kind < FOUR_BOMB]
            return plain[0] if plain else PASS
        plain = [p for p in plays if p.kind < FOUR_BOMB] or plays
        return min(plain, key=lambda p: (p.rank, -p.length))


class OracleStrongBot(StrongBot):
    """StrongBot that searches the true deal (a measurement of what inference could win)."""

    true_hands: tuple[int, ...] = ()  #: set before each decision by ``play_hand``

    def deal(
        self, det: Determinizer, rng: random.Random, weights: list[list[float]] | None
    ) -> list[int]:
        """The real hidden hands, as the match holds them now."""
        return list(self.true_hands)


def make_bot(spec: str, seed: int) -> Bot:
    """Builds a bot from its command-line spec (see the module docstring)."""
    name, _, args = spec.partition(":")
    if name in ("search", "strong", "oracle"):
        kwargs: dict[str, float | int | None] = {}
        for item in filter(None, args.split(",")):
            k, _, v = item.partition("=")
            kwargs[k] = None if v == "none" else float(v) if "." in v else int(v)
        if name == "oracle":
            return OracleStrongBot(seed=seed, **kwargs)  # type: ignore[arg-type]
        if name == "strong":
            return StrongBot(seed=seed, **kwargs)  # type: ignore[arg-type]
        return SearchBot(seed=seed, **kwargs)  # type: ignore[arg-type]
    if name == "random":
        return RandomBot(seed)
    if name == "local-greedy":
        return LocalGreedyBot()
    if name in ("greedy", "heuristic"):
        module = importlib.import_module(f"example_bots.{name}.bot")
        cls = getattr(module, f"{name.capitalize()}Bot")
        bot = cls()
        assert isinstance(bot, Bot)
        return bot
    raise ValueError(f"unknown bot {spec!r}")


@dataclass
class PlayStats:
    """What one play of a board produced."""

    margin: int  # team X's score minus team Y's
    cards: int = 0  # of the margin: card points outside a double victory
    double: int = 0  # of the margin: +200 or -200 for a double victory, else 0
    bets: int = 0  # of the margin: Tichu and Grand Tichu bets won and lost
    first: bool = False  # a seat of team X went out first
    searches: int = 0
    search_seconds: float = 0.0
    search_iterations: int = 0
    max_seconds: float = 0.0
    calls: list[tuple[int, bool]] = field(default_factory=list)  # (team, won) per bet


def play_hand(deal: Sequence[Sequence[int]], bots: Sequence[Bot], x_seats: int) -> PlayStats:
    """Plays one hand of ``deal``; ``x_seats`` is 0 (X in 0 and 2) or 1 (X in 1 and 3).

    The loop mirrors the referee's in-process seat: Tichu is offered first, forced answers
    (one legal answer, no Tichu possible) are applied without asking.
    """
    m = Match(Options(hands=1), 0, deals=[deal])
    st = PlayStats(0)
    while not m.over:
        s = m.seat
        bot = bots[s]
        obs = observe(m, s)
        if isinstance(bot, OracleStrongBot):
            bot.true_hands = tuple(m.hands)
        if obs.may_call_tichu and bot.call_tichu(obs):
            m.apply(CALL_TICHU)
        if obs.phase in (Phase.PLAY, Phase.BOMB_WINDOW) and len(obs.legal) == 1:
            m.apply(obs.legal[0])
            continue
        t0 = time.perf_counter()
        action: Action = bot.act(obs)
        dt = time.perf_counter() - t0
        if isinstance(bot, SearchBot) and obs.phase in (Phase.PLAY, Phase.BOMB_WINDOW):
            st.searches += 1
            st.search_seconds += dt
            st.search_iterations += bot.last_iterations
            st.max_seconds = max(st.max_seconds, dt)
        m.apply(action)
    res = m.hand_results[0]
    x = x_seats
    st.margin = res.score[x] - res.score[1 - x]
    st.double = 0 if res.double_victory < 0 else 200 if res.double_victory == x else -200
    st.cards = res.card_points[x] - res.card_points[1 - x] - st.double
    st.bets = res.bets[x] - res.bets[1 - x]
    st.first = res.out[0] & 1 == x
    for t in range(4):
        if res.tichu[t] or res.grand[t]:
            st.calls.append((t & 1 ^ x, res.out[0] == t))  # team 0 = X
    return st


def play_board(args: tuple[int, str, str]) -> tuple[PlayStats, PlayStats]:
    """Plays board ``seed`` twice: X in seats 0/2, then X in seats 1/3."""
    seed, x_spec, y_spec = args
    deal = deal_from_seed(seed, 0)
    out = []
    for x_seats in (0, 1):
        bots = [
            make_bot(x_spec if (s & 1) == x_seats else y_spec, seed * 8 + x_seats * 4 + s)
            for s in range(4)
        ]
        out.append(play_hand(deal, bots, x_seats))
    return out[0], out[1]


def _mean_interval(values: Sequence[float]) -> str:
    """``mean ± half-width`` of a 95% interval over boards."""
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):+.1f} ± {1.96 * sd / math.sqrt(len(values)):.1f}"


def main(argv: Sequence[str] | None = None) -> None:
    """Runs the boards and prints X's points per board with a 95% interval."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--x", default="search:iterations=200,time_limit=none")
    ap.add_argument("--y", default="greedy")
    ap.add_argument("--boards", type=int, default=50)
    ap.add_argument("--first", type=int, default=1, help="first board seed")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    jobs = [(a.first + i, a.x, a.y) for i in range(a.boards)]
    t0 = time.perf_counter()
    results: list[tuple[PlayStats, PlayStats]] = []
    with Pool(a.workers) as pool:
        for pq in pool.imap(play_board, jobs, chunksize=1):
            results.append(pq)
            d = [(p.margin + q.margin) / 2 for p, q in results]
            mean = statistics.fmean(d)
            print(f"board {len(d)}: {d[-1]:+.1f}, mean {mean:+.1f}", file=sys.stderr, flush=True)
    wall = time.perf_counter() - t0
    d = [(p.margin + q.margin) / 2 for p, q in results]
    sd = statistics.stdev(d) if len(d) > 1 else 0.0
    plays = [p for pq in results for p in pq]
    searches = sum(p.searches for p in plays)
    secs = sum(p.search_seconds for p in plays)
    iters = sum(p.search_iterations for p in plays)
    worst = max((p.max_seconds for p in plays), default=0.0)
    print(f"X = {a.x}  vs  Y = {a.y}  boards {len(d)} (seeds {a.first}..{a.first + a.boards - 1})")
    print(f"points per board (X margin, mean of 2 plays): {_mean_interval(d)} (sd {sd:.0f})")
    for label, part in (("card points", "cards"), ("double victories", "double"), ("bets", "bets")):
        per_board = [(getattr(p, part) + getattr(q, part)) / 2 for p, q in results]
        print(f"  of which {label}: {_mean_interval(per_board)}")
    doubles = [sum(p.double == v for p in plays) for v in (200, -200)]
    firsts = sum(p.first for p in plays)
    print(
        f"X out first in {firsts} of {len(plays)} hands; double victories X {doubles[0]},"
        f" Y {doubles[1]}"
    )
    wins = sum(1 for v in d if v > 0)
    ties = sum(1 for v in d if v == 0)
    print(f"boards won/tied/lost: {wins}/{ties}/{len(d) - wins - ties}")
    if searches:
        print(
            f"searched decisions {searches}: {secs / searches * 1000:.0f} ms mean,"
            f" {worst * 1000:.0f} ms max, {iters / searches:.0f} iterations mean,"
            f" {iters / secs:.0f} iterations/s, {searches / secs:.2f} decisions/s"
        )
    for team, label in ((0, "X"), (1, "Y")):
        calls = [won for t, won in (c for p in plays for c in p.calls) if t == team]
        if calls:
            print(f"{label} bets: {len(calls)} made, {sum(calls)} won")
    print(f"wall {wall:.0f} s")


if __name__ == "__main__":
    main()
