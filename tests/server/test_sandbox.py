"""The bot sandbox with real processes: hostile bots attack the host and fail (docs/security.md).

Each attack runs in seat 3 of a table whose other seats are honest stub bots, while a second
table of honest bots plays beside it. Each test checks what the attacker got (its log holds
all it read), that the honest seats and the other table played on, and how the referee
recorded the attacker's failure. Skipped only on a host where the sandbox level under test
cannot be made (``host_sandbox`` says why); this machine and CI, as root, make ``full``.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.referee import FailureKind, MatchRecord, Termination, TimeControl
from arena.referee.policy import FailurePolicy
from arena.rules import Options
from arena.server import ArenaServer, TableSpec
from arena.server.bots import play_table
from arena.server.image import images_folder
from arena.server.manifest import Limits, Manifest
from arena.server.relay import MAX_CONNECTIONS
from arena.server.sandbox import (
    Sandbox,
    SandboxError,
    SandboxLevel,
    host_sandbox,
    require_sandbox,
    runtime_paths,
    sandbox_at,
    unsandboxed,
)
from tests.helpers import ROOT

BOTS = Path(__file__).resolve().parent / "bots"
HOSTILE = BOTS / "hostile_bot.py"
HANDS = 2

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]


def _full() -> Sandbox:
    sb = host_sandbox()
    if sb.level is not SandboxLevel.FULL:
        pytest.skip(f"this host makes no full sandbox: {'; '.join(sb.reasons)}")
    return sb


def _hostile(attack: str, limits: Limits | None = None) -> Manifest:
    return Manifest(
        name=f"hostile-{attack}",
        command=["{python}", str(HOSTILE), "--attack", attack],
        workdir=ROOT,
        limits=limits or Limits(),
        path=BOTS / "bot.toml",
    )


@dataclass
class Played:
    """What an attack table and its neighbour table played, and the attacker's log."""

    attacked: MatchRecord
    neighbour: MatchRecord
    log: str
    tokens: list[str]  # every seat token of both tables; seat 3 of the first is the attacker
    tcp_port: int


def play_attack(
    stub: Callable[..., Manifest],
    attack: Manifest,
    tmp_path: Path,
    *,
    env: Mapping[str, str] | None = None,
    sandbox: Sandbox | None = None,
    decision_ms: int = 5000,
    startup_timeout_s: float = 30.0,
) -> Played:
    """Plays the attack table (attacker in seat 3) beside a table of four honest bots."""
    sandbox = sandbox or _full()
    logs = tmp_path / "logs"

    async def main() -> Played:
        server = ArenaServer()
        port = await server.start()
        extra = {"TEST_TARGET_PID": str(os.getpid()), "TEST_TCP_PORT": str(port), **(env or {})}
        tables = []
        try:
            runs = []
            for k, seats in enumerate(([stub(), stub(), stub(), attack], [stub()] * 4)):
                spec = TableSpec(
                    options=Options(hands=HANDS),
                    seed=300 + k,
                    time=TimeControl(decision_ms),
                    policy=FailurePolicy(max_strikes=3),
                    table_id=f"attack{k}",
                    startup_timeout_s=startup_timeout_s,
                )
                runs.append(
                    play_table(
                        server,
                        spec,
                        seats,
                        log_dir=logs / f"t{k}",
                        extra_env=lambda t: [extra] * 4,
                        on_table=tables.append,
                        sandbox=sandbox,
                    )
                )
            (_, attacked), (_, neighbour) = await asyncio.gather(*runs)
        finally:
            await server.stop(1.0)
        log = (logs / "t0" / f"seat3-{attack.name}.log").read_text(errors="replace")
        tokens = [token for t in tables for token in t.tokens]
        return Played(attacked[0], neighbour[0], log, tokens, port)

    return asyncio.run(main())


