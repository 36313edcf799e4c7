"""League seasons: submitting versions, playing rounds, season tables, history, closing.

A league round is one event per division over the active versions (the latest version of
every bot not retired), planned by ``arena.tournament.model`` from the league's round format
(whist designs for the current field size, fillers where needed) and played by
``arena.tournament.runner.EventRunner``, so a round resumes exactly like an event: after a
kill, ``play_round`` continues the unfinished round and records every play once.

Season ratings are one pooled fit (``arena.ratings.fit_ratings``) over every hand of the
season's rounds in a division: each version is its own entity, rated on the hands it played.
A rating carried from the last season (``league_priors``: the final rating, its s.d. widened by
the league's ``carry_sd``) is combined with the season's fit by precision weighting
(``combine``); the model is stated in docs/league.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import math
import os
import secrets
import signal
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from statistics import NormalDist
from typing import Any

from arena.ratings import HandOutcome, RatingError, RatingFit, SprtVerdict, fit_ratings
from arena.rules import ArenaError
from arena.server.folder import (
    DEFAULT_CAPS,
    MACHINE_MADE,
    FolderError,
    Listing,
    copy_folder,
    folder_digest,
    list_folder,
    remove_tree,
)
from arena.server.manifest import BUILTIN_DIR, ManifestError, load_manifest
from arena.server.sandbox import require_sandbox
from arena.tournament.boards import derived_secret
from arena.tournament.cluster import executor_for
from arena.tournament.gate import GateConfig, GateReport, look_line, run_gate
from arena.tournament.league.spec import BOT_NAME, LeagueSpec
from arena.tournament.league.store import LeagueStore, RoundInfo, Version
from arena.tournament.model import (
    EventFileError,
    EventSpec,
    PlannedPlay,
    is_builtin,
    plan_event,
)
from arena.tournament.runner import EventRunner, Progress, Stalled
from arena.tournament.schedule import fillers_needed
from arena.tournament.store import StoredHand, StoreError, stored_path

__all__ = [
    "MAX_SUBMISSION_BYTES",
    "MAX_SUBMISSION_FILES",
    "GateInterrupted",
    "GateRefused",
    "LeagueError",
    "RoundResult",
    "SeasonTable",
    "SubmitResult",
    "TableRow",
    "bot_digest",
    "close_season",
    "combine",
    "history",
    "next_round",
    "play_round",
    "promote_relegate",
    "round_lock",
    "season_complete",
    "season_hands",
    "season_outcomes",
    "season_table",
    "split_divisions",
    "submit",
    "table_json",
]

_Z95 = NormalDist().inv_cdf(0.975)
MIN_DIVISION = 4


class LeagueError(ArenaError):
    """A league command cannot do what was asked; the message says why and what to do."""


class GateRefused(LeagueError):
    """The non-regression gate accepted H0 (or was inconclusive, and the league refuses an
    inconclusive gate): the new version is refused."""


class GateInterrupted(LeagueError):
    """A signal stopped the gate before its verdict: nothing was registered; ``signum`` is
    the signal."""

    def __init__(self, message: str, signum: int) -> None:
        super().__init__(message)
        self.signum = signum


# ---------------------------------------------------------------------------------------------
# Submitting


MAX_SUBMISSION_BYTES = DEFAULT_CAPS.bytes
"""The most a submitted bot folder may hold (its files' bytes, caches left out)."""
MAX_SUBMISSION_FILES = DEFAULT_CAPS.files
"""The most files a submitted bot folder may hold."""


def _digest(listing: Listing, manifest: str) -> str:
    return folder_digest(listing, b"manifest\0" + manifest.encode() + b"\0")


def bot_digest(folder: Path, manifest: Path) -> str:
    """A version's content hash: the bot folder's (``arena.server.folder.folder_digest``:
    folder names, file names, exec bits, sizes and bytes) with the manifest's name.

    Caches (``arena.server.folder.SKIPPED``) are left out, so running the bot does not
    change its hash.

    Raises:
        LeagueError: The folder breaks the bot-folder rules (an entry that is not a regular
            file or folder, a name that is not UTF-8, past the caps).
    """
    try:
        return _digest(list_folder(folder), manifest.relative_to(folder).as_posix())
    except FolderError as e:
        raise LeagueError(str(e)) from None


@dataclass(frozen=True)
class SubmitResult:
    """What ``submit`` did: the version (new, or the unchanged latest) and the gate's report."""

    version: Version
    new: bool
    gate: GateReport | None = None

    def gate_line(self) -> str:
        """The gate's verdict for people, with the league's policy when it decided."""
        if self.gate is None:
            return ""
        admitted = ""
        if self.gate.verdict is SprtVerdict.INCONCLUSIVE:
            admitted = '; admitted: the league admits an inconclusive gate (inconclusive = "admit")'
        return self.gate.summary() + admitted


def submit(
    store: LeagueStore,
    manifest_path: str | Path,
    *,
    owner: str | None = None,
    gate: bool = False,
    on_gate: Callable[[str], None] | None = None,
) -> SubmitResult:
    """Registers a bot, or a new version of it, from its manifest (file or folder).

    The manifest's folder is the bot: it is hashed and copied into the league's store
    (``<db>.bots/<bot>/<random name>/``), so later edits on disk change nothing. A built-in bot (its
    name, or its folder in ``example_bots``) is part of the arena: it is hashed, not copied,
    and stored as ``builtin:<name>``. With ``gate``, or when the league file's ``[gate]`` says
    ``required``, the new version first plays the non-regression gate against the previous
    version (settings from ``[gate]``) and is registered only on a verdict that admits it
    (H1, or inconclusive where ``[gate] inconclusive = "admit"``); a gate stopped before its
    verdict registers nothing.

    Raises:
        LeagueError: A bad manifest, a folder that is not self-contained, a gate refusal
            (``GateRefused``) or a gate stopped before its verdict (``GateInterrupted``).
        StoreError: The bot belongs to another owner, or this content was submitted before.
    """
    builtin = builtin_name(manifest_path)
    if builtin is not None:
        return _submit_builtin(store, builtin, owner)
    path = Path(manifest_path)
    path = path / "bot.toml" if path.is_dir() else path
    try:
        manifest = load_manifest(path)  # a regular file of bounded size, never a link
    except ManifestError as e:
        raise LeagueError(str(e)) from None
    folder = path.parent.resolve()
    if not manifest.cwd.resolve().is_relative_to(folder):
        raise LeagueError(
            f"{path}: workdir {manifest.workdir} leaves the bot's folder; a league bot must be "
            'self-contained (workdir = "." and its files beside bot.toml)'
        )
    bot = manifest.name
    if not BOT_NAME.fullmatch(bot):
        raise LeagueError(
            f"{path}: the bot name {bot!r} is not usable in a league: 1-32 letters, digits or "
            "._+- starting with a letter or digit, no spaces"
        )
    try:  # every entry checked, before anything is read or copied
        listing = list_folder(folder)
        digest = _digest(listing, path.name)
    except FolderError as e:
        raise LeagueError(str(e)) from None
    previous = store.latest(bot)
    if previous is not None and previous.hash == digest:
        return SubmitResult(previous, new=False)
    if any(version.hash == digest for version in store.versions(bot)):
        raise StoreError(f"this content of {bot!r} was submitted before")
    # A random folder name: a bot sees its own folder, and learns no other version's from it.
    home = store.bot_store / bot
    made_home = not home.exists()
    _sweep_staging(home)
    target = home / secrets.token_hex(16)
    # The copy keeps its staging name, with this process's id, until the version is written:
    # one a kill -9 left (during its gate, say) is known for what it is and swept.
    staging = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:  # a refused, failed or interrupted submission leaves no folder behind
        home.mkdir(parents=True, exist_ok=True)
        try:
            copy_folder(listing, staging)
            if _digest(list_folder(staging), path.name) != digest:
                raise LeagueError(f"{folder} changed while it was copied; submit it again")
        except FolderError as e:
            raise LeagueError(str(e)) from None
        report: GateReport | None = None
        if (gate or store.league().gate.required) and previous is not None:
            candidate = staging / path.name
            report = _run_gate(store, candidate, bot_ref(store, previous.manifest), digest, on_gate)
            _judge(report, bot, previous.number, store.league().gate.inconclusive)
        relative = stored_path(store.path, target / path.name)
        gate_json = None if report is None else report.to_json()
        with signals_held():  # begun, the write finishes: registered with its verdict
            staging.replace(target)
            version = store.add_version(bot, digest, owner, relative, gate=gate_json)
    except BaseException:
        remove_tree(staging)
        remove_tree(target)
        if made_home:
            with contextlib.suppress(OSError):
                home.rmdir()  # only if empty: another submission may be under way
        raise
    return SubmitResult(version, new=True, gate=report)


def _sweep_staging(home: Path) -> None:
    """Removes the staging copies (``<name>.<pid>.partial``) of submissions whose process is
    gone: killed before their version was written."""
    if not home.is_dir():
        return
    for entry in home.glob("*.partial"):
        parts = entry.name.split(".")
        if len(parts) != 3 or not parts[1].isdigit() or _alive(int(parts[1])):
            continue
        remove_tree(entry)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def signals_held() -> Iterator[None]:
    """Holds Ctrl-C and SIGTERM back over a block that must not stop half-way, and drops
    those that came meanwhile: they came too late to stop it, and the command is all but
    done (a kill -9 still stops it, and SQLite then keeps nothing of the transaction)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {s: signal.signal(s, _too_late) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def _too_late(signum: int, frame: object) -> None:
    """A signal during a write that must finish: dropped."""


def _judge(report: GateReport, bot: str, previous: int, inconclusive: str) -> None:
    """Lets a version through only on a finished verdict that admits it.

    Raises:
        GateInterrupted: A signal stopped the gate before its verdict.
        GateRefused: H0, or inconclusive at the cap in a league that refuses that.
        LeagueError: The gate ended without a verdict for another reason.
    """
    verdict = report.verdict
    if verdict is SprtVerdict.CONTINUE:
        done = f"{report.plays} plays, {report.result.pairs} boards"
        if report.interrupted_by is not None:
            raise GateInterrupted(
                f"the gate of {bot} was stopped before its verdict ({done}): nothing registered",
                report.interrupted_by,
            )
        raise LeagueError(f"the gate of {bot} ended without a verdict ({done}); submit it again")
    if verdict is SprtVerdict.ACCEPT_H0:
        raise GateRefused(
            f"the gate refused {bot} (new version) against v{previous}: {report.summary()}"
        )
    if verdict is SprtVerdict.INCONCLUSIVE and inconclusive != "admit":
        raise GateRefused(
            f"the gate refused {bot} (new version) against v{previous}: {report.summary()};"
            ' the league refuses an inconclusive gate ([gate] inconclusive = "refuse")'
        )


BUILTIN_PREFIX = "builtin:"
"""How a version of a built-in bot names its manifest in ``league_versions``."""


def builtin_name(bot: str | Path) -> str | None:
    """The built-in bot ``bot`` names (``greedy``, or a folder or manifest of
    ``example_bots``), else None."""
    text = str(bot)
    if is_builtin(text) and not Path(text).exists():
        return text
    path = Path(text)
    path = path / "bot.toml" if path.is_dir() else path
    folder = path.resolve().parent
    if path.name == "bot.toml" and path.is_file() and folder.parent.name == BUILTIN_DIR.name:
        return folder.name if is_builtin(folder.name) else None  # any checkout's example_bots
    return None


def bot_ref(store: LeagueStore, stored: str) -> str:
    """What an event or the gate takes for a stored version: a built-in name or a manifest."""
    if stored.startswith(BUILTIN_PREFIX):
        return stored.removeprefix(BUILTIN_PREFIX)
    return str(store.resolve(stored))


def _submit_builtin(store: LeagueStore, name: str, owner: str | None) -> SubmitResult:
    """Registers a built-in bot: its folder's hash is its version (a new arena may bring a
    new one); nothing is copied, since the arena that plays the league holds it."""
    folder = BUILTIN_DIR / name
    digest = _digest(list_folder(folder, skipped=MACHINE_MADE, caps=None), "bot.toml")
    previous = store.latest(name)
    if previous is not None and previous.hash == digest:
        return SubmitResult(previous, new=False)
    if any(version.hash == digest for version in store.versions(name)):
        raise StoreError(f"this content of {name!r} was submitted before")
    version = store.add_version(name, digest, owner, BUILTIN_PREFIX + name)
    return SubmitResult(version, new=True)


def _run_gate(
    store: LeagueStore,
    candidate: Path,
    baseline: str,
    digest: str,
    on_gate: Callable[[str], None] | None,
) -> GateReport:
    """Plays the league's gate for a new version: its deals keyed by the league's secret and
    the version's hash (a rerun replays them; the candidate, knowing only its hash, cannot),
    or by the public seed of a league that has one."""
    league = store.league()
    settings = league.gate
    secret = store.secret()
    seed: int | None = None
    if secret is not None:
        secret = derived_secret(secret, "league-gate", int(digest, 16))
    else:
        seed = _round_seed(league.seed or 0, 0, int(digest[:15], 16), 0)
    config = GateConfig(
        candidate=str(candidate),
        baseline=baseline,
        elo0=float(settings.elo0),
        elo1=float(settings.elo1),
        alpha=settings.alpha,
        beta=settings.beta,
        max_boards=settings.max_boards,
        min_pairs=settings.min_pairs,
        jobs=settings.jobs,
        decision_ms=settings.decision_ms,
        seed=seed,
        secret=secret,
        logs=store.path.parent
        / f"{store.path.name}.logs"
        / f"gate-{candidate.parent.name.split('.')[0]}",
    )
    try:
        return run_gate(config, None if on_gate is None else lambda look: on_gate(look_line(look)))
    except ArenaError as e:
        raise LeagueError(f"the gate could not run: {e}") from None


# ---------------------------------------------------------------------------------------------
# Divisions


def split_divisions(ranked: Sequence[str], count: int) -> dict[str, int]:
    """Splits bots, best first, into at most ``count`` divisions of at least 4 (1 = top).

    Sizes differ by at most one, the larger divisions on top.
    """
    count = max(1, min(count, len(ranked) // MIN_DIVISION))
    size, extra = divmod(len(ranked), count)
    out: dict[str, int] = {}
    start = 0
    for division in range(1, count + 1):
        end = start + size + (1 if division <= extra else 0)
        out.update(dict.fromkeys(ranked[start:end], division))
        start = end
    return out


def promote_relegate(tables: dict[int, Sequence[str]], k: int) -> dict[str, int]:
    """Moves the top ``k`` of each division up one and the bottom ``k`` down one.

    ``tables`` maps division (1 = top) to its bots, best first. A division gives up at most
    half its bots each way, so none empties.
    """
    out = {bot: division for division, bots in tables.items() for bot in bots}
    divisions = sorted(tables)
    for upper, lower in itertools.pairwise(divisions):
        moves = min(k, len(tables[upper]) // 2, len(tables[lower]) // 2)
        if moves == 0:
            continue
        for bot in tables[upper][-moves:]:
            out[bot] = lower
        for bot in tables[lower][:moves]:
            out[bot] = upper
    return out


def _assign_divisions(store: LeagueStore, spec: LeagueSpec, season: int, first: bool) -> None:
    """Gives every active bot without a division one: split by rating, else the lowest."""
    if spec.divisions is None:
        return
    active = [b for b in store.bots() if b.active]
    unassigned = [b.name for b in active if b.division is None]
    if not unassigned:
        return
    assigned = [b.division for b in active if b.division is not None]
    if first and not assigned:
        priors = store.priors(season)
        rating: dict[str, float] = {}
        for version in store.versions():
            if version.id in priors:
                rating[version.bot] = priors[version.id][0]
        order = sorted(unassigned, key=lambda b: (b not in rating, -rating.get(b, 0.0)))
        store.set_divisions(split_divisions(order, spec.divisions.count))
    else:
        lowest = max(assigned, default=1)
        store.set_divisions(dict.fromkeys(unassigned, lowest))


# ---------------------------------------------------------------------------------------------
# Rounds


def _round_seed(league_seed: int, season: int, number: int, division: int) -> int:
    text = f"tichu-arena/league/v1/{league_seed}/{season}/{number}/{division}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def event_name(league: str, season: int, number: int, division: int, divisions: bool) -> str:
    """A round's event name: ``<league>.s1.r3`` (``.d2`` appended in a league with divisions)."""
    return f"{league}.s{season}.r{number}" + (f".d{division}" if divisions else "")


