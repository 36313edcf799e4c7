"""A league's secret: drawn at init, the root of every round's deals, kept across a rerun;
a league with a public seed (or from before the secret) says so."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from arena.tournament.boards import derived_secret
from arena.tournament.league.season import next_round, round_spec, submit
from arena.tournament.league.spec import parse_league
from arena.tournament.league.store import LeagueStore

ROUND = {"boards_per_round": 2, "rotations": 2}


def league(tmp_path: Path, name: str, seed: int | None = None) -> LeagueStore:
    store = LeagueStore(tmp_path / f"{name}.sqlite", create=True)
    data = {"name": name, "round": ROUND} | ({} if seed is None else {"seed": seed})
    store.init_league(parse_league(data))
    for bot in ("random", "greedy", "heuristic", "search"):
        submit(store, bot)
    return store


def event_secret(store: LeagueStore, event: str) -> str | None:
    with sqlite3.connect(store.path) as conn:
        row = conn.execute("SELECT secret FROM events WHERE name = ?", (event,)).fetchone()
    return None if row[0] is None else str(row[0])


def deal_seeds(store: LeagueStore, event: str) -> list[int | None]:
    return [p.play.deal_seed for p in store.plays(event)]


def test_a_league_s_rounds_are_keyed_by_its_secret_and_replay_from_it(tmp_path: Path) -> None:
    a, b = league(tmp_path, "a"), league(tmp_path, "b")
    with a, b:
        secret = a.secret()
        assert secret is not None and len(secret) == 16 and secret != b.secret()
        round_a, round_b = next_round(a), next_round(b)
        (_, name_a, _), (_, name_b, _) = round_a.events[0], round_b.events[0]
        assert deal_seeds(a, name_a) != deal_seeds(b, name_b)  # two leagues, two secrets
        assert event_secret(a, name_a) == derived_secret(secret, "league-round", 1, 1, 1).hex()
        # Planned again from the database (a rerun, a resume): the same boards.
        spec = round_spec(a, a.league(), round_a, 1)
        assert [p.deal_seed for p in a.plan(spec).plays] == deal_seeds(a, name_a)


def test_a_public_seed_or_an_old_league_is_said_to_be_public(tmp_path: Path) -> None:
    with league(tmp_path, "pub", seed=7) as store:
        assert store.secret() is None and store.league().seed == 7
        (_, name, _) = next_round(store).events[0]
        assert event_secret(store, name) is None
    path = tmp_path / "old.sqlite"
    league(tmp_path, "old").close()
    with sqlite3.connect(path) as conn:  # as a league of schema version 1 was written
        conn.execute("ALTER TABLE league DROP COLUMN secret")
        spec = conn.execute("SELECT spec FROM league").fetchone()[0]
        conn.execute("UPDATE league SET spec = ?", (spec.replace('"seed":null', '"seed":0'),))
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'league_schema_version'")
    with LeagueStore(path) as store:
        assert store.secret() is None and store.league().seed == 0
