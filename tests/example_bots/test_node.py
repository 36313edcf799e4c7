"""The Node.js example bot (``example_bots/node``) plays real matches over gRPC.

This is the proof that a bot in another language works from the wire contract alone: the
bot's protocol code is generated from ``proto/tichu/arena/v1/arena.proto`` by ``npm ci``,
and it plays against Python random bots on a real referee server, started the way
``arena play`` starts one (``play_table`` on an ``ArenaServer`` on an ephemeral port).

Skipped only when ``node`` or ``npm`` is not installed. The first run in a clean clone
installs the bot's packages (``npm ci``, a few seconds); later runs reuse them.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest

from arena.referee import MatchRecord, Termination, TimeControl
from arena.rules import Options
from arena.server import TableSpec
from arena.server.manifest import Manifest, load_manifest, resolve_bot
from tests.helpers import ROOT, play_on_a_fresh_server

NODE_DIR = ROOT / "example_bots" / "node"
PROTO = ROOT / "proto" / "tichu" / "arena" / "v1" / "arena.proto"
NODE_SEATS = (0, 2)  # partners: team A is the Node bot, team B the Python random bot
MATCHES = 2  # on the same streams: the bot must take a second Welcome after a MatchResult
HANDS = 2  # per match, to keep the test short

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("node") is None or shutil.which("npm") is None,
        reason="node and npm are needed to install and run example_bots/node",
    ),
]


def _older(path: Path, than: Path) -> bool:
    """Whether ``path`` is missing or older than ``than``."""
    return not path.exists() or path.stat().st_mtime < than.stat().st_mtime


def _run(argv: list[str]) -> None:
    """Runs a command in the bot's folder; fails the test with its output if it fails."""
    done = subprocess.run(
        argv, cwd=NODE_DIR, capture_output=True, text=True, timeout=240, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")


@pytest.fixture(scope="module")
def node_bot() -> Manifest:
    """The Node bot's manifest, once its packages and generated code are in place."""
    # npm ci records what it installed in node_modules/.package-lock.json.
    if _older(NODE_DIR / "node_modules" / ".package-lock.json", NODE_DIR / "package-lock.json"):
        _run(["npm", "ci", "--no-audit", "--no-fund"])  # also generates the code
    elif _older(NODE_DIR / "generated" / "arena.js", PROTO):
        _run(["npm", "run", "generate"])
    return load_manifest(NODE_DIR / "bot.toml")


async def _play(manifests: list[Manifest], logs: Path) -> list[MatchRecord]:
    """Plays a table of ``MATCHES`` matches on a fresh server, as ``arena play`` does."""
    spec = TableSpec(
        options=Options(hands=HANDS),
        seed=20260,
        time=TimeControl(5000, 5000),  # generous: a slow CI machine must not time out
        matches=MATCHES,
        table_id="node-test",
    )
    return await play_on_a_fresh_server(spec, manifests, logs)


def test_node_bot_plays_matches_against_python_random(node_bot: Manifest, tmp_path: Path) -> None:
    python_random = resolve_bot("random")
    manifests = [node_bot if s in NODE_SEATS else python_random for s in range(4)]
    records = asyncio.run(_play(manifests, tmp_path))

    logs = {s: (tmp_path / f"seat{s}-{node_bot.name}.log") for s in NODE_SEATS}
    output = "\n".join(f"--- seat {s}:\n{p.read_text()[-3000:]}" for s, p in logs.items())
    assert len(records) == MATCHES, output
    for record in records:
        assert record.termination is Termination.NORMAL, (record.outcome.detail, output)
        assert record.outcome.hands_played == HANDS
        assert not set(record.outcome.given_up) & set(NODE_SEATS), output
        node_failures = [f for f in record.failures if f.seat in NODE_SEATS]
        assert node_failures == [], output
        assert record.decisions > 0
    for seat, log in logs.items():
        text = log.read_text()
        # Every answer was accepted at once (no in-band Error: the card masks, request ids
        # and state_seq round-tripped exactly), and the bot saw both matches end and then
        # the stream close with status OK (its exit-0 path).
        assert " error " not in text, f"seat {seat}:\n{text[-3000:]}"
        assert f"match {MATCHES} over after {HANDS} hands" in text, text[-3000:]
        assert f"stream closed by the referee after {MATCHES} match(es)" in text, text[-3000:]
