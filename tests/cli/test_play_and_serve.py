"""``arena play`` and ``arena serve`` end to end, with real bot processes."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from arena.referee import replay as replays
from tests.helpers import ROOT, STUB_BOT

FAULTY_BOTS = ROOT / "tests" / "server" / "bots" / "faulty_bots.py"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def stub_manifest(folder: Path, name: str, *args: str) -> Path:
    """A bot folder holding the stub bot and its manifest (its sandbox shows it that folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "bot.toml"
    shutil.copy(STUB_BOT, folder / STUB_BOT.name)
    command = json.dumps(["{python}", str(folder / STUB_BOT.name), *args])
    path.write_text(
        f'name = "{name}"\ncommand = {command}\nworkdir = "{ROOT}"\nstartup_timeout_s = 30\n',
        encoding="utf-8",
    )
    return path


def test_play_runs_four_bot_processes_and_writes_the_replay(tmp_path: Path) -> None:
    bots = [str(stub_manifest(tmp_path / f"b{s}", f"stub{s}", "--seed", str(s))) for s in range(3)]
    crashing = stub_manifest(tmp_path / "crash", "crasher", "--mode", "crash", "--after", "3")
    out = tmp_path / "play.json"
    result = CliRunner().invoke(
        app,
        [
            "play",
            bots[0],
            str(crashing),
            bots[1],
            bots[2],
            "--hands",
            "2",
            "--seed",
            "5",
            "--decision-ms",
            "2000",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "match seed 5: team A = stub0 + stub1, team B = crasher + stub2" in result.output
    assert "hand  1" in result.output and "hand  2" in result.output
    assert "crasher (seat 1) exited with code 3" in result.output
    assert "crash -> default actions" in result.output
    replay = replays.load(out)
    assert replays.verify(replay).mismatches == []
    assert replay.seats == ["stub0", "crasher", "stub1", "stub2"]
    assert [f["kind"] for f in replay.meta["failures"]] == ["crash"]
    logs = sorted(p.name for p in (tmp_path / "play-logs").iterdir())
    assert logs == ["seat0-stub0.log", "seat1-crasher.log", "seat2-stub1.log", "seat3-stub2.log"]


def test_play_in_process_and_manifest_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the calls without --out write under runs/play here
    out = tmp_path / "inproc.json"
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "play",
            "greedy",
            "greedy",
            "greedy",
            "greedy",
            "--in-process",
            "--hands",
            "2",
            "--seed",
            "3",
            "--out",
            str(out),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "(in-process)" in result.output
    assert replays.verify(replays.load(out)).mismatches == []
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\ncommand = []\n', encoding="utf-8")
    result = runner.invoke(app, ["play", str(bad), "greedy", "greedy", "greedy"])
    assert result.exit_code == 2
    assert "field 'command'" in result.output
    stub = stub_manifest(tmp_path / "s", "stub")
    result = runner.invoke(app, ["play", str(stub), "greedy", "greedy", "greedy", "--in-process"])
    assert result.exit_code == 2
    assert "--in-process needs a Python bot" in result.output
    result = runner.invoke(app, ["play", "greedy", "greedy"])
    assert result.exit_code == 2
    missing = tmp_path / "missing" / "bot.toml"
    missing.parent.mkdir()
    missing.write_text('name = "gone"\ncommand = ["no-such-program-here"]\n', encoding="utf-8")
    result = runner.invoke(app, ["play", str(missing), "greedy", "greedy", "greedy"])
    assert result.exit_code == 1
    assert "cannot start ['no-such-program-here']" in result.output


def test_serve_hands_out_tokens_plays_and_shuts_down_on_sigterm(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.json"
    runs = tmp_path / "runs"
    serve = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena.cli.main",
            "serve",
            "--port",
            "0",
            "--tables",
            "1",
            "--tokens",
            str(tokens),
            "--hands",
            "1",
            "--runs",
            str(runs),
        ],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300
        while not tokens.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        info = json.loads(tokens.read_text())
        assert tokens.stat().st_mode & 0o777 == 0o600  # the seats' secrets, for their owner
        table = info["tables"][0]
        bots = [
            subprocess.Popen(
                [sys.executable, str(STUB_BOT), "--seed", str(s)],
                env={
                    **os.environ,
                    "TICHU_ARENA_SERVER": info["server"],
                    "TICHU_ARENA_TOKEN": table["tokens"][s],
                },
                stdout=subprocess.DEVNULL,
            )
            for s in range(4)
        ]
        assert [b.wait(60) for b in bots] == [0, 0, 0, 0]  # the stream ended: exit 0
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(30) == 143  # the README's exit code for SIGTERM
        err = serve.stderr.read() if serve.stderr else ""
    finally:
        if serve.poll() is None:
            serve.kill()
    assert "referee listening on 127.0.0.1:" in err
    assert f"table {table['table_id']} match 1: stub / stub / stub / stub:" in err
    assert "(normal, 1 hand, 0 failures); replay" in err  # not "1 hands"
    assert f"seat tokens of 1 table written to {tokens}" in err
    assert "referee stopped" in err
    replay = replays.load(runs / table["table_id"] / "match-1.json")
    assert replays.verify(replay).mismatches == []
    assert replay.meta["termination"] == "normal"


def test_serve_open_tables_seat_bots_that_join_with_a_key(tmp_path: Path) -> None:
    keys = tmp_path / "keys.toml"
    names = ["ann", "bob", "cyd", "dee"]
    keys.write_text(
        "[keys]\n" + "".join(f'{n} = "key-of-{n}-0123"\n' for n in names), encoding="utf-8"
    )
    runs = tmp_path / "runs"
    serve = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena.cli.main",
            "serve",
            "--port",
            "0",
            "--open",
            "--keys",
            str(keys),
            "--hands",
            "1",
            "--runs",
            str(runs),
        ],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert serve.stderr is not None
        first = serve.stderr.readline()
        assert "(open tables: tichujoin)" in first
        address = first.split("listening on ")[1].split(";")[0].split(" ")[0]
        bots = []
        for k, n in enumerate(names):
            bot = subprocess.Popen(
                [sys.executable, str(STUB_BOT)],
                env={
                    **os.environ,
                    "TICHU_ARENA_SERVER": address,
                    "TICHU_ARENA_BOT_KEY": f"key-of-{n}-0123",
                },
                stdout=subprocess.PIPE,
                text=True,
            )
            bots.append(bot)
            assert bot.stdout is not None
            # Join in this order: the next bot starts once the lobby counts this one.
            assert bot.stdout.readline().strip() == f"waiting {k + 1}"
        for bot in bots:
            bot.communicate(timeout=60)
        assert [b.returncode for b in bots] == [0, 0, 0, 0]
        serve.send_signal(signal.SIGINT)
        assert serve.wait(30) == 130  # the README's exit code for Ctrl-C
    finally:
        if serve.poll() is None:
            serve.kill()
    (path,) = runs.glob("*/match-1.json")
    replay = replays.load(path)
    assert replay.seats == ["ann", "cyd", "bob", "dee"]  # the first two to join are partners
    assert replays.verify(replay).mismatches == []


def test_a_keys_file_must_hold_distinct_keys(tmp_path: Path) -> None:
    from arena.cli.serve import load_keys

    good = tmp_path / "good.toml"
    good.write_text('[keys]\nann = "0123456789"\nbob = "abcdefghij"\n', encoding="utf-8")
    assert load_keys(good) == {"0123456789": "ann", "abcdefghij": "bob"}
    for text, problem in [
        ('[keys]\nann = "short"\n', "8 characters"),
        ('[keys]\nann = "0123456789"\nbob = "0123456789"\n', "share a key"),
        ("ann = 1\n", "[keys]"),
    ]:
        bad = tmp_path / "bad.toml"
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=re.escape(problem)):
            load_keys(bad)


def sdk_manifest(folder: Path, name: str, entry: str, env: dict[str, str] | None = None) -> Path:
    """A manifest running ``entry`` of ``tests/server/bots/faulty_bots.py``, copied into the
    bot's folder (the sandbox shows a bot its own folder alone)."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(FAULTY_BOTS, folder / FAULTY_BOTS.name)
    path = folder / "bot.toml"
    command = json.dumps(["{python}", "-m", "sdk", entry])
    lines = [f'name = "{name}"', f"command = {command}"]
    if env:
        lines.append("[env]")
        lines += [f'{k} = "{v}"' for k, v in env.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_play_counts_the_bots_own_failures_and_names_its_log(tmp_path: Path) -> None:
    """The SDK answers for a bot that raises on every follow; the referee counts each one."""
    faulty = sdk_manifest(tmp_path / "f", "faulty", "faulty_bots:FollowRaises")
    out = tmp_path / "play.json"
    args = ["play", "random", str(faulty), "random", "random", "--hands", "2", "--seed", "4"]
    result = CliRunner().invoke(app, [*args, "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    failures = replays.load(out).meta["failures"]
    assert failures and {f["kind"] for f in failures} == {"exception"}
    assert {f["seat"] for f in failures} == {1}
    assert {f["outcome"] for f in failures} == {"client_answer"}
    assert all(f["detail"].startswith("KeyError: 'follow'") for f in failures)
    log = tmp_path / "play-logs" / "seat1-faulty.log"
    assert log.read_text(encoding="utf-8").count("KeyError: 'follow'") >= len(failures)
    flat = " ".join(result.output.split())
    assert f"faulty: {len(failures)} failures (exception {len(failures)})" in flat
    assert f"log: {log}" in flat
    # The SDK's own answers are legal, so the referee applied none of its defaults.
    assert "forced, 0 defaults applied by the referee," in flat


def test_play_fails_when_a_bot_never_joins_and_logs_its_import_error(tmp_path: Path) -> None:
    broken = sdk_manifest(
        tmp_path / "b",
        "broken",
        "faulty_bots:FollowRaises",
        {"FAULTY_IMPORT": "1"},
    )
    out = tmp_path / "play.json"
    args = ["play", "random", "random", str(broken), "random", "--hands", "1", "--seed", "4"]
    result = CliRunner().invoke(app, [*args, "--out", str(out), "--quiet"])
    assert result.exit_code == 1, result.output
    log = tmp_path / "play-logs" / "seat2-broken.log"
    flat = " ".join(result.output.split())
    assert f"broken (seat 2) never joined the table; its output is in {log}" in flat
    text = log.read_text(encoding="utf-8")
    assert "Traceback" in text and "RuntimeError: a bug at import time" in text
    # Issue 23, finding 5: the match stops rather than being played on default answers.
    assert "the match was stopped: a bot that cannot start" in flat
    assert "final:" not in flat and "random-1 (seat 0) never joined" not in flat
    going = CliRunner().invoke(app, [*args, "--out", str(out), "--quiet", "--keep-going"])
    assert going.exit_code == 1, going.output  # played on, but still not a clean match
    flat = " ".join(going.output.split())
    assert "final: play, 1 hand " in flat  # not "1 hands"
    assert f"broken (seat 2) never joined the table; its output is in {log}" in flat


@pytest.mark.parametrize(
    ("flag", "value"), [("--hands", "-1"), ("--target", "0"), ("--seed", "-3")]
)
def test_bad_numbers_are_a_clear_error(flag: str, value: str) -> None:
    result = CliRunner().invoke(app, ["play", "random", "random", "random", "random", flag, value])
    assert result.exit_code == 2
    assert f"Invalid value for '{flag}'" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("where", ["folder", "missing/tokens.json"])
def test_serve_tokens_in_a_folder_or_nowhere_is_one_line(tmp_path: Path, where: str) -> None:
    """``--tokens`` naming a folder (or a file in a missing folder) is bad input, said before
    the referee starts (a 51-line IsADirectoryError once the tables were made, before)."""
    (tmp_path / "folder").mkdir()
    argv = ["serve", "--port", "0", "--tables", "1", "--tokens", str(tmp_path / where)]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert "--tokens" in result.output
