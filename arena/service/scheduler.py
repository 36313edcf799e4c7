"""When the league service plays its next round: the league file's ``[schedule]``.

``plan(store, service)`` reads the database and answers whether a round is due now and, if
not, why and when. The rules, in order:

* a round that is planned but unfinished is always due: it is resumed (after a restart, a
  kill -9), whatever the schedule says;
* no ``[schedule]``: never (the organiser plays rounds with ``arena league run``);
* the season has played ``max_rounds`` (or all its rounds): not until the organiser closes it;
* fewer than 4 active bots: not until more are submitted;
* ``every``: due once ``every`` has passed since the last round ended (the first round at
  once);
* ``after_versions = K``: due once K versions were submitted since the last round began
  (before the first round: K versions in all).

A round is due when either trigger fires.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from arena.service.accounts import ServiceDb, parse_time
from arena.tournament.league.season import MIN_DIVISION
from arena.tournament.league.spec import duration_s
from arena.tournament.league.store import LeagueStore
from arena.tournament.store import utc_text

__all__ = ["Plan", "plan"]


@dataclass(frozen=True)
class Plan:
    """Whether a round is due, why (or why not), and when the next one is due if known."""

    due: bool
    why: str
    next_at: str | None = None

    def to_json(self) -> dict[str, object]:
        """The plan as the status page shows it."""
        return {"due": self.due, "why": self.why, "next_at": self.next_at}


def plan(store: LeagueStore, service: ServiceDb, now: datetime | None = None) -> Plan:
    """The scheduler's decision now (see the module doc)."""
    now = now or datetime.now(UTC)
    spec = store.league()
    season = store.current_season().number
    rounds = store.rounds(season)
    if rounds and not rounds[-1].finished:
        return Plan(True, f"round {rounds[-1].number} of season {season} is unfinished")
    schedule = spec.schedule
    if schedule is None:
        return Plan(False, "the league file has no [schedule]; rounds are played by hand")
    limit = min(schedule.max_rounds or spec.season_rounds, spec.season_rounds)
    if len(rounds) >= limit:
        return Plan(
            False,
            f"season {season} has played its {limit} rounds; the organiser closes it with"
            " arena league season close",
        )
    active = [b for b in store.bots() if b.active and store.latest(b.name) is not None]
    if len(active) < MIN_DIVISION:
        return Plan(False, f"{len(active)} active bot(s); a round needs at least {MIN_DIVISION}")
    whys: list[str] = []
    next_at: datetime | None = None
    if schedule.after_versions is not None:
        since = rounds[-1].created if rounds else ""
        new = sum(v.submitted > since for v in store.versions())
        if new >= schedule.after_versions:
            return Plan(True, f"{new} new version(s) since the last round")
        whys.append(f"{new} of {schedule.after_versions} new versions")
    if schedule.every is not None:
        if not rounds:
            return Plan(True, "the first round of the season")
        times = service.round_times().get(rounds[-1].id)
        ended = parse_time(times[1] if times and times[1] else rounds[-1].created)
        next_at = ended + timedelta(seconds=duration_s(schedule.every))
        if now >= next_at:
            return Plan(True, f"{schedule.every} since the last round ended")
        whys.append(f"every {schedule.every}")
    at = None if next_at is None else utc_text(next_at)
    return Plan(False, "waiting: " + ", ".join(whys), at)
