"""A bot that tries to know its table's deals in advance, in every kind of play that runs bots.

The predictor (``bots/predictor``) tries every public derivation of a deal it can compute with
the arena package (readable in its sandbox), its own seat seed and version hash, and every
database it can find above its folder. With a secret (the default everywhere) it must predict
nothing and read nothing; with a public seed (the control) it must predict every hand, which
shows the attack is real and the test able to fail.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

from tests.security.hostile import BOTS, arena

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

EVENT = """
name = "{name}"
bots = ["p1/bot.toml", "p2/bot.toml", "p3/bot.toml", "p4/bot.toml"]
schedule = "fixed"
boards_per_round = 2
{seed}
[time_control]
decision_ms = 5000
"""

LEAGUE = """
name = "{name}"
season_rounds = 2
{seed}
[round]
boards_per_round = 1
rotations = 2

[round.time_control]
decision_ms = 5000

[gate]
max_boards = 2
min_pairs = 1
decision_ms = 5000
jobs = 1
"""


def predictors(root: Path, count: int = 4) -> list[Path]:
    """``count`` copies of the predictor, named p1, p2, ..., in folders of ``root``."""
    out = []
    for k in range(1, count + 1):
        folder = root / "authors" / f"p{k}"
        shutil.copytree(BOTS / "predictor", folder, ignore=shutil.ignore_patterns("__pycache__"))
        manifest = folder / "bot.toml"
        manifest.write_text(manifest.read_text().replace('"predictor"', f'"p{k}"'))
        out.append(folder)
    return out


def predictions(logs: Path) -> tuple[list[str], list[str]]:
    """The predictor's ``predict:`` verdict lines and its ``files:`` reads, from its logs."""
    text = "\n".join(p.read_text(errors="replace") for p in sorted(logs.rglob("*.log")))
    verdicts = re.findall(r"^predict: (predicted=\w+)", text, re.M)
    reads = re.findall(r"^files: (\S+): reads", text, re.M)
    assert verdicts, f"no predictor log under {logs}"
    return verdicts, reads


def assert_nothing_predicted(logs: Path) -> None:
    verdicts, reads = predictions(logs)
    assert set(verdicts) == {"predicted=no"}, verdicts
    assert reads == []


@pytest.mark.parametrize("public", [False, True], ids=["secret", "public-seed"])
def test_an_event_s_deals_cannot_be_predicted(tmp_path: Path, public: bool) -> None:
    predictors(tmp_path)
    events = tmp_path / "authors"
    (events / "event.toml").write_text(EVENT.format(name="sec", seed="seed = 7" if public else ""))
    done = arena("event", "run", "authors/event.toml", "--db", "runs/e.sqlite", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    verdicts, reads = predictions(tmp_path / "runs" / "e.sqlite.logs")
    if public:  # the control: a public seed gives every hand away, and is said aloud
        assert set(verdicts) == {"predicted=yes"}, verdicts
        assert "public seed 7" in (tmp_path / "leaderboards" / "sec.md").read_text()
        assert "deals: public seed 7" in done.stdout, done.stdout
    else:
        assert_nothing_predicted(tmp_path / "runs" / "e.sqlite.logs")
        assert "secret deals" in (tmp_path / "leaderboards" / "sec.md").read_text()
    assert reads == []


@pytest.mark.parametrize("public", [False, True], ids=["secret", "public-seed"])
def test_a_league_round_s_and_gate_s_deals_cannot_be_predicted(
    tmp_path: Path, public: bool
) -> None:
    folders = predictors(tmp_path)
    (tmp_path / "league.toml").write_text(
        LEAGUE.format(name="sec", seed="seed = 3" if public else "")
    )
    db = ["--db", "runs/league.sqlite"]
    steps = [
        ["league", "init", "league.toml", *db],
        *(["league", "submit", f"authors/{f.name}", *db, "--owner", f.name] for f in folders),
        ["league", "run", "--rounds", "1", *db],
    ]
    for step in steps:
        done = arena(*step, cwd=tmp_path)
        assert done.returncode == 0, (step, done.stdout + done.stderr)
    logs = tmp_path / "runs" / "league.sqlite.logs"
    verdicts, _ = predictions(logs)
    assert set(verdicts) == ({"predicted=yes"} if public else {"predicted=no"}), verdicts
    if not public:
        assert_nothing_predicted(logs)
    # Each submission sees its own folder in the league's store, and nothing of the others'.
    text = "\n".join(p.read_text(errors="replace") for p in logs.rglob("*.log"))
    stores = re.findall(r"^files: \S+\.bots: lists (.*)$", text, re.M)
    assert stores and all(len(ast.literal_eval(listing)) == 1 for listing in stores), stores
    # A new version of p1 plays the league's gate against its previous version.
    (folders[0] / "NOTES.txt").write_text("version 2\n")
    shutil.rmtree(logs)
    done = arena("league", "submit", "authors/p1", *db, "--gate", cwd=tmp_path)
    assert "gate" in done.stdout + done.stderr, done.stdout + done.stderr
    gate_logs = [p for p in logs.iterdir() if p.name.startswith("gate-")]
    assert len(gate_logs) == 1, list(logs.iterdir())
    verdicts, reads = predictions(gate_logs[0])
    if public:  # the candidate knows its own hash, so the gate's public seed
        assert "predicted=yes" in verdicts, verdicts
    else:
        assert set(verdicts) == {"predicted=no"}, verdicts
    assert reads == []


@pytest.mark.parametrize("seed", [None, "7"], ids=["secret", "public-seed"])
def test_arena_gate_s_deals_cannot_be_predicted(tmp_path: Path, seed: str | None) -> None:
    (folder,) = predictors(tmp_path, 1)
    extra = [] if seed is None else ["--seed", seed]
    done = arena(
        "gate", "--candidate", f"authors/{folder.name}", "--baseline", "random",
        "--max-boards", "2", "--min-pairs", "1", "--jobs", "1", "--decision-ms", "5000",
        "--db", "runs/gate.sqlite", *extra, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 1, 2), done.stdout + done.stderr
    deals = "deals: secret deals" if seed is None else f"deals: public seed {seed}"
    assert deals in done.stderr, done.stderr
    verdicts, reads = predictions(tmp_path / "runs" / "gate.sqlite.logs")
    assert set(verdicts) == ({"predicted=no"} if seed is None else {"predicted=yes"}), verdicts
    assert reads == []
