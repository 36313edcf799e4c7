"""CI gate: a GSPRT on duplicate board pairs, candidate against baseline.

The gate builds a ``fixed``-schedule event in code and plays it over gRPC with
:class:`~arena.tournament.runner.EventRunner`:

* **standard**: candidate + candidate (North–South) against baseline + baseline. The team gap
  equals the individual gap (§4.3), so the Elo bounds apply to the pair score directly.
* **mixed** (``mixed=True``): candidate + baseline against baseline + baseline. The event
  model's ``gauntlet`` needs at least three field bots and only rotates which (identical)
  baseline copy partners the candidate, so every table would still be C+R vs R+R; the gate
  uses the equivalent ``fixed`` line-up. The team gap is half the individual gap, so the test
  runs on ``[elo0/2, elo1/2]`` and reports Elo doubled back to individual units (≈ 4× longer).

Every board is played in rotations 0 and 1 in different sessions, i.e. on different bot
processes. After each recorded play the pentanomial counts are recomputed from the store
(complete board pairs only) and the SPRT is looked at; on H0/H1 the runner is stopped. Reaching
``max_boards`` pairs without a decision is *inconclusive*.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
import statistics
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any

from arena.ratings.hands import HandOutcome, board_pairs
from arena.ratings.sprt import (
    DEFAULT_MIN_PAIRS,
    EloEstimate,
    SprtResult,
    SprtVerdict,
    pentanomial_counts,
    sprt,
)
from arena.rules import ArenaError
from arena.server.bots import BotStartError
from arena.server.manifest import no_manifest_in, resolve_bot
from arena.server.sandbox import require_sandbox
from arena.tournament.cluster import executor_for
from arena.tournament.leaderboard import FailureRow, bot_failures
from arena.tournament.model import EventFileError, EventSpec, PlannedPlay, parse_event
from arena.tournament.runner import EventRunner, Progress, Stalled
from arena.tournament.store import EventStore

__all__ = [
    "CHUNK_BOARDS",
    "DEFAULT_MAX_BOARDS",
    "EVENT_NAME",
    "PRESETS",
    "GateConfig",
    "GateError",
    "GateLook",
    "GateReport",
    "build_event_data",
    "junit_xml",
    "look_line",
    "run_gate",
]

PRESETS: dict[str, tuple[float, float]] = {"gain": (0.0, 10.0), "nonreg": (-10.0, 0.0)}
"""Named ``(elo0, elo1)`` bounds in logistic hand-Elo (see docs/gate.md for the choice)."""

DEFAULT_MAX_BOARDS = 20_000
"""Default cap in board pairs: about four times the longest expected run
of the presets, so an undecided gate is rare."""

EVENT_NAME = "gate"
"""The event's name in the results database."""

CHUNK_BOARDS = 50
"""Most boards in one round. A round's rotation-1 session plays its boards in a shuffled
order (§2.2), so a board pair completes only when both sessions have reached it; small rounds
keep the plays that do not yet form a pair (and are wasted on an early stop) few."""

CRASH_LIMIT = 0.05
"""Share of hands a side may crash or disconnect in before the gate is an error (exit 3)."""

STARTUP_HANDS = 4
"""Hands recorded before the gate judges that both sides started: a side that crashed or
disconnected in every one of them (a bot that cannot start) stops the gate at once."""

SETTINGS_TABLE = "gate_settings"
"""The table of a kept gate database holding the settings the gate was started with."""

_SETTING_OPTIONS = {
    "candidate": "--candidate",
    "baseline": "--baseline",
    "mixed": "--mixed",
    "elo0": "--elo0",
    "elo1": "--elo1",
    "alpha": "--alpha",
    "beta": "--beta",
    "max_boards": "--max-boards",
    "min_pairs": "--min-pairs",
    "decision_ms": "--decision-ms",
    "seed": "--seed",
}
"""What a kept gate must be continued with, by its command-line option."""

