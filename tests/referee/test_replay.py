"""``arena replay verify|show`` on a replay the engine wrote, and on hand-edited ones."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
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
    assert f"actions[{first_play}]:" in text  # numbered from 0, as meta.think (issue 51)
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
    assert result.exit_code == 2
    assert result.output.count(str(path)) == 1 and "not a tichu-arena-replay file" in result.output


def _without(data: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != key}


def _hand_swap(data: dict[str, Any]) -> dict[str, Any]:
    deal = data["deals"][0]
    first = deal[0].split()
    second = deal[1].split()
    first[0] = second[0]  # seat 0 now holds seat 1's first card as well
    return {**data, "deals": [[" ".join(first), *deal[1:]], *data["deals"][1:]]}


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda d: _without(d, "deals"), "deals: missing"),
        (lambda d: {**d, "seats": ["a", "b"]}, "seats: a replay has 4 seats"),
        (lambda d: {**d, "seats": "abcd"}, "seats: expected a list of 4 bot names, got 'abcd'"),
        (lambda d: {**d, "deals": []}, "deals: empty"),
        (lambda d: {**d, "deals": "2s 3s"}, "deals: expected a list, got '2s 3s'"),
        (lambda d: {**d, "deals": [d["deals"][0][:3]]}, "deals[0]: a deal is a list of 4 hands"),
        (lambda d: {**d, "deals": [[*d["deals"][0][:3], 7]]}, "deals[0][3]: expected a string"),
        (_hand_swap, "deals[0]: dealt twice: "),
        (lambda d: {**d, "options": [1]}, "options: expected an object, got [1]"),
        (lambda d: {**d, "options": {"hands": "3"}}, "options.hands: expected an integer"),
        (lambda d: {**d, "options": {"target_score": 0}}, "options: target_score must be"),
        (lambda d: {**d, "options": {"grand_tichu": 1}}, "options.grand_tichu: expected true"),
        (lambda d: {**d, "seed": "x"}, "seed: expected an integer, got 'x'"),
        (lambda d: {**d, "seed": True}, "seed: expected an integer, got True"),
        (lambda d: {**d, "actions": 5}, "actions: expected a list, got 5"),
        (lambda d: {**d, "actions": [7]}, "actions[0]: an action is an object with a seat 0-3"),
        (lambda d: {**d, "actions": [{"seat": 4, "grand": False}]}, "actions[0]: an action is"),
        (lambda d: {**d, "result": 7}, "result: expected an object or null, got 7"),
        (lambda d: {**d, "meta": []}, "meta: expected an object or null, got []"),
    ],
)
@pytest.mark.parametrize("command", ["verify", "show"])
def test_a_malformed_replay_is_one_clear_line_and_exit_2(
    tmp_path: Path, command: str, edit: Callable[[dict[str, Any]], dict[str, Any]], words: str
) -> None:
    path, _ = write_replay(tmp_path)
    path.write_text(json.dumps(edit(json.loads(path.read_text()))))
    result = CliRunner().invoke(app, ["replay", command, str(path)])
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"invalid replay {path}: {words}"), lines


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"{not json", "not valid JSON: Expecting property name"),
        (b"\xff\xfe\x00garbage", "not a text file"),
        (b"[" * 100_000, "not"),
    ],
)
def test_a_file_that_is_no_json_is_exit_2(tmp_path: Path, content: bytes, words: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    result = CliRunner().invoke(app, ["replay", "verify", str(path)])
    assert result.exit_code == 2, result.output
    assert len(result.output.splitlines()) == 1 and words in result.output


def test_show_prints_seats_teams_sorted_hands_and_running_scores(tmp_path: Path) -> None:
    path, m = write_replay(tmp_path)
    shown = CliRunner().invoke(app, ["replay", "show", str(path)])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[:2] == [
        "seats: N a, E b, S c, W d",
        "team A: a + c (seats 0 and 2); team B: b + d (seats 1 and 3)",
    ]
    # Seat 0's first hand (deal_from_seed(5, 0)), in rank order.
    assert (
        "a dealt 2t 4j 4p 5s 8t 9s 9t Tj Ts Js Qj Ks As At  (first 8: 2t 4p 9s 9t Tj Ts Js As)"
        in shown.output
    )
    over = [line.strip() for line in lines if " over" in line]
    assert [o.split(": ", 1)[0] for o in over] == [
        "hand 1 over",
        "hand 2 over",
        "hand 3 over (double victory)",
    ]
    running = [o.rsplit("running score ", 1)[1] for o in over]
    assert running == ["40 : 60", "85 : 115", "285 : 115"]
    assert list(m.scores) == [285, 115] and lines[-1] == "final score: team A 285, team B 115"


def test_show_deals_the_hands_a_replay_leaves_to_its_seed(tmp_path: Path) -> None:
    path, _ = write_replay(tmp_path)
    data = json.loads(path.read_text())
    full = CliRunner().invoke(app, ["replay", "show", str(path)]).output
    data["deals"] = data["deals"][:1]
    path.write_text(json.dumps(data))
    assert CliRunner().invoke(app, ["replay", "verify", str(path)]).exit_code == 0
    short = CliRunner().invoke(app, ["replay", "show", str(path)])
    assert short.exit_code == 0 and short.output == full
