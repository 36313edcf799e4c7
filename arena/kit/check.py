"""``arena check-bot``: the compliance check a bot passes before it plays in the arena.

``check_bot(manifest)`` runs a real referee (``ArenaServer`` on a loopback port) and plays
two tables, the bot under test in all four seats, each seat its own process started from the
manifest: the first plays the full match then the reconnect match, the second the tricky
positions. Every check gets a pass/fail, a reason and a time:

1. **startup**: the four processes start and join within the manifest's
   ``startup_timeout_s``.
2. **full match**: a short match (``hands`` hands, Grand Tichu on, so Grand Tichu and
   exchange decisions occur) in which every decision is answered, accepted and in time;
   the detail counts the answers per decision kind and names the slowest.
3. **positions**: a seeded set of tricky positions, each a match started from an explicit
   state (``arena.rules.position``, ``MatchPlan.start``), played to the end of the hand with
   every decision asked (no forced moves): an active wish to fulfil, a bomb window, a
   Dragon trick to give away, Phoenix readings (single, straight, on the table). A position
   passes when its key decision is asked and every answer is accepted in time.
4. **reconnect**: a second short match in which the referee cuts seat 0's stream once with
   ``UNAVAILABLE`` while a decision is open; the seat must resume with its token and the
   match finish with the seat back, not given up.

A bad answer is seen twice: the referee records failures (timeouts, rejected or illegal
answers, crashes, lost seats), and the Python SDK client, which answers a default itself when
the bot raises, answers illegally or runs out of time, logs that as an ``ERROR`` line in the
seat's log; both fail the check they happen in. The bots' logs stay in ``log_dir``.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from arena.referee import (
    Answer,
    Decision,
    Failure,
    FailureKind,
    FailureOutcome,
    FailurePolicy,
    MatchRecord,
    Termination,
    TimeControl,
)
from arena.rules import Match, Options, Phase
from arena.rules.position import position
from arena.runtime.aio import run as run_loop
from arena.server import (
    ArenaServer,
    BotStartError,
    GrpcSeat,
    MatchPlan,
    Stream,
    Table,
    TableSpec,
    play_table,
)
from arena.server.manifest import Manifest
from arena.server.sandbox import Sandbox, require_sandbox

__all__ = [
    "POSITIONS",
    "CheckReport",
    "CheckResult",
    "CheckSettings",
    "TrickyPosition",
    "check_bot",
    "print_report",
    "run_check",
]

_SHOWN = 5  # problems listed per failed check under the table


@dataclass(frozen=True)
class CheckSettings:
    """How hard the check is: the clock, the match length, the seed, the reconnect grace."""

    decision_ms: int = 1000
    hands: int = 3
    seed: int = 1
    grace_ms: int = 5000
    table_timeout_s: float = 300.0
    sandbox: Sandbox | None = None  # None: the host's, which must be full (require_sandbox)


@dataclass(frozen=True)
class CheckResult:
    """One check: its name, whether it passed, why, and how long it took."""

    name: str
    passed: bool
    detail: str
    seconds: float
    problems: tuple[str, ...] = ()


@dataclass
class CheckReport:
    """All the checks of one bot; ``passed`` when every check passed."""

    bot: str
    manifest: Path | None
    logs: Path
    results: list[CheckResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Whether every check passed (and there was at least one)."""
        return bool(self.results) and all(r.passed for r in self.results)

    @property
    def failed(self) -> list[str]:
        """The names of the checks that failed."""
        return [r.name for r in self.results if not r.passed]


@dataclass(frozen=True)
class TrickyPosition:
    """A mid-hand position and the decision it tests (``phase`` asked of ``seat``)."""

    name: str
    what: str
    hands: tuple[str, str, str, str]
    to_act: int
    seat: int
    phase: Phase
    trick: tuple[tuple[int, str], ...] = ()
    wish: int = 0

    def build(self, options: Options) -> Match:
        """The position as a ``Match`` (in its play phase, ``to_act`` to play)."""
        return position(
            self.hands, to_act=self.to_act, trick=self.trick, wish=self.wish, options=options
        )