def season_complete(store: LeagueStore) -> bool:
    """Whether the open season has played all its rounds (none is left to play or finish)."""
    rounds = store.rounds(store.current_season().number)
    full = len(rounds) >= store.league().season_rounds
    return full and rounds[-1].finished


def next_round(store: LeagueStore) -> RoundInfo:
    """Returns the round to play: the unfinished one, else a new round of the active field.

    A new round's entries are the latest version of every active bot, by division. Its
    events are planned and stored before it returns.

    Raises:
        LeagueError: The season has played all its rounds, or a division has fewer than 4
            active bots.
    """
    spec = store.league()
    season = store.current_season().number
    rounds = store.rounds(season)
    if rounds and not rounds[-1].finished:
        _plan_events(store, spec, rounds[-1])
        return store.rounds(season)[-1]
    if len(rounds) >= spec.season_rounds:
        raise LeagueError(
            f"season {season} has played its {spec.season_rounds} rounds; close it with "
            "arena league season close"
        )
    _assign_divisions(store, spec, season, first=not rounds)
    entries: list[tuple[int, int]] = []
    for bot in store.bots():
        version = store.latest(bot.name)
        if bot.active and version is not None:
            entries.append((version.id, bot.division or 1))
    counts = Counter(division for _, division in entries)
    for division in sorted(counts) or [1]:
        if counts[division] < MIN_DIVISION:
            where = f"division {division}" if spec.divisions is not None else "the league"
            raise LeagueError(
                f"{where} has {counts[division]} active bot(s); a round needs at least "
                f"{MIN_DIVISION}: submit more bots"
            )
    number = len(rounds) + 1
    events = [
        (d, event_name(spec.name, season, number, d, spec.divisions is not None))
        for d in sorted(counts)
    ]
    round_ = store.add_round(season, number, entries, events)
    _plan_events(store, spec, round_)
    return store.rounds(season)[-1]


