"""The event store: one SQLite file holding events, their planned plays and every hand played.

Layout (schema version 2; ``meta`` holds the version; a version 1 file is upgraded in place
when opened, any other is refused):

* ``meta(key, value)``: ``application`` and ``schema_version``.
* ``events``: name, the spec as canonical JSON, the schedule as JSON, a digest of the planned
  plays, the creation time (the event's own timestamp), the status and the event's
  ``secret`` (hex; every seed of the event is keyed by it; NULL for an event with a public
  ``seed``). The file must stay out of every bot's reach (docs/security.md).
* ``bots``: every bot of an event with its source (``builtin:<name>`` or a manifest path) and
  whether it is a filler (rated, hidden from standings).
* ``plays``: the plan, written once by ``create_event``: running order, round, table, board,
  rotation, the four seats, the seeds and the board's deal source; ``status`` is ``pending``
  until ``record_play`` marks it ``done`` together with its hands and replay path.
* ``hands``: one row per hand played: its play, board, rotation, seats, team scores, card
  points, bets, double victory, the order out, the calls and the failures (JSON).
* ``hand_log``: a view joining each hand with its event and replay path, for ad-hoc queries.
* ``segments`` (created by the first extension): one row per extension of an event (raised
  ``cycles`` or added bots): the first ordinal it planned, the spec and schedule it planned
  them from, and when. ``events.spec`` is then the latest file's; every play stays stored.
* ``event_settings`` (created by the first event stored): per event, the event file's
  settings that do not change results (``jobs``, as JSON), so a resume runs as the file asked.
* ``play_sandbox``: the sandbox each recorded play's bots ran in: its ``level`` (``full``,
  ``partial``, ``none``) and the details as JSON (tool, uid, each seat's limits). Added after
  version 1 without changing it: opening an older file creates the table (its plays then
  have no row), and an older arena reading a newer file ignores it.

Seeds are 64-bit unsigned, wider than SQLite's signed integers, so they are stored as decimal
text.

Transactions and concurrency: the file runs in WAL mode with foreign keys on. There is ONE
writer, the runner's main process (and thread: a connection stays in the thread that opened
it); workers hand their results back to it. ``record_play`` writes a play's hands and marks
the play done in one ``BEGIN IMMEDIATE`` transaction, so a play is either fully recorded or
still pending: an interrupted event resumes with ``pending_plays`` and never loses or repeats
a completed hand. Readers (``arena ratings``, ``arena leaderboard``) may open the file while
an event runs; WAL lets them read the last committed state. ``synchronous = NORMAL``: a power
cut may drop the last few commits (those plays are then simply played again), never tear one.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import Any

from arena.ratings import HandOutcome, Team, TurnierHand
from arena.rules import ArenaError, HandResult, failed_bet
from arena.tournament.model import (
    DealBook,
    EventFileError,
    EventPlan,
    EventSpec,
    PlannedPlay,
    deal_from_json,
    deal_to_json,
    parse_event,
    plan_event,
)

_EXTENSIBLE = frozenset({"cycles", "bots"})
"""Event-file fields whose change extends a stored event instead of being refused."""

__all__ = [
    "APPLICATION",
    "SCHEMA_VERSION",
    "EventInfo",
    "EventRef",
    "EventStatus",
    "EventStore",
    "EventSummary",
    "FailureRow",
    "HandRow",
    "StoreError",
    "StoredHand",
    "StoredPlay",
    "resolve_stored",
    "stored_path",
]

APPLICATION = "tichu-arena-events"
SCHEMA_VERSION = 2

EventRef = int | str
"""An event by id or by name."""

_SCHEMA = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE events (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    spec        TEXT NOT NULL,
    schedule    TEXT NOT NULL,
    plan_digest TEXT NOT NULL,
    created     TEXT NOT NULL,
    status      TEXT NOT NULL
                CHECK (status IN ('planned', 'running', 'interrupted', 'finished')),
    secret      TEXT
);
CREATE TABLE bots (
    event_id INTEGER NOT NULL REFERENCES events (id),
    name     TEXT NOT NULL,
    source   TEXT NOT NULL,
    filler   INTEGER NOT NULL DEFAULT 0 CHECK (filler IN (0, 1)),
    PRIMARY KEY (event_id, name)
);
CREATE TABLE plays (
    id          INTEGER PRIMARY KEY,
    event_id    INTEGER NOT NULL REFERENCES events (id),
    ordinal     INTEGER NOT NULL,
    round       INTEGER NOT NULL,
    table_no    INTEGER NOT NULL,
    board       INTEGER NOT NULL,
    rotation    INTEGER NOT NULL CHECK (rotation BETWEEN 0 AND 3),
    seat_n      TEXT NOT NULL,
    seat_e      TEXT NOT NULL,
    seat_s      TEXT NOT NULL,
    seat_w      TEXT NOT NULL,
    seed        TEXT NOT NULL,
    seat_seeds  TEXT NOT NULL,
    deal_seed   TEXT,
    deals       TEXT,
    status      TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done')),
    replay_path TEXT,
    finished_at TEXT,
    UNIQUE (event_id, ordinal),
    UNIQUE (event_id, round, table_no, board, rotation),
    FOREIGN KEY (event_id, seat_n) REFERENCES bots (event_id, name),
    FOREIGN KEY (event_id, seat_e) REFERENCES bots (event_id, name),
    FOREIGN KEY (event_id, seat_s) REFERENCES bots (event_id, name),
    FOREIGN KEY (event_id, seat_w) REFERENCES bots (event_id, name)
);
CREATE INDEX plays_by_status ON plays (event_id, status, ordinal);
CREATE TABLE hands (
    id             INTEGER PRIMARY KEY,
    play_id        INTEGER NOT NULL REFERENCES plays (id),
    hand_no        INTEGER NOT NULL CHECK (hand_no >= 0),
    board          INTEGER NOT NULL,
    rotation       INTEGER NOT NULL CHECK (rotation BETWEEN 0 AND 3),
    seat_n         TEXT NOT NULL,
    seat_e         TEXT NOT NULL,
    seat_s         TEXT NOT NULL,
    seat_w         TEXT NOT NULL,
    score_a        INTEGER NOT NULL,
    score_b        INTEGER NOT NULL,
    card_points_a  INTEGER NOT NULL,
    card_points_b  INTEGER NOT NULL,
    bets_a         INTEGER NOT NULL,
    bets_b         INTEGER NOT NULL,
    double_victory TEXT CHECK (double_victory IN ('A', 'B')),
    first_out      INTEGER CHECK (first_out BETWEEN 0 AND 3),
    out_order      TEXT NOT NULL,
    calls          TEXT NOT NULL,
    vp_a           INTEGER NOT NULL,
    vp_b           INTEGER NOT NULL,
    failures       TEXT NOT NULL DEFAULT '[]',
    UNIQUE (play_id, hand_no)
);
CREATE TABLE play_sandbox (
    play_id INTEGER PRIMARY KEY REFERENCES plays (id),
    level   TEXT NOT NULL CHECK (level IN ('full', 'partial', 'none')),
    detail  TEXT NOT NULL
);
CREATE VIEW hand_log AS
    SELECT events.name AS event, plays.ordinal, plays.round, plays.table_no, hands.*,
           plays.replay_path
    FROM hands
    JOIN plays ON plays.id = hands.play_id
    JOIN events ON events.id = plays.event_id;
"""


