"""The bot author's kit: ``arena new-bot`` and ``arena check-bot``, end to end.

The check-bot tests start real bot processes against a real referee over gRPC.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from arena.kit.check import POSITIONS
from arena.kit.scaffold import ScaffoldError, class_name, new_bot, validate_name
from arena.referee import InProcessSeat, MatchConfig, Referee
from arena.rules import Options, Phase
from sdk.testing import RandomBot

pytestmark = pytest.mark.timeout(300)

CHECKS = (
    "startup",
    "full match",
    *(f"position: {p.name}" for p in POSITIONS),
    "reconnect",
)

BROKEN_BOT = '''
from __future__ import annotations

import os
import time

from arena.rules import Action, Observation, Phase
from sdk.testing import RandomBot


class Broken(RandomBot):
    """A random bot that fails one kind of decision, as BROKEN says."""

    name = "broken"

    def __init__(self) -> None:
        super().__init__(1)

    def act(self, obs: Observation) -> Action:
        mode = os.environ["BROKEN"]
        if mode == "raise-on-gift" and obs.phase is Phase.DRAGON_GIFT:
            raise RuntimeError("who gets the Dragon?")
        if mode == "slow-exchange" and obs.phase is Phase.EXCHANGE:
            time.sleep(3.0)
        return super().act(obs)
'''


def row(output: str, check: str) -> str:
    """The first line of a check's row in the report table."""
    for line in output.splitlines():
        if line.startswith(f"│ {check} "):
            return line
    raise AssertionError(f"no row for {check!r} in:\n{output}")


def broken_bot(folder: Path, mode: str) -> Path:
    folder.mkdir()
    (folder / "broken.py").write_text(BROKEN_BOT, encoding="utf-8")
    manifest = folder / "bot.toml"
    manifest.write_text(
        'name = "broken"\n'
        'command = ["{python}", "-m", "sdk", "broken:Broken"]\n'
        f'env = {{ BROKEN = "{mode}" }}\n'
        "startup_timeout_s = 30\n",
        encoding="utf-8",
    )
    return manifest


@pytest.mark.slow
def test_new_bot_output_passes_check_bot(tmp_path: Path) -> None:
    runner = CliRunner()
    made = runner.invoke(app, ["new-bot", "my_bot", "--into", str(tmp_path)])
    assert made.exit_code == 0, made.output
    folder = tmp_path / "my_bot"
    assert sorted(p.name for p in folder.iterdir()) == [
        "README.md",
        "bot.py",
        "bot.toml",
        "test_bot.py",
    ]
    assert "class MyBot(Bot):" in (folder / "bot.py").read_text()
    assert '"bot:MyBot"' in (folder / "bot.toml").read_text()

    checked = runner.invoke(
        app, ["check-bot", str(folder / "bot.toml"), "--logs", str(tmp_path / "logs")]
    )
    assert checked.exit_code == 0, checked.output
    for check in CHECKS:
        assert "PASS" in row(checked.output, check), check
    assert "verdict: PASS (all 9 checks passed)" in checked.output
    assert (tmp_path / "logs" / "positions").is_dir()