def round_spec(store: LeagueStore, spec: LeagueSpec, round_: RoundInfo, division: int) -> EventSpec:
    """Builds the event of one division of a round from its stored entries.

    Raises:
        LeagueError: The field does not fit the round format.
    """
    versions = {v.id: v for v in store.versions()}
    bots: list[dict[str, str]] = []
    for v, d in round_.entries:
        if d == division:
            version = versions[v]
            bot = {"bot": bot_ref(store, version.manifest), "name": version.entry}
            if version.owner:  # one owner's bots take turns as one bot's processes do
                bot["owner"] = version.owner
            bots.append(bot)
    name = next(n for d, n, _ in round_.events if d == division)
    seed = (
        None
        if spec.seed is None
        else _round_seed(spec.seed, round_.season, round_.number, division)
    )
    fillers = [
        {"bot": spec.filler, "name": f"filler-{k}"} for k in range(1, 1 + fillers_needed(len(bots)))
    ]
    try:
        event = spec.round_event(name, bots, seed, fillers)
        if fillers:
            try:
                plan_event(event)
            except EventFileError:
                event = spec.round_event(name, bots, seed, [])  # no whist design: anneal
    except EventFileError as e:
        raise LeagueError(str(e)) from None
    return event


def _plan_events(store: LeagueStore, spec: LeagueSpec, round_: RoundInfo) -> None:
    for division, _, event_id in round_.events:
        if event_id is not None:
            continue
        event = round_spec(store, spec, round_, division)
        secret = store.secret()
        if secret is not None:
            parts = (round_.season, round_.number, division)
            secret = derived_secret(secret, "league-round", *parts)
        new_id = store.create_event(event, store.plan(event, secret=secret))
        store.attach_event(round_.id, division, new_id)