class StoreError(ArenaError):
    """The event database cannot be opened or does not allow the requested change."""


class EventStatus(StrEnum):
    """Where an event stands: nothing played, in progress, stopped, all plays recorded."""

    PLANNED = "planned"
    RUNNING = "running"
    INTERRUPTED = "interrupted"
    FINISHED = "finished"


@dataclass(frozen=True)
class FailureRow:
    """A bot failure during a hand, as typed by the referee (timeout, crash, ...).

    ``log`` is the path of the bot process's log for that play ("" when not kept).
    ``private`` marks a failure in a bomb window, told to its seat alone: that it happened
    says the seat held a bomb, so only the failing seat's and the all-cards views show it.
    """

    seat: int
    kind: str
    detail: str = ""
    log: str = ""
    private: bool = False

    def to_json(self) -> dict[str, Any]:
        """Returns the failure as a JSON-ready dict (``log`` and ``private`` only when set)."""
        data: dict[str, Any] = {"seat": self.seat, "kind": self.kind, "detail": self.detail}
        if self.log:
            data["log"] = self.log
        if self.private:
            data["private"] = True
        return data


@dataclass(frozen=True)
class HandRow:
    """One finished hand of a play, ready to store.

    Attributes:
        hand: Hand number within the play (0-based; the board's deal index).
        score_a: Team A's points in the hand (cards, bets, double victory).
        score_b: Team B's points.
        card_points: Card points (or the 200 of a double victory) of team A and team B.
        bets: Tichu and Grand Tichu points of team A and team B.
        double_victory: The team that went out first and second, if any.
        out: Seats in the order they went out (2 or 3 seats; may be empty if adjudicated).
        calls: One character per seat N, E, S, W: ``G`` Grand Tichu, ``T`` Tichu, ``-`` none.
        victory_points: Team A's and team B's victory points for the hand.
        failures: Failures the referee recorded during the hand.
    """

    hand: int
    score_a: int
    score_b: int
    card_points: tuple[int, int]
    bets: tuple[int, int]
    double_victory: Team | None = None
    out: tuple[int, ...] = ()
    calls: str = "----"
    victory_points: tuple[int, int] = (0, 0)
    failures: tuple[FailureRow, ...] = ()

    def __post_init__(self) -> None:
        if self.hand < 0:
            raise ValueError(f"hand numbers start at 0, got {self.hand}")
        if len(self.calls) != 4 or set(self.calls) - set("GT-"):
            raise ValueError(f"calls is one of G, T or - per seat, got {self.calls!r}")
        if any(seat not in range(4) for seat in self.out) or len(set(self.out)) != len(self.out):
            raise ValueError(f"out lists distinct seats 0..3, got {self.out!r}")
        if self.double_victory not in (None, "A", "B"):
            raise ValueError(f"double_victory is 'A', 'B' or None, got {self.double_victory!r}")

    @classmethod
    def from_result(cls, result: HandResult, failures: Sequence[FailureRow] = ()) -> HandRow:
        """Builds the row of a hand the rules core scored."""
        calls = "".join(
            "G" if result.grand[s] else "T" if result.tichu[s] else "-" for s in range(4)
        )
        double: Team | None = None
        if result.double_victory == 0:
            double = "A"
        elif result.double_victory == 1:
            double = "B"
        score = result.score
        return cls(
            hand=result.hand,
            score_a=score[0],
            score_b=score[1],
            card_points=result.card_points,
            bets=result.bets,
            double_victory=double,
            out=result.out,
            calls=calls,
            victory_points=result.victory_points,
            failures=tuple(failures),
        )

    @property
    def first_out(self) -> int | None:
        """The seat that went out first, if any."""
        return self.out[0] if self.out else None

    def failed_bet(self, team: Team) -> bool:
        """Whether a member of ``team`` called (Grand) Tichu and did not go out first."""
        called = [c != "-" for c in self.calls]
        return failed_bet(0 if team == "A" else 1, called, self.first_out)


