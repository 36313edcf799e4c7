"""Owners, their tokens, the audit log and the submission log of a league service.

The service's tables live in the league database beside the league's (``meta`` key
``service_schema_version``), created on first use by ``ServiceDb``:

* ``service_owners``: name, the SHA-256 of the token (the token itself is never stored),
  role (``owner`` or ``organiser``), creation and revocation times.
* ``service_audit``: every write: time, actor (an owner, ``organiser`` for the local
  commands, ``scheduler``), the client's address, the action and a one-line detail.
* ``service_submissions``: every upload that was authenticated: its owner, bot, status
  (``queued``, ``running``, ``accepted``, ``refused``, ``interrupted``), the one-line reason,
  the progress line, the version hash and the check and gate reports (JSON).
* ``service_rounds``: when the service started and finished each round.
* ``service_sessions``: the browsers logged in: the SHA-256 of the session id (the id itself
  is only in the browser's cookie), the owner, when it was made and last seen. A session
  ends at logout, when its owner is revoked, after ``SESSION_IDLE`` unused or
  ``SESSION_LIFETIME`` in all; expired ones are swept at the service's start and at each
  login. The ``meta`` key ``service_csrf_key`` holds the key of the forms' CSRF tokens, made
  once, so sessions and forms outlive a restart of the service.

A token is ``<owner>.<43 random URL-safe characters>`` (256 bits from ``secrets``): the name
part finds the account; the hash is compared with ``hmac.compare_digest``. A token of 256
random bits needs no slow password hash (nothing about it can be guessed from its SHA-256)
and no lockout of its owner: failed logins are limited per client address alone, so no
stranger can lock an owner out by naming them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import sqlite3
import time
from collections import deque
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from arena.rules import ArenaError
from arena.tournament.store import transaction, utc_text

__all__ = [
    "OWNER_NAME",
    "SESSION_IDLE",
    "SESSION_LIFETIME",
    "AccountError",
    "FailedLogins",
    "Owner",
    "ServiceDb",
    "Submission",
]

OWNER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
"""An owner's name: no dots, so a token ``<owner>.<secret>`` splits at its first dot."""

SERVICE_SCHEMA_VERSION = 2
"""2: ``service_sessions`` and the stored CSRF key (made on first use; version 1 lacks them)."""

SESSION_IDLE = timedelta(days=7)
"""A browser session unused this long ends: a forgotten login on a shared machine expires."""

SESSION_LIFETIME = timedelta(days=30)
"""A browser session ends this long after its login, used or not: a stolen cookie does not
work for ever."""

SESSION_TOUCH = timedelta(minutes=1)
"""How stale a session's last-seen time may get before a request rewrites it (not every page
view is a write)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS service_owners (
    name       TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL,
    role       TEXT NOT NULL CHECK (role IN ('owner', 'organiser')),
    created    TEXT NOT NULL,
    revoked    TEXT
);
CREATE TABLE IF NOT EXISTS service_audit (
    id      INTEGER PRIMARY KEY,
    time    TEXT NOT NULL,
    actor   TEXT NOT NULL,
    address TEXT NOT NULL,
    action  TEXT NOT NULL,
    detail  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS service_submissions (
    id       INTEGER PRIMARY KEY,
    time     TEXT NOT NULL,
    owner    TEXT NOT NULL,
    address  TEXT NOT NULL,
    gate     INTEGER NOT NULL,
    status   TEXT NOT NULL
        CHECK (status IN ('queued', 'running', 'accepted', 'refused', 'interrupted')),
    bot      TEXT,
    reason   TEXT NOT NULL DEFAULT '',
    progress TEXT NOT NULL DEFAULT '',
    hash     TEXT,
    version  INTEGER,
    report   TEXT
);
CREATE INDEX IF NOT EXISTS service_submissions_owner ON service_submissions (owner, time);
CREATE TABLE IF NOT EXISTS service_rounds (
    round_id INTEGER PRIMARY KEY,
    started  TEXT NOT NULL,
    finished TEXT
);
CREATE TABLE IF NOT EXISTS service_sessions (
    id_hash TEXT PRIMARY KEY,
    owner   TEXT NOT NULL REFERENCES service_owners (name),
    created TEXT NOT NULL,
    seen    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS service_sessions_owner ON service_sessions (owner)
"""


