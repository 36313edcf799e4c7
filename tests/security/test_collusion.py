"""Colluding bots learn nothing of each other's hands through the kernel they share.

Two copies of the colluder (``bots/colluder``) sit as partners beside two random bots and
play two boards in both rotations, so that each copy also has a twin: the process that
holds the other rotation of its board, after it. Each publishes its hand through locks, the
page cache, files in ``/tmp`` and ``/dev/shm``, an abstract socket and System V shared
memory, and reads what the others published. In the host's full sandbox (with one table at
a time and with two) nothing is read. The control plays the same event at the ``none`` level
(rlimits only): there every channel carries the partner's hands (the page cache too, though
too unreliably to assert: other readers of the host's files disturb it), which shows that
the attack is real and the test able to fail (docs/security.md, sections 2.2–2.3).
"""

from __future__ import annotations

import re
import subprocess
import zlib
from collections import defaultdict
from pathlib import Path

import pytest

from arena.server.sandbox import Sandbox, SandboxLevel, host_sandbox, unsandboxed
from arena.tournament.model import parse_event, plan_event
from arena.tournament.runner import EventRunner
from arena.tournament.store import EventStore
from tests.security.hostile import BOTS

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

CARRIERS = {"flock", "ofd lock", "tmp file", "shm file", "abstract socket", "sysv shm"}
"""The channels that carry a hand between two processes of one uid on a bare host."""


def play(tmp_path: Path, sandbox: Sandbox, jobs: int) -> dict[str, list[str]]:
    """Plays the colluders' event; each colluder process's log, by bot."""
    tag = tmp_path.name[-24:]
    colluder = str(BOTS / "colluder" / "bot.toml")
    env = {"COLLUDE_TAG": tag}
    data = {
        "name": "collude",
        "bots": [
            {"bot": colluder, "name": "c1", "env": env},
            "random",
            {"bot": colluder, "name": "c2", "env": env},
            {"bot": "random", "name": "random-b"},
        ],
        "schedule": "fixed",
        "boards_per_round": 2,
        "rotations": 2,
        "seed": 11,
        "jobs": jobs,
        "time_control": {"decision_ms": 5000},
    }
    spec = parse_event(data, base_dir=tmp_path)
    logs = tmp_path / "logs"
    try:
        with EventStore(tmp_path / "collude.sqlite") as store:
            store.create_event(spec, plan_event(spec))
            progress = EventRunner(store, "collude", spec, sandbox=sandbox, log_dir=logs).run()
            assert progress.plays_done == progress.plays_total == 4, progress
    finally:
        _remove_segments(tag)
        for folder in (Path("/tmp"), Path("/dev/shm")):
            for path in folder.glob(f"tichu-collude-{tag}-*"):
                path.unlink()
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(logs.rglob("*.log")):
        seat = re.findall(r"^seat([02])-colluder\.log$", path.name)  # c1 and c2, partners
        if seat:
            found[f"c{int(seat[0]) // 2 + 1}"].append(path.read_text(errors="replace"))
    assert sorted(found) == ["c1", "c2"], sorted(logs.rglob("*"))
    return found


def _remove_segments(tag: str) -> None:
    """Removes the System V segments the colluders left on the host (the control's)."""
    prefix = 0x7C00_0000 | (zlib.crc32(f"tichu-collude-{tag}".encode()) & 0xFF) << 16
    with open("/proc/sysvipc/shm") as f:
        rows = [line.split() for line in list(f)[1:]]
    for key, shmid, *_ in rows:
        if int(key) >> 16 == prefix >> 16:
            subprocess.run(["ipcrm", "-m", shmid], check=False, capture_output=True)


def reads(text: str) -> dict[str, set[int]]:
    """The masks a colluder's log says it read, by channel."""
    out: dict[str, set[int]] = defaultdict(set)
    for channel, mask in re.findall(r"^collude: ([a-z ]+): read ([0-9a-f]+)$", text, re.M):
        out[channel].add(int(mask, 16))
    return out


def mine(texts: list[str]) -> set[int]:
    """The hands a bot's processes published."""
    return {int(m, 16) for t in texts for m in re.findall(r"^collude: mine ([0-9a-f]+)$", t, re.M)}


@pytest.mark.parametrize("jobs", [1, 2])
def test_partners_and_twins_read_nothing_in_the_sandbox(tmp_path: Path, jobs: int) -> None:
    sb = host_sandbox()
    if sb.level is not SandboxLevel.FULL:
        pytest.skip(f"this host makes no full sandbox: {'; '.join(sb.reasons)}")
    logs = play(tmp_path, sb, jobs)
    for bot, texts in logs.items():
        assert len(mine(texts)) >= 4, (bot, texts)  # it played, publishing as it went
        for text in texts:
            assert not reads(text), (bot, text)
            # What the sandbox let it open (its private /tmp, System V memory in its own
            # namespace, a socket in its own network) carried nothing; the rest was refused.
            refused = set(re.findall(r"^collude: ([a-z ]+): refused", text, re.M))
            assert {"flock", "ofd lock", "page cache", "shm file"} <= refused, text


def test_the_control_without_a_sandbox_carries_the_partner_s_hands(tmp_path: Path) -> None:
    logs = play(tmp_path, unsandboxed(), 2)
    hands = {bot: mine(texts) for bot, texts in logs.items()}
    crossed: dict[str, set[str]] = defaultdict(set)
    for bot, texts in logs.items():
        partner = hands["c2" if bot == "c1" else "c1"]
        for text in texts:
            for channel, masks in reads(text).items():
                if masks & (partner | hands[bot]):  # its partner's, or its twin's
                    crossed[bot].add(channel)
    assert crossed["c1"] | crossed["c2"] >= CARRIERS, dict(crossed)