def test_new_bot_refuses_an_existing_folder_and_bad_names(tmp_path: Path) -> None:
    runner = CliRunner()
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine")
    result = runner.invoke(app, ["new-bot", "taken", "--into", str(tmp_path)])
    assert result.exit_code == 2
    assert "exists already" in result.output
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["keep.txt"]
    for bad in ("My Bot", "9lives", "x/y", "../up", "sdk", "a" * 41, ""):
        result = runner.invoke(app, ["new-bot", bad, "--into", str(tmp_path)])
        assert result.exit_code == 2, bad
        assert "bad bot name" in result.output, bad
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_new_bot_makes_its_into_folder_and_refuses_a_file(tmp_path: Path) -> None:
    runner = CliRunner()
    into = tmp_path / "bots" / "season 2"
    result = runner.invoke(app, ["new-bot", "deep", "--into", str(into)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (into / "deep").iterdir()) == [
        "README.md",
        "bot.py",
        "bot.toml",
        "test_bot.py",
    ]
    (tmp_path / "notes.txt").write_text("mine")
    for parent, words in (
        (tmp_path / "notes.txt", "exists and is not a folder"),
        (tmp_path / "notes.txt" / "below", "cannot create the folder"),
    ):
        result = runner.invoke(app, ["new-bot", "deep", "--into", str(parent)])
        assert result.exit_code == 2, result.output
        assert len(result.output.splitlines()) == 1, result.output
        assert f"{parent} {words}" in result.output or f"{words} {parent}" in result.output
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_names_and_class_names() -> None:
    assert class_name("my_bot") == "MyBot"
    assert class_name("low") == "LowBot"
    assert class_name("deep-search2") == "DeepSearch2Bot"
    assert validate_name("a-b_c9") == "a-b_c9"
    with pytest.raises(ScaffoldError, match="shadow"):
        validate_name("arena")


@pytest.mark.slow
def test_check_bot_fails_a_bot_that_raises_and_names_the_check(tmp_path: Path) -> None:
    manifest = broken_bot(tmp_path / "broken", "raise-on-gift")
    result = CliRunner().invoke(app, ["check-bot", str(manifest), "--logs", str(tmp_path / "logs")])
    assert result.exit_code == 1, result.output
    failed = row(result.output, "position: dragon gift")
    assert "FAIL" in failed and "exception" in failed  # reported by the bot's SDK
    assert "RuntimeError: who gets the Dragon?" in result.output
    for check in ("startup", "position: wish", "position: bomb window"):
        assert "PASS" in row(result.output, check), check
    assert "verdict: FAIL" in result.output
    assert "position: dragon gift" in result.output.split("verdict: FAIL")[1]


@pytest.mark.slow
def test_check_bot_fails_a_bot_that_runs_out_of_time(tmp_path: Path) -> None:
    manifest = broken_bot(tmp_path / "slow", "slow-exchange")
    result = CliRunner().invoke(
        app,
        [
            "check-bot",
            str(manifest),
            "--decision-ms",
            "1500",  # room for the honest checks on a loaded machine; the bot sleeps 3 s
            "--hands",
            "1",
            "--logs",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 1, result.output
    assert "FAIL" in row(result.output, "full match")
    assert "did not answer in time (hand 1, exchange decision)" in result.output
    assert "PASS" in row(result.output, "position: dragon gift")


def test_check_bot_exits_2_on_a_bad_manifest(tmp_path: Path) -> None:
    bad = tmp_path / "bot.toml"
    bad.write_text('name = "x"\ncommand = []\n')
    result = CliRunner().invoke(app, ["check-bot", str(bad)])
    assert result.exit_code == 2
    assert "command" in result.output


@pytest.mark.slow
def test_scaffolded_test_passes_and_can_fail(tmp_path: Path) -> None:
    folder = new_bot(tmp_path, "starter")

    def pytest_in(where: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", where.name],
            cwd=where.parent,
            capture_output=True,
            text=True,
            timeout=600,  # ten times a loaded machine's worst: a bound against a hang only
        )

    ok = pytest_in(folder)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "2 passed" in ok.stdout
    # A bot that always passes (illegal when it must lead) fails its own test.
    bot = folder / "bot.py"
    bot.write_text(bot.read_text().replace("        if keep_bombs:\n", "        if False:\n"))
    bot.write_text(bot.read_text().replace("        if PASS in obs.legal:\n", "        if True:\n"))
    bad = pytest_in(folder)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "IllegalAnswer" in bad.stdout


def test_referee_plays_from_a_start_position() -> None:
    options = Options(hands=1)
    wish = POSITIONS[0]
    start = wish.build(options)
    before = start.copy()
    seats = [InProcessSeat(RandomBot(s)) for s in range(4)]
    config = MatchConfig(options=options, start=start, skip_forced=False)
    record = asyncio.run(Referee(seats, config).run())
    assert len(record.hand_results) == 1 and not record.failures
    # The wished 7 was played by seat 0 first; the start position itself is untouched.
    first = record.replay.actions[0]
    assert first[0] == 0 and str(first[1]) == "7s"
    assert start.hands == before.hands and start.phase is Phase.PLAY and not start.actions


NO_RESUME_BOT = """
import asyncio
import os
import sys

import grpc

from example_bots.random.bot import RandomBot
from sdk.client import BotClient, ClientConfig


class NoResume(BotClient):
    async def _connect_loop(self, play):  # one stream only: no resume after a drop
        session = await self._session(play, False)
        return 0 if session.code is grpc.StatusCode.OK else 1


env = os.environ
config = ClientConfig(server=env["TICHU_ARENA_SERVER"], token=env["TICHU_ARENA_TOKEN"])
sys.exit(asyncio.run(NoResume(RandomBot(1), config).run()))
"""


def test_check_bot_fails_a_bot_that_does_not_resume(tmp_path: Path) -> None:
    folder = tmp_path / "noresume"
    folder.mkdir()
    (folder / "no_resume.py").write_text(NO_RESUME_BOT, encoding="utf-8")
    (folder / "bot.toml").write_text(
        'name = "noresume"\ncommand = ["{python}", "no_resume.py"]\nstartup_timeout_s = 30\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        app, ["check-bot", str(folder), "--hands", "1", "--logs", str(tmp_path / "logs")]
    )
    assert result.exit_code == 1, result.output
    assert "FAIL" in row(result.output, "reconnect")
    assert "the bot process exited with code 1" in result.output
    for check in CHECKS[:-1]:
        assert "PASS" in row(result.output, check), check
    assert "verdict: FAIL (1 of 9 checks failed: reconnect)" in result.output