CANDIDATE = ("candidate-1", "candidate-2")
BASELINE = ("baseline-1", "baseline-2", "baseline-3")


class GateError(ArenaError):
    """The gate cannot run as asked (bad option, manifest or database)."""


@dataclass(frozen=True)
class GateConfig:
    """What to test and how: the two bots, the hypotheses, the cap and the run set-up.

    Attributes:
        candidate: Manifest path (file or folder with ``bot.toml``) or built-in bot name.
        baseline: Same, for the reference bot.
        elo0: H0's individual logistic hand-Elo of candidate over baseline.
        elo1: H1's, above ``elo0``.
        alpha: Type I error (accepting H1 at ``elo0``).
        beta: Type II error (accepting H0 at ``elo1``).
        max_boards: Cap in complete board pairs; reaching it is inconclusive.
        min_pairs: Pairs before the SPRT may stop.
        mixed: Candidate + baseline against baseline + baseline instead of C+C vs B+B.
        jobs: Tables (bot-process sessions) at once.
        decision_ms: The time allowed per decision (``TimeControl.decision_ms``).
        seed: Event seed (deals and bot seeds); the same seed replays the same boards, whose
            deals anyone knowing the seed can compute. None: a secret (docs/security.md).
        secret: The secret a new gate event's deals derive from (a league's gate passes one
            derived from its own); None draws a fresh one. A kept database's stored secret
            wins, so a continued gate plays on with its boards.
        db: SQLite results file (kept, resumable); None uses a temporary folder.
        cluster: Play on Dask (``tcp://HOST:8786`` or ``local:N``); None plays here.
        allow_unsandboxed: Run the bots in a sandbox below ``full`` when the host can make
            no full one (``arena.server.sandbox.require_sandbox``).
        logs: Folder for the bot processes' logs; None: ``<db>.logs`` next to ``db``, or
            none kept with a temporary database.
    """

    candidate: str
    baseline: str
    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    max_boards: int = DEFAULT_MAX_BOARDS
    min_pairs: int = DEFAULT_MIN_PAIRS
    mixed: bool = False
    jobs: int = field(default_factory=lambda: os.cpu_count() or 1)
    decision_ms: int = 1000
    seed: int | None = None
    secret: bytes | None = field(default=None, repr=False)
    db: Path | None = None
    cluster: str | None = None
    allow_unsandboxed: bool = False
    logs: Path | None = None

    def __post_init__(self) -> None:
        problems = []
        if not self.elo0 < self.elo1:
            problems.append(f"need elo0 < elo1, got {self.elo0:g} and {self.elo1:g}")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 0.5:
                problems.append(f"{name} must be in (0, 0.5), got {value:g}")
        if self.min_pairs < 1:
            problems.append(f"min_pairs must be at least 1, got {self.min_pairs}")
        if self.max_boards < self.min_pairs:
            problems.append(
                f"max_boards ({self.max_boards}) is below the {self.min_pairs} pairs the SPRT "
                "needs before it may stop"
            )
        if self.jobs < 1:
            problems.append(f"jobs must be at least 1, got {self.jobs}")
        if self.seed is not None and self.secret is not None:
            problems.append("a gate's deals come from a seed or from a secret, not both")
        if not 1 <= self.decision_ms <= 3_600_000:
            problems.append(f"decision_ms must be in 1..3600000, got {self.decision_ms}")
        if problems:
            raise GateError("; ".join(problems))

    @property
    def mode(self) -> str:
        """``"standard"`` (C+C vs B+B) or ``"mixed"`` (C+B vs B+B)."""
        return "mixed" if self.mixed else "standard"

    @property
    def scale(self) -> float:
        """Individual Elo per team-gap Elo: 1 for C+C vs B+B, 2 for C+B vs B+B."""
        return 2.0 if self.mixed else 1.0

    @property
    def rounds(self) -> int:
        """Schedule rounds: two sessions each, enough for ``jobs`` tables and small rounds."""
        return max(math.ceil(self.jobs / 2), math.ceil(self.max_boards / CHUNK_BOARDS))

    @property
    def boards_per_round(self) -> int:
        """Boards of each round: the cap spread over the rounds."""
        return math.ceil(self.max_boards / self.rounds)


