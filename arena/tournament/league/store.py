"""The league store: one SQLite file holding a league's bots, versions, seasons and rounds.

A league database is an event database (``arena.tournament.store``: WAL, one transaction per
play, resumable) with the league's tables beside the events: each league round is stored as
one event per division, so every hand of the league is an ordinary row of ``hands`` and event
tools (``arena ratings``, ``arena leaderboard``) work on a single round. The league's tables
(``meta`` key ``league_schema_version`` = 2):

* ``league``: one row: the league's name, its validated league file as canonical JSON, the
  creation time and its secret (hex, 128 bits drawn by ``init_league``; NULL for a league
  with a public ``seed``): every round's and gate's deals derive from it, so this file must
  stay out of every bot's reach (docs/security.md).
* ``league_bots``: one row per registered bot: name, owner, registration time, retirement time
  (NULL while active) and its current division (NULL without divisions).
* ``league_versions``: one row per submitted version: bot, number (1, 2, ...), ``entry`` (the
  name it plays under in events and hands: ``"<bot> v<number>"``), the content hash, owner,
  submission time, the copied manifest's path (relative to the database's folder), the
  predecessor version and the gate's verdict (JSON, when ``--gate`` ran).
* ``league_seasons``: number, start and close times, and the frozen final table (JSON).
* ``league_priors``: ratings carried into a season: season, version, rating, s.d. (Elo).
* ``league_rounds``: season, number within the season, creation time, status ``planned`` or
  ``finished``.
* ``league_round_events``: the event (by name and id) of each division of a round.
* ``league_round_entries``: the versions that play a round, with their division.

Every change is one ``BEGIN IMMEDIATE`` transaction, so a kill leaves the league as it was
before the command or after it, never half-way.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.tournament.boards import new_secret
from arena.tournament.league.spec import LeagueSpec, parse_league
from arena.tournament.store import EventStore, StoreError, _canonical, utc_text

__all__ = [
    "LEAGUE_SCHEMA_VERSION",
    "BotInfo",
    "LeagueStore",
    "RoundInfo",
    "SeasonInfo",
    "Version",
    "entry_name",
]

LEAGUE_SCHEMA_VERSION = 2

_LEAGUE_SCHEMA = """
CREATE TABLE league (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    name    TEXT NOT NULL,
    spec    TEXT NOT NULL,
    created TEXT NOT NULL,
    secret  TEXT
);
CREATE TABLE league_bots (
    name       TEXT PRIMARY KEY,
    owner      TEXT,
    registered TEXT NOT NULL,
    retired    TEXT,
    division   INTEGER
);
CREATE TABLE league_versions (
    id          INTEGER PRIMARY KEY,
    bot         TEXT NOT NULL REFERENCES league_bots (name),
    number      INTEGER NOT NULL CHECK (number >= 1),
    entry       TEXT NOT NULL UNIQUE,
    hash        TEXT NOT NULL,
    owner       TEXT,
    submitted   TEXT NOT NULL,
    manifest    TEXT NOT NULL,
    predecessor INTEGER REFERENCES league_versions (id),
    gate        TEXT,
    UNIQUE (bot, number),
    UNIQUE (bot, hash)
);
CREATE TABLE league_seasons (
    number      INTEGER PRIMARY KEY CHECK (number >= 1),
    started     TEXT NOT NULL,
    closed      TEXT,
    final_table TEXT
);
CREATE TABLE league_priors (
    season     INTEGER NOT NULL REFERENCES league_seasons (number),
    version_id INTEGER NOT NULL REFERENCES league_versions (id),
    rating     REAL NOT NULL,
    sd         REAL NOT NULL,
    PRIMARY KEY (season, version_id)
);
CREATE TABLE league_rounds (
    id      INTEGER PRIMARY KEY,
    season  INTEGER NOT NULL REFERENCES league_seasons (number),
    number  INTEGER NOT NULL CHECK (number >= 1),
    created TEXT NOT NULL,
    status  TEXT NOT NULL CHECK (status IN ('planned', 'finished')),
    UNIQUE (season, number)
);
CREATE TABLE league_round_events (
    round_id   INTEGER NOT NULL REFERENCES league_rounds (id),
    division   INTEGER NOT NULL CHECK (division >= 1),
    event_name TEXT NOT NULL UNIQUE,
    event_id   INTEGER REFERENCES events (id),
    PRIMARY KEY (round_id, division)
);
CREATE TABLE league_round_entries (
    round_id   INTEGER NOT NULL REFERENCES league_rounds (id),
    version_id INTEGER NOT NULL REFERENCES league_versions (id),
    division   INTEGER NOT NULL CHECK (division >= 1),
    PRIMARY KEY (round_id, version_id)
)
"""


@dataclass(frozen=True)
class BotInfo:
    """A registered bot: owner, registration and retirement times, current division."""

    name: str
    owner: str | None
    registered: str
    retired: str | None
    division: int | None

    @property
    def active(self) -> bool:
        """Whether the bot plays the next round."""
        return self.retired is None


@dataclass(frozen=True)
class Version:
    """One submitted version of a bot: its own rating entity, linked to its predecessor."""

    id: int
    bot: str
    number: int
    entry: str
    hash: str
    owner: str | None
    submitted: str
    manifest: str
    predecessor: int | None
    gate: dict[str, Any] | None


@dataclass(frozen=True)
class SeasonInfo:
    """A season: number, start and close times, and its frozen final table once closed."""

    number: int
    started: str
    closed: str | None
    final_table: dict[str, Any] | None


@dataclass(frozen=True)
class RoundInfo:
    """A round: season, number, status, its events by division and its entries."""

    id: int
    season: int
    number: int
    created: str
    finished: bool
    events: tuple[tuple[int, str, int | None], ...]
    entries: tuple[tuple[int, int], ...]

    @property
    def label(self) -> str:
        """``S1R3``: season 1, round 3."""
        return f"S{self.season}R{self.number}"


def entry_name(bot: str, number: int) -> str:
    """The name a version plays under in events and hands: ``"alpha v2"``."""
    return f"{bot} v{number}"


class LeagueStore(EventStore):
    """An open league database (an event database with the league's tables).

    Args:
        path: The SQLite file.
        create: Create the file and both schemas if missing (``arena league init``).

    Raises:
        StoreError: Not a league database, or another league schema version.
    """

    def __init__(self, path: Path | str, *, create: bool = False) -> None:
        super().__init__(path, create=create)
        try:
            self._league_setup(create)
        except StoreError:
            self.close()
            raise

    def _league_setup(self, create: bool) -> None:
        conn = self._conn
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        version = meta.get("league_schema_version")
        if version is None:
            if not create:
                raise StoreError(f"{self.path}: an event database, not a league database")
            with self._write():
                for statement in _LEAGUE_SCHEMA.split(";"):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('league_schema_version', ?)",
                    (str(LEAGUE_SCHEMA_VERSION),),
                )
        elif version == "1":  # version 2 added league.secret (NULL: a public seed)
            with self._write():
                conn.execute("ALTER TABLE league ADD COLUMN secret TEXT")
                conn.execute(
                    "UPDATE meta SET value = ? WHERE key = 'league_schema_version'",
                    (str(LEAGUE_SCHEMA_VERSION),),
                )
        elif version != str(LEAGUE_SCHEMA_VERSION):
            raise StoreError(
                f"{self.path}: league schema version {version}, but this arena reads version "
                f"{LEAGUE_SCHEMA_VERSION}"
            )

    @property
    def bot_store(self) -> Path:
        """The folder beside the database holding every submitted version's files."""
        return self.path.parent / f"{self.path.name}.bots"

    def resolve(self, stored: str) -> Path:
        """Returns the file a stored path names (relative paths are beside the database)."""
        path = Path(stored)
        return path if path.is_absolute() else self.path.parent / path

    # ---------------------------------------------------------------------------- league

    def init_league(self, spec: LeagueSpec) -> None:
        """Stores the league file, draws its secret (unless it has a public seed), and opens
        season 1.

        Raises:
            StoreError: The database already holds a league.
        """
        now = utc_text()
        with self._write() as conn:
            row = conn.execute("SELECT name FROM league").fetchone()
            if row is not None:
                raise StoreError(f"{self.path} already holds the league {row[0]!r}")
            secret = None if spec.seed is not None else new_secret().hex()
            conn.execute(
                "INSERT INTO league (id, name, spec, created, secret) VALUES (1, ?, ?, ?, ?)",
                (spec.name, _canonical(spec.model_dump(mode="json")), now, secret),
            )
            conn.execute("INSERT INTO league_seasons (number, started) VALUES (1, ?)", (now,))

    def league(self) -> LeagueSpec:
        """Returns the stored league file.

        Raises:
            StoreError: No league yet (``arena league init`` was not run on this file).
        """
        row = self._conn.execute("SELECT spec FROM league").fetchone()
        if row is None:
            raise StoreError(f"{self.path}: no league yet; run arena league init")
        return parse_league(json.loads(row[0]), source=f"{self.path}: stored league file")

    def secret(self) -> bytes | None:
        """The league's secret, or None when its deals come from a public seed."""
        row = self._conn.execute("SELECT secret FROM league").fetchone()
        return bytes.fromhex(row[0]) if row is not None and row[0] else None

    def created(self) -> str:
        """Returns the league's creation time (the outputs' only timestamp source)."""
        row = self._conn.execute("SELECT created FROM league").fetchone()
        return str(row[0]) if row else ""

    # ---------------------------------------------------------------------------- bots

    def bots(self) -> tuple[BotInfo, ...]:
        """Returns every registered bot in registration order."""
        rows = self._conn.execute(
            "SELECT name, owner, registered, retired, division FROM league_bots ORDER BY rowid"
        )
        return tuple(BotInfo(*row) for row in rows)

    def bot(self, name: str) -> BotInfo:
        """Returns one bot.

        Raises:
            StoreError: No such bot.
        """
        for info in self.bots():
            if info.name == name:
                return info
        known = ", ".join(b.name for b in self.bots()) or "none"
        raise StoreError(f"no bot {name!r} in the league (bots: {known})")

    def versions(self, bot: str | None = None) -> tuple[Version, ...]:
        """Returns the versions of one bot (or of all bots), oldest first."""
        query = (
            "SELECT id, bot, number, entry, hash, owner, submitted, manifest, predecessor, gate"
            " FROM league_versions"
        )
        rows = (
            self._conn.execute(query + " WHERE bot = ? ORDER BY number", (bot,))
            if bot is not None
            else self._conn.execute(query + " ORDER BY id")
        )
        return tuple(
            Version(
                id=row[0],
                bot=row[1],
                number=row[2],
                entry=row[3],
                hash=row[4],
                owner=row[5],
                submitted=row[6],
                manifest=row[7],
                predecessor=row[8],
                gate=json.loads(row[9]) if row[9] is not None else None,
            )
            for row in rows
        )

    def latest(self, bot: str) -> Version | None:
        """Returns the bot's newest version, if it has one."""
        versions = self.versions(bot)
        return versions[-1] if versions else None

    def add_version(
        self,
        bot: str,
        digest: str,
        owner: str | None,
        manifest: str,
        gate: dict[str, Any] | None = None,
    ) -> Version:
        """Registers the bot if new (or re-activates a retired one) and adds a version.

        Raises:
            StoreError: The bot belongs to another owner, or this content was submitted.
        """
        now = utc_text()
        with self._write() as conn:
            row = conn.execute("SELECT owner FROM league_bots WHERE name = ?", (bot,)).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO league_bots (name, owner, registered) VALUES (?, ?, ?)",
                    (bot, owner, now),
                )
            elif owner is not None and row[0] is not None and row[0] != owner:
                raise StoreError(f"the bot {bot!r} belongs to {row[0]!r}, not {owner!r}")
            else:
                conn.execute(
                    "UPDATE league_bots SET retired = NULL, owner = COALESCE(owner, ?)"
                    " WHERE name = ?",
                    (owner, bot),
                )
                owner = owner if owner is not None else row[0]
            previous = conn.execute(
                "SELECT id, number FROM league_versions WHERE bot = ? ORDER BY number DESC",
                (bot,),
            ).fetchone()
            number = 1 if previous is None else int(previous[1]) + 1
            try:
                cursor = conn.execute(
                    "INSERT INTO league_versions (bot, number, entry, hash, owner, submitted,"
                    " manifest, predecessor, gate) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        bot,
                        number,
                        entry_name(bot, number),
                        digest,
                        owner,
                        now,
                        manifest,
                        None if previous is None else previous[0],
                        None if gate is None else _canonical(gate),
                    ),
                )
            except sqlite3.IntegrityError:
                raise StoreError(f"this content of {bot!r} was submitted before") from None
            version_id = int(cursor.lastrowid or 0)
        return next(v for v in self.versions(bot) if v.id == version_id)

    def retire(self, bot: str) -> bool:
        """Retires a bot from the next round on; returns False if it was retired already.

        Raises:
            StoreError: No such bot.
        """
        info = self.bot(bot)
        if info.retired is not None:
            return False
        with self._write() as conn:
            conn.execute("UPDATE league_bots SET retired = ? WHERE name = ?", (utc_text(), bot))
        return True

    def set_divisions(self, divisions: dict[str, int]) -> None:
        """Sets bots' divisions (bot name to division, 1 = top)."""
        with self._write() as conn:
            conn.executemany(
                "UPDATE league_bots SET division = ? WHERE name = ?",
                [(division, bot) for bot, division in divisions.items()],
            )

    # ---------------------------------------------------------------------------- seasons

    def seasons(self) -> tuple[SeasonInfo, ...]:
        """Returns every season, oldest first."""
        rows = self._conn.execute(
            "SELECT number, started, closed, final_table FROM league_seasons ORDER BY number"
        )
        return tuple(
            SeasonInfo(n, s, c, json.loads(t) if t is not None else None) for n, s, c, t in rows
        )

    def current_season(self) -> SeasonInfo:
        """Returns the open season (the last one).

        Raises:
            StoreError: No league yet.
        """
        seasons = self.seasons()
        if not seasons:
            raise StoreError(f"{self.path}: no league yet; run arena league init")
        return seasons[-1]

    def close_season(
        self,
        number: int,
        final_table: dict[str, Any],
        priors: Iterable[tuple[int, float, float]],
        divisions: dict[str, int],
    ) -> None:
        """Freezes season ``number``'s table and opens the next with carried ratings.

        ``priors`` lists (version id, rating, s.d.) for the next season; ``divisions`` the
        bots' divisions in it.

        Raises:
            StoreError: ``number`` is not the open season.
        """
        now = utc_text()
        with self._write() as conn:
            row = conn.execute(
                "SELECT closed FROM league_seasons WHERE number = ?", (number,)
            ).fetchone()
            last = conn.execute("SELECT MAX(number) FROM league_seasons").fetchone()[0]
            if row is None or row[0] is not None or number != last:
                raise StoreError(f"season {number} is not the open season")
            conn.execute(
                "UPDATE league_seasons SET closed = ?, final_table = ? WHERE number = ?",
                (now, _canonical(final_table), number),
            )
            conn.execute(
                "INSERT INTO league_seasons (number, started) VALUES (?, ?)", (number + 1, now)
            )
            conn.executemany(
                "INSERT INTO league_priors (season, version_id, rating, sd) VALUES (?, ?, ?, ?)",
                [(number + 1, v, r, sd) for v, r, sd in priors],
            )
            conn.executemany(
                "UPDATE league_bots SET division = ? WHERE name = ?",
                [(division, bot) for bot, division in divisions.items()],
            )

    def priors(self, season: int) -> dict[int, tuple[float, float]]:
        """Returns the ratings carried into ``season``: version id to (rating, s.d.)."""
        rows = self._conn.execute(
            "SELECT version_id, rating, sd FROM league_priors WHERE season = ?", (season,)
        )
        return {int(v): (float(r), float(sd)) for v, r, sd in rows}

    # ---------------------------------------------------------------------------- rounds

    def rounds(self, season: int | None = None) -> tuple[RoundInfo, ...]:
        """Returns the rounds of one season (or all), in order."""
        query = "SELECT id, season, number, created, status FROM league_rounds"
        rows = (
            self._conn.execute(query + " WHERE season = ? ORDER BY number", (season,))
            if season is not None
            else self._conn.execute(query + " ORDER BY season, number")
        ).fetchall()
        out = []
        for round_id, season_no, number, created, status in rows:
            events = self._conn.execute(
                "SELECT division, event_name, event_id FROM league_round_events"
                " WHERE round_id = ? ORDER BY division",
                (round_id,),
            ).fetchall()
            entries = self._conn.execute(
                "SELECT version_id, division FROM league_round_entries WHERE round_id = ?"
                " ORDER BY division, version_id",
                (round_id,),
            ).fetchall()
            out.append(
                RoundInfo(
                    id=round_id,
                    season=season_no,
                    number=number,
                    created=created,
                    finished=status == "finished",
                    events=tuple((int(d), str(n), e) for d, n, e in events),
                    entries=tuple((int(v), int(d)) for v, d in entries),
                )
            )
        return tuple(out)

    def add_round(
        self,
        season: int,
        number: int,
        entries: Sequence[tuple[int, int]],
        events: Sequence[tuple[int, str]],
    ) -> RoundInfo:
        """Stores a new round's entries (version id, division) and event names per division.

        The events themselves are created next (``attach_event``); a round whose events are
        missing is completed from these rows, so a kill in between loses nothing.
        """
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO league_rounds (season, number, created, status)"
                " VALUES (?, ?, ?, 'planned')",
                (season, number, utc_text()),
            )
            round_id = int(cursor.lastrowid or 0)
            conn.executemany(
                "INSERT INTO league_round_entries (round_id, version_id, division)"
                " VALUES (?, ?, ?)",
                [(round_id, v, d) for v, d in entries],
            )
            conn.executemany(
                "INSERT INTO league_round_events (round_id, division, event_name) VALUES (?, ?, ?)",
                [(round_id, d, name) for d, name in events],
            )
        return next(r for r in self.rounds(season) if r.id == round_id)

    def attach_event(self, round_id: int, division: int, event_id: int) -> None:
        """Links a round's division to its created event."""
        with self._write() as conn:
            conn.execute(
                "UPDATE league_round_events SET event_id = ? WHERE round_id = ? AND division = ?",
                (event_id, round_id, division),
            )

    def finish_round(self, round_id: int) -> None:
        """Marks a round finished (every play of its events is recorded)."""
        with self._write() as conn:
            conn.execute("UPDATE league_rounds SET status = 'finished' WHERE id = ?", (round_id,))
