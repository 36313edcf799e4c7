"""What many tests share: the repository's root and the stub bot, a random player for the
rules core, the view of the seat to act, hand-built deals, one hand played and checked as the
client asks a bot, and a table played on a fresh server.

The random bot itself is the SDK's (``sdk.testing.RandomBot``) and the uniform random answer
the engine benchmark's (``arena.bench.engine.random_answer``): tests use those, not copies.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from arena.bench.engine import random_answer as uniform_answer
from arena.referee import MatchRecord
from arena.rules import (
    CALL_TICHU,
    GRAND,
    NO_GRAND,
    Action,
    Deal,
    Exchange,
    Match,
    Observation,
    Options,
    Phase,
    deal_from_seed,
    observe,
    parse_card,
)
from arena.server import ArenaServer, TableSpec
from arena.server.bots import play_table
from arena.server.manifest import Manifest
from example_bots.common.duel import Timing
from sdk import Bot

ROOT = Path(__file__).resolve().parents[1]
"""The checkout's root folder (holding ``arena/``, ``sdk/``, ``example_bots/``, ``docs/``)."""

STUB_BOT = ROOT / "tests" / "server" / "bots" / "stub_bot.py"
"""A scriptable bot process (``--mode crash``, ``--after``, ``--dump`` ...) for server tests."""

MANY_PROCESSES = pytest.mark.xdist_group("many-processes")
"""For tests that start many bot processes at once and hold wall-clock bounds: under xdist
one worker runs them one after another, so they never crowd each other's processes off the
cores (and a module fixture among them is set up once)."""


def random_answer(
    match: Match, rng: random.Random, *, grand: float = 0.0, tichu: float = 0.0
) -> Action:
    """A uniformly random legal answer (``arena.bench.engine.random_answer``, which never
    bets), calling Grand Tichu with chance ``grand`` and Tichu, when allowed, with ``tichu``."""
    if tichu and match.can_call_tichu() and rng.random() < tichu:
        return CALL_TICHU
    if grand and match.phase is Phase.GRAND_TICHU:
        return GRAND if rng.random() < grand else NO_GRAND
    return uniform_answer(match, rng)


def to_act(match: Match) -> Observation:
    """The view of the seat whose decision it is."""
    return observe(match, match.seat)


def deal_with(first: str, seat: int = 0) -> Deal:
    """A deal whose ``seat`` gets the cards ``first`` (in the order written, so its first
    eight are the Grand Tichu cards) and then the rest of the deck after the other hands."""
    lead = [parse_card(t) for t in first.split()]
    rest = [c for c in range(56) if c not in lead]
    hands = [rest[i * 14 : (i + 1) * 14] for i in range(3)]
    hands.insert(seat, lead + rest[42 : 42 + 14 - len(lead)])
    a, b, c, d = (tuple(h) for h in hands)
    return (a, b, c, d)


def play_checked_hand(
    bots: Sequence[Bot], seed: int, timing: dict[str, Timing] | None = None
) -> Match:
    """Plays one hand of board ``seed`` as the client asks a bot (``call_tichu`` when a call
    is allowed, then ``act`` on the same view), checking that every answer is one of
    ``obs.legal`` (three different cards of the hand for the exchange); ``apply`` would
    reject an illegal one as well. Returns the finished match (``actions``: every answer and
    call); ``timing`` collects each bot's decision times by name."""
    m = Match(Options(hands=1), deals=[deal_from_seed(seed, 0)])
    while not m.over:
        obs = to_act(m)
        bot = bots[obs.seat]
        t0 = time.perf_counter()
        call = obs.may_call_tichu and bot.call_tichu(obs)
        answer = bot.act(obs)
        if timing is not None:
            timing.setdefault(bot.name, Timing()).add(time.perf_counter() - t0)
        if obs.phase is Phase.EXCHANGE:
            assert isinstance(answer, Exchange) and len(set(answer)) == 3
            assert all(obs.hand >> c & 1 for c in answer)
        else:
            assert answer in obs.legal
        if call:
            m.apply(CALL_TICHU)
        m.apply(answer)
    return m


async def play_on_a_fresh_server(
    spec: TableSpec, manifests: Sequence[Manifest], logs: Path
) -> list[MatchRecord]:
    """Plays one table of bot processes on a new server on an OS-chosen loopback port, as
    ``arena play`` does; returns the table's match records."""
    server = ArenaServer()
    await server.start()
    try:
        _, records = await play_table(server, spec, list(manifests), log_dir=logs)
    finally:
        await server.stop(1.0)
    return records