@dataclass(frozen=True)
class GateLook:
    """One look at the SPRT during the run (for the live line)."""

    config: GateConfig
    result: SprtResult
    plays: int
    failures: int
    elapsed: float
    half_played: int = 0  # boards with one rotation recorded, waiting for the other

    @property
    def estimate(self) -> EloEstimate:
        """The Elo estimate in individual units (doubled in mixed mode)."""
        return _scaled(self.result.estimate, self.config.scale)


@dataclass(frozen=True)
class GateReport:
    """The gate's outcome: the deciding look, the data behind it and the run's facts."""

    config: GateConfig
    result: SprtResult
    counts: tuple[int, int, int, int, int]
    points: tuple[float, float, float] | None
    plays: int
    failures: dict[str, int]
    seconds: float
    db: Path | None
    bot_failures: tuple[FailureRow, ...] = ()
    interrupted_by: int | None = None  # the signal that stopped the run before a decision
    mirror_pairs: int = 0  # board pairs whose two plays' margins cancel
    arena_faults: int = 0  # plays failed by the arena's fault, played again, not scored

    @property
    def verdict(self) -> SprtVerdict:
        """H1, H0, inconclusive, or continue (the run was interrupted)."""
        return self.result.verdict

    @property
    def exit_code(self) -> int:
        """0 = H1 accepted, 1 = H0 accepted, 2 = inconclusive at the cap, 3 = no decision;
        128 + the signal (130 for Ctrl-C) when a signal stopped the run before a decision."""
        if self.verdict is SprtVerdict.CONTINUE and self.interrupted_by is not None:
            return 128 + self.interrupted_by
        return {
            SprtVerdict.ACCEPT_H1: 0,
            SprtVerdict.ACCEPT_H0: 1,
            SprtVerdict.INCONCLUSIVE: 2,
        }.get(self.verdict, 3)

    @property
    def passed(self) -> bool:
        """Whether H1 was accepted."""
        return self.verdict is SprtVerdict.ACCEPT_H1

    @property
    def estimate(self) -> EloEstimate:
        """The Elo estimate in individual units."""
        return _scaled(self.result.estimate, self.config.scale)

    def summary(self) -> str:
        """One paragraph for people: verdict, Elo with interval, LLR and boards."""
        c = self.config
        e = self.estimate
        clear = " by a clear answer" if self.result.clear else ""
        verdict = {
            SprtVerdict.ACCEPT_H1: f"PASS: H1 accepted{clear} (Elo >= {c.elo1:g} more likely)",
            SprtVerdict.ACCEPT_H0: f"FAIL: H0 accepted{clear} (Elo <= {c.elo0:g} more likely)",
            SprtVerdict.INCONCLUSIVE: f"FAIL: inconclusive after {c.max_boards} boards"
            f" ({self.interval_reading()})",
            SprtVerdict.CONTINUE: "INTERRUPTED: no decision yet",
        }[self.verdict]
        points = ""
        if self.points is not None:
            mean, low, high = self.points
            points = f", {mean:+.1f} points/board [{low:+.1f}, {high:+.1f}]"
        mirrored = ""
        if self.mirrored:
            mirrored = (
                f"; the two sides mirrored each other on all {self.result.pairs} boards (each"
                " pair's plays cancel): no evidence of a difference"
            )
        return (
            f"{verdict}; Elo {_num(e.elo)} [{_num(e.lower)}, {_num(e.upper)}] (95%)"
            f"{points}; LLR {self.result.llr:+.2f} ({self.result.lower_bound:+.2f}, "
            f"{self.result.upper_bound:+.2f}); {self.result.pairs} boards, "
            f"pentanomial {list(self.counts)}, {self.seconds:.1f} s{mirrored}"
        )

    @property
    def mirrored(self) -> bool:
        """Whether every board pair cancelled (margin 0): deterministic bots that play alike
        mirror each board, which is no evidence of a difference, not a measured 0."""
        return self.result.pairs > 0 and self.mirror_pairs == self.result.pairs

    def interval_reading(self) -> str:
        """What the Elo interval says about the hypotheses, for a gate stopped undecided."""
        c = self.config
        e = self.estimate
        where = f"the 95% interval [{_num(e.lower)}, {_num(e.upper)}]"
        if e.upper < c.elo0:
            return f"{where} lies below elo0 = {c.elo0:g}: the candidate is very likely worse"
        if e.lower > c.elo1:
            return f"{where} lies above elo1 = {c.elo1:g}: the candidate is very likely better"
        if e.lower > c.elo0:
            return f"{where} lies above elo0 = {c.elo0:g}: very likely not worse than that"
        if e.upper < c.elo1:
            return f"{where} lies below elo1 = {c.elo1:g}: very likely not that much better"
        return f"{where} holds both elo0 and elo1: more boards are needed"

    def to_json(self) -> dict[str, Any]:
        """Returns the JSON report (infinite interval ends become null)."""
        c = self.config
        e = self.estimate
        r = self.result
        return {
            "candidate": c.candidate,
            "baseline": c.baseline,
            "mode": c.mode,
            "elo0": c.elo0,
            "elo1": c.elo1,
            "team_elo0": c.elo0 / c.scale,
            "team_elo1": c.elo1 / c.scale,
            "alpha": c.alpha,
            "beta": c.beta,
            "bounds": [r.lower_bound, r.upper_bound],
            "llr": r.llr,
            "verdict": r.verdict.value,
            "clear_answer": r.clear,
            "passed": self.passed,
            "exit_code": self.exit_code,
            "boards": r.pairs,
            "max_boards": c.max_boards,
            "min_pairs": c.min_pairs,
            "plays": self.plays,
            "pentanomial": list(self.counts),
            "mirrored": self.mirrored,
            "elo": {
                "estimate": _finite(e.elo),
                "lower": _finite(e.lower),
                "upper": _finite(e.upper),
                "level": 0.95,
            },
            "interval_reading": self.interval_reading()
            if r.verdict is SprtVerdict.INCONCLUSIVE
            else None,
            "points_per_board": None
            if self.points is None
            else {
                "mean": self.points[0],
                "lower": self.points[1],
                "upper": self.points[2],
                "level": 0.95,
            },
            "failures": dict(self.failures),
            "failures_total": sum(self.failures.values()),
            "arena_faults": self.arena_faults,
            "failures_by_bot": [
                {"bot": f.bot, "total": f.total, "kinds": dict(f.kinds), "log": f.log or None}
                for f in self.bot_failures
            ],
            "seconds": round(self.seconds, 3),
            "jobs": c.jobs,
            "decision_ms": c.decision_ms,
            "seed": c.seed,
            "db": None if self.db is None else str(self.db),
        }