POSITIONS: tuple[TrickyPosition, ...] = (
    TrickyPosition(
        "wish",
        "seat 2 led the Mah Jong wishing a 7; seat 0 holds 7s and must play it over the 5",
        ("7s 9p Kt", "2j 3j", "4p 5p", "6t 8t"),
        to_act=0,
        seat=0,
        phase=Phase.PLAY,
        trick=((2, "Mj"), (3, "5s")),
        wish=7,
    ),
    TrickyPosition(
        "bomb window",
        "seat 0 holds four 9s and is asked out of turn after seat 1 leads",
        ("9s 9j 9p 9t 4s", "Ks 5j", "2s 3j", "6s 7j"),
        to_act=1,
        seat=0,
        phase=Phase.BOMB_WINDOW,
    ),
    TrickyPosition(
        "dragon gift",
        "seat 0's Dragon wins the trick; it must give it to an opponent",
        ("4s 8s", "Ks 5j", "2s 3j", "6s 7j"),
        to_act=3,
        seat=0,
        phase=Phase.DRAGON_GIFT,
        trick=((0, "Dr"),),
    ),
    TrickyPosition(
        "phoenix single",
        "seat 0 may beat a King with the Phoenix as a single",
        ("Ph 3s 8j", "Ks 5j", "2s 3j", "6s 7j"),
        to_act=0,
        seat=0,
        phase=Phase.PLAY,
        trick=((1, "Kp"),),
    ),
    TrickyPosition(
        "phoenix straight",
        "seat 0 leads holding Ph 3 4 5 6 8: straights with the Phoenix as 2 or 7",
        ("Ph 3s 4j 5p 6t 8s", "Ks 5j", "2s 3j", "6s 7j"),
        to_act=0,
        seat=0,
        phase=Phase.PLAY,
    ),
    TrickyPosition(
        "phoenix on the table",
        "seat 0 must beat the straight 4-8 (Phoenix as 8) or pass",
        ("9s Tj Jp Qt Ks 2j", "Kj 5t", "2s 3j", "6s 7j"),
        to_act=0,
        seat=0,
        phase=Phase.PLAY,
        trick=((1, "4s 5j 6p 7t Ph=8"),),
    ),
)
"""The tricky positions of check 3, in the order they are played."""


# ---------------------------------------------------------------------- one table


@dataclass(frozen=True)
class _Asked:
    """One decision asked of a seat, and how it went."""

    match_no: int
    seat: int
    phase: Phase
    hand: int
    at: float  # perf_counter when asked
    ms: float
    limit_ms: int
    failure: str  # "" when the answer was accepted
    answer: str


