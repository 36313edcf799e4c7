"""The league service's accounts, quotas, schedule and backup, on a real league database."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from arena.service.accounts import (
    SESSION_IDLE,
    SESSION_LIFETIME,
    AccountError,
    FailedLogins,
    ServiceDb,
    claimed_owner,
)
from arena.service.backup import BackupError, backup
from arena.service.scheduler import plan
from arena.tournament.league.season import submit
from arena.tournament.league.spec import LeagueFileError, parse_league
from arena.tournament.league.store import LeagueStore


def league(tmp_path: Path, **schedule: object) -> Path:
    db = tmp_path / "league.sqlite"
    data: dict[str, object] = {"name": "t", "seed": 1, "season_rounds": 3}
    if schedule:
        data["schedule"] = schedule
    with closing(LeagueStore(db, create=True)) as store:
        store.init_league(parse_league(data))
    return db


def test_tokens_are_random_stored_as_hashes_and_revocable(tmp_path: Path) -> None:
    db = league(tmp_path)
    with ServiceDb(db) as service:
        ann = service.add_owner("ann")
        bob = service.add_owner("bob", organiser=True)
        assert ann.startswith("ann.") and len(ann) > 40 and ann != service.add_owner("cy")
        assert service.authenticate(ann).name == "ann"  # type: ignore[union-attr]
        assert service.authenticate(bob).organiser  # type: ignore[union-attr]
        assert service.authenticate(ann[:-1] + ("A" if ann[-1] != "A" else "B")) is None
        assert service.authenticate("bob." + ann.split(".", 1)[1]) is None  # another's secret
        assert service.authenticate("nobody.x") is None
        assert service.authenticate("no token shape") is None
        with pytest.raises(AccountError, match="exists already"):
            service.add_owner("ann")
        with pytest.raises(AccountError, match="not a usable owner name"):
            service.add_owner("a.b")
        assert service.revoke("ann") and not service.revoke("ann")
        assert service.authenticate(ann) is None
        with pytest.raises(AccountError, match="no owner 'zed'"):
            service.revoke("zed")
        actions = [e["action"] for e in service.audit_log()]
        assert actions.count("owner added") == 3 and actions.count("owner revoked") == 1
    raw = b"".join(p.read_bytes() for p in db.parent.glob("league.sqlite*") if p.is_file())
    assert ann.split(".", 1)[1].encode() not in raw  # only its hash is kept


def test_sessions_are_stored_as_hashes_and_end_at_logout_or_revoke(tmp_path: Path) -> None:
    db = league(tmp_path)
    with ServiceDb(db) as service:
        service.add_owner("ann")
        service.add_owner("bob")
        first, second = service.new_session("ann"), service.new_session("ann")
        bobs = service.new_session("bob")
        assert len({first, second, bobs}) == 3 and len(first) >= 43
        assert service.session_owner(first).name == "ann"  # type: ignore[union-attr]
        assert service.session_owner(first[:-1] + ("A" if first[-1] != "A" else "B")) is None
        assert service.session_owner("") is None
        service.end_session(first)  # logout ends this session, not the owner's others
        assert service.session_owner(first) is None
        assert service.session_owner(second).name == "ann"  # type: ignore[union-attr]
        service.revoke("ann")  # revoking ends all of the owner's sessions
        assert service.session_owner(second) is None
        assert service.session_owner(bobs).name == "bob"  # type: ignore[union-attr]
        with closing(sqlite3.connect(db)) as conn:
            owners = conn.execute("SELECT owner FROM service_sessions").fetchall()
        assert owners == [("bob",)]
    with ServiceDb(db) as again:  # another connection, as after a restart
        assert again.session_owner(bobs).name == "bob"  # type: ignore[union-attr]
        assert again.csrf_key() == again.csrf_key() and len(again.csrf_key()) == 32
    raw = b"".join(p.read_bytes() for p in db.parent.glob("league.sqlite*") if p.is_file())
    assert b"service_sessions" in raw  # the file holds the table ...
    for session in (first, second, bobs):
        assert session.encode() not in raw  # ... but only the ids' hashes


def test_sessions_expire_when_idle_or_old_and_are_swept(tmp_path: Path) -> None:
    db = league(tmp_path)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    with ServiceDb(db) as service:
        service.add_owner("ann")
        idle = service.new_session("ann", start)
        busy = service.new_session("ann", start)
        day = timedelta(days=1)
        moment = start
        while moment + day < start + SESSION_LIFETIME:  # used daily: alive until its lifetime
            moment += day
            assert service.session_owner(busy, moment) is not None, moment
        assert service.session_owner(idle, start + SESSION_IDLE - day) is not None
        assert service.session_owner(idle, start + SESSION_IDLE + SESSION_IDLE) is None
        assert service.session_owner(busy, start + SESSION_LIFETIME) is None
        assert service.sweep_sessions(start + 2 * SESSION_IDLE + day) == 1  # idle, not busy
        assert service.sweep_sessions(start + SESSION_LIFETIME) == 1
        with closing(sqlite3.connect(db)) as conn:
            assert conn.execute("SELECT COUNT(*) FROM service_sessions").fetchone() == (0,)


def test_failed_logins_are_limited_per_address_never_per_owner() -> None:
    limits = FailedLogins(limit=3, window_s=3600)
    for _ in range(3):
        assert limits.blocked("10.0.0.1") == 0
        limits.failed("10.0.0.1")
    assert limits.blocked("10.0.0.1") > 0  # the address, whatever owner it names
    assert limits.blocked("10.0.0.2") == 0  # the owner it named logs in from elsewhere
    assert claimed_owner("ann.secret") == "ann" and claimed_owner("ann") is None


def test_quota_and_one_running_submission_per_owner(tmp_path: Path) -> None:
    db = league(tmp_path)
    with ServiceDb(db) as service:
        first = service.new_submission("ann", "127.0.0.1", gate=True)
        assert service.busy("ann") and not service.busy("bob")
        service.finish_submission(first, "refused", "the smoke check failed")
        assert not service.busy("ann")
        second = service.new_submission("ann", "127.0.0.1", gate=False)
        # refused before the smoke check: not counted; being checked: counted
        assert service.submissions_since("ann") == 1 and service.submissions_since("bob") == 0
        checked = service.new_submission("bob", "127.0.0.1", gate=False)
        service.finish_submission(checked, "refused", "smoke", report={"check": [], "exit": 1})
        assert service.submissions_since("bob") == 1
        assert [s.id for s in service.unfinished()] == [second]  # checked again at a restart


def test_the_schedule_decides_when_a_round_is_due(tmp_path: Path) -> None:
    with pytest.raises(LeagueFileError, match="schedule"):
        parse_league({"name": "t", "schedule": {"every": "soon"}})
    with pytest.raises(LeagueFileError, match="every, after_versions or both"):
        parse_league({"name": "t", "schedule": {}})
    db = league(tmp_path, every="30m", max_rounds=2)
    with closing(LeagueStore(db, create=False)) as store, ServiceDb(db) as service:
        assert not plan(store, service).due
        assert "needs at least 4" in plan(store, service).why
        for bot in ("random", "greedy", "heuristic", "quick"):
            submit(store, bot)
        assert plan(store, service).why == "the first round of the season"
        (number, season) = (1, 1)
        round_ = store.add_round(season, number, [(v.id, 1) for v in store.versions()], [])
        assert "unfinished" in plan(store, service).why  # always resumed first
        store.finish_round(round_.id)
        service.round_finished(round_.id, "season 1 round 1")
        later = plan(store, service)
        assert not later.due and later.next_at is not None
        at = datetime.strptime(later.next_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        assert plan(store, service, at + timedelta(seconds=1)).due
        round_ = store.add_round(season, 2, [(v.id, 1) for v in store.versions()], [])
        store.finish_round(round_.id)
        assert "played its 2 rounds" in plan(store, service, at + timedelta(days=1)).why


def test_after_versions_counts_new_versions(tmp_path: Path) -> None:
    db = league(tmp_path, after_versions=5)
    with closing(LeagueStore(db, create=False)) as store, ServiceDb(db) as service:
        for bot in ("random", "greedy", "heuristic", "quick"):
            submit(store, bot)
        assert plan(store, service).why == "waiting: 4 of 5 new versions"
        submit(store, "search")
        assert plan(store, service).due


def test_backup_is_a_consistent_copy_and_never_overwrites(tmp_path: Path) -> None:
    db = league(tmp_path)
    with ServiceDb(db) as service:
        service.add_owner("ann")
    out = tmp_path / "copy" / "backup.sqlite"
    assert backup(db, out) > 0
    with closing(sqlite3.connect(out)) as conn:
        assert conn.execute("SELECT name FROM service_owners").fetchall() == [("ann",)]
    with pytest.raises(BackupError, match="exists already"):
        backup(db, out)
    with pytest.raises(BackupError, match="no database"):
        backup(tmp_path / "none.sqlite", tmp_path / "x.sqlite")