def assert_honest_seats_played(p: Played, attacker_failures: set[FailureKind]) -> None:
    """Both tables ended normally; only the attacker failed, and only as expected."""
    for record in (p.attacked, p.neighbour):
        assert record.termination is Termination.NORMAL, record.outcome.detail
        assert record.outcome.hands_played == HANDS
    assert p.neighbour.failures == []
    assert [f for f in p.attacked.failures if f.seat != 3] == []
    assert {f.kind for f in p.attacked.failures} == attacker_failures, p.attacked.failures


def lines(log: str, prefix: str) -> list[str]:
    return [line for line in log.splitlines() if line.startswith(prefix)]


def documented_environment() -> set[str]:
    """The variables docs/protocol.md, section 15, lists as a bot's whole environment."""
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    table = text[text.index("**Its environment**") :].split("\n\n")[1]
    return {n for row in table.splitlines() for n in re.findall(r"`([A-Z_]+)`", row.split("|")[1])}


def test_a_bot_sees_no_other_process_and_no_other_seats_token(
    stub: Callable[..., Manifest], tmp_path: Path
) -> None:
    p = play_attack(stub, _hostile("proc"), tmp_path)
    assert_honest_seats_played(p, set())
    # Its pid namespace holds bwrap's init (1) and the bot (2), nothing else.
    assert lines(p.log, "proc: visible pids") == ["proc: visible pids ['1', '2']"]
    assert f"proc: {os.getpid()}/environ: refused" in p.log
    own = p.tokens[3]
    assert own in p.log  # it did read its own environment...
    for token in p.tokens[:3] + p.tokens[4:]:
        assert token not in p.log  # ...and nobody else's
    # Its environment holds the variables docs/protocol.md lists, and its manifest's, alone.
    environ = lines(p.log, "proc: 2/environ: ")[0].removeprefix("proc: 2/environ: ")
    names = {kv.split("=", 1)[0] for kv in environ.split()}
    assert names <= documented_environment() | {"TEST_TARGET_PID", "TEST_TCP_PORT"}
    assert {"PATH", "HOME", "TMPDIR", "TICHU_ARENA_TOKEN"} <= names
    assert "TICHU_ARENA_SERVER=unix:/run/tichu-arena/referee.sock" in environ
    assert p.attacked.replay.meta["sandbox"]["level"] == "full"


def test_a_bot_reads_neither_results_nor_other_bots_nor_home(
    stub: Callable[..., Manifest], tmp_path: Path
) -> None:
    secret = "s3cret-" + os.urandom(6).hex()
    db = tmp_path / "results.sqlite"
    db.write_text(secret)
    db.chmod(0o644)  # readable by anyone on the host: the sandbox alone must hide it
    other = tmp_path / "other-bot"
    other.mkdir()
    (other / "bot.py").write_text(secret)
    paths = [str(db), str(other / "bot.py"), str(other), str(tmp_path / "logs")]
    home = Path.home()
    p = play_attack(
        stub, _hostile("files"), tmp_path, env={"TEST_PATHS": ":".join([*paths, str(home)])}
    )
    assert_honest_seats_played(p, set())
    assert secret not in p.log
    for path in paths:
        (line,) = lines(p.log, f"files: {path}: ")
        assert "refused" in line, line
    # The home folder holds, at most, the way to the runtime (here the interpreter may live
    # under it): nothing of its own.
    (line,) = lines(p.log, f"files: {home}: ")
    ways = {q.relative_to(home).parts[0] for q in runtime_paths() if home in q.parents}
    if "refused" not in line:
        assert line == f"files: {home}: lists {sorted(ways)}", line


def test_a_bot_has_no_network_but_the_referee_socket(
    stub: Callable[..., Manifest], tmp_path: Path
) -> None:
    p = play_attack(stub, _hostile("network"), tmp_path)
    assert_honest_seats_played(p, set())
    assert lines(p.log, "network: interfaces") == ["network: interfaces ['lo']"]
    (tcp,) = lines(p.log, "network: referee tcp port: ")
    (outside,) = lines(p.log, "network: outside address: ")
    assert "failed (ECONNREFUSED)" in tcp, tcp
    assert "failed (ENETUNREACH)" in outside, outside
    for line in (tcp, outside):  # at once: nothing to wait for in an empty namespace
        seconds = float(re.findall(r"in ([0-9.]+) s", line)[0])
        assert seconds < 10.0, line  # no timeout was waited for (a loaded machine is slow)