class _TableRun:
    """One table of the check: four processes of the bot, the decisions asked, the logs."""

    def __init__(
        self, name: str, manifest: Manifest, spec: TableSpec, log_dir: Path, sandbox: Sandbox
    ) -> None:
        self.name = name
        self.sandbox = sandbox
        self.manifest = manifest
        self.spec = spec
        self.log_dir = log_dir
        self.table: Table | None = None
        self.records: list[MatchRecord] = []
        self.asked_log: list[_Asked] = []
        self.joined_s: dict[int, float] = {}  # seat -> seconds from the start to its first join
        self.exits: dict[int, int] = {}
        self.exit_match: dict[int, int] = {}  # seat -> match (from 1) it exited in
        self.marks: list[list[int]] = []  # log sizes by seat at the end of each match
        self.error = ""
        self.seconds = 0.0
        self.cutter: _Cutter | None = None
        self._t0 = 0.0

    async def run(self, server: ArenaServer, timeout_s: float) -> None:
        """Plays the table to its end; a start error or a timeout lands in ``error``."""
        self._t0 = time.perf_counter()
        try:
            _, self.records = await asyncio.wait_for(
                play_table(
                    server,
                    self.spec,
                    [self.manifest] * 4,
                    log_dir=self.log_dir,
                    on_exit=self._exited,
                    on_table=self._on_table,
                    on_record=self._on_record,
                    sandbox=self.sandbox,
                ),
                timeout_s,
            )
        except BotStartError as e:
            self.error = str(e)
        except TimeoutError:
            self.error = f"the table did not finish within {timeout_s:g} s"
        finally:
            self.seconds = time.perf_counter() - self._t0

    def _exited(self, seat: int, code: int) -> None:
        if seat not in self.exits:
            self.exits[seat] = code
            self.exit_match[seat] = len(self.marks) + 1

    def _on_record(self, k: int, record: MatchRecord) -> None:
        self.marks.append([_size(self.log(s)) for s in range(4)])

    def _on_table(self, table: Table) -> None:
        self.table = table
        table.observe(self)

    # ------------------------------------------------ SeatObserver: joins and decisions

    def joined(self, seat: GrpcSeat, resumed: bool) -> None:
        """Notes when each seat first joined; tells the cutter of a resume."""
        self.joined_s.setdefault(seat.seat, time.perf_counter() - self._t0)
        if self.cutter is not None:
            self.cutter.joined(seat)

    def asked(self, seat: GrpcSeat, decision: Decision) -> None:
        """Lets the cutter cut the connection while a decision is open."""
        if self.cutter is not None:
            self.cutter.asked(seat, decision)

    def answered(self, seat: GrpcSeat, decision: Decision, answer: Answer, ms: float) -> None:
        """Records the decision, its time and its answer (or failure)."""
        obs = decision.obs
        failure = ""
        if answer.action is None:
            kind = (answer.failure or FailureKind.MALFORMED).name.lower()
            failure = f"{kind}: {answer.detail}" if answer.detail else kind
        self.asked_log.append(
            _Asked(
                seat.info.match_no,
                seat.seat,
                obs.phase,
                obs.hand_no + 1,
                time.perf_counter() - ms / 1000.0,
                ms,
                decision.deadline_ms + decision.bank_ms,
                failure,
                str(answer.action) if answer.action is not None else "",
            )
        )

    def log(self, seat: int) -> Path:
        """The seat's log file (``play_table`` names it ``seat<k>-<name>.log``)."""
        found = sorted(self.log_dir.glob(f"seat{seat}-*.log"))
        return found[0] if found else self.log_dir / f"seat{seat}.log"

    def bot_errors(self, match_no: int | None = None) -> list[str]:
        """``ERROR`` lines of the bots' logs (in match ``match_no`` only, when given)."""
        errors = []
        for s in range(4):
            path = self.log(s)
            if not path.is_file():
                continue
            data = path.read_bytes()
            if match_no is not None:
                start = self.marks[match_no - 2][s] if match_no >= 2 else 0
                end = self.marks[match_no - 1][s] if match_no <= len(self.marks) else len(data)
                data = data[start:end]
            errors += [f"seat {s}: {e}" for e in _log_errors(data.decode("utf-8", "replace"))]
        return errors

    def last_log_line(self, seat: int) -> str:
        """The last non-empty line of a seat's log, for messages."""
        path = self.log(seat)
        if not path.is_file():
            return ""
        lines = [x.strip() for x in path.read_text("utf-8", "replace").splitlines() if x.strip()]
        return lines[-1] if lines else ""

    def in_match(self, k: int) -> list[_Asked]:
        """The decisions asked in match ``k`` (from 1)."""
        return [a for a in self.asked_log if a.match_no == k]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


_LOG_RECORD = re.compile(r"^\d{4}-\d\d-\d\d [\d:,.]+ \S+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) (.*)$")


def _log_errors(text: str) -> list[str]:
    """The ``ERROR``/``CRITICAL`` records of a log, each with its exception's last line."""
    errors: list[str] = []
    current: list[str] | None = None

    def flush() -> None:
        if current:
            msg = current[0]
            if len(current) > 1 and current[-1] != msg:
                msg += f" [{current[-1]}]"
            errors.append(msg)

    for line in text.splitlines():
        m = _LOG_RECORD.match(line)
        if m:
            flush()
            current = [m[2]] if m[1] in ("ERROR", "CRITICAL") else None
        elif current is not None and line.strip():
            current.append(line.strip())
    flush()
    return errors


# ---------------------------------------------------------------------- the checks


_DECISION_KINDS = (
    Phase.GRAND_TICHU,
    Phase.EXCHANGE,
    Phase.PLAY,
    Phase.BOMB_WINDOW,
    Phase.WISH,
    Phase.DRAGON_GIFT,
)