@dataclass
class RoundResult:
    """What ``play_round`` did: the round, hands and failures recorded now, whether it ended,
    and whether a signal stopped it (unfinished without one: some plays could not be played)."""

    round: RoundInfo
    hands: int = 0
    failures: int = 0  # the bots'
    arena_faults: int = 0  # plays failed by the arena's fault and played again
    finished: bool = False
    stopped: bool = False
    logs: Path | None = None  # the bots' logs of its events


def play_round(
    store: LeagueStore,
    round_: RoundInfo,
    *,
    jobs: int | None = None,
    on_play: Callable[[Progress, PlannedPlay], None] | None = None,
    cluster: str | None = None,
    allow_unsandboxed: bool = False,
    on_connected: Callable[[str], None] | None = None,
) -> RoundResult:
    """Plays the round's pending plays, division by division; marks it finished when done.

    ``on_connected`` hears who answered at a ``--cluster tcp://`` address.

    Ctrl-C (or SIGTERM) stops it cleanly: recorded plays stay, the rest are pending and
    ``play_round`` continues them later. ``cluster`` plays on Dask (``tcp://HOST:8786`` or
    ``local:N``, ``arena.tournament.cluster``); ``allow_unsandboxed`` accepts a sandbox
    below ``full`` (``arena.server.sandbox.require_sandbox``).
    """
    sandbox = require_sandbox(allow_unsandboxed)
    logs = store.path.parent / f"{store.path.name}.logs"
    result = RoundResult(round_, logs=logs)
    for _, name, _ in round_.events:
        spec = store.event_spec(name)
        runner = EventRunner(
            store,
            name,
            spec,
            jobs=jobs,
            log_dir=logs / name,
            on_play=on_play,
            executor=executor_for(cluster, allow_unsandboxed, on_connected),
            sandbox=sandbox,
        )
        try:
            progress = runner.run()
        except Stalled as e:
            raise LeagueError(f"round {round_.number}: {e}") from None
        result.hands += progress.hands
        result.failures += progress.failures
        result.arena_faults += progress.arena_faults
        if runner.stopping:
            result.stopped = True
            return result
    if all(store.event_summary(name).finished for _, name, _ in round_.events):
        store.finish_round(round_.id)
        result.finished = True
    return result