def build_event_data(config: GateConfig) -> dict[str, Any]:
    """Returns the gate's event as event-file data: one ``fixed`` table, rotations 0 and 1.

    Seats N, E, S, W: candidate, baseline, candidate (or baseline in mixed mode), baseline.
    """
    candidate = _bot_path(config.candidate)
    baseline = _bot_path(config.baseline)
    north = {"bot": candidate, "name": CANDIDATE[0]}
    if config.mixed:
        south = {"bot": baseline, "name": BASELINE[2]}
    else:
        south = {"bot": candidate, "name": CANDIDATE[1]}
    return {
        "name": EVENT_NAME,
        "schedule": "fixed",
        "bots": [
            north,
            {"bot": baseline, "name": BASELINE[0]},
            south,
            {"bot": baseline, "name": BASELINE[1]},
        ],
        "cycles": config.rounds,
        "boards_per_round": config.boards_per_round,
        "rotations": 2,
        "seed": config.seed,
        "jobs": config.jobs,
        "time_control": {"decision_ms": config.decision_ms},
    }


def run_gate(
    config: GateConfig,
    on_look: Callable[[GateLook], None] | None = None,
    on_connected: Callable[[str], None] | None = None,
) -> GateReport:
    """Plays the gate until the SPRT accepts H0 or H1 or the cap is reached.

    ``on_look`` is called after each look at the SPRT (for a live line); ``on_connected``
    hears who answered at a ``--cluster tcp://`` address (``cluster.scheduler_identity``).

    Raises:
        GateError: A bad manifest or database (the message says which and why).
    """
    start = time.monotonic()
    manifests: dict[str, Path | None] = {}
    for role, bot in (("--candidate", config.candidate), ("--baseline", config.baseline)):
        try:
            manifests[role] = resolve_bot(_bot_path(bot)).path
        except ArenaError as e:
            raise GateError(f"{role}: {e}") from None
    data = build_event_data(config)
    try:
        spec = parse_event(data, source="gate", base_dir=Path.cwd())
    except EventFileError as e:
        raise GateError(_bot_problems(e, config.mixed)) from None
    with _database(config.db) as path, EventStore(path) as store:
        _keep_settings(path, _settings(config, spec))
        try:
            plan = store.plan(spec, secret=config.secret)
        except EventFileError as e:
            raise GateError(_bot_problems(e, config.mixed)) from None
        try:
            store.create_event(spec, plan)
            logs = config.logs
            if logs is None and config.db is not None:
                logs = config.db.parent / f"{config.db.name}.logs"
            sandbox = require_sandbox(config.allow_unsandboxed)
            runner = EventRunner(
                store,
                EVENT_NAME,
                spec,
                jobs=config.jobs,
                log_dir=logs,
                executor=executor_for(config.cluster, config.allow_unsandboxed, on_connected),
                sandbox=sandbox,
            )
        except ArenaError as e:
            raise GateError(str(e)) from None
        watcher = _Watcher(config, store, runner, start, on_look)
        runner.on_play = watcher.on_play
        watcher.look()
        if watcher.decided is None:
            try:
                runner.run()
            except Stalled as e:
                raise GateError(str(e)) from None
            except BotStartError as e:
                role = next((r for r, m in manifests.items() if m and str(m) in str(e)), "a bot")
                raise GateError(f"{role} cannot start: {e}") from None
            if watcher.error is not None:
                raise watcher.error
            if watcher.decided is None:
                watcher.look()
        decided = watcher.decided or watcher.last
        assert decided is not None
        result, outcomes = decided
        failures = _check_failures(store)
        plays = sum(1 for play in store.plays(EVENT_NAME) if play.done)
        return GateReport(
            config=config,
            result=result,
            counts=pentanomial_counts(outcomes, CANDIDATE[0]),
            points=points_per_board(outcomes, CANDIDATE[0]),
            plays=plays,
            failures=failures,
            seconds=time.monotonic() - start,
            db=config.db,
            bot_failures=bot_failures(store.hands(EVENT_NAME)),
            interrupted_by=None if watcher.decided else runner.stopped_by,
            mirror_pairs=mirror_pairs(outcomes, CANDIDATE[0]),
            arena_faults=runner.arena_faults,
        )


