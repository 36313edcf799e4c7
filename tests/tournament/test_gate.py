"""``arena gate``: end to end over gRPC with real bot processes, plus the report formats."""

from __future__ import annotations

import json
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from arena.ratings.hands import HandOutcome
from arena.ratings.sprt import EloEstimate, SprtResult, SprtVerdict
from arena.tournament.gate import (
    PRESETS,
    STARTUP_HANDS,
    GateConfig,
    GateError,
    GateReport,
    build_event_data,
    junit_xml,
    mirror_pairs,
    points_per_board,
    run_gate,
)
from tests.helpers import MANY_PROCESSES, ROOT

# Bounds in this file only catch a hang: ten times a loaded machine's worst (issue 23).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


def gate_cli(*args: str | Path) -> tuple[int, str, str, float]:
    """Runs ``arena gate`` in a fresh process; returns exit code, stdout, stderr, seconds."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "gate", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    return done.returncode, done.stdout, done.stderr, time.monotonic() - start


def reports(tmp_path: Path) -> tuple[dict[str, Any], ET.Element]:
    data = json.loads((tmp_path / "gate.json").read_text(encoding="utf-8"))
    xml = ET.parse(tmp_path / "gate.xml").getroot()
    return data, xml


def failures_of(xml: ET.Element) -> list[ET.Element]:
    cases = xml.findall(".//testcase")
    assert len(cases) == 1
    return cases[0].findall("failure")


@pytest.mark.slow
@MANY_PROCESSES
def test_heuristic_beats_random_quickly_and_resumes(tmp_path: Path) -> None:
    db = tmp_path / "gate.sqlite"
    args = (
        "--candidate", "heuristic", "--baseline", "random", "--preset", "gain",
        "--max-boards", "60", "--db", db,
        "--json", tmp_path / "gate.json", "--junit", tmp_path / "gate.xml",
    )  # fmt: skip
    code, out, err, seconds = gate_cli(*args)
    assert code == 0, err
    assert seconds < 900  # a bound against a hang; alone it takes well under a minute
    assert "PASS" in out and "LLR" in err  # the verdict on stdout, the live line on stderr
    assert "bot processes sandboxed: full" in err
    data, xml = reports(tmp_path)
    assert data["verdict"] == "H1" and data["passed"] and data["exit_code"] == 0
    assert (data["elo0"], data["elo1"]) == PRESETS["gain"]
    assert data["mode"] == "standard" and data["candidate"] == "heuristic"
    assert 1 <= data["boards"] <= 60 and data["min_pairs"] == 1
    assert sum(data["pentanomial"]) == data["boards"]
    assert data["plays"] >= 2 * data["boards"]
    assert data["bounds"][1] > 0 > data["bounds"][0]
    # Decided by the LLR or, for an answer this clear, by the clear-answer test.
    assert data["llr"] >= data["bounds"][1] or data["clear_answer"]
    assert data["elo"]["lower"] > data["elo1"]
    upper = data["elo"]["upper"]  # null when the interval reaches a score of 1
    assert data["elo"]["lower"] < data["elo"]["estimate"] < (upper or float("inf"))
    assert data["points_per_board"]["lower"] > 0
    assert data["failures_total"] == 0 and data["arena_faults"] == 0 and data["seconds"] > 0
    assert failures_of(xml) == []
    assert xml.get("failures") == "0"

    # The kept database already holds a decision: a second run plays nothing new.
    code, out, err, _ = gate_cli(*args)
    assert code == 0, err
    again, _ = reports(tmp_path)
    assert again["plays"] == data["plays"] and again["pentanomial"] == data["pentanomial"]


@pytest.mark.slow
@MANY_PROCESSES
@pytest.mark.parametrize(
    ("candidate", "baseline", "verdict"), [("greedy", "random", "H1"), ("random", "greedy", "H0")]
)
def test_the_gate_decides_an_obvious_pair_at_its_defaults(
    tmp_path: Path, candidate: str, baseline: str, verdict: str
) -> None:
    """Issue 44: at its defaults (20,000 boards in rounds of 50, one job per core) the gate
    had completed no board pair after 772 plays, each round's second rotation queued behind
    every round's first. Now greedy and random are told apart in about ten boards, and the
    plays before the verdict are those of the first rounds, not of the whole cap."""
    out = tmp_path / "gate.json"
    code, stdout, err, _ = gate_cli(
        "--candidate", candidate, "--baseline", baseline, "--preset", "nonreg", "--json", out
    )  # fmt: skip
    data = json.loads(out.read_text(encoding="utf-8"))
    assert code == (0 if verdict == "H1" else 1), stdout + err
    assert data["verdict"] == verdict and data["max_boards"] == 20_000
    assert data["boards"] <= 30, data
    # the boards of one round per job and then the pairs: never the cap's 20,000 first plays
    assert data["plays"] <= 50 * data["jobs"] + 2 * data["boards"] + 50, data


@pytest.mark.slow
@MANY_PROCESSES
def test_a_deterministic_bot_against_its_copy_mirrors_every_board(tmp_path: Path) -> None:
    """Issue 24: greedy against greedy plays each board twice the same way from the other
    side, so every pair cancels. nonreg passes once the all-½ pairs rule out −10 Elo (about
    134 of them: no 100-pair floor, and no pass after a handful), and the report says the
    sides mirrored each other rather than giving a zero-width interval."""
    out = tmp_path / "gate.json"
    code, stdout, err, _ = gate_cli(
        "--candidate", "greedy", "--baseline", "greedy", "--preset", "nonreg",
        "--max-boards", "400", "--seed", "3", "--jobs", "2", "--json", out,
        "--decision-ms", "30000",  # no default answer under load: every board mirrors
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["verdict"] == "H1" and data["mirrored"] is True and not data["clear_answer"]
    assert data["pentanomial"] == [0, 0, data["boards"], 0, 0]
    assert 100 <= data["boards"] <= 200
    assert data["points_per_board"] is None
    assert data["elo"]["lower"] < -5 and data["elo"]["upper"] > 5
    assert "no evidence of a difference" in stdout


@pytest.mark.slow
@MANY_PROCESSES
def test_random_never_passes_a_gain_test_against_itself(tmp_path: Path) -> None:
    code, out, err, seconds = gate_cli(
        "--candidate", "random", "--baseline", "random", "--preset", "gain",
        "--max-boards", "30", "--min-pairs", "10", "--seed", "7",
        "--json", tmp_path / "gate.json", "--junit", tmp_path / "gate.xml",
    )  # fmt: skip
    assert code in (1, 2), err
    assert seconds < 900  # a bound against a hang; alone it takes well under a minute
    assert out.startswith("FAIL")
    data, xml = reports(tmp_path)
    assert data["verdict"] == {1: "H0", 2: "inconclusive"}[code]
    assert not data["passed"] and data["exit_code"] == code
    assert data["boards"] <= 30
    if code == 2:
        assert data["boards"] == 30
        assert data["bounds"][0] < data["llr"] < data["bounds"][1]
    (failure,) = failures_of(xml)
    assert failure.get("type") == data["verdict"]
    assert xml.get("failures") == "1"


@pytest.mark.slow
@MANY_PROCESSES
def test_mixed_mode_partners_the_candidate_with_the_baseline() -> None:
    # Bounds of [0, 50] Elo: the test is of the mode, so a clear gap decides it in few pairs.
    config = GateConfig("heuristic", "random", 0.0, 50.0, max_boards=150, min_pairs=10, mixed=True)
    seats = [bot["bot"] for bot in build_event_data(config)["bots"]]
    assert seats == ["heuristic", "random", "random", "random"]
    report = run_gate(config)
    assert report.exit_code == 0
    data = report.to_json()
    assert data["mode"] == "mixed"
    assert (data["team_elo0"], data["team_elo1"]) == (0.0, 25.0)
    # Elo is reported in individual units: twice the team gap the test measured.
    assert data["elo"]["estimate"] == pytest.approx(2 * report.result.estimate.elo)


def test_bad_manifest_is_an_error_with_a_clear_message(tmp_path: Path) -> None:
    manifest = tmp_path / "bot.toml"
    manifest.write_text('name = "broken"\ncommand = [\n', encoding="utf-8")
    code, _, err, _ = gate_cli(
        "--candidate", manifest, "--baseline", "random",
        "--json", tmp_path / "gate.json", "--junit", tmp_path / "gate.xml",
    )  # fmt: skip
    assert code == 3
    assert "error: --candidate:" in err and str(manifest) in err
    data, xml = reports(tmp_path)
    assert data["verdict"] == "error" and data["exit_code"] == 3
    (failure,) = failures_of(xml)
    assert failure.get("type") == "error"


@pytest.mark.parametrize(
    "args",
    [
        ("--candidate", "random"),  # --baseline missing: click alone would exit 2
        ("--candidate", "random", "--baseline", "no-such-bot"),
        (
            "--candidate",
            "random",
            "--baseline",
            "random",
            "--max-boards",
            "50",
            "--min-pairs",
            "99",
        ),
        ("--candidate", "random", "--baseline", "random", "--elo0", "5", "--elo1", "0"),
    ],
)
def test_usage_mistakes_exit_3(args: tuple[str, ...]) -> None:
    code, _, err, _ = gate_cli(*args)
    assert code == 3
    assert err.strip()


@pytest.mark.slow
def test_a_candidate_that_crashes_is_an_error_not_a_verdict(tmp_path: Path) -> None:
    manifest = tmp_path / "bot.toml"
    manifest.write_text(
        'name = "crashy"\ncommand = ["{python}", "-m", "sdk", "no_such_module:Bot"]\n',
        encoding="utf-8",
    )
    config = GateConfig(str(manifest), "random", 0.0, 10.0, max_boards=10, min_pairs=10)
    with pytest.raises(GateError, match=r"the candidate .*bot.toml cannot start: it crashed"):
        run_gate(config)


BROKEN = {
    # The module does not exist: ``python -m sdk`` logs the import error and exits 2.
    "import": ('["{python}", "-m", "sdk", "no_such_module:Bot"]', "", "No module named"),
    # The bot's script dies before it joins.
    "startup": ('["{python}", "bot.py"]', "raise SystemExit('broken at start-up')\n", "broken"),
}


@pytest.mark.slow
@MANY_PROCESSES
@pytest.mark.parametrize("how", sorted(BROKEN))
def test_a_candidate_that_cannot_start_fails_within_seconds(tmp_path: Path, how: str) -> None:
    command, script, logged = BROKEN[how]
    bot = tmp_path / "broken"
    bot.mkdir()
    (bot / "bot.toml").write_text(f'name = "broken"\ncommand = {command}\n', encoding="utf-8")
    if script:
        (bot / "bot.py").write_text(script, encoding="utf-8")
    logs = tmp_path / "logs"
    code, _, err, seconds = gate_cli(
        "--candidate", bot, "--baseline", "random", "--jobs", "2", "--logs", logs,
        "--json", tmp_path / "gate.json",
    )  # fmt: skip
    assert code == 3, err
    line = next(x for x in err.splitlines() if x.startswith("error: "))
    assert line.startswith(f"error: the candidate {bot} cannot start: it crashed or"), line
    # It used to play 100 board pairs of default actions first (50-70 s on a quiet machine);
    # now it stops after its first hands. The count is the check; the generous time bound
    # (about 10 s alone, 40 s and more beside the rest of the suite) only catches a hang.
    assert f"in each of its first {STARTUP_HANDS} hands" in line, line
    assert seconds < 600
    log = Path(line.rsplit("; its log: ", 1)[1])
    assert log.parent.parent == logs and logged in log.read_text(encoding="utf-8")
    data = json.loads((tmp_path / "gate.json").read_text(encoding="utf-8"))
    assert data["verdict"] == "error" and data["exit_code"] == 3


def test_a_candidate_whose_program_is_missing_names_its_option(tmp_path: Path) -> None:
    bot = tmp_path / "bot.toml"
    bot.write_text('name = "gone"\ncommand = ["no-such-program-for-the-gate"]\n')
    code, _, err, seconds = gate_cli("--candidate", bot, "--baseline", "random", "--jobs", "1")
    assert code == 3 and seconds < 400  # a bound against a hang; the message says "at once"
    assert f"error: --candidate cannot start: {bot}: cannot start" in err
    assert "no such program" in err


def plays_done(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            return int(
                conn.execute("SELECT COUNT(*) FROM plays WHERE status = 'done'").fetchone()[0]
            )
    except sqlite3.OperationalError:  # not created yet
        return 0


@pytest.mark.slow
@MANY_PROCESSES
def test_ctrl_c_prints_the_command_that_resumes_and_another_preset_is_refused(
    tmp_path: Path,
) -> None:
    db = tmp_path / "gate.sqlite"
    args = [
        "gate", "--candidate", "heuristic", "--baseline", "random", "--max-boards", "60",
        "--min-pairs", "20", "--seed", "3", "--jobs", "2", "--db", str(db),
        "--json", str(tmp_path / "gate.json"),
    ]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli.main", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while plays_done(db) < 6:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no plays were recorded in time"
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert out.startswith("INTERRUPTED: no decision yet")
    data = json.loads((tmp_path / "gate.json").read_text(encoding="utf-8"))
    assert data["verdict"] == "continue" and data["exit_code"] == 130
    interrupted = data["plays"]
    assert interrupted >= 6 and plays_done(db) == interrupted
    hint = next(x for x in err.splitlines() if x.startswith("interrupted: "))
    assert hint == (
        f"interrupted: {interrupted} plays recorded; continue with: arena {shlex.join(args)}"
    )

    # The command it printed continues the gate to its verdict on the same database.
    code, out, err, _ = gate_cli(*shlex.split(hint.split("continue with: ", 1)[1])[2:])
    assert code == 0, err
    data = json.loads((tmp_path / "gate.json").read_text(encoding="utf-8"))
    assert data["verdict"] == "H1" and data["plays"] > interrupted
    assert data["plays"] == plays_done(db)
    with sqlite3.connect(db) as conn:
        hands, distinct = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT play_id || ':' || hand_no) FROM hands"
        ).fetchone()
    assert hands == distinct == data["plays"]  # nothing lost or played twice

    # Another preset, candidate or seed on that database is refused, naming what differs.
    played = plays_done(db)
    for change, words in (
        (["--preset", "nonreg"], "--elo0 0 (this run: -10), --elo1 10 (this run: 0)"),
        (["--candidate", "greedy"], "--candidate heuristic (this run: greedy)"),
        (["--seed", "4"], "--seed 3 (this run: 4)"),
    ):
        code, _, err, seconds = gate_cli(*args[1:], *change)
        assert code == 3, err
        assert f"error: {db} holds a gate started with other settings: {words};" in err
        assert seconds < 300  # a bound against a hang only
    assert plays_done(db) == played


def test_config_rejects_a_cap_below_the_minimum() -> None:
    with pytest.raises(GateError, match="below the 100 pairs"):
        GateConfig("random", "random", 0.0, 10.0, max_boards=99, min_pairs=100)
    assert GateConfig("random", "random", 0.0, 10.0, max_boards=1).min_pairs == 1  # no floor


def test_event_uses_jobs_tables_and_covers_the_cap() -> None:
    config = GateConfig("heuristic", "random", 0.0, 10.0, max_boards=130, jobs=8, decision_ms=250)
    data = build_event_data(config)
    assert data["schedule"] == "fixed" and data["rotations"] == 2
    assert data["cycles"] >= 4  # two sessions per round: 8 tables at once
    assert data["cycles"] * data["boards_per_round"] >= 130
    assert data["time_control"] == {"decision_ms": 250}
    seats = [bot["bot"] for bot in data["bots"]]
    assert seats == ["heuristic", "random", "heuristic", "random"]


def _report(
    verdict: SprtVerdict, lower: float = -1.0, upper: float = float("inf"), mirrors: int = 0
) -> GateReport:
    estimate = EloEstimate(elo=3.0, lower=lower, upper=upper, pairs=120)
    result = SprtResult(120, 0.5, -2.944, 2.944, verdict, estimate)
    config = GateConfig("cand.toml", "heuristic", -10.0, 0.0, max_boards=120)
    return GateReport(
        config,
        result,
        (1, 2, 3, 4, 110),
        None,
        240,
        {"timeout": 2},
        1.5,
        None,
        mirror_pairs=mirrors,
    )


@pytest.mark.parametrize(
    ("lower", "upper", "reading"),
    [
        (-412.0, -163.0, "lies below elo0 = -10: the candidate is very likely worse"),
        (12.0, 40.0, "lies above elo1 = 0: the candidate is very likely better"),
        (-8.0, 30.0, "lies above elo0 = -10: very likely not worse than that"),
        (-50.0, -2.0, "lies below elo1 = 0: very likely not that much better"),
        (-20.0, 5.0, "holds both elo0 and elo1: more boards are needed"),
    ],
)
def test_an_inconclusive_gate_says_what_its_interval_says(
    lower: float, upper: float, reading: str
) -> None:
    """Issue 24: a capped nonreg gate whose interval was [-412, -163] said only
    'inconclusive'; it now reads the interval against the hypotheses."""
    report = _report(SprtVerdict.INCONCLUSIVE, lower, upper)
    assert f"inconclusive after 120 boards (the 95% interval [{lower:+.1f}, {upper:+.1f}] " in (
        report.summary()
    )
    assert reading in report.summary()
    assert report.exit_code == 2 and reading in report.to_json()["interval_reading"]
    assert _report(SprtVerdict.ACCEPT_H0).to_json()["interval_reading"] is None


def test_a_deterministic_mirror_reads_as_no_evidence_of_a_difference() -> None:
    """Copies of a deterministic bot: each board's second play undoes the first, so every
    pair is ½ with margin 0; the gate says so, and gives no zero-width points interval."""
    seats = ("c1", "b1", "c2", "b2")
    hands = []
    for board, (a, b) in enumerate([(120, 80), (0, 200), (50, 50), (300, -100)]):
        hands.append(HandOutcome(str(board), seats, a, b, rotation=0))
        hands.append(HandOutcome(str(board), seats, b, a, rotation=1))
    assert mirror_pairs(hands, "c1") == 4
    assert points_per_board(hands, "c1") is None
    report = _report(SprtVerdict.ACCEPT_H1, mirrors=120)
    assert report.mirrored and report.to_json()["mirrored"] is True
    assert "mirrored each other on all 120 boards" in report.summary()
    assert "no evidence of a difference" in report.summary()
    assert not _report(SprtVerdict.ACCEPT_H1, mirrors=119).mirrored
    unequal = [*hands[:-1], HandOutcome("3", seats, 100, 100, rotation=1)]
    assert mirror_pairs(unequal, "c1") == 3


@pytest.mark.parametrize("verdict", list(SprtVerdict))
def test_junit_fails_exactly_when_the_gate_fails(verdict: SprtVerdict) -> None:
    report = _report(verdict)
    xml = ET.fromstring(junit_xml(report))
    failures = failures_of(xml)
    assert bool(failures) == (report.exit_code != 0)
    assert report.exit_code == {"H1": 0, "H0": 1, "inconclusive": 2, "continue": 3}[verdict.value]
    case = xml.find(".//testcase")
    assert case is not None and "cand.toml vs heuristic" in (case.get("name") or "")
    data = report.to_json()
    json.dumps(data, allow_nan=False)  # infinite interval ends are written as null
    assert data["elo"]["upper"] is None and data["failures_total"] == 2


def test_points_per_board_takes_the_candidate_side() -> None:
    seats = ("c1", "b1", "c2", "b2")
    swapped = ("b1", "c1", "b2", "c2")
    hands = [
        HandOutcome("0", seats, 100, 0, rotation=0),
        HandOutcome("0", seats, 50, 50, rotation=1),
        HandOutcome("1", swapped, 0, 200, rotation=0),
        HandOutcome("1", swapped, 100, 100, rotation=1),
        HandOutcome("2", seats, 100, 0, rotation=0),  # no rotation 1 yet: not a pair
    ]
    result = points_per_board(hands, "c1")
    assert result is not None
    mean, low, high = result
    assert mean == pytest.approx((50 + 100) / 2)
    assert low < mean < high
    assert points_per_board(hands[:2], "c1") is None


def test_the_same_seed_gives_the_same_pentanomial(tmp_path: Path) -> None:
    """A random baseline draws from the seats' seeds: two runs count the same board pairs."""
    seen = []
    for k in (1, 2):
        out = tmp_path / f"gate{k}.json"
        code, _, err, _ = gate_cli(
            "--candidate", "greedy", "--baseline", "random",
            "--max-boards", "20", "--min-pairs", "20", "--seed", "0", "--jobs", "1",
            "--decision-ms", "20000", "--json", out,
        )  # fmt: skip
        assert code in (0, 1, 2), err
        data = json.loads(out.read_text(encoding="utf-8"))
        seen.append((data["pentanomial"], data["boards"], data["llr"]))
    assert seen[0] == seen[1]
    assert sum(seen[0][0]) == seen[0][1] > 0