@contextmanager
def round_lock(store: LeagueStore) -> Iterator[None]:
    """Holds ``<db>.lock`` while rounds are played, so two runners never share a league.

    The lock is the operating system's: it goes with the process, even after kill -9.

    Raises:
        LeagueError: Another process is playing this league.
    """
    path = store.path.parent / f"{store.path.name}.lock"
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LeagueError(f"another process is playing rounds of {store.path}") from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# ---------------------------------------------------------------------------------------------
# Season tables


@dataclass(frozen=True)
class TableRow:
    """One version's line in a season table.

    Attributes:
        rank: 1 for the best rating in its division.
        entry: The version's name in hands (``"alpha v2"``).
        bot: The bot.
        version: The version number.
        status: ``active`` (plays the next round), ``superseded`` (a newer version plays) or
            ``retired``.
        rating: The season rating: the pooled fit, combined with a carried rating if any.
        sd: Its standard error (Elo).
        fit: The pooled fit's rating over this season's hands, if the bot played.
        fit_sd: The fit's cluster-robust standard error.
        prior: The rating carried from last season, widened, as (rating, s.d.).
        points_per_hand: Mean of the bot's team score minus the opponents' per hand.
        hands: Hands played this season.
        failures: Failures by kind (timeout, crash, ...) this season.
        movement: Ranks gained since the previous round (None: not ranked then).
        hash: The version's content hash.
        owner: The version's owner.
        predecessor: The previous version's entry name, if any.
    """

    rank: int
    entry: str
    bot: str
    version: int
    status: str
    rating: float | None
    sd: float | None
    fit: float | None
    fit_sd: float | None
    prior: tuple[float, float] | None
    points_per_hand: float | None
    hands: int
    failures: dict[str, int]
    movement: int | None
    hash: str
    owner: str | None
    predecessor: str | None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95 % interval of ``rating``."""
        if self.rating is None or self.sd is None:
            return None
        return self.rating - _Z95 * self.sd, self.rating + _Z95 * self.sd


@dataclass(frozen=True)
class SeasonTable:
    """A season's table per division after ``rounds`` rounds, with a note when not rated."""

    season: int
    rounds: int
    divisions: dict[int, tuple[TableRow, ...]]
    notes: dict[int, str] = field(default_factory=dict)
    hands: int = 0