class _Watcher:
    """Looks at the SPRT after recorded plays and stops the runner on a decision.

    A look re-reads every hand, so its cost grows with the event; looks are spaced so that
    they take at most a tenth of the event loop's time (every play while the event is small).
    """

    def __init__(
        self,
        config: GateConfig,
        store: EventStore,
        runner: EventRunner,
        start: float,
        on_look: Callable[[GateLook], None] | None,
    ) -> None:
        self.config = config
        self.store = store
        self.runner = runner
        self.start = start
        self.on_look = on_look
        self.failures = 0
        self.half_played = 0
        self.decided: tuple[SprtResult, list[HandOutcome]] | None = None
        self.last: tuple[SprtResult, list[HandOutcome]] | None = None
        self.error: GateError | None = None  # a side that cannot start: the run stopped
        self._started = False
        self._next_look = 0.0
        self._plays_seen = 0

    def on_play(self, progress: Progress, play: PlannedPlay) -> None:
        """The runner's callback: check that both sides started, look when due, stop on H0,
        H1 or the cap."""
        self.failures = progress.failures
        self.half_played = progress.boards_open
        self._plays_seen = progress.plays_done
        if not self._started and self.error is None:
            self.check_start()
        if self.decided is None and self.error is None and time.monotonic() >= self._next_look:
            self.look()

    def check_start(self) -> None:
        """Stops the run with ``error`` when a side crashed or disconnected in each of the
        first ``STARTUP_HANDS`` hands: its bot cannot start, and the gate says so now rather
        than after the minimum pairs of default actions."""
        hands = self.store.hands(EVENT_NAME)
        if len(hands) < STARTUP_HANDS:
            return
        self._started = True
        for side, copies, bot in (
            ("candidate", CANDIDATE, self.config.candidate),
            ("baseline", BASELINE, self.config.baseline),
        ):
            first = [
                next(
                    (
                        f
                        for f in hand.row.failures
                        if hand.seats[f.seat] in copies and f.kind in ("crash", "disconnect")
                    ),
                    None,
                )
                for hand in hands
            ]
            if all(first):
                failure = first[0]
                assert failure is not None
                log = f"; its log: {failure.log}" if failure.log else ""
                self.error = GateError(
                    f"the {side} {bot} cannot start: it crashed or disconnected in each of"
                    f" its first {len(hands)} hands ({failure.detail}){log}"
                )
                self.runner.stop()
                return

    def look(self) -> None:
        """Recomputes the counts from the store and the SPRT; records and acts on a decision."""
        began = time.monotonic()
        outcomes = self.store.hand_outcomes(EVENT_NAME)
        c = self.config
        result = sprt(
            pentanomial_counts(outcomes, CANDIDATE[0]),
            elo0=c.elo0 / c.scale,
            elo1=c.elo1 / c.scale,
            alpha=c.alpha,
            beta=c.beta,
            min_pairs=c.min_pairs,
            max_pairs=c.max_boards,
        )
        self.last = (result, outcomes)
        if result.verdict is not SprtVerdict.CONTINUE:
            self.decided = self.last
            self.runner.stop()
        ended = time.monotonic()
        self._next_look = ended + 9.0 * (ended - began)
        if self.on_look is not None:
            self.on_look(
                GateLook(
                    config=c,
                    result=result,
                    plays=self._plays_seen or len(outcomes),
                    failures=self.failures,
                    elapsed=ended - self.start,
                    half_played=self.half_played,
                )
            )


