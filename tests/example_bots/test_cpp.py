"""The C++ example bot (``example_bots/cpp``) passes ``arena check-bot`` in the sealed sandbox.

A compiled bot sees only the sandbox's base libraries (docs/security.md section 2.4), so this
builds the bot as its Makefile does (protocol code from ``proto/`` by ``protoc`` and
``grpc_cpp_plugin``, the gRPC libraries the sandbox lacks copied into ``lib/``), then checks
it with ``arena check-bot`` and plays a real match against the Python random bot. It also pins
the two ways a built bot fails to start: linked against the host's ``libgrpc++`` without
bringing it (the loader's message, at once, not a hang) and a program without its exec bit
("no such program"), and that the Makefile's fully static mode passes too.

The build (about 40 s on two cores for the three modes) is cached under the temp folder by a
hash of the sources, the ``.proto`` file and the compiler's and libraries' versions, behind a
file lock, so repeated runs and parallel workers build once. Skipped, naming the Debian
package, when a build tool or library is missing.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from arena.referee import MatchRecord, Termination, TimeControl
from arena.rules import Options
from arena.server import TableSpec
from arena.server.manifest import Manifest, load_manifest, resolve_bot
from tests.helpers import ROOT, play_on_a_fresh_server

CPP_DIR = ROOT / "example_bots" / "cpp"
PROTO = ROOT / "proto" / "tichu" / "arena" / "v1" / "arena.proto"
SOURCES = ("bot.cc", "Makefile", "bot.toml")
CACHE = Path(tempfile.gettempdir()) / "tichu-arena-cpp-bot"
BUILD_S = 900  # a generous bound for one build on a loaded machine: only a hang exceeds it
CPP_SEATS = (0, 2)  # partners: team A is the C++ bot, team B the Python random bot
MATCHES = 2  # on the same streams: the bot must take a second Welcome after a MatchResult
HANDS = 3
SEED = 20262  # a match in which the C++ seats call Tichu (pinned below)
FULL_MATCH = "3 hands, 181 answers: grand tichu 12, exchange 12, play 151, wish 3, dragon gift 3"
"""check-bot's count of the full match (seed 1): the bot is deterministic, so it is exact."""

# One worker builds and plays: the module fixture is set up once under `make test`'s xdist.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(BUILD_S + 300),
    pytest.mark.xdist_group("cpp-bot"),
]

TOOLS = (
    ("make", "make"),
    ("g++", "g++"),
    ("pkg-config", "pkg-config"),
    ("protoc", "protobuf-compiler"),
    ("grpc_cpp_plugin", "protobuf-compiler-grpc"),
)
LIBRARIES = (("grpc++", "libgrpc++-dev"), ("protobuf", "libprotobuf-dev"))


def missing_packages() -> list[str]:
    """The Debian packages whose programs or libraries the build needs and cannot find."""
    missing = [package for tool, package in TOOLS if shutil.which(tool) is None]
    if shutil.which("pkg-config") is not None:
        for library, package in LIBRARIES:
            found = subprocess.run(["pkg-config", "--exists", library], check=False)
            if found.returncode != 0:
                missing.append(package)
    return missing


def _version(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=False).stdout


def build_key() -> str:
    """A hash of what the build depends on: sources, contract, compiler and libraries."""
    digest = hashlib.sha256()
    for path in [*(CPP_DIR / name for name in SOURCES), PROTO]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    digest.update(_version(["g++", "--version"]).encode())
    digest.update(_version(["pkg-config", "--modversion", "grpc++", "protobuf"]).encode())
    return digest.hexdigest()[:16]


def _make(folder: Path, *args: str) -> None:
    """Runs make in ``folder``; fails the test with its output if it fails."""
    argv = ["make", "-j2", f"PROTO_ROOT={ROOT / 'proto'}", *args]
    done = subprocess.run(
        argv, cwd=folder, capture_output=True, text=True, timeout=BUILD_S, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"{' '.join(argv)} in {folder} failed:\n{done.stdout}{done.stderr}"[-6000:])