class AccountError(ArenaError):
    """An owner command that cannot be done (a bad name, an owner that exists or does not)."""


def parse_time(text: str) -> datetime:
    """Reads a stored time back."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def token_hash(token: str) -> str:
    """What is stored of a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass(frozen=True)
class Owner:
    """An account: name, role, creation and revocation times."""

    name: str
    role: str
    created: str
    revoked: str | None

    @property
    def organiser(self) -> bool:
        """Whether this account may read the audit log."""
        return self.role == "organiser"


@dataclass(frozen=True)
class Submission:
    """One authenticated upload and what became of it."""

    id: int
    time: str
    owner: str
    address: str
    gate: bool
    status: str
    bot: str | None
    reason: str
    progress: str
    hash: str | None
    version: int | None
    report: dict[str, Any] | None

    @property
    def done(self) -> bool:
        """Whether the submission has its verdict."""
        return self.status in ("accepted", "refused", "interrupted")

    def to_json(self) -> dict[str, Any]:
        """The submission as the JSON pages show it."""
        return {
            "id": self.id,
            "time": self.time,
            "owner": self.owner,
            "gate": self.gate,
            "status": self.status,
            "bot": self.bot,
            "reason": self.reason,
            "progress": self.progress,
            "hash": self.hash,
            "version": self.version,
            "report": self.report,
        }


_SUBMISSION_COLUMNS = (
    "id, time, owner, address, gate, status, bot, reason, progress, hash, version, report"
)


def _submission(row: tuple[Any, ...]) -> Submission:
    return Submission(
        id=int(row[0]),
        time=row[1],
        owner=row[2],
        address=row[3],
        gate=bool(row[4]),
        status=row[5],
        bot=row[6],
        reason=row[7],
        progress=row[8],
        hash=row[9],
        version=row[10],
        report=json.loads(row[11]) if row[11] else None,
    )


