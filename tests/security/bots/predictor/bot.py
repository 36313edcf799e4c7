"""A hostile bot that tries to know its table's deals in advance, then plays at random.

At the first decision of every hand it holds its first cards; it then tries every way it has
of computing the deal from what it can read (the arena package is readable in its sandbox):

* public event seeds: small numbers, as an event file's ``seed`` is;
* a league's public round seeds (the league seed, season, round and division numbers), and a
  league gate's (its own version hash, which it computes from its own folder, or the name
  of its folder);
* its own seat seed (``TICHU_ARENA_SEED``), matched against every public seed it tries;
* the databases: every ``*.sqlite`` file in the folders above its own.

It prints one ``predict:`` line per hand (whether a candidate deal holds its cards, and
which) and one ``files:`` line per place it tried, so the tests read its log.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import sdk
from arena.rules import Action, Observation, Phase, deal_from_seed
from arena.tournament.boards import board_seed, seat_seed
from arena.tournament.league.season import _round_seed, bot_digest
from sdk.testing import RandomBot

HERE = Path(__file__).resolve().parent
BOARDS = range(4)
HANDS = range(2)


def candidate_seeds() -> list[tuple[str, int]]:
    """Every public event seed this bot can think of, with where it came from."""
    out = [(f"seed {s}", s) for s in range(64)]
    leagues = [*range(16), 2026]
    for league in leagues:
        for season in (1, 2):
            for number in (1, 2, 3):
                for division in (1, 2):
                    seed = _round_seed(league, season, number, division)
                    out.append((f"league {league} s{season} r{number} d{division}", seed))
    digest = bot_digest(HERE, HERE / "bot.toml")
    for league in leagues:
        out.append((f"gate of league {league}", _round_seed(league, 0, int(digest[:15], 16), 0)))
    with contextlib.suppress(ValueError):  # the folder a league once named by the hash
        out.append(("folder name", int(HERE.name, 16) % 2**32))
    return out


SEEDS = candidate_seeds()


def own_seed_matches() -> list[str]:
    """The public seeds that give this bot's seat seed (so it knows its event's seed)."""
    mine = int(os.environ.get("TICHU_ARENA_SEED", "-1"))
    return [
        how
        for how, seed in SEEDS[:64]
        for board in BOARDS
        for rotation in (0, 1)
        for seat in range(4)
        if seat_seed(seed, board, rotation, seat) == mine
    ]


def predict(hand: int) -> str | None:
    """Where a candidate deal holding exactly these first cards came from, if one does."""
    for how, seed in SEEDS:
        for board in BOARDS:
            deal_seed = board_seed(seed, board)
            for k in HANDS:
                for dealt in deal_from_seed(deal_seed, k):
                    first = 0
                    for card in dealt[: hand.bit_count()]:
                        first |= 1 << card
                    if first == hand:
                        return f"{how}, board {board}, hand {k}"
    return None


def read_databases() -> None:
    for folder in HERE.parents:
        try:
            names = os.listdir(folder)
        except OSError as e:
            print(f"files: {folder}: refused ({e.strerror})")
            continue
        print(f"files: {folder}: lists {sorted(names)}")
        for name in names:
            if name.endswith((".sqlite", ".bots", ".logs", ".replays", ".live")):
                try:
                    with open(folder / name, "rb") as f:
                        print(f"files: {folder / name}: reads {f.read(16)!r}")
                except OSError as e:
                    print(f"files: {folder / name}: refused ({e.strerror})")


class Predictor(RandomBot):
    """Random play, after trying to predict each hand's deal from its first cards."""

    def __init__(self) -> None:
        super().__init__()
        self._tried = False

    def act(self, obs: Observation) -> Action:
        if obs.phase in (Phase.GRAND_TICHU, Phase.EXCHANGE) and not self._tried:
            self._tried = True
            found = predict(obs.hand)
            verdict = f"predicted=yes ({found})" if found else "predicted=no"
            print(f"predict: {verdict} after {len(SEEDS)} seeds", flush=True)
        elif obs.phase not in (Phase.GRAND_TICHU, Phase.EXCHANGE):
            self._tried = False
        return super().act(obs)


if __name__ == "__main__":
    print(f"predict: own seed matches {own_seed_matches()}", flush=True)
    read_databases()
    sys.stdout.flush()
    raise SystemExit(sdk.run(Predictor()))
