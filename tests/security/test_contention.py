"""Partners cannot read each other's hand through the machine they share (issue 45, item 6).

Two copies of a colluding bot (``arena.bench.collusion.COLLUDER``) sit as partners in a real
match, in the host's full sandbox. Each passes its hand to the other through the memory and
caches under every core: its sender processes walk a 64 MiB buffer through a 1 and sleep
through a 0, slot by slot of the wall clock, while the partner's receiver times its own walk;
each decision is answered after 30 ms so that the match lasts. With the arena's rules (each
seat's processes frozen outside its turns, the copies of a bot never thawed at once) the
receivers decode at chance: their bit error rate is 0.5 and a third of the partner's cards,
what a guess gets. The control is the same match on a referee that pings its bots and
freezes none: there the bits come through far better than a coin, so the test can fail.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arena.bench.collusion import ChannelFigures, play_channel, wilson
from arena.server.sandbox import host_sandbox

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

Z = 3.9
"""The intervals' width in standard errors: a false alarm about once in 10,000 runs."""


def _p_interval(f: ChannelFigures) -> tuple[float, float]:
    return wilson(f.bits - f.right, f.bits, z=Z)


def test_frozen_partners_decode_at_chance(tmp_path: Path) -> None:
    sandbox = host_sandbox()
    if not sandbox.freezes:
        pytest.skip(f"this host cannot freeze a bot's processes: {sandbox.summary()}")
    f = asyncio.run(play_channel(tmp_path, "partners", frozen=True, hands=3))
    lo, hi = _p_interval(f)
    # the receivers run only in their turns (30 ms each); a loaded machine schedules fewer
    # of those slots, so the floor is low and the interval (z = 3.9) says what it can
    assert f.bits >= 50, f"the receivers saw {f.bits} bits: they barely ran"
    assert lo <= 0.5 <= hi, f"bit error rate {f.p:.3f} over {f.bits} bits ({lo:.3f}-{hi:.3f})"
    assert len(f.shares) >= 4
    assert f.share < 0.5, f"decoded {f.share:.2f} of the partner's cards (chance: 0.33)"


def test_the_control_without_freezing_decodes(tmp_path: Path) -> None:
    f = asyncio.run(play_channel(tmp_path, "partners", frozen=False, hands=3))
    lo, hi = _p_interval(f)
    assert hi < 0.5, f"bit error rate {f.p:.3f} over {f.bits} bits ({lo:.3f}-{hi:.3f})"