def points_per_board(
    hands: Sequence[HandOutcome], bot: str, level: float = 0.95
) -> tuple[float, float, float] | None:
    """Returns the mean pair margin ``(d⁽⁰⁾ + d⁽¹⁾)/2`` of ``bot``'s team and its interval.

    None with fewer than two complete pairs, or when every pair has the same margin (bots
    that mirror each other): a sample without spread gives no interval, not one of width 0.
    """
    margins: list[float] = []
    for first, second in board_pairs(hands):
        team = first.team_of(bot)
        if team is None:
            continue
        sign = 1.0 if team == "A" else -1.0
        margins.append(sign * (first.margin + second.margin) / 2.0)
    if len(margins) < 2 or len(set(margins)) == 1:
        return None
    mean = statistics.fmean(margins)
    half = (
        NormalDist().inv_cdf(0.5 + 0.5 * level)
        * statistics.stdev(margins)
        / math.sqrt(len(margins))
    )
    return mean, mean - half, mean + half


def mirror_pairs(hands: Sequence[HandOutcome], bot: str) -> int:
    """Counts ``bot``'s complete board pairs whose two plays cancel: the margin of one is
    minus the other's, so the pair is tied at margin 0 (what a deterministic bot playing a
    copy of itself gives on every board)."""
    return sum(
        1
        for first, second in board_pairs(hands)
        if first.team_of(bot) is not None and first.margin + second.margin == 0
    )