def test_the_kernels_shared_state_is_shut(stub: Callable[..., Manifest], tmp_path: Path) -> None:
    """Locks and page-cache probes on the runtime, watches, nested namespaces, memfd,
    foreign socket families, /dev/shm, sysinfo and pinning are refused, the machine's
    counters in /proc do not move; the runtime lies in memory (so whether
    a page is cached says nothing) and pid 1 shows no host path (docs/security.md)."""
    p = play_attack(stub, _hostile("kernel"), tmp_path)
    assert_honest_seats_played(p, set())
    outcomes = dict(
        line.removeprefix("kernel: ").split(": ", 1) for line in lines(p.log, "kernel: ")
    )
    kinds = outcomes.pop("runtime file system"), outcomes.pop("pid 1")
    # /proc's machine-wide counters are copies that never move (issue 45: a storage channel)
    assert outcomes.pop("machine counters") == "still"
    assert len(outcomes) == 18, outcomes
    assert all(v.startswith("refused") for v in outcomes.values()), outcomes
    assert outcomes["flock"] == outcomes["fcntl lock"] == "refused (ENOLCK)", outcomes
    assert outcomes["vsock"] == outcomes["vsock, high bits"] == "refused (EAFNOSUPPORT)"
    assert kinds[0] == "tmpfs", kinds
    # bwrap's own options (every host path it binds) are not on its command line.
    assert " --args " in kinds[1] and "--ro-bind" not in kinds[1], kinds
    assert str(images_folder()) not in kinds[1] and str(tmp_path) not in kinds[1], kinds


def test_a_bot_kills_nothing_outside_its_sandbox(
    stub: Callable[..., Manifest], tmp_path: Path
) -> None:
    p = play_attack(stub, _hostile("kill"), tmp_path)
    assert "kill: -1: refused (No such process)" in p.log  # it may signal nobody it sees
    assert f"kill: {os.getpid()}: refused (No such process)" in p.log
    assert_honest_seats_played(p, set())