@dataclass(frozen=True)
class StoredPlay:
    """A planned play as stored, with its database id and whether it is recorded."""

    id: int
    play: PlannedPlay
    done: bool
    replay_path: str | None


@dataclass(frozen=True)
class StoredHand:
    """One recorded hand with the facts of its play."""

    play_id: int
    ordinal: int
    board: int
    rotation: int
    seats: tuple[str, str, str, str]
    row: HandRow
    replay_path: str | None

    @property
    def board_label(self) -> str:
        """The duplicate board of this hand: ``"7"`` for deal 0 of board 7, ``"7.2"`` for deal 2.

        Hands with one label are the duplicate plays of one deal: the unit the rating
        errors cluster on and the duplicate pairs are made of.
        """
        return str(self.board) if self.row.hand == 0 else f"{self.board}.{self.row.hand}"

    def outcome(self) -> HandOutcome:
        """Returns the hand as rating input."""
        return HandOutcome(
            board=self.board_label,
            seats=self.seats,
            score_a=self.row.score_a,
            score_b=self.row.score_b,
            rotation=self.rotation,
        )

    def turnier_hand(self) -> TurnierHand:
        """Returns the hand with the facts victory points need."""
        return TurnierHand(
            seats=self.seats,
            score_a=self.row.score_a,
            score_b=self.row.score_b,
            double_victory=self.row.double_victory,
            failed_bet_a=self.row.failed_bet("A"),
            failed_bet_b=self.row.failed_bet("B"),
        )


@dataclass(frozen=True)
class EventInfo:
    """An event's name, id, status and creation time."""

    id: int
    name: str
    status: EventStatus
    created: str


@dataclass(frozen=True)
class EventSummary:
    """How far an event has got.

    ``boards_done`` counts boards whose every play (all tables, all rotations) is recorded.
    """

    info: EventInfo
    spec: dict[str, Any]
    schedule: dict[str, Any]
    bots: tuple[str, ...]
    fillers: tuple[str, ...]
    plays_total: int
    plays_done: int
    boards_total: int
    boards_done: int
    hands: int

    @property
    def name(self) -> str:
        """The event's name."""
        return self.info.name

    @property
    def finished(self) -> bool:
        """Whether every planned play is recorded."""
        return self.plays_done == self.plays_total