def _kind(phase: Phase) -> str:
    return phase.name.lower().replace("_", " ")


def _failure(f: Failure) -> str:
    return (
        f"seat {f.seat}, hand {f.hand}: {f.kind.name.lower()}"
        f" -> {f.outcome.name.lower().replace('_', ' ')} ({f.detail})"
    )


def _problems(
    run: _TableRun, k: int, allowed: Callable[[Failure], bool] | None = None
) -> list[str]:
    """What went wrong in match ``k`` of a table: failures, bot errors, exits, late answers."""
    problems: list[str] = []
    if run.error:
        problems.append(run.error)
    if len(run.records) < k:
        problems.append("the match was not played")
        return problems
    record = run.records[k - 1]
    problems += [_failure(f) for f in record.failures if allowed is None or not allowed(f)]
    problems += run.bot_errors(k if run.spec.match_count > 1 else None)
    for seat, code in sorted(run.exits.items()):
        if run.exit_match[seat] != k:
            continue
        tail = run.last_log_line(seat)
        problems.append(
            f"seat {seat}: the process exited with code {code}" + (f" ({tail})" if tail else "")
        )
    late = [a for a in run.in_match(k) if not a.failure and a.ms > a.limit_ms]
    problems += [
        f"seat {a.seat}, hand {a.hand}: {_kind(a.phase)} answered after {a.ms:.0f} ms"
        f" (limit {a.limit_ms} ms)"
        for a in late
    ]
    if record.termination not in (Termination.NORMAL, Termination.ADJUDICATED):
        problems.append(
            f"the match ended {record.termination.name.lower()}: {record.outcome.detail}"
        )
    return problems


def _fail(name: str, problems: list[str], seconds: float) -> CheckResult:
    more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
    return CheckResult(name, False, problems[0] + more, seconds, tuple(problems))


def _check_startup(run: _TableRun, manifest: Manifest) -> CheckResult:
    limit = manifest.startup_timeout_s
    slowest = max(run.joined_s.values(), default=run.seconds)
    if run.error and not run.joined_s:
        return CheckResult("startup", False, run.error, run.seconds)
    missing = [s for s in range(4) if s not in run.joined_s]
    if missing:
        s = missing[0]
        why = (
            f"the process exited with code {run.exits[s]}"
            if s in run.exits
            else f"it did not join within {limit:g} s"
        )
        tail = run.last_log_line(s)
        detail = f"seat {s}: {why}" + (f"; its log ends: {tail}" if tail else "")
        return CheckResult("startup", False, detail, slowest)
    if slowest > limit:
        return CheckResult(
            "startup", False, f"joined after {slowest:.2f} s, over the {limit:g} s limit", slowest
        )
    return CheckResult(
        "startup",
        True,
        f"4 processes joined within {slowest:.2f} s (limit {limit:g} s)",
        slowest,
    )


def _check_match(run: _TableRun) -> CheckResult:
    name = "full match"
    seconds = run.records[0].seconds if run.records else run.seconds
    problems = _problems(run, 1)
    if problems:
        return _fail(name, problems, seconds)
    asked = run.in_match(1)
    counts = Counter(a.phase for a in asked)
    kinds = ", ".join(f"{_kind(p)} {n}" for p, n in sorted(counts.items(), key=lambda x: x[0]))
    missing = [_kind(p) for p in _DECISION_KINDS if p not in counts]
    slow = max(asked, key=lambda a: a.ms, default=None)
    slowest = (
        f"; slowest {slow.ms:.1f} ms ({_kind(slow.phase)}, limit {slow.limit_ms} ms)"
        if slow is not None
        else ""
    )
    not_met = f"; not met: {', '.join(missing)}" if missing else ""
    played = len(run.records[0].hand_results)
    return CheckResult(
        name,
        True,
        f"{played} hands, {len(asked)} answers: {kinds}{slowest}{not_met}",
        seconds,
    )