def combine(
    fit: tuple[float, float] | None, prior: tuple[float, float] | None
) -> tuple[float, float] | None:
    """Precision-weights a season fit (rating, s.d.) with a carried rating (rating, s.d.)."""
    if fit is None or prior is None:
        return fit or prior
    (r1, s1), (r2, s2) = fit, prior
    if s1 <= 0.0 or s2 <= 0.0:
        return fit if s1 <= 0.0 else prior
    w1, w2 = 1.0 / s1**2, 1.0 / s2**2
    return (w1 * r1 + w2 * r2) / (w1 + w2), math.sqrt(1.0 / (w1 + w2))


def season_hands(
    store: LeagueStore, season: int, division: int | None = None, upto: int | None = None
) -> list[tuple[str, StoredHand]]:
    """Every recorded hand of a season's rounds (up to round ``upto``) with its event's name."""
    out: list[tuple[str, StoredHand]] = []
    for round_ in store.rounds(season):
        if upto is not None and round_.number > upto:
            break
        for d, name, event_id in round_.events:
            if event_id is not None and (division is None or d == division):
                out.extend((name, hand) for hand in store.hands(name))
    return out


def season_outcomes(hands: Sequence[tuple[str, StoredHand]]) -> list[HandOutcome]:
    """The hands as rating input; a board is named ``<event>:<board>``, unique in the league.

    Board numbers restart in every round's event, so the event's name keeps the boards of
    different rounds apart as clusters of the robust errors.
    """
    return [replace(hand.outcome(), board=f"{name}:{hand.board_label}") for name, hand in hands]