def look_line(look: GateLook) -> str:
    """The live line: LLR and bounds, complete and half-played boards, Elo with interval,
    plays and time."""
    r = look.result
    c = look.config
    e = look.estimate
    failures = f"  failures {look.failures}" if look.failures else ""
    return (
        f"LLR {r.llr:+6.2f} ({r.lower_bound:+.2f}, {r.upper_bound:+.2f}) "
        f"[{c.elo0:g}, {c.elo1:g}]  boards {r.pairs}/{c.max_boards}"
        f" ({look.half_played} half-played)  "
        f"Elo {_num(e.elo)} [{_num(e.lower)}, {_num(e.upper)}]  "
        f"plays {look.plays}  {look.elapsed:.0f}s{failures}"
    )


def junit_xml(report: GateReport | None, *, error: str | None = None, name: str = "") -> str:
    """Returns a JUnit XML document with one test case; it fails unless H1 was accepted.

    With ``report`` None (the gate could not run) the failure carries ``error``.
    """
    seconds = f"{report.seconds:.3f}" if report is not None else "0"
    failed = report is None or not report.passed
    suites = ET.Element(
        "testsuites", name="arena gate", tests="1", failures=str(int(failed)), time=seconds
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="arena gate",
        tests="1",
        failures=str(int(failed)),
        errors="0",
        skipped="0",
        time=seconds,
    )
    if report is not None:
        c = report.config
        name = f"{c.candidate} vs {c.baseline} ({c.mode}, elo [{c.elo0:g}, {c.elo1:g}])"
    case = ET.SubElement(
        suite, "testcase", classname="arena.tournament.gate", name=name or "gate", time=seconds
    )
    if report is None:
        failure = ET.SubElement(case, "failure", type="error", message=error or "gate error")
        failure.text = error or "gate error"
    else:
        if failed:
            failure = ET.SubElement(
                case, "failure", type=report.verdict.value, message=report.summary()
            )
            failure.text = report.summary()
        out = ET.SubElement(case, "system-out")
        out.text = report.summary()
    ET.indent(suites)
    body = ET.tostring(suites, encoding="unicode")
    return f'<?xml version="1.0" encoding="utf-8"?>\n{body}\n'


def _check_failures(store: EventStore) -> dict[str, int]:
    """Counts bot failures by ``<side>:<kind>``; too many crashes make the run an error.

    Timeouts and illegal moves are play (a slow or buggy bot is a worse bot), but a side that
    crashes or disconnects in more than ``CRASH_LIMIT`` of the hands is not playing at all (a
    bot that dies mid-run, say): the verdict would measure the crash, so the gate raises.

    Raises:
        GateError: Naming the side, how often it crashed and the first failure's detail.
    """
    counts: Counter[str] = Counter()
    crashed: Counter[str] = Counter()
    detail: dict[str, str] = {}
    hands = store.hands(EVENT_NAME)
    for hand in hands:
        sides: set[str] = set()
        for failure in hand.row.failures:
            side = "candidate" if hand.seats[failure.seat] in CANDIDATE else "baseline"
            counts[f"{side}:{failure.kind}"] += 1
            if failure.kind in ("crash", "disconnect"):
                sides.add(side)
                detail.setdefault(side, failure.detail)
        crashed.update(sides)
    for side in ("baseline", "candidate"):
        if hands and crashed[side] > CRASH_LIMIT * len(hands):
            why = f": {detail[side]}" if detail.get(side) else ""
            raise GateError(
                f"the {side} crashed or disconnected in {crashed[side]} of {len(hands)} hands, "
                f"so the test would measure crashes, not play{why}"
            )
    return dict(sorted(counts.items()))