class EventStore:
    """An open event database. Use as a context manager, or call ``close``.

    Args:
        path: The SQLite file.
        create: Create the file and schema if missing; when False, a missing file or one
            without the arena's schema is an error.

    Raises:
        StoreError: The file is not an event database or has another schema version.
    """

    def __init__(self, path: Path | str, *, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise StoreError(f"{self.path}: no event database here")
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot open: {e}") from e
        try:
            self._setup(create)
        except sqlite3.DatabaseError as e:
            self._conn.close()
            raise StoreError(f"{self.path}: not an event database ({e})") from e
        except StoreError:
            self._conn.close()
            raise

    def _setup(self, create: bool) -> None:
        conn = self._conn
        conn.execute("PRAGMA foreign_keys = ON")
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        if not tables:
            if not create:
                raise StoreError(f"{self.path}: empty database, not an event database")
            conn.execute("PRAGMA journal_mode = WAL")
            with self._write():
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [("application", APPLICATION), ("schema_version", str(SCHEMA_VERSION))],
                )
        elif "meta" not in tables:
            raise StoreError(f"{self.path}: not a Tichu Arena event database (no meta table)")
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("application") != APPLICATION:
            raise StoreError(f"{self.path}: not a Tichu Arena event database")
        version = meta.get("schema_version")
        if version == "1":  # version 2 added events.secret (NULL: the event has a seed)
            with self._write():
                conn.execute("ALTER TABLE events ADD COLUMN secret TEXT")
                conn.execute(
                    "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),)
                )
            version = str(SCHEMA_VERSION)
        if version != str(SCHEMA_VERSION):
            raise StoreError(
                f"{self.path}: event database schema version {version}, but this arena reads "
                f"version {SCHEMA_VERSION}; use the arena release that wrote it"
            )
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        if tables and "play_sandbox" not in tables:
            statement = _SCHEMA[_SCHEMA.index("CREATE TABLE play_sandbox") :].split(";")[0]
            with contextlib.suppress(sqlite3.OperationalError):  # a read-only file: no rows
                conn.execute(statement)

    def close(self) -> None:
        """Closes the database."""
        self._conn.close()

    def __enter__(self) -> EventStore:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def _write(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """One write transaction (``transaction``)."""
        return transaction(self._conn)

    # ---------------------------------------------------------------------------- events

    def events(self) -> tuple[EventInfo, ...]:
        """Returns every event in the database, oldest first."""
        rows = self._conn.execute("SELECT id, name, status, created FROM events ORDER BY id")
        return tuple(EventInfo(i, n, EventStatus(s), c) for i, n, s, c in rows)

    def event(self, ref: EventRef | None = None) -> EventInfo:
        """Returns one event by id or name; None picks the only event of the database.

        Raises:
            StoreError: No such event, or None while the database holds several.
        """
        known = self.events()
        if ref is None:
            if len(known) == 1:
                return known[0]
            if not known:
                raise StoreError(f"{self.path}: no events yet")
            names = ", ".join(e.name for e in known)
            raise StoreError(
                f"{self.path} holds {len(known)} events ({names}); name one with --event NAME"
            )
        for info in known:
            if ref == info.id or ref == info.name:
                return info
        names = ", ".join(e.name for e in known) or "none"
        raise StoreError(f"{self.path}: no event {ref!r} (events: {names})")

    def plan(
        self, spec: EventSpec, book: DealBook | None = None, *, secret: bytes | None = None
    ) -> EventPlan:
        """Plans ``spec`` with its stored secret; a new event without a seed gets ``secret``
        (one derived from a league's or a caller's secret), else a fresh one.

        Raises:
            EventFileError: As ``plan_event``.
        """
        if spec.seed is None:
            row = self._conn.execute(
                "SELECT secret FROM events WHERE name = ?", (spec.name,)
            ).fetchone()
            if row is not None and row[0]:
                secret = bytes.fromhex(row[0])
        else:
            secret = None
        return plan_event(spec, book, secret=secret)

    def create_event(self, spec: EventSpec, plan: EventPlan, *, created: str | None = None) -> int:
        """Stores an event and its planned plays; returns its id. Idempotent.

        If the event exists with the same spec (``jobs`` aside) and the same plan, nothing is
        written but the settings that do not change results (``event_settings``: ``jobs``),
        and its id is returned, so re-running a finished event changes nothing.

        Raises:
            StoreError: An event of that name exists with a different spec or plan.
        """
        digest = plan.digest()
        with self._write() as conn:
            row = conn.execute(
                "SELECT id, spec, plan_digest FROM events WHERE name = ?", (spec.name,)
            ).fetchone()
            if row is not None:
                event_id, stored_spec, stored_digest = row
                stored = json.loads(stored_spec)
                changed = sorted(
                    key
                    for key in set(stored) | set(spec.identity())
                    if stored.get(key) != spec.identity().get(key)
                )
                if changed and set(changed) <= _EXTENSIBLE:
                    self._extend(conn, int(event_id), stored, spec, plan)
                    _save_settings(conn, int(event_id), spec)
                    return int(event_id)
                if changed:
                    raise StoreError(
                        f"{self.path}: event {spec.name!r} exists with a different event file "
                        f"(changed: {', '.join(changed)}); rename the event or use another "
                        "database (only cycles and bots may change: the event is extended)"
                    )
                if stored_digest != digest:
                    raise StoreError(
                        f"{self.path}: event {spec.name!r} exists with a different plan "
                        "(same file, other schedule or deal book contents)"
                    )
                _save_settings(conn, int(event_id), spec)
                return int(event_id)
            cursor = conn.execute(
                "INSERT INTO events (name, spec, schedule, plan_digest, created, status, secret)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    spec.name,
                    _canonical(spec.identity()),
                    _canonical(plan.schedule_json()),
                    digest,
                    created or utc_text(),
                    EventStatus.PLANNED.value,
                    None if plan.secret is None else plan.secret.hex(),
                ),
            )
            event_id = int(cursor.lastrowid or 0)
            fillers = set(spec.filler_names)
            conn.executemany(
                "INSERT INTO bots (event_id, name, source, filler) VALUES (?, ?, ?, ?)",
                [
                    (event_id, name, source, int(name in fillers))
                    for name, source in spec.bot_sources().items()
                ],
            )
            conn.executemany(
                "INSERT INTO plays (event_id, ordinal, round, table_no, board, rotation,"
                " seat_n, seat_e, seat_s, seat_w, seed, seat_seeds, deal_seed, deals)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [_play_params(event_id, play) for play in plan.plays],
            )
            _save_settings(conn, event_id, spec)
            return event_id

    def _extend(
        self,
        conn: sqlite3.Connection,
        event_id: int,
        stored: dict[str, Any],
        spec: EventSpec,
        plan: EventPlan,
    ) -> None:
        """Continues an event with raised ``cycles`` and/or added bots (in the open transaction).

        Every stored play is kept as it is. With the same bots and a plan that starts with the
        stored plays, the rest of that plan is added: the event is then exactly the one the
        new file plans from scratch. Otherwise (bots added, or a schedule that is planned as a
        whole, such as the annealer's) the added cycles are planned for the new field as a
        continuation: rounds, boards, seeds and running order go on after the stored ones.
        ``segments`` records each extension with the spec it planned.

        Raises:
            StoreError: Fewer cycles, a bot removed or changed, or bots added without cycles.
        """
        old = parse_event(stored, source=f"{self.path}: event {spec.name!r}")
        old_sources, new_sources = old.bot_sources(), spec.bot_sources()
        problems = []
        if spec.cycles < old.cycles:
            problems.append(f"cycles can only rise (stored {old.cycles}, now {spec.cycles})")
        old_bots, new_bots = old.bot_configs(), spec.bot_configs()
        changed = [name for name, bot in old_bots.items() if new_bots.get(name) != bot]
        if changed:
            problems.append(
                "bots may only be added: every stored bot stays, unchanged (source, env and"
                f" args; changed or removed: {', '.join(changed)})"
            )
        added = [name for name in spec.names if name not in old_sources]
        if added and spec.cycles == old.cycles:
            problems.append(f"added bots {added} need cycles to play in: raise cycles too")
        if problems:
            raise StoreError(
                f"{self.path}: event {spec.name!r} cannot be extended: " + "; ".join(problems)
            )
        stored_plays = self._plays(event_id, pending_only=False)
        done = sum(sp.done for sp in stored_plays)
        prefix = [sp.play for sp in stored_plays]
        if not added and list(plan.plays[: len(prefix)]) == prefix:
            tail = plan.plays[len(prefix) :]
            segment, schedule = spec, plan.schedule_json()
        else:
            segment = spec.model_copy(update={"cycles": spec.cycles - old.cycles})
            rounds = 1 + max((p.round for p in prefix), default=-1)
            try:
                continued = plan_event(
                    segment, first_round=rounds, first_ordinal=len(prefix), secret=plan.secret
                )
            except EventFileError as e:
                raise StoreError(f"cannot plan the extension: {e}") from None
            tail, schedule = continued.plays, continued.schedule_json()
        conn.execute(
            "CREATE TABLE IF NOT EXISTS segments (event_id INTEGER NOT NULL REFERENCES events (id),"
            " first_ordinal INTEGER NOT NULL, spec TEXT NOT NULL, schedule TEXT NOT NULL,"
            " created TEXT NOT NULL, PRIMARY KEY (event_id, first_ordinal))"
        )
        conn.execute(
            "INSERT INTO segments (event_id, first_ordinal, spec, schedule, created)"
            " VALUES (?, ?, ?, ?, ?)",
            (
                event_id,
                len(prefix),
                _canonical(segment.identity()),
                _canonical(schedule),
                utc_text(),
            ),
        )
        fillers = set(spec.filler_names)
        conn.executemany(
            "INSERT OR IGNORE INTO bots (event_id, name, source, filler) VALUES (?, ?, ?, ?)",
            [(event_id, n, src, int(n in fillers)) for n, src in new_sources.items()],
        )
        conn.executemany(
            "INSERT INTO plays (event_id, ordinal, round, table_no, board, rotation,"
            " seat_n, seat_e, seat_s, seat_w, seed, seat_seeds, deal_seed, deals)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [_play_params(event_id, play) for play in tail],
        )
        status = EventStatus.INTERRUPTED if done else EventStatus.PLANNED
        if done == len(prefix) and not tail:
            status = EventStatus.FINISHED
        conn.execute(
            "UPDATE events SET spec = ?, schedule = ?, plan_digest = ?, status = ? WHERE id = ?",
            (
                _canonical(spec.identity()),
                _canonical(schedule),
                plan.digest(),
                status.value,
                event_id,
            ),
        )

    def event_spec(self, ref: EventRef | None = None) -> EventSpec:
        """Returns the stored spec of an event with its last run's settings (``jobs``), so
        ``arena event resume`` runs the event as its file asked.

        Raises:
            StoreError: The stored spec no longer validates (a manifest was moved, say).
        """
        info = self.event(ref)
        (text,) = self._conn.execute("SELECT spec FROM events WHERE id = ?", (info.id,)).fetchone()
        data = json.loads(text)
        with contextlib.suppress(sqlite3.OperationalError):  # a file from before the table
            row = self._conn.execute(
                "SELECT settings FROM event_settings WHERE event_id = ?", (info.id,)
            ).fetchone()
            if row is not None:
                data.update(json.loads(row[0]))
        try:
            return parse_event(data, source=f"{self.path}: event {info.name!r}")
        except EventFileError as e:
            raise StoreError(f"stored spec no longer valid: {e}") from None

    def set_status(self, ref: EventRef, status: EventStatus) -> bool:
        """Sets an event's status; returns whether it changed. A finished event stays finished.

        Raises:
            StoreError: Marking an event finished while plays are pending.
        """
        info = self.event(ref)
        if info.status is EventStatus.FINISHED or info.status is status:
            return False
        with self._write() as conn:
            if status is EventStatus.FINISHED and self._pending_count(conn, info.id):
                raise StoreError(f"event {info.name!r} still has pending plays")
            conn.execute("UPDATE events SET status = ? WHERE id = ?", (status.value, info.id))
        return True

    # ---------------------------------------------------------------------------- plays

    def plays(self, ref: EventRef | None = None) -> tuple[StoredPlay, ...]:
        """Returns every planned play of an event in running order."""
        return self._plays(self.event(ref).id, pending_only=False)

    def pending_plays(self, ref: EventRef | None = None) -> tuple[StoredPlay, ...]:
        """Returns the plays not yet recorded, in running order: what a resume plays."""
        return self._plays(self.event(ref).id, pending_only=True)

    def _plays(self, event_id: int, *, pending_only: bool) -> tuple[StoredPlay, ...]:
        query = (
            "SELECT id, ordinal, round, table_no, board, rotation, seat_n, seat_e, seat_s,"
            " seat_w, seed, seat_seeds, deal_seed, deals, status, replay_path"
            " FROM plays WHERE event_id = ?"
        )
        if pending_only:
            query += " AND status = 'pending'"
        rows = self._conn.execute(query + " ORDER BY ordinal", (event_id,))
        return tuple(_stored_play(row) for row in rows)

    def play_status(self, play_id: int) -> str:
        """``pending`` or ``done`` for one play; raises ``StoreError`` for an unknown id."""
        row = self._conn.execute("SELECT status FROM plays WHERE id = ?", (play_id,)).fetchone()
        if row is None:
            raise StoreError(f"{self.path}: no play with id {play_id}")
        return str(row[0])

    def replay_path(self, ref: EventRef, play: PlannedPlay) -> Path:
        """Returns where the replay of ``play`` belongs, in a folder beside the database.

        ``<db>.replays/<event>/<ordinal>-b<board>-r<rotation>.json``: the database and its
        replays move together, and ``record_play`` stores such paths relative to the
        database's folder.
        """
        info = self.event(ref)
        name = f"{play.ordinal:06d}-b{play.board}-r{play.rotation}.json"
        return self.path.parent / f"{self.path.name}.replays" / info.name / name

    def resolve_replay(self, stored: str) -> Path:
        """Returns the file a stored replay path names (``resolve_stored`` on this database)."""
        return resolve_stored(self.path, stored)

    def record_play(
        self,
        play_id: int,
        hands: Sequence[HandRow],
        replay_path: str | Path | None = None,
        sandbox: Mapping[str, Any] | None = None,
    ) -> None:
        """Records a play's hands and marks it done, all in one transaction.

        ``sandbox`` (``level`` and details) is what its bots ran in (``play_sandbox``).

        Either every hand of the play is written and the play is done, or (on any error or
        interruption) nothing is and the play stays pending. When the last pending play is
        recorded the event becomes finished. ``replay_path`` is a path as this process sees
        it (relative to its working folder, or absolute), stored by ``stored_path`` (so are
        the failures' log paths). The replay file itself should be written (atomically)
        before this call, so a recorded play always has its replay.

        Raises:
            StoreError: Unknown play, a play already recorded, no hands, or repeated hand
                numbers.
        """
        rows = list(hands)
        if not rows:
            raise StoreError(f"play {play_id}: a play records at least one hand")
        numbers = [row.hand for row in rows]
        if len(set(numbers)) != len(numbers):
            raise StoreError(f"play {play_id}: hand numbers repeat: {numbers}")
        with self._write() as conn:
            play = conn.execute(
                "SELECT event_id, board, rotation, seat_n, seat_e, seat_s, seat_w"
                " FROM plays WHERE id = ?",
                (play_id,),
            ).fetchone()
            if play is None:
                raise StoreError(f"{self.path}: no play with id {play_id}")
            event_id, board, rotation, *seats = play
            updated = conn.execute(
                "UPDATE plays SET status = 'done', replay_path = ?, finished_at = ?"
                " WHERE id = ? AND status = 'pending'",
                (self._relative(replay_path), utc_text(), play_id),
            )
            if updated.rowcount != 1:
                raise StoreError(
                    f"play {play_id} (board {board}, rotation {rotation}) is already recorded"
                )
            for row in rows:
                conn.execute(
                    "INSERT INTO hands (play_id, hand_no, board, rotation, seat_n, seat_e,"
                    " seat_s, seat_w, score_a, score_b, card_points_a, card_points_b, bets_a,"
                    " bets_b, double_victory, first_out, out_order, calls, vp_a, vp_b, failures)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    _hand_params(play_id, board, rotation, seats, row, self.path),
                )
            if sandbox is not None:
                conn.execute(
                    "INSERT INTO play_sandbox (play_id, level, detail) VALUES (?, ?, ?)",
                    (play_id, sandbox["level"], _canonical(dict(sandbox))),
                )
            status = EventStatus.RUNNING
            if self._pending_count(conn, event_id) == 0:
                status = EventStatus.FINISHED
            conn.execute("UPDATE events SET status = ? WHERE id = ?", (status.value, event_id))

    def _relative(self, replay_path: str | Path | None) -> str | None:
        return None if replay_path is None else stored_path(self.path, replay_path)

    @staticmethod
    def _pending_count(conn: sqlite3.Connection, event_id: int) -> int:
        (count,) = conn.execute(
            "SELECT COUNT(*) FROM plays WHERE event_id = ? AND status = 'pending'", (event_id,)
        ).fetchone()
        return int(count)

    def sandbox_levels(self, ref: EventRef | None = None) -> dict[str, int]:
        """Recorded plays by the sandbox level their bots ran in (``unknown``: not recorded)."""
        info = self.event(ref)
        rows = self._conn.execute(
            "SELECT COALESCE(play_sandbox.level, 'unknown'), COUNT(*) FROM plays"
            " LEFT JOIN play_sandbox ON play_sandbox.play_id = plays.id"
            " WHERE plays.event_id = ? AND plays.status = 'done' GROUP BY 1 ORDER BY 1",
            (info.id,),
        )
        return {level: int(n) for level, n in rows}

    # ---------------------------------------------------------------------------- hands

    def hands(self, ref: EventRef | None = None) -> tuple[StoredHand, ...]:
        """Returns every recorded hand of an event in running order (play order, then hand)."""
        info = self.event(ref)
        rows = self._conn.execute(
            "SELECT hands.play_id, plays.ordinal, hands.board, hands.rotation, hands.seat_n,"
            " hands.seat_e, hands.seat_s, hands.seat_w, hands.hand_no, hands.score_a,"
            " hands.score_b, hands.card_points_a, hands.card_points_b, hands.bets_a,"
            " hands.bets_b, hands.double_victory, hands.out_order, hands.calls, hands.vp_a,"
            " hands.vp_b, hands.failures, plays.replay_path"
            " FROM hands JOIN plays ON plays.id = hands.play_id"
            " WHERE plays.event_id = ? ORDER BY plays.ordinal, hands.hand_no",
            (info.id,),
        )
        return tuple(_stored_hand(row, self.path) for row in rows)

    def hand_outcomes(self, ref: EventRef | None = None) -> list[HandOutcome]:
        """Returns every recorded hand as rating input, in running order."""
        return [hand.outcome() for hand in self.hands(ref)]

    def turnier_hands(self, ref: EventRef | None = None) -> list[TurnierHand]:
        """Returns every recorded hand with the facts victory points need."""
        return [hand.turnier_hand() for hand in self.hands(ref)]

    def fillers(self, ref: EventRef | None = None) -> tuple[str, ...]:
        """Returns the event's filler bots (rated, hidden from standings)."""
        info = self.event(ref)
        rows = self._conn.execute(
            "SELECT name FROM bots WHERE event_id = ? AND filler = 1 ORDER BY name", (info.id,)
        )
        return tuple(name for (name,) in rows)

    def event_summary(self, ref: EventRef | None = None) -> EventSummary:
        """Returns the event's spec, schedule and progress counts."""
        info = self.event(ref)
        conn = self._conn
        spec_text, schedule_text = conn.execute(
            "SELECT spec, schedule FROM events WHERE id = ?", (info.id,)
        ).fetchone()
        bots = conn.execute(
            "SELECT name, filler FROM bots WHERE event_id = ? ORDER BY rowid", (info.id,)
        ).fetchall()
        plays_total, plays_done = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(status = 'done'), 0) FROM plays WHERE event_id = ?",
            (info.id,),
        ).fetchone()
        boards_total, boards_done = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(open = 0), 0) FROM"
            " (SELECT board, SUM(status = 'pending') AS open FROM plays"
            "  WHERE event_id = ? GROUP BY board)",
            (info.id,),
        ).fetchone()
        (hands,) = conn.execute(
            "SELECT COUNT(*) FROM hands JOIN plays ON plays.id = hands.play_id"
            " WHERE plays.event_id = ?",
            (info.id,),
        ).fetchone()
        return EventSummary(
            info=info,
            spec=json.loads(spec_text),
            schedule=json.loads(schedule_text),
            bots=tuple(name for name, filler in bots if not filler),
            fillers=tuple(name for name, filler in bots if filler),
            plays_total=int(plays_total),
            plays_done=int(plays_done),
            boards_total=int(boards_total),
            boards_done=int(boards_done),
            hands=int(hands),
        )