def _build(target: Path, mode: str, objects: Path | None) -> None:
    """Builds the bot in ``mode`` into ``target`` (atomically: a finished folder or none),
    from a copy of the sources; ``objects`` is a finished build whose objects it reuses."""
    work = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    if objects is not None:  # copy2 keeps the times, so make relinks only
        shutil.copytree(objects, work, ignore=shutil.ignore_patterns("bot", "lib", "mode-*"))
    else:
        work.mkdir(parents=True)
        for name in SOURCES:
            shutil.copy2(CPP_DIR / name, work / name)
    _make(work, f"MODE={mode}")
    if mode == "bundled":
        _make(work, "check")
    work.rename(target)


@pytest.fixture(scope="module")
def built() -> Iterator[dict[str, Path]]:
    """The bot's folder by Makefile mode: ``bundled`` (the default), ``static``, and ``host``
    (linked against the host's libraries, none bundled); cached across runs."""
    missing = missing_packages()
    if missing:
        pytest.skip(f"building example_bots/cpp needs the Debian packages: {' '.join(missing)}")
    key = build_key()
    folders = {mode: CACHE / f"{key}-{mode}" for mode in ("bundled", "static", "host")}
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker's build finishes first
        for mode, folder in folders.items():  # the others relink the bundled build's objects
            if not folder.is_dir():
                _build(folder, mode, None if mode == "bundled" else folders["bundled"])
    yield folders


def check_bot(manifest: Path, logs: Path) -> tuple[int, str, float]:
    """``arena check-bot`` on the bot: its exit code, output and wall time."""
    start = time.monotonic()
    result = CliRunner().invoke(app, ["check-bot", str(manifest), "--logs", str(logs)])
    return result.exit_code, result.output, time.monotonic() - start


def row(output: str, check: str) -> str:
    """The first line of a check's row in check-bot's report table."""
    for line in output.splitlines():
        if line.startswith(f"│ {check} "):
            return line
    raise AssertionError(f"no row for {check!r} in:\n{output}")


def foreign_lines(logs: list[Path]) -> list[str]:
    """Lines of the bot's logs not written by the bot itself (gRPC's own log lines)."""
    lines = []
    for log in logs:
        text = log.read_text(encoding="utf-8", errors="replace")
        lines += [f"{log.name}: {x}" for x in text.splitlines() if not x.startswith("[cpp-low] ")]
    return lines


def has_interpreter(program: Path) -> bool:
    """Whether an ELF (64-bit, little-endian) program asks for a loader (``PT_INTERP``)."""
    data = program.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, program
    phoff, phentsize, phnum = (
        int.from_bytes(data[32:40], "little"),
        int.from_bytes(data[54:56], "little"),
        int.from_bytes(data[56:58], "little"),
    )
    types = [
        int.from_bytes(data[phoff + i * phentsize : phoff + i * phentsize + 4], "little")
        for i in range(phnum)
    ]
    return 3 in types  # PT_INTERP


@pytest.mark.parametrize("mode", ["bundled", "static"])
def test_the_cpp_bot_passes_check_bot_in_the_full_sandbox(
    built: dict[str, Path], mode: str, tmp_path: Path
) -> None:
    folder = built[mode]
    assert has_interpreter(folder / "bot") is (mode == "bundled")
    assert (folder / "lib" / "libgrpc++.so.1.51").exists() is (mode == "bundled")
    code, output, _ = check_bot(folder / "bot.toml", tmp_path / "logs")
    assert code == 0, output
    assert "sandboxed: full (bwrap" in output.splitlines()[0], output
    assert "verdict: PASS (all 9 checks passed)" in output, output
    assert FULL_MATCH in row(output, "full match"), output
    assert "resumed after" in row(output, "reconnect"), output
    # Only the bot's own lines: gRPC logged no error, e.g. about a setting it does not know
    # (GRPC_EXPERIMENTS is given to Python bots alone: arena.server.sandbox._runtime_env).
    assert foreign_lines(sorted((tmp_path / "logs").rglob("*.log"))) == []
    seat0 = (tmp_path / "logs" / "match").glob("seat0-*.log")
    assert "connecting again" in next(seat0).read_text(), "the cut stream was resumed"