def season_table(
    store: LeagueStore, season: int, upto: int | None = None, *, movement: bool = True
) -> SeasonTable:
    """Computes a season's table per division from the database (after round ``upto``).

    ``movement = False`` leaves every row's ``movement`` None (one fit fewer).
    """
    rounds = [r for r in store.rounds(season) if upto is None or r.number <= upto]
    played = len(rounds)
    previous = None
    if movement and played >= 2:
        previous = season_table(store, season, played - 1, movement=False)
    versions = {v.id: v for v in store.versions()}
    bots = {b.name: b for b in store.bots()}
    priors = store.priors(season)
    divisions: dict[int, list[int]] = {}
    for round_ in rounds:
        for version_id, division in round_.entries:
            divisions.setdefault(division, [])
            if version_id not in divisions[division]:
                divisions[division].append(version_id)
    # Carried versions that have not played yet this season still show, in their division.
    for version_id in priors:
        version = versions[version_id]
        info = bots[version.bot]
        latest = store.latest(version.bot)
        if info.active and latest is not None and latest.id == version_id:
            division = info.division or 1
            if not any(version_id in ids for ids in divisions.values()):
                divisions.setdefault(division, []).append(version_id)
    tables: dict[int, tuple[TableRow, ...]] = {}
    notes: dict[int, str] = {}
    total = 0
    for division, ids in sorted(divisions.items()):
        hands = season_hands(store, season, division, upto=played)
        total += len(hands)
        fit: RatingFit | None = None
        if hands:
            try:
                fit = fit_ratings(season_outcomes(hands))
            except RatingError as e:
                notes[division] = str(e)
        else:
            notes[division] = "no hands recorded yet this season"
        stats = _hand_stats([hand for _, hand in hands])
        earlier = (
            {}
            if previous is None
            else {r.entry: r.rank for r in previous.divisions.get(division, ())}
        )
        rows = []
        for version_id in ids:
            version = versions[version_id]
            entry = version.entry
            fitted = None
            if fit is not None and entry in fit.bots:
                fitted = (fit.rating(entry), fit.stderr(entry))
            prior = priors.get(version_id)
            rating = combine(fitted, prior)
            info = bots[version.bot]
            latest = store.latest(version.bot)
            status = (
                "retired"
                if not info.active
                else "active"
                if latest is not None and latest.id == version_id
                else "superseded"
            )
            count, points, failures = stats.get(entry, (0, 0, Counter()))
            predecessor = versions[version.predecessor].entry if version.predecessor else None
            rows.append(
                TableRow(
                    rank=0,
                    entry=entry,
                    bot=version.bot,
                    version=version.number,
                    status=status,
                    rating=None if rating is None else rating[0],
                    sd=None if rating is None else rating[1],
                    fit=None if fitted is None else fitted[0],
                    fit_sd=None if fitted is None else fitted[1],
                    prior=prior,
                    points_per_hand=points / count if count else None,
                    hands=count,
                    failures=dict(sorted(failures.items())),
                    movement=None,
                    hash=version.hash,
                    owner=version.owner,
                    predecessor=predecessor,
                )
            )
        rows.sort(
            key=lambda r: (
                r.rating is None,
                -(r.rating or 0.0),
                -(r.points_per_hand or 0.0),
                r.entry,
            )
        )
        ranked = []
        for rank, row in enumerate(rows, 1):
            before = earlier.get(row.entry)
            gained = None if before is None else before - rank
            ranked.append(replace(row, rank=rank, movement=gained))
        tables[division] = tuple(ranked)
    return SeasonTable(season, played, tables, notes, total)