def _processes_with(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


def test_no_child_outlives_its_seat(stub: Callable[..., Manifest], tmp_path: Path) -> None:
    marker = "tichu-orphan-" + os.urandom(6).hex()
    p = play_attack(stub, _hostile("fork"), tmp_path, env={"TEST_MARKER": marker})
    assert "fork: left a sleeping grandchild" in p.log
    assert_honest_seats_played(p, set())
    assert _processes_with(marker) == []


def test_memory_past_the_limit_is_refused_and_the_seat_crashes(
    stub: Callable[..., Manifest], tmp_path: Path
) -> None:
    p = play_attack(stub, _hostile("memory", Limits(memory_mb=512)), tmp_path)
    (got,) = lines(p.log, "memory: got ")
    assert int(got.split()[2]) < 512, got
    assert_honest_seats_played(p, {FailureKind.CRASH})
    (crash,) = p.attacked.failures
    assert crash.seat == 3 and "code 4" in crash.detail
    assert p.attacked.replay.meta["sandbox"]["limits"][3]["memory_mb"] == 512


def test_a_flooded_log_is_capped_and_the_flooder_given_up(
    stub: Callable[..., Manifest], tmp_path: Path
) -> None:
    cap_kb = 64
    flood = _hostile("flood", Limits(log_kb=cap_kb))
    # It never joins: the table waits out its start-up time, short here (honest bots join fast).
    p = play_attack(stub, flood, tmp_path, startup_timeout_s=8.0)
    # It floods instead of joining: recorded as a seat that never came, given up at once.
    assert_honest_seats_played(p, {FailureKind.DISCONNECT})
    assert 3 in p.attacked.outcome.given_up
    assert len(p.log.encode()) <= cap_kb * 1024 + 200
    assert re.search(r"\[arena: \d+ bytes of output past the cap dropped\]", p.log)


def test_a_connection_flood_costs_only_the_flooder(
    stub: Callable[..., Manifest], tmp_path: Path
) -> None:
    """A bot whose children open connections to the referee by the hundred holds at most
    ``MAX_CONNECTIONS`` (its own socket closes the rest at once), and every other bot of its
    table and of the table beside it connects and plays (docs/security.md)."""
    # It never plays: the table waits out its start-up time while it floods.
    p = play_attack(stub, _hostile("connections"), tmp_path, startup_timeout_s=15.0)
    assert_honest_seats_played(p, {FailureKind.DISCONNECT})
    (line,) = lines(p.log, "connections: ")
    held, closed, silent = map(int, re.findall(r"\d+", line))
    assert held <= MAX_CONNECTIONS, line
    assert held + closed + silent == 1600 and closed >= 1600 - MAX_CONNECTIONS - silent, line


def test_partial_level_has_no_network_and_its_own_pid_namespace(
    stub: Callable[..., Manifest], tmp_path: Path
) -> None:
    try:
        partial = sandbox_at(SandboxLevel.PARTIAL)
    except SandboxError as e:
        pytest.skip(str(e))
    p = play_attack(stub, _hostile("network"), tmp_path, sandbox=partial)
    assert_honest_seats_played(p, set())
    (tcp,) = lines(p.log, "network: referee tcp port: ")
    assert tcp.startswith("network: referee tcp port: failed ("), tcp  # lo is down there
    assert p.attacked.replay.meta["sandbox"]["level"] == "partial"
    p = play_attack(stub, _hostile("kill"), tmp_path / "kill", sandbox=partial)
    assert "kill: -1: refused (No such process)" in p.log
    assert_honest_seats_played(p, set())


def test_below_full_is_refused_unless_allowed() -> None:
    weak = unsandboxed()
    with pytest.raises(SandboxError, match=r"\(not asked for\).*'none'.*--allow-unsandboxed"):
        require_sandbox(False, weak)
    assert require_sandbox(True, weak) is weak


def test_level_none_has_the_limits_but_not_the_namespaces(
    stub: Callable[..., Manifest], tmp_path: Path
) -> None:
    """What ``--allow-unsandboxed`` gives on a host without namespaces (docs/security.md)."""
    p = play_attack(stub, _hostile("network"), tmp_path, sandbox=unsandboxed())
    assert_honest_seats_played(p, set())
    (tcp,) = lines(p.log, "network: referee tcp port: ")
    assert tcp.startswith("network: referee tcp port: CONNECTED"), tcp
    assert p.attacked.replay.meta["sandbox"]["level"] == "none"
    p = play_attack(
        stub, _hostile("memory", Limits(memory_mb=512)), tmp_path / "m", sandbox=unsandboxed()
    )
    assert int(lines(p.log, "memory: got ")[0].split()[2]) < 512
    assert_honest_seats_played(p, {FailureKind.CRASH})


def test_a_bot_folder_in_the_project_is_shown_as_it_is_now() -> None:
    """An example bot's folder is bound from its own image even though the project image
    holds it: that copy is as old as the process, and a folder changed since (the Node bot's
    ``npm ci`` beside a running test worker) must show as it is."""
    from arena.server.sandbox import _bwrap_view

    folder = ROOT / "example_bots" / "random"
    args = _bwrap_view(folder, folder, ROOT / "no.sock", Limits(), [])
    binds = {args[i + 2]: args[i + 1] for i, a in enumerate(args) if a == "--ro-bind"}
    assert str(folder.resolve()) in binds, sorted(binds)
    assert "/folder-" in binds[str(folder.resolve())], binds[str(folder.resolve())]