def _check_position(run: _TableRun, k: int, pos: TrickyPosition) -> CheckResult:
    name = f"position: {pos.name}"
    seconds = run.records[k - 1].seconds if len(run.records) >= k else 0.0
    problems = _problems(run, k)
    if problems:
        return _fail(name, problems, seconds)
    asked = run.in_match(k)
    key = next((a for a in asked if a.seat == pos.seat and a.phase is pos.phase), None)
    if key is None:
        return CheckResult(
            name, False, f"seat {pos.seat} was never asked its {_kind(pos.phase)}", seconds
        )
    return CheckResult(
        name,
        True,
        f"{pos.what}: answered {key.answer} in {key.ms:.1f} ms; {len(asked)} answers in all",
        seconds,
    )


class _Cutter:
    """Cuts seat 0's stream once, in match ``match_no``, while it has a play decision open."""

    def __init__(self, match_no: int, after: int = 1) -> None:
        self.match_no = match_no
        self.after = after
        self.plays = 0
        self.cut: Stream | None = None
        self.cut_at = 0.0
        self.where = ""
        self.back_ms: float | None = None

    def asked(self, seat: GrpcSeat, decision: Decision) -> None:
        """Cuts the stream (just after the request is sent) at the chosen play decision."""
        obs = decision.obs
        if self.cut is not None or seat.seat != 0 or obs.phase is not Phase.PLAY:
            return
        if seat.info.match_no != self.match_no:
            return
        self.plays += 1
        if self.plays < self.after:
            return
        self.where = f"hand {obs.hand_no + 1}, a play decision open"
        asyncio.get_running_loop().call_soon(self._cut, seat)

    def joined(self, seat: GrpcSeat) -> None:
        """Times the resume: the first new stream on the cut seat."""
        if seat.seat == 0 and self.cut is not None and self.back_ms is None:
            self.back_ms = (time.perf_counter() - self.cut_at) * 1000.0

    def _cut(self, seat: GrpcSeat) -> None:
        stream = seat.stream
        if stream is None or self.cut is not None:
            return
        self.cut = stream
        self.cut_at = time.perf_counter()
        stream.close(grpc.StatusCode.UNAVAILABLE, "check-bot: the connection is cut on purpose")


def _check_reconnect(run: _TableRun, k: int, cutter: _Cutter) -> CheckResult:
    name = "reconnect"
    seconds = run.records[k - 1].seconds if len(run.records) >= k else run.seconds

    def expected(f: Failure) -> bool:
        return f.seat == 0 and f.outcome in (
            FailureOutcome.AWAITING_RECONNECT,
            FailureOutcome.RECONNECTED,
        )

    problems = _problems(run, k, expected)
    if problems:
        return _fail(name, problems, seconds)
    if cutter.cut is None:
        return CheckResult(name, False, "seat 0 was never asked to play: no cut", seconds)
    record = run.records[k - 1]
    if 0 in record.outcome.given_up:
        return CheckResult(name, False, "seat 0 was given up after the cut", seconds)
    after = [a for a in run.in_match(k) if a.seat == 0 and a.at >= cutter.cut_at]
    if not after:
        return CheckResult(name, False, "seat 0 answered nothing after the cut", seconds)
    if cutter.back_ms is None:
        return CheckResult(name, False, "seat 0 did not resume its seat", seconds)
    return CheckResult(
        name,
        True,
        f"stream cut in {cutter.where}; resumed after {cutter.back_ms:.0f} ms;"
        f" {len(after)} answers since; the match finished ({len(record.hand_results)} hands)",
        seconds,
    )


# ---------------------------------------------------------------------- running it