class ServiceDb:
    """The service's tables in a league database, over a connection of its own.

    Every write is one ``BEGIN IMMEDIATE`` transaction; the league's own tables are left
    to ``LeagueStore``.
    """

    def __init__(self, path: Path, *, setup: bool = True) -> None:
        self.path = path
        self._conn = sqlite3.connect(path, isolation_level=None, timeout=30.0)
        if not setup:  # the tables exist: the service made them at its start
            return
        self._conn.execute("PRAGMA journal_mode = WAL")
        with self._write() as conn:
            for statement in _SCHEMA.split(";"):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('service_schema_version', ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                " WHERE CAST(value AS INTEGER) < CAST(excluded.value AS INTEGER)",
                (str(SERVICE_SCHEMA_VERSION),),
            )

    def close(self) -> None:
        """Closes the connection."""
        self._conn.close()

    def __enter__(self) -> ServiceDb:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return transaction(self._conn)

    # ------------------------------------------------------------------------- owners

    def add_owner(self, name: str, *, organiser: bool = False, address: str = "local") -> str:
        """Creates an account and returns its token (shown once, stored only as a hash).

        Raises:
            AccountError: A name that is not usable, or an account of that name exists.
        """
        if not OWNER_NAME.fullmatch(name):
            raise AccountError(
                f"{name!r} is not a usable owner name: 1-32 letters, digits, _ or -, starting"
                " with a letter or digit"
            )
        token = f"{name}.{secrets.token_urlsafe(32)}"
        role = "organiser" if organiser else "owner"
        try:
            with self._write() as conn:
                conn.execute(
                    "INSERT INTO service_owners (name, token_hash, role, created)"
                    " VALUES (?, ?, ?, ?)",
                    (name, token_hash(token), role, utc_text()),
                )
                self._audit(conn, "organiser", address, "owner added", f"{name} ({role})")
        except sqlite3.IntegrityError:
            raise AccountError(
                f"an owner {name!r} exists already (revoked or not); pick another name"
            ) from None
        return token

    def owners(self) -> tuple[Owner, ...]:
        """Every account, oldest first."""
        rows = self._conn.execute(
            "SELECT name, role, created, revoked FROM service_owners ORDER BY rowid"
        )
        return tuple(Owner(*row) for row in rows)

    def revoke(self, name: str, *, address: str = "local") -> bool:
        """Revokes an account's token; False if it was revoked already.

        Raises:
            AccountError: No such owner.
        """
        with self._write() as conn:
            row = conn.execute(
                "SELECT revoked FROM service_owners WHERE name = ?", (name,)
            ).fetchone()
            if row is None:
                known = ", ".join(o.name for o in self.owners()) or "none"
                raise AccountError(f"no owner {name!r} (owners: {known})")
            if row[0] is not None:
                return False
            conn.execute("UPDATE service_owners SET revoked = ? WHERE name = ?", (utc_text(), name))
            conn.execute("DELETE FROM service_sessions WHERE owner = ?", (name,))
            self._audit(conn, "organiser", address, "owner revoked", name)
        return True

    def authenticate(self, token: str) -> Owner | None:
        """The active account whose token this is, else None (compared in constant time)."""
        name = claimed_owner(token)
        if name is None:
            return None
        row = self._conn.execute(
            "SELECT name, role, created, revoked, token_hash FROM service_owners WHERE name = ?",
            (name,),
        ).fetchone()
        expected = row[4] if row is not None else token_hash("")
        ok = hmac.compare_digest(token_hash(token), expected)
        if row is None or not ok or row[3] is not None:
            return None
        return Owner(*row[:4])

    # ------------------------------------------------------------------------- sessions

    def new_session(self, owner: str, now: datetime | None = None) -> str:
        """Opens a browser session for ``owner`` and returns its id (256 random bits, for the
        cookie alone: the database keeps its SHA-256); sweeps expired sessions."""
        session = secrets.token_urlsafe(32)
        with self._write() as conn:
            self._sweep(conn, now)
            conn.execute(
                "INSERT INTO service_sessions (id_hash, owner, created, seen) VALUES (?, ?, ?, ?)",
                (token_hash(session), owner, utc_text(now), utc_text(now)),
            )
        return session

    def session_owner(self, session: str, now: datetime | None = None) -> Owner | None:
        """The active owner of an unexpired session, else None; marks the session seen."""
        if not session or len(session) > 200:
            return None
        moment = now or datetime.now(UTC)
        row = self._conn.execute(
            "SELECT o.name, o.role, o.created, o.revoked, s.seen FROM service_sessions s"
            " JOIN service_owners o ON o.name = s.owner"
            " WHERE s.id_hash = ? AND s.seen > ? AND s.created > ?",
            (
                token_hash(session),
                utc_text(moment - SESSION_IDLE),
                utc_text(moment - SESSION_LIFETIME),
            ),
        ).fetchone()
        if row is None or row[3] is not None:
            return None
        if row[4] <= utc_text(moment - SESSION_TOUCH):
            with self._write() as conn:
                conn.execute(
                    "UPDATE service_sessions SET seen = ? WHERE id_hash = ?",
                    (utc_text(moment), token_hash(session)),
                )
        return Owner(*row[:4])

    def end_session(self, session: str) -> None:
        """Ends a browser session (logout)."""
        with self._write() as conn:
            conn.execute("DELETE FROM service_sessions WHERE id_hash = ?", (token_hash(session),))

    def sweep_sessions(self, now: datetime | None = None) -> int:
        """Deletes the expired sessions; returns how many."""
        with self._write() as conn:
            return self._sweep(conn, now)

    def _sweep(self, conn: sqlite3.Connection, now: datetime | None) -> int:
        moment = now or datetime.now(UTC)
        cursor = conn.execute(
            "DELETE FROM service_sessions WHERE seen <= ? OR created <= ?",
            (utc_text(moment - SESSION_IDLE), utc_text(moment - SESSION_LIFETIME)),
        )
        return cursor.rowcount

    def csrf_key(self) -> bytes:
        """The key of the forms' CSRF tokens: made once, kept in ``meta``, so a form loaded
        before a restart still posts after it."""
        with self._write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('service_csrf_key', ?)",
                (secrets.token_hex(32),),
            )
            row = conn.execute("SELECT value FROM meta WHERE key = 'service_csrf_key'").fetchone()
        return bytes.fromhex(row[0])

    # ------------------------------------------------------------------------- audit

    def _audit(
        self, conn: sqlite3.Connection, actor: str, address: str, action: str, detail: str
    ) -> None:
        conn.execute(
            "INSERT INTO service_audit (time, actor, address, action, detail)"
            " VALUES (?, ?, ?, ?, ?)",
            (utc_text(), actor, address, action, " ".join(detail.split())[:500]),
        )

    def audit(self, actor: str, address: str, action: str, detail: str = "") -> None:
        """Records one write (or refused attempt) in the audit log."""
        with self._write() as conn:
            self._audit(conn, actor, address, action, detail)

    def audit_log(self, limit: int = 500) -> list[dict[str, Any]]:
        """The newest entries of the audit log, newest first."""
        rows = self._conn.execute(
            "SELECT id, time, actor, address, action, detail FROM service_audit"
            " ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        keys = ("id", "time", "actor", "address", "action", "detail")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    # ------------------------------------------------------------------------- submissions

    def new_submission(self, owner: str, address: str, gate: bool) -> int:
        """Records an authenticated upload about to be received; returns its id."""
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO service_submissions (time, owner, address, gate, status)"
                " VALUES (?, ?, ?, ?, 'queued')",
                (utc_text(), owner, address, int(gate)),
            )
            return int(cursor.lastrowid or 0)

    def update_submission(self, submission_id: int, **fields: Any) -> None:
        """Sets fields of a submission (status, bot, reason, progress, hash, version, report)."""
        allowed = {"status", "bot", "reason", "progress", "hash", "version", "report"}
        assert set(fields) <= allowed, fields
        values = [
            json.dumps(v) if k == "report" and v is not None else v for k, v in fields.items()
        ]
        columns = ", ".join(f"{k} = ?" for k in fields)
        with self._write() as conn:
            conn.execute(
                f"UPDATE service_submissions SET {columns} WHERE id = ?",
                (*values, submission_id),
            )

    def finish_submission(
        self, submission_id: int, status: str, reason: str, **fields: Any
    ) -> Submission:
        """Gives a submission its verdict and records it in the audit log."""
        self.update_submission(submission_id, status=status, reason=reason, **fields)
        found = self.submission(submission_id)
        assert found is not None
        what = f"submission {submission_id} {status}"
        detail = f"{found.bot or '?'}: {reason}"
        self.audit(found.owner, found.address, what, detail)
        return found

    def submission(self, submission_id: int) -> Submission | None:
        """One submission, if it exists."""
        row = self._conn.execute(
            f"SELECT {_SUBMISSION_COLUMNS} FROM service_submissions WHERE id = ?",
            (submission_id,),
        ).fetchone()
        return None if row is None else _submission(row)

    def submissions(self, owner: str | None = None, limit: int = 500) -> list[Submission]:
        """The newest submissions (of one owner, or all), newest first."""
        query = f"SELECT {_SUBMISSION_COLUMNS} FROM service_submissions"
        if owner is None:
            rows = self._conn.execute(query + " ORDER BY id DESC LIMIT ?", (limit,))
        else:
            rows = self._conn.execute(
                query + " WHERE owner = ? ORDER BY id DESC LIMIT ?", (owner, limit)
            )
        return [_submission(row) for row in rows]

    def submissions_since(self, owner: str, hours: float = 24.0) -> int:
        """How many uploads of the owner's in the last ``hours`` count toward the daily quota:
        those being checked and those that reached the sandbox's smoke check (an upload
        refused before it, or interrupted, costs the author nothing)."""
        since = utc_text(datetime.now(UTC) - timedelta(hours=hours))
        row = self._conn.execute(
            "SELECT COUNT(*) FROM service_submissions WHERE owner = ? AND time >= ?"
            " AND status != 'interrupted'"
            " AND (status != 'refused' OR json_extract(report, '$.check') IS NOT NULL)",
            (owner, since),
        ).fetchone()
        return int(row[0])

    def busy(self, owner: str) -> bool:
        """Whether one of the owner's submissions is still being checked (or gated)."""
        row = self._conn.execute(
            "SELECT 1 FROM service_submissions WHERE owner = ? AND status IN ('queued', 'running')",
            (owner,),
        ).fetchone()
        return row is not None

    def unfinished(self) -> list[Submission]:
        """Submissions without their verdict (queued, or running when the last service
        stopped), oldest first."""
        rows = self._conn.execute(
            f"SELECT {_SUBMISSION_COLUMNS} FROM service_submissions"
            " WHERE status IN ('queued', 'running') ORDER BY id"
        )
        return [_submission(row) for row in rows]

    # ------------------------------------------------------------------------- rounds

    def round_started(self, round_id: int, label: str) -> None:
        """Records that the service started (or resumed) a round."""
        with self._write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO service_rounds (round_id, started) VALUES (?, ?)",
                (round_id, utc_text()),
            )
            self._audit(conn, "scheduler", "local", "round started", label)

    def round_finished(self, round_id: int, label: str) -> None:
        """Records that a round finished."""
        with self._write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO service_rounds (round_id, started) VALUES (?, ?)",
                (round_id, utc_text()),
            )
            conn.execute(
                "UPDATE service_rounds SET finished = ? WHERE round_id = ?",
                (utc_text(), round_id),
            )
            self._audit(conn, "scheduler", "local", "round finished", label)

    def round_times(self) -> dict[int, tuple[str, str | None]]:
        """When the service started and finished each round it played."""
        rows = self._conn.execute("SELECT round_id, started, finished FROM service_rounds")
        return {int(r): (s, f) for r, s, f in rows}