async def _play(manifests: list[Manifest], logs: Path) -> list[MatchRecord]:
    """Plays a table of ``MATCHES`` matches on a fresh server, as ``arena play`` does."""
    spec = TableSpec(
        options=Options(hands=HANDS),
        seed=SEED,
        time=TimeControl(5000, 5000),  # generous: a slow CI machine must not time out
        matches=MATCHES,
        table_id="cpp-test",
    )
    return await play_on_a_fresh_server(spec, manifests, logs)


def test_the_cpp_bot_plays_matches_against_python_random(
    built: dict[str, Path], tmp_path: Path
) -> None:
    cpp = load_manifest(built["bundled"] / "bot.toml")
    python_random = resolve_bot("random")
    manifests = [cpp if s in CPP_SEATS else python_random for s in range(4)]
    records = asyncio.run(_play(manifests, tmp_path))

    logs = {s: tmp_path / f"seat{s}-{cpp.name}.log" for s in CPP_SEATS}
    output = "\n".join(f"--- seat {s}:\n{p.read_text()[-3000:]}" for s, p in logs.items())
    assert len(records) == MATCHES, output
    calls = 0
    for record in records:
        assert record.termination is Termination.NORMAL, (record.outcome.detail, output)
        assert record.outcome.hands_played == HANDS
        assert [f for f in record.failures if f.seat in CPP_SEATS] == [], output
        calls += sum(h.tichu[s] or h.grand[s] for h in record.hand_results for s in CPP_SEATS)
    assert calls > 0, "the seed was chosen so that the C++ seats call Tichu: accepted calls"
    for seat, log in logs.items():
        text = log.read_text()
        assert " error " not in text, f"seat {seat}:\n{text[-3000:]}"  # every answer accepted
        assert f"match {MATCHES} over after {HANDS} hands" in text, text[-3000:]
        assert f"stream closed by the referee after {MATCHES} match(es)" in text, text[-3000:]
    assert foreign_lines(list(logs.values())) == []


def test_a_bot_linked_against_the_hosts_grpc_does_not_start(
    built: dict[str, Path], tmp_path: Path
) -> None:
    # The sandbox holds the base image's libraries only: the loader finds no libgrpc++, and
    # the bot exits at once with 127; check-bot says so with the loader's own line.
    code, output, seconds = check_bot(built["host"] / "bot.toml", tmp_path / "logs")
    assert code == 1, output
    startup = row(output, "startup")
    assert "FAIL" in startup and "the process exited with code 127" in startup, output
    assert re.search(r"error while loading shared libraries: libgrpc\+\+\.so", output), output
    assert "not run: the bot did not start" in row(output, "full match"), output
    assert seconds < 300  # a bound against a hang only: it fails within seconds


def test_a_bot_without_its_exec_bit_is_no_such_program(
    built: dict[str, Path], tmp_path: Path
) -> None:
    # A short folder: the report's cell must hold the whole message on one line.
    with tempfile.TemporaryDirectory(prefix="cpp-") as short:
        folder = Path(short) / "noexec"
        shutil.copytree(built["bundled"], folder, ignore=shutil.ignore_patterns("build", "gen"))
        (folder / "bot").chmod(0o644)
        code, output, _ = check_bot(folder / "bot.toml", tmp_path / "logs")
    assert code == 1, output
    assert f"cannot start ['./bot'] in {folder}: no such program" in row(output, "startup")