async def check_bot(
    manifest: Manifest,
    settings: CheckSettings | None = None,
    log_dir: Path | None = None,
    progress: Callable[[CheckResult], None] | None = None,
) -> CheckReport:
    """Runs every check on the bot of ``manifest``; ``progress`` hears each result."""
    cfg = settings or CheckSettings()
    logs = log_dir or Path(tempfile.mkdtemp(prefix="check-bot-"))
    report = CheckReport(manifest.name, manifest.path, logs)

    def add(result: CheckResult) -> None:
        report.results.append(result)
        if progress is not None:
            progress(result)

    clock = TimeControl(cfg.decision_ms, 0)
    policy = FailurePolicy(reconnect_grace_ms=cfg.grace_ms)
    startup = manifest.startup_timeout_s
    timeout = startup + cfg.table_timeout_s
    names = tuple(f"{manifest.name}-{s}" for s in range(4))

    def spec(
        table_id: str,
        options: Options,
        plans: tuple[MatchPlan, ...] = (),
        skip_forced: bool = True,
    ) -> TableSpec:
        return TableSpec(
            options=options,
            seed=cfg.seed,
            time=clock,
            policy=policy,
            names=names,
            skip_forced=skip_forced,
            startup_timeout_s=startup,
            table_id=table_id,
            plans=plans,
            pace_forced=False,  # the author's own bot against built-ins: nothing to hide
        )

    server = ArenaServer()
    sandbox = cfg.sandbox or require_sandbox()
    await server.start()
    try:
        # Table 1: the full match, then the reconnect match, on the same four processes.
        match_options = Options(hands=cfg.hands, grand_tichu=True)
        plans = (MatchPlan(cfg.seed), MatchPlan(cfg.seed + 100))
        cutter = _Cutter(match_no=2)
        first = _TableRun(
            "match",
            manifest,
            spec("check-match", match_options, plans=plans),
            logs / "match",
            sandbox,
        )
        first.cutter = cutter
        await first.run(server, timeout)
        add(_check_startup(first, manifest))
        if not first.joined_s:
            for name in ("full match", *(f"position: {p.name}" for p in POSITIONS), "reconnect"):
                add(CheckResult(name, False, "not run: the bot did not start", 0.0))
            return report
        add(_check_match(first))

        # Table 2: the tricky positions, one match each, every decision asked.
        pos_options = Options(hands=1, grand_tichu=True)
        starts = tuple(
            MatchPlan(cfg.seed + k, start=p.build(pos_options)) for k, p in enumerate(POSITIONS)
        )
        tricky = _TableRun(
            "positions",
            manifest,
            spec("check-positions", pos_options, plans=starts, skip_forced=False),
            logs / "positions",
            sandbox,
        )
        await tricky.run(server, timeout)
        for k, p in enumerate(POSITIONS, 1):
            add(_check_position(tricky, k, p))
        add(_check_reconnect(first, 2, cutter))
    finally:
        await server.stop(1.0)
    return report


def run_check(
    manifest: Manifest,
    settings: CheckSettings | None = None,
    log_dir: Path | None = None,
    progress: Callable[[CheckResult], None] | None = None,
) -> CheckReport:
    """``check_bot`` in a fresh event loop."""
    return run_loop(check_bot(manifest, settings, log_dir, progress))


def print_report(report: CheckReport, console: Console) -> None:
    """The report as a table (check, result, detail, time) and the verdict."""
    where = f" ({report.manifest})" if report.manifest is not None else ""
    table = RichTable(title=f"check-bot: {escape(report.bot)}{escape(where)}", show_lines=True)
    table.add_column("check", no_wrap=True)
    table.add_column("result", no_wrap=True)
    table.add_column("detail")
    table.add_column("time", justify="right", no_wrap=True)
    for r in report.results:
        result = "[green]PASS[/green]" if r.passed else "[bold red]FAIL[/bold red]"
        table.add_row(escape(r.name), result, escape(r.detail), f"{r.seconds:.2f} s")
    console.print(table)
    for r in report.results:
        if len(r.problems) > 1:
            console.print(f"[red]{escape(r.name)}[/red]:", highlight=False)
            for problem in r.problems[:_SHOWN]:
                console.print(f"  - {escape(problem)}", highlight=False)
            if len(r.problems) > _SHOWN:
                console.print(f"  ... and {len(r.problems) - _SHOWN} more", highlight=False)
    total = len(report.results)
    if report.passed:
        console.print(f"[bold green]verdict: PASS[/bold green] (all {total} checks passed)")
    else:
        failed = report.failed
        console.print(
            f"[bold red]verdict: FAIL[/bold red] ({len(failed)} of {total} checks failed:"
            f" {escape(', '.join(failed))})",
            highlight=False,
        )
    console.print(f"bot logs: {escape(str(report.logs))}", highlight=False)
