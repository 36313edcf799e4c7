"""How well StrongBot's inference places the hidden cards, and where its factors come from.

    .venv/bin/python scripts/inference_quality.py --hands 200
    .venv/bin/python scripts/inference_quality.py --fit --hands 2000

The heuristic plays hands against itself. By default, at every fourth decision of a play
phase (after 20 events) the seat to act draws deals of the hidden cards, uniformly
(``Determinizer.deal``) and with ``example_bots.strong.infer.card_weights``, and each
sampler is scored by the mean log-probability it gives each hidden card's true holder (the
share of its deals that put the card there, smoothed): 0 would be knowing the deal. Each of
the weights' ingredients is also scored switched off. ``--fit`` prints instead what the
weights' factors are read from: how often the cards the heuristic passes to an opponent,
leads, or plays on an opponent's play have no rank-mate in its hand, against a random hand.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections import Counter
from collections.abc import Iterator
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.rules import (
    CALL_TICHU,
    CARD_RANKS,
    DRAGON,
    PAIR,
    PHOENIX,
    PHOENIX_BIT,
    RANK_MASKS,
    SINGLE,
    TRIPLE,
    Exchange,
    Match,
    Observation,
    Options,
    Phase,
    Play,
    cards_of,
    deal_from_seed,
    observe,
)
from example_bots.heuristic.bot import HeuristicBot
from example_bots.strong import infer
from sdk.sim import Determinizer

DEALS = 200  # deals drawn per sampler and position
HIGH = frozenset((DRAGON, PHOENIX, *cards_of(RANK_MASKS[14] | RANK_MASKS[13])))
INGREDIENTS = ("GIVEN_MATES", "LED_MATES", "FOLLOW_MATES", "TICHU_CONTROL", "GRAND_CONTROL")


def positions(seed: int) -> Iterator[tuple[Match, Observation, object]]:
    """Every decision of one hand of heuristic self-play: the match, the view, the answer."""
    m = Match(Options(hands=1), 0, deals=[deal_from_seed(seed, 0)])
    bots = [HeuristicBot() for _ in range(4)]
    while not m.over:
        s = m.seat
        obs = observe(m, s)
        if obs.may_call_tichu and bots[s].call_tichu(obs):
            m.apply(CALL_TICHU)
            obs = observe(m, s)
        if obs.phase in (Phase.PLAY, Phase.BOMB_WINDOW) and len(obs.legal) == 1:
            m.apply(obs.legal[0])
            continue
        answer = bots[s].act(obs)
        yield m, obs, answer
        m.apply(answer)


def _without(name: str, obs: Observation) -> list[list[float]]:
    """The weights with one ingredient's factor set to 1."""
    old = getattr(infer, name)
    setattr(infer, name, 1.0)
    try:
        return infer.card_weights(obs)
    finally:
        setattr(infer, name, old)


def score(seed: int) -> dict[str, list[float]]:
    """Per sampler: summed log-probability and count, over all hidden cards and high ones."""
    rng = random.Random(seed)
    out: dict[str, list[float]] = {}
    k = 0
    for m, obs, _ in positions(seed):
        if obs.phase is not Phase.PLAY or len(obs.events) <= 20:
            continue
        k += 1
        if k % 4:
            continue
        det = Determinizer(obs)
        weights = {"uniform": None, "weighted": infer.card_weights(obs)}
        for name in INGREDIENTS:
            weights[f"without {name}"] = _without(name, obs)
        for label, w in weights.items():
            deals = [det.deal(rng, w) for _ in range(DEALS)]
            acc = out.setdefault(label, [0.0, 0.0, 0.0, 0.0])
            for t in range(4):
                if t == obs.seat:
                    continue
                for c in cards_of(m.hands[t]):
                    held = sum(1 for d in deals if d[t] >> c & 1)
                    lp = math.log((held + 0.5) / (DEALS + 1.5))
                    acc[0] += lp
                    acc[1] += 1
                    if c in HIGH:
                        acc[2] += lp
                        acc[3] += 1
    return out


def fit(seed: int) -> Counter[str]:
    """Counts of rank-mates held beside the cards the heuristic passes and plays."""
    counts: Counter[str] = Counter()
    for _, obs, answer in positions(seed):
        hand = obs.hand
        if isinstance(answer, Exchange):
            for c, other in ((answer[0], answer[2]), (answer[2], answer[0])):
                if 2 <= c <= 53:
                    rest = hand & ~(1 << other) & ~(1 << c)
                    counts[f"passed to an opponent, mates {_mates(rest, CARD_RANKS[c])}"] += 1
            continue
        if obs.phase is not Phase.PLAY or not isinstance(answer, Play):
            continue
        top = obs.top
        owner = obs.trick[-1][0] if obs.trick else -1
        natural_set = answer.kind in (SINGLE, PAIR, TRIPLE) and not answer.cards & PHOENIX_BIT
        if natural_set and 2 <= answer.rank <= 14 and (top is None or (owner ^ obs.seat) & 1):
            how = "led" if top is None else "played on an opponent"
            counts[f"{how}, mates {_mates(hand & ~answer.cards, answer.rank)}"] += 1
    return counts


def _mates(rest: int, rank: int) -> int:
    return min(1, (rest & RANK_MASKS[rank]).bit_count())


def main() -> None:
    """Scores the samplers, or prints the frequencies the factors are read from."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hands", type=int, default=200)
    ap.add_argument("--first", type=int, default=20_001, help="first deal seed")
    ap.add_argument("--fit", action="store_true", help="print the heuristic's frequencies")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    seeds = range(a.first, a.first + a.hands)
    with Pool(a.workers) as pool:
        if a.fit:
            total: Counter[str] = Counter()
            for c in pool.imap_unordered(fit, seeds, chunksize=8):
                total.update(c)
            for how in ("passed to an opponent", "led", "played on an opponent"):
                n0, n1 = total[f"{how}, mates 0"], total[f"{how}, mates 1"]
                print(f"{how}: no rank-mate in hand {n0 / max(1, n0 + n1):.0%} of {n0 + n1}")
            # A random 14-card hand: 13 other cards of 55, 3 of them the card's rank-mates.
            alone = math.comb(52, 13) / math.comb(55, 13)
            print(f"a card of a random hand: no rank-mate {alone:.0%}")
            return
        sums: dict[str, list[float]] = {}
        for part in pool.imap_unordered(score, seeds, chunksize=4):
            for label, acc in part.items():
                into = sums.setdefault(label, [0.0, 0.0, 0.0, 0.0])
                for i in range(4):
                    into[i] += acc[i]
    print(f"mean log-probability of the true holder ({a.hands} hands, {DEALS} deals each):")
    for label, (lp, n, hp, hn) in sums.items():
        print(f"  {label:28s} all cards {lp / n:+.4f} ({n:.0f})  high cards {hp / hn:+.4f}")


if __name__ == "__main__":
    main()
