"""``arena replay verify|show`` on a replay the engine wrote, and on hand-edited ones."""

from __future__ import annotations

import json
import random
from pathlib import Path

from typer.testing import CliRunner

from arena.cli.main import app
from arena.referee import replay as replays
from arena.rules import Match, Options
from tests.helpers import random_answer


def write_replay(tmp_path: Path, hands: int = 3, seed: int = 5) -> tuple[Path, Match]:
    rng = random.Random(seed)
    m = Match(Options(hands=hands), seed=seed)
    while not m.over:
        m.apply(random_answer(m, rng))
    path = tmp_path / "match.json"
    replays.save(replays.from_match(m, ["a", "b", "c", "d"]), path)
    return path, m


def test_verify_accepts_what_the_engine_wrote_and_prints_the_scores(tmp_path: Path) -> None:
    path, m = write_replay(tmp_path)
    result = CliRunner().invoke(app, ["replay", "verify", str(path)])
    assert result.exit_code == 0, result.output
    assert f"team A {m.scores[0]}, team B {m.scores[1]}" in result.output
    shown = CliRunner().invoke(app, ["replay", "show", str(path)])
    assert shown.exit_code == 0 and "== hand 3 ==" in shown.output


def test_verify_rejects_an_illegal_edit_naming_hand_trick_seat_and_rule(tmp_path: Path) -> None:
    path, _ = write_replay(tmp_path)
    data = json.loads(path.read_text())
    actions = data["actions"]
    # The first lead of the second hand: replace it by a pass, which a leader may not play.
    hand_starts = [i for i, a in enumerate(actions) if "grand" in a and a["seat"] == 0]
    first_play = next(i for i in range(hand_starts[1], len(actions)) if "play" in actions[i])
    actions[first_play]["play"] = "pass"
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(app, ["replay", "verify", str(path)])
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert f"action {first_play + 1}:" in text
    assert "hand 2, trick 1" in text and "the leader cannot pass" in text


def test_verify_reports_a_tampered_result(tmp_path: Path) -> None:
    path, _ = write_replay(tmp_path)
    data = json.loads(path.read_text())
    data["result"]["scores"][0] += 5
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(app, ["replay", "verify", str(path)])
    assert result.exit_code == 1 and "mismatch" in result.output


def test_verify_rejects_a_file_that_is_not_a_replay(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"format": "something else"}')
    result = CliRunner().invoke(app, ["replay", "verify", str(path)])
    assert result.exit_code == 1
    assert result.output.count(str(path)) == 1 and "not a tichu-arena-replay file" in result.output
