"""Settings a command drops or adjusts are said aloud (issue 23, finding 7)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from arena.cli import league as league_cli
from arena.cli.main import app
from arena.kit.scaffold import new_bot
from arena.tournament.league.season import next_round, submit
from arena.tournament.league.spec import parse_league
from arena.tournament.league.store import LeagueStore
from arena.tournament.model import parse_event, plan_event
from arena.tournament.store import EventStore, HandRow

LEAGUE = {"name": "autumn", "season_rounds": 8, "round": {"boards_per_round": 1}}


def test_a_league_round_with_fewer_divisions_than_asked_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = io.StringIO()
    monkeypatch.setattr(league_cli, "console", Console(file=out, width=200))
    spec = parse_league({**LEAGUE, "divisions": {"count": 2, "promote": 1}})
    with LeagueStore(tmp_path / "l.sqlite", create=True) as store:
        store.init_league(spec)
        for k in range(5):
            submit(store, new_bot(tmp_path, f"b{k}"))
        round_ = next_round(store)
        league_cli._say_divisions(store, round_)
    assert "asks for 2 divisions; with 5 active bots (at least 4 a division) round 1 plays 1" in (
        out.getvalue()
    )


def test_closing_a_season_early_says_how_early(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite"
    with LeagueStore(db, create=True) as store:
        store.init_league(parse_league(LEAGUE))
    result = CliRunner().invoke(app, ["league", "season", "close", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "closing season 1 after 0 of its 8 rounds" in result.output


def test_several_events_name_the_option_that_picks_one(tmp_path: Path) -> None:
    db = tmp_path / "e.sqlite"
    with EventStore(db) as store:
        for name in ("first", "second"):
            bots = [{"bot": "random", "name": f"r{i}"} for i in range(4)]
            spec = parse_event({"name": name, "seed": 1, "bots": bots})
            store.create_event(spec, plan_event(spec))
    result = CliRunner().invoke(app, ["ratings", str(db)])
    assert "name one with --event NAME" in " ".join(result.output.split())


def test_a_leaderboard_replacing_another_events_of_the_same_name_says_so(tmp_path: Path) -> None:
    """The same event name run into two databases: the second leaderboard replaces the
    first's files, and says so."""
    bots = [{"bot": "random", "name": f"r{i}"} for i in range(4)]
    for k, db in enumerate((tmp_path / "a.sqlite", tmp_path / "b.sqlite")):
        with EventStore(db) as store:
            spec = parse_event({"name": "same", "seed": 1, "bots": bots})
            event_id = store.create_event(
                spec, plan_event(spec), created=f"2026-12-0{k + 1}T00:00:00Z"
            )
            played = store.pending_plays(event_id)[0]  # one hand: a table to write
            hand = HandRow(hand=0, score_a=60, score_b=40, card_points=(60, 40), bets=(0, 0))
            store.record_play(played.id, [hand])
    out = tmp_path / "boards"
    first = CliRunner().invoke(app, ["leaderboard", str(tmp_path / "a.sqlite"), "--out", str(out)])
    assert first.exit_code == 0 and "note:" not in first.output, first.output
    again = CliRunner().invoke(app, ["leaderboard", str(tmp_path / "a.sqlite"), "--out", str(out)])
    assert "note:" not in again.output, again.output  # the same event: nothing to say
    other = CliRunner().invoke(app, ["leaderboard", str(tmp_path / "b.sqlite"), "--out", str(out)])
    assert other.exit_code == 0, other.output
    assert "held another event of this name (created 2026-12-01T00:00:00Z" in other.output