def _settings(config: GateConfig, spec: EventSpec) -> dict[str, Any]:
    """What a kept gate must be continued with: the bots (as resolved), the test, the cap."""
    return {
        "candidate": spec.bots[0].bot,
        "baseline": spec.bots[1].bot,
        "mixed": config.mixed,
        "elo0": config.elo0,
        "elo1": config.elo1,
        "alpha": config.alpha,
        "beta": config.beta,
        "max_boards": config.max_boards,
        "min_pairs": config.min_pairs,
        "decision_ms": config.decision_ms,
        "seed": config.seed,
    }


def _keep_settings(path: Path, settings: dict[str, Any]) -> None:
    """Stores the gate's settings in its database, or refuses a database whose gate was
    started with others (continuing it would mix two tests' boards).

    Raises:
        GateError: Naming every option that differs, with the stored value and this run's.
    """
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {SETTINGS_TABLE}"
            " (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
        )
        stored = {
            key: json.loads(value)
            for key, value in conn.execute(f"SELECT key, value FROM {SETTINGS_TABLE}")
        }
        if not stored:
            conn.executemany(
                f"INSERT INTO {SETTINGS_TABLE} (key, value) VALUES (?, ?)",
                [(key, json.dumps(value)) for key, value in settings.items()],
            )
            return
    differ = [
        f"{_SETTING_OPTIONS[key]} {_shown(stored[key])} (this run: {_shown(value)})"
        for key, value in settings.items()
        if key in stored and stored[key] != value
    ]
    if differ:
        raise GateError(
            f"{path} holds a gate started with other settings: {', '.join(differ)}; continue"
            " it with the same options (--preset sets --elo0 and --elo1), or use another --db"
        )


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _bot_problems(error: EventFileError, mixed: bool) -> str:
    """Restates event-file problems in the gate's terms: ``--candidate`` and ``--baseline``."""
    south = "--baseline" if mixed else "--candidate"
    roles = {"bots[0]": "--candidate", "bots[1]": "--baseline", "bots[2]": south}
    roles["bots[3]"] = "--baseline"
    lines: list[str] = []
    for field_name, message in error.problems:
        head, _, _rest = field_name.partition(".")
        line = f"{roles.get(head, field_name)}: {message}"
        if line not in lines:
            lines.append(line)
    return "; ".join(lines) or str(error)


def _bot_path(bot: str) -> str:
    """A folder holding ``bot.toml`` stands for that manifest; other values pass through."""
    path = Path(bot).expanduser()
    if path.is_dir():
        manifest = path / "bot.toml"
        if not manifest.is_file():
            raise GateError(no_manifest_in(bot))
        return str(manifest.resolve())
    return bot


@contextmanager
def _database(db: Path | None) -> Iterator[Path]:
    if db is not None:
        db.parent.mkdir(parents=True, exist_ok=True)
        yield db
        return
    with tempfile.TemporaryDirectory(prefix="arena-gate-") as tmp:
        yield Path(tmp) / "gate.sqlite"


def _scaled(estimate: EloEstimate, scale: float) -> EloEstimate:
    if scale == 1.0:
        return estimate
    return EloEstimate(
        elo=estimate.elo * scale,
        lower=estimate.lower * scale,
        upper=estimate.upper * scale,
        pairs=estimate.pairs,
    )


def _num(value: float) -> str:
    return f"{value:+.1f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
