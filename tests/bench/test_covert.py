"""``arena bench covert``: the channel's arithmetic, and one tiny run in the real sandbox.

The error rates depend on the machine and its load, so they are never asserted; the shape of
the figures and the arithmetic behind them are.
"""

from __future__ import annotations

import math
import random
import sys

import pytest
from typer.testing import CliRunner

from arena.bench.covert import (
    COMMON,
    DEAL_BITS,
    HAND_BITS,
    PREAMBLE,
    SlotFigures,
    capacity_bps,
    decode,
    entropy,
    message,
    placement_cpus,
)
from arena.server.sandbox import SandboxLevel, host_sandbox


def test_entropy_and_capacity_by_hand() -> None:
    assert entropy(0.0) == 0.0 and entropy(1.0) == 0.0
    assert entropy(0.5) == 1.0
    assert entropy(0.11) == pytest.approx(0.49992, abs=1e-5)  # -0.11 log2 0.11 - 0.89 log2 0.89
    assert capacity_bps(0.0, 0.002) == pytest.approx(500.0)  # H(0) = 0: one bit per slot
    assert capacity_bps(0.5, 0.002) == 0.0  # H(0.5) = 1: nothing gets through
    assert capacity_bps(0.11, 0.01) == pytest.approx(50.008, abs=1e-3)
    s = SlotFigures(slot_ms=5.0, bits=200, errors=0, zero_median=10, one_median=5)
    assert (s.p, s.raw_bps, s.capacity_bps) == (0.0, 200.0, 200.0)


def test_bits_a_hand_needs() -> None:
    assert math.comb(42, 14) == 52_860_229_080
    assert round(HAND_BITS, 3) == 35.621  # another seat's 14 of the 42 cards you do not hold
    assert round(DEAL_BITS, 3) == 60.879  # 42! / (14!)^3: who holds each of them
    assert math.isclose(DEAL_BITS, math.log2(math.comb(42, 14) * math.comb(28, 14)))


def test_decode_takes_threshold_and_sign_from_the_preamble() -> None:
    fast, slow = 100, 40  # a 1 slows the receiver
    sent = [1, 0, 0, 1, 1]
    counts = [slow if b else fast for b in PREAMBLE] + [slow if b else fast for b in sent]
    assert decode(counts) == sent
    flipped = [fast if b else slow for b in PREAMBLE] + [fast if b else slow for b in sent]
    assert decode(flipped) == sent  # the side a 1 falls on is learnt, not assumed


def test_the_peers_draw_the_message_the_bench_checks() -> None:
    scope: dict[str, object] = {}
    argv = sys.argv
    sys.argv = ["peer", '{"preamble": 32, "bits": 8, "slots_ms": [2], "gap_s": 0, "start": 0}']
    try:
        exec(COMMON, scope)  # the peers' own code
    finally:
        sys.argv = argv
    drawn = scope["message"]
    assert callable(drawn)
    assert drawn(7, 1, 50) == message(7, 1, 50)
    assert message(7, 1, 50) != message(7, 2, 50)
    assert set(message(7, 0, 50)) == {0, 1}
    assert random.Random(f"covert:{7}:{1}").getrandbits(1) == message(7, 1, 1)[0]


def test_placements() -> None:
    assert placement_cpus("arena", [0, 1]) == (-1, -1)
    assert placement_cpus("same-core", [2, 5]) == (2, 2)
    assert placement_cpus("cross-core", [2, 5]) == (5, 2)
    assert placement_cpus("cross-core", [3]) is None
    with pytest.raises(ValueError, match="unknown placement"):
        placement_cpus("elsewhere", [0])


@pytest.mark.slow
@pytest.mark.timeout(200)
def test_a_tiny_run_in_the_real_sandbox_prints_every_figure() -> None:
    sb = host_sandbox()
    if sb.level is not SandboxLevel.FULL:
        pytest.skip(f"this host makes no full sandbox: {'; '.join(sb.reasons)}")
    from arena.cli.main import app

    args = ["bench", "covert", "--bits", "8", "--slots", "2,5", "--spinners", "1"]
    result = CliRunner().invoke(app, [*args, "--placements", "arena,same-core", "--lead", "3"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("bot sandbox      : full")
    rows = [line.split() for line in lines if line.startswith(("arena ", "same-core "))]
    assert [(r[0], r[4]) for r in rows] == [
        ("arena", "2"),
        ("arena", "5"),
        ("same-core", "2"),
        ("same-core", "5"),
    ]
    for r in rows:
        errors, p, raw, cap = int(r[5]), float(r[6]), float(r[7]), float(r[8])
        assert 0 <= errors <= 8 and p == pytest.approx(errors / 8, abs=1e-3)
        assert raw == pytest.approx(1000 / float(r[4]), abs=0.1)
        assert cap == pytest.approx(capacity_bps(errors / 8, float(r[4]) / 1000), abs=0.1)
    assert rows[0][3] == "no/no"  # as the arena runs bots
    assert rows[2][3] in ("yes/yes", "ref/ref")  # pinning allowed or refused, reported
    best = next(line for line in lines if line.startswith("best"))
    assert "bits/s capacity" in best
    assert any(line.startswith("a hand           : log2 C(42,14) = 35.62 bits") for line in lines)
    assert any(line.startswith("the deal         : log2 42!/(14!^3) = 60.88") for line in lines)