# ---------------------------------------------------------------------------------------------
# Row conversion


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction (``BEGIN IMMEDIATE``) on a connection opened with
    ``isolation_level=None``: committed at the end, rolled back on any exception or Ctrl-C."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def utc_text(moment: datetime | None = None) -> str:
    """A time as the stores keep it (``moment``, else now): UTC ISO 8601 to the second."""
    return (moment or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _play_params(event_id: int, play: PlannedPlay) -> tuple[Any, ...]:
    return (
        event_id,
        play.ordinal,
        play.round,
        play.table,
        play.board,
        play.rotation,
        *play.seats,
        str(play.seed),
        json.dumps([str(s) for s in play.seat_seeds]),
        None if play.deal_seed is None else str(play.deal_seed),
        json.dumps([deal_to_json(d) for d in play.book_deals]) if play.book_deals else None,
    )


def _stored_play(row: tuple[Any, ...]) -> StoredPlay:
    (
        play_id,
        ordinal,
        round_,
        table,
        board,
        rotation,
        north,
        east,
        south,
        west,
        seed,
        seat_seeds,
        deal_seed,
        deals,
        status,
        replay_path,
    ) = row
    s0, s1, s2, s3 = (int(s) for s in json.loads(seat_seeds))
    play = PlannedPlay(
        ordinal=ordinal,
        round=round_,
        table=table,
        board=board,
        rotation=rotation,
        seats=(north, east, south, west),
        seed=int(seed),
        seat_seeds=(s0, s1, s2, s3),
        deal_seed=None if deal_seed is None else int(deal_seed),
        book_deals=tuple(deal_from_json(d) for d in json.loads(deals)) if deals else (),
    )
    return StoredPlay(id=play_id, play=play, done=status == "done", replay_path=replay_path)


def _save_settings(conn: sqlite3.Connection, event_id: int, spec: EventSpec) -> None:
    """Keeps the event file's settings that do not change results (``jobs``), for resume."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS event_settings"
        " (event_id INTEGER PRIMARY KEY REFERENCES events (id), settings TEXT NOT NULL)"
    )
    conn.execute(
        "INSERT OR REPLACE INTO event_settings (event_id, settings) VALUES (?, ?)",
        (event_id, _canonical({"jobs": spec.jobs})),
    )


def _hand_params(
    play_id: int, board: int, rotation: int, seats: Sequence[str], row: HandRow, db: Path
) -> tuple[Any, ...]:
    failures = [replace(f, log=stored_path(db, f.log)) if f.log else f for f in row.failures]
    return (
        play_id,
        row.hand,
        board,
        rotation,
        *seats,
        row.score_a,
        row.score_b,
        row.card_points[0],
        row.card_points[1],
        row.bets[0],
        row.bets[1],
        row.double_victory,
        row.first_out,
        "".join(str(s) for s in row.out),
        row.calls,
        row.victory_points[0],
        row.victory_points[1],
        json.dumps([failure.to_json() for failure in failures]),
    )


def _stored_hand(row: tuple[Any, ...], db: Path) -> StoredHand:
    """A stored hand; its failures' log paths are resolved as this process sees them."""
    (
        play_id,
        ordinal,
        board,
        rotation,
        north,
        east,
        south,
        west,
        hand_no,
        score_a,
        score_b,
        card_a,
        card_b,
        bets_a,
        bets_b,
        double,
        out_order,
        calls,
        vp_a,
        vp_b,
        failures,
        replay_path,
    ) = row
    hand = HandRow(
        hand=hand_no,
        score_a=score_a,
        score_b=score_b,
        card_points=(card_a, card_b),
        bets=(bets_a, bets_b),
        double_victory=double,
        out=tuple(int(c) for c in out_order),
        calls=calls,
        victory_points=(vp_a, vp_b),
        failures=tuple(
            FailureRow(
                int(f["seat"]),
                str(f["kind"]),
                str(f.get("detail", "")),
                str(resolve_stored(db, f["log"])) if f.get("log") else "",
                bool(f.get("private", False)),
            )
            for f in json.loads(failures)
        ),
    )
    return StoredHand(
        play_id=play_id,
        ordinal=ordinal,
        board=board,
        rotation=rotation,
        seats=(north, east, south, west),
        row=hand,
        replay_path=replay_path,
    )


def stored_path(db: Path, path: str | Path) -> str:
    """The text a database stores for ``path`` (a file as this process sees it).

    One rule for every stored path: relative to the database's folder when it lies inside that
    folder, absolute otherwise, so the database and its replays and logs move together and any
    working folder reads them (``resolve_stored``).
    """
    target = Path(path).absolute()
    try:
        return target.relative_to(db.absolute().parent).as_posix()
    except ValueError:
        return str(target)


def resolve_stored(db: Path, stored: str) -> Path:
    """The file a stored path names, as this process sees it (``stored_path``'s inverse).

    Databases written before the rule stored paths relative to the working folder of the run
    (``runs/demo.sqlite.replays/...``); such a path that is not found beside the database is
    read from the database's own ``<db>.replays`` or ``<db>.logs`` folder instead.
    """
    path = Path(stored)
    if path.is_absolute():
        return path
    found = db.parent / path
    if not found.exists():
        for i, part in enumerate(path.parts):
            if part in (f"{db.name}.replays", f"{db.name}.logs") and i > 0:
                old = db.parent.joinpath(*path.parts[i:])
                if old.exists():
                    return old
    return found