def _hand_stats(hands: Sequence[StoredHand]) -> dict[str, tuple[int, int, Counter[str]]]:
    """Per bot: hands, the team's total score margin, failures by kind."""
    count: Counter[str] = Counter()
    points: Counter[str] = Counter()
    failures: dict[str, Counter[str]] = {}
    for hand in hands:
        margin = hand.row.score_a - hand.row.score_b
        for seat, bot in enumerate(hand.seats):
            count[bot] += 1
            points[bot] += margin if seat % 2 == 0 else -margin
        for failure in hand.row.failures:
            failures.setdefault(hand.seats[failure.seat], Counter())[failure.kind] += 1
    return {bot: (count[bot], points[bot], failures.get(bot, Counter())) for bot in count}


def history(store: LeagueStore, bot: str) -> list[tuple[int, int, TableRow]]:
    """The bot's rows after every round of every season: (season, round, row), in order.

    Raises:
        StoreError: No such bot.
    """
    store.bot(bot)
    out: list[tuple[int, int, TableRow]] = []
    for season in store.seasons():
        for round_ in store.rounds(season.number):
            table = season_table(store, season.number, round_.number, movement=False)
            for rows in table.divisions.values():
                out.extend((season.number, round_.number, r) for r in rows if r.bot == bot)
    return out


def close_season(store: LeagueStore) -> SeasonTable:
    """Freezes the open season's table and opens the next one.

    The next season's carried ratings are the final ratings of the active versions with
    their s.d. widened: ``sd' = sqrt(sd² + carry_sd²)``. With divisions, the top ``promote``
    bots of each division move up one and the bottom ``promote`` move down one.

    Raises:
        LeagueError: A round of the season is unfinished.
    """
    spec = store.league()
    season = store.current_season().number
    rounds = store.rounds(season)
    if rounds and not rounds[-1].finished:
        raise LeagueError(
            f"round {rounds[-1].number} of season {season} is unfinished; finish it with "
            "arena league round"
        )
    table = season_table(store, season)
    priors: list[tuple[int, float, float]] = []
    standings: dict[int, list[str]] = {}
    versions = {v.entry: v for v in store.versions()}
    for division, rows in table.divisions.items():
        for row in rows:
            if row.status != "active":
                continue
            standings.setdefault(division, []).append(row.bot)
            if row.rating is not None and row.sd is not None:
                sd = math.sqrt(row.sd**2 + float(spec.carry_sd) ** 2)
                priors.append((versions[row.entry].id, row.rating, sd))
    moves = {}
    if spec.divisions is not None:
        moves = promote_relegate(
            {d: tuple(bots) for d, bots in standings.items()}, spec.divisions.promote
        )
    store.close_season(season, table_json(table), priors, moves)
    return table


def _num(value: float | None, digits: int = 1) -> float | None:
    return None if value is None or not math.isfinite(value) else round(value, digits) + 0.0


def table_json(table: SeasonTable) -> dict[str, Any]:
    """Returns a season table as JSON-ready data, numbers rounded once for every format."""
    divisions = []
    for division, rows in sorted(table.divisions.items()):
        out_rows = []
        for row in rows:
            interval = row.interval
            out_rows.append(
                {
                    "rank": row.rank,
                    "entry": row.entry,
                    "bot": row.bot,
                    "version": row.version,
                    "status": row.status,
                    "rating": _num(row.rating),
                    "sd": _num(row.sd),
                    "ci_low": None if interval is None else _num(interval[0]),
                    "ci_high": None if interval is None else _num(interval[1]),
                    "fit": _num(row.fit),
                    "fit_sd": _num(row.fit_sd),
                    "prior": None
                    if row.prior is None
                    else {"rating": _num(row.prior[0]), "sd": _num(row.prior[1])},
                    "points_per_hand": _num(row.points_per_hand, 2),
                    "hands": row.hands,
                    "failures": row.failures,
                    "movement": row.movement,
                    "hash": row.hash,
                    "owner": row.owner,
                    "predecessor": row.predecessor,
                }
            )
        divisions.append(
            {"division": division, "note": table.notes.get(division), "rows": out_rows}
        )
    return {
        "season": table.season,
        "rounds": table.rounds,
        "hands": table.hands,
        "divisions": divisions,
    }
