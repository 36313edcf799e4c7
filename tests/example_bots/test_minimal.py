"""``example_bots/minimal``: a bot written against the protocol alone plays real matches.

Two minimal bots partner each other against two SDK random bots on a real referee server,
over two matches on the same streams; every answer must be accepted at once (no failure),
which checks the request ids, ``state_seq`` echoes, indices and exchange cards it sends.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from arena.referee import MatchRecord, Termination, TimeControl
from arena.rules import Match, Options, observe
from arena.server import TableSpec
from arena.server.manifest import load_manifest, resolve_bot
from arena.wire import pb
from arena.wire.answer import decode_answer
from arena.wire.request import encode_request
from example_bots.minimal.bot import answer
from tests.helpers import ROOT, play_on_a_fresh_server

pytestmark = pytest.mark.slow

MINIMAL_SEATS = (1, 3)


async def _play(logs: Path) -> list[MatchRecord]:
    minimal = load_manifest(ROOT / "example_bots" / "minimal" / "bot.toml")
    manifests = [minimal if s in MINIMAL_SEATS else resolve_bot("random") for s in range(4)]
    spec = TableSpec(options=Options(hands=3), seed=77, time=TimeControl(5000, 5000), matches=2)
    return await play_on_a_fresh_server(spec, manifests, logs)


def test_minimal_bot_plays_matches_over_grpc(tmp_path: Path) -> None:
    records = asyncio.run(_play(tmp_path))
    assert len(records) == 2
    for record in records:
        assert record.termination is Termination.NORMAL, record.outcome.detail
        assert record.outcome.hands_played == 3
        assert record.failures == []
        assert record.decisions > 0


def test_minimal_answers_are_legal_for_every_decision_kind() -> None:
    """Its answer to each request of random matches decodes to a legal action."""
    rng = random.Random(3)
    kinds: set[int] = set()
    for seed in range(6):
        m = Match(Options(hands=2), seed=seed)
        while not m.over:
            obs = observe(m, m.seat)
            req = encode_request(obs, request_id=9, state_seq=4, deadline_ms=1, bank_ms=0)
            a = answer(pb.DecisionRequest.FromString(req.SerializeToString()), rng)
            assert (a.request_id, a.state_seq) == (9, 4)
            action, call = decode_answer(a, obs)
            assert not call
            kinds.add(req.kind)
            m.apply(action)
    assert kinds >= {pb.DECISION_KIND_GRAND_TICHU, pb.DECISION_KIND_EXCHANGE, pb.DECISION_KIND_PLAY}