def claimed_owner(token: str) -> str | None:
    """The owner a token names (before it is checked), if it has the token's shape."""
    name, dot, rest = token.partition(".")
    if not dot or not rest or not OWNER_NAME.fullmatch(name) or len(token) > 200:
        return None
    return name


class FailedLogins:
    """Failed logins per client address, over a sliding window.

    After ``limit`` failures within ``window_s`` seconds from one address, further attempts
    from it are refused until the oldest failure leaves the window (kept in memory: a
    restart forgets them). An owner's name counts for nothing: a token's 256 random bits
    cannot be guessed, and a count per owner would let anyone lock that owner out.
    """

    def __init__(self, limit: int = 10, window_s: float = 300.0) -> None:
        self.limit = limit
        self.window_s = window_s
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, address: str, now: float) -> deque[float]:
        times = self._failures.get(address)
        if times is None:
            return deque()
        while times and times[0] <= now - self.window_s:
            times.popleft()
        if not times:
            del self._failures[address]
        return times

    def blocked(self, address: str) -> float:
        """Seconds until an attempt from ``address`` is allowed (0: now)."""
        now = time.monotonic()
        times = self._recent(address, now)
        return max(0.0, times[0] + self.window_s - now) if len(times) >= self.limit else 0.0

    def failed(self, address: str) -> None:
        """Counts a failed login (the addresses seen are bounded by forgetting old ones)."""
        now = time.monotonic()
        if len(self._failures) > 100_000:  # a flood of addresses: drop the stale ones
            for key in list(self._failures):
                self._recent(key, now)
        self._failures.setdefault(address, deque()).append(now)
