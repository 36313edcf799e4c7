"""Tests for leaderboards and the ``arena ratings`` / ``arena leaderboard`` commands.

The events are synthetic (see ``synthetic_events``): hands drawn from known bot strengths, so
the fitted order must be the true order.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from synthetic_events import MakeEvent, make_spec
from typer.testing import CliRunner

from arena.cli.main import app
from arena.tournament import leaderboard as leaderboard_module
from arena.tournament.leaderboard import (
    FORMAT,
    Leaders,
    build_leaderboard,
    leaders_text,
)
from arena.tournament.leaderboard_render import (
    rating_text,
    render_html,
    render_json,
    render_markdown,
    write_leaderboard,
)
from arena.tournament.model import plan_event
from arena.tournament.store import EventStore, FailureRow, HandRow

STRENGTHS = {"ace": 240.0, "king": 120.0, "queen": 0.0, "jack": -120.0, "ten": -240.0}
TRUE_ORDER = list(STRENGTHS)
CREATED = "2026-01-02T03:04:05Z"
runner = CliRunner()


def table_order(output: str, bots: list[str]) -> list[str]:
    """Returns the bots in the order their rows appear in a printed table."""
    lines = output.splitlines()
    row = {
        bot: next(i for i, line in enumerate(lines) if re.search(rf"│\s*{bot}\s*│", line))
        for bot in bots
    }
    return sorted(bots, key=row.__getitem__)


def test_the_fit_ranks_known_strengths(make_event: MakeEvent) -> None:
    event = make_event(STRENGTHS, cycles=2, boards_per_round=8)
    with EventStore(event.path) as store:
        board = build_leaderboard(store)
    assert [r.bot for r in board.ratings] == TRUE_ORDER
    assert [r.rank for r in board.ratings] == [1, 2, 3, 4, 5]
    assert board.hands == 160 and board.boards_done == board.boards_total == 80
    assert abs(sum(r.rating for r in board.ratings)) < 0.5  # mean 0
    for r in board.ratings:
        assert r.low < r.rating < r.high and r.stderr > 0 and r.hands == 128
        assert r.margin is not None and r.margin_stderr is not None
    margins = [r.margin for r in board.ratings]
    assert margins == sorted(margins, reverse=True)
    assert [r.los_next for r in board.ratings][-1] is None
    assert all(r.los_next is not None and r.los_next > 0.5 for r in board.ratings[:-1])
    assert board.duplicate is not None and board.duplicate.pairs == 80


def test_ratings_cli_prints_the_table_in_rating_order(make_event: MakeEvent) -> None:
    event = make_event(STRENGTHS, cycles=2, boards_per_round=8)
    result = runner.invoke(app, ["ratings", str(event.path)])
    assert result.exit_code == 0, result.output
    assert table_order(result.output, TRUE_ORDER) == TRUE_ORDER
    for heading in ("hand-Elo [95%]", "LOS vs next", "pts/hand", "hands"):
        assert heading in result.output
    with EventStore(event.path) as store:
        shown = build_leaderboard(store)
    for r in shown.ratings:  # the interval's own ends, not a half-width about the rating
        assert rating_text(r.rating, r.low, r.high) in result.output
    assert "ρ̂ =" in result.output
    anchored = runner.invoke(app, ["ratings", str(event.path), "--anchor", "queen"])
    assert anchored.exit_code == 0
    assert re.search(r"│\s*queen\s*│\s*\+0\.0 \[\+0, \+0\]", anchored.output), anchored.output


def test_ratings_cli_errors(make_event: MakeEvent, tmp_path: Path) -> None:
    event = make_event(STRENGTHS, fraction=0.0)
    empty = runner.invoke(app, ["ratings", str(event.path)])
    assert empty.exit_code == 1 and "no hands recorded yet" in empty.output
    spec = make_spec(TRUE_ORDER).model_copy(update={"name": "second"})
    with EventStore(event.path) as store:
        store.create_event(spec, plan_event(spec))
    several = runner.invoke(app, ["ratings", str(event.path)])
    assert several.exit_code == 2 and "holds 2 events (synthetic, second); name one" in (
        several.output
    )
    unknown = runner.invoke(app, ["ratings", str(event.path), "--event", "third"])
    assert unknown.exit_code == 2 and "no event 'third'" in unknown.output
    missing = runner.invoke(app, ["ratings", str(tmp_path / "nope.db")])
    assert missing.exit_code != 0
    not_a_db = tmp_path / "plain.txt"
    not_a_db.write_text("hello")
    refused = runner.invoke(app, ["ratings", str(not_a_db)])
    assert refused.exit_code == 2 and "not an event database" in refused.output


def test_leaderboard_files_are_deterministic(make_event: MakeEvent, tmp_path: Path) -> None:
    event = make_event(STRENGTHS, cycles=2, boards_per_round=8)
    copy = tmp_path / "copy.db"
    shutil.copy(event.path, copy)
    written = []
    for db, out in ((event.path, "one"), (event.path, "two"), (copy, "three")):
        with EventStore(db) as store:
            written.append(write_leaderboard(build_leaderboard(store), tmp_path / out))
    names = [tuple(p.name for p in paths) for paths in written]
    assert names == [("synthetic.md", "synthetic.json", "synthetic.html")] * 3
    for first, *others in zip(*written, strict=True):
        assert all(first.read_bytes() == other.read_bytes() for other in others)
        stamps = set(re.findall(r"\d{4}-\d\d-\d\dT[\d:]+Z?", first.read_text(encoding="utf-8")))
        assert stamps == {CREATED}  # the event's own timestamp and no other


def test_html_is_self_contained_with_one_error_bar_per_bot(make_event: MakeEvent) -> None:
    event = make_event(STRENGTHS, cycles=2, boards_per_round=8)
    with EventStore(event.path) as store:
        board = build_leaderboard(store)
    page = render_html(board)
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 1
    assert page.count('class="errorbar"') == len(TRUE_ORDER)
    bars = re.findall(r'<g class="errorbar" data-bot="([^"]+)">', page)
    assert bars == TRUE_ORDER
    for r in board.ratings:
        assert f"{r.bot}: {r.rating:+.1f} ({r.low:+.1f} … {r.high:+.1f})" in page
        assert f">{rating_text(r.rating, r.low, r.high)}</text>" in page
    for forbidden in ("<script", "https://", " src=", "href=", "@import", "url("):
        assert forbidden not in page
    assert re.findall(r"https?://[^\"\s]+", page) == ["http://www.w3.org/2000/svg"]
    assert "<style>" in page


def test_json_and_markdown_carry_the_same_numbers(make_event: MakeEvent) -> None:
    event = make_event(STRENGTHS, cycles=2, boards_per_round=8)
    with EventStore(event.path) as store:
        board = build_leaderboard(store)
    data = json.loads(render_json(board))
    assert data["format"] == FORMAT and data["version"] == 1
    assert data["event"]["name"] == "synthetic" and data["event"]["created"] == CREATED
    assert data["progress"] == {
        "plays_done": 160,
        "plays_total": 160,
        "boards_done": 80,
        "boards_total": 80,
        "hands": 160,
    }
    rows = data["ratings"]["rows"]
    assert [r["bot"] for r in rows] == TRUE_ORDER
    markdown = render_markdown(board)
    for r in rows:
        ci = f"{r['ci_low']:+.1f} … {r['ci_high']:+.1f}"
        line = f"| {r['rank']} | {r['bot']} | {r['rating']:+.1f} | {ci} | {r['stderr']:.1f} |"
        assert line in markdown
    assert "ρ̂ = corr(d⁽⁰⁾, d⁽¹⁾)" in markdown
    assert markdown.rstrip().endswith("do not edit.")


def test_leaderboard_cli_writes_three_files(make_event: MakeEvent, tmp_path: Path) -> None:
    event = make_event(STRENGTHS, cycles=2, boards_per_round=8)
    out = tmp_path / "boards"
    result = runner.invoke(app, ["leaderboard", str(event.path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    expected = [out / f"synthetic{suffix}" for suffix in (".md", ".json", ".html")]
    assert result.output.split() == [str(p) for p in expected]
    assert all(p.is_file() for p in expected)
    assert not list(out.glob("*.tmp"))


def test_a_partial_event_has_a_leaderboard_too(make_event: MakeEvent, tmp_path: Path) -> None:
    event = make_event(STRENGTHS, fraction=0.0)
    with EventStore(event.path) as store:
        empty = build_leaderboard(store)
    assert empty.ratings == () and empty.ratings_note == "no hands recorded yet"
    assert "No ratings: no hands recorded yet." in render_markdown(empty)
    assert "<svg" not in render_html(empty)
    write_leaderboard(empty, tmp_path / "out")
    half = make_event(STRENGTHS, fraction=0.5, db="half.db", cycles=2, boards_per_round=8)
    with EventStore(half.path) as store:
        board = build_leaderboard(store)
    assert board.plays_done == 80 and board.plays_total == 160 and board.status == "running"
    assert "80/160 plays" in render_markdown(board)


def test_fillers_are_rated_but_hidden(make_event: MakeEvent) -> None:
    strengths = {f"b{i}": 20.0 * i for i in range(10)} | {"f1": 0.0, "f2": 0.0}
    event = make_event(strengths, fillers=["f1", "f2"])
    with EventStore(event.path) as store:
        assert store.fillers() == ("f1", "f2")
        board = build_leaderboard(store)
    assert sorted(r.bot for r in board.ratings) == sorted(f"b{i}" for i in range(10))
    assert [r.rank for r in board.ratings] == list(range(1, 11))
    assert "f1" not in render_markdown(board) and "f1" not in board.bots


def test_turnier_shows_victory_point_standings(make_event: MakeEvent) -> None:
    bots = {"ace": 150.0, "king": 50.0, "queen": -50.0, "jack": -150.0}
    event = make_event(bots, schedule="turnier", boards_per_round=2)
    with EventStore(event.path) as store:
        hands = store.hands()
        board = build_leaderboard(store)
    expected = dict.fromkeys(bots, 0)
    for hand in hands:
        for seat, bot in enumerate(hand.seats):
            expected[bot] += hand.row.victory_points[seat % 2]
    assert {s.bot: s.victory_points for s in board.standings} == expected
    assert all(s.hands == 36 for s in board.standings)
    points = [(s.victory_points, s.tichu_points) for s in board.standings]
    assert points == sorted(points, reverse=True)
    assert "## Victory points" in render_markdown(board)
    assert "Victory points</h2>" in render_html(board)


def test_fixed_partnerships_show_teams_not_ratings(make_event: MakeEvent) -> None:
    bots = {"north": 100.0, "east": 0.0, "south": 100.0, "west": 0.0}
    event = make_event(bots, schedule="fixed", cycles=2, boards_per_round=10)
    with EventStore(event.path) as store:
        board = build_leaderboard(store)
    assert board.ratings == ()
    assert board.ratings_note is not None and "team sums" in board.ratings_note
    teams = {t.players: t for t in board.teams}
    assert set(teams) == {("north", "south"), ("east", "west")}
    ns, ew = teams["north", "south"], teams["east", "west"]
    assert ns.hands == ew.hands == 40
    assert (ns.won, ns.tied, ns.lost) == (ew.lost, ew.tied, ew.won)
    assert ns.margin == -ew.margin and ns.margin > 0
    result = runner.invoke(app, ["ratings", str(event.path)])
    assert result.exit_code == 0 and "partnerships" in result.output
    assert "north & south" in result.output


@pytest.mark.parametrize("level", [0.0, 1.0])
def test_confidence_level_is_checked(make_event: MakeEvent, level: float) -> None:
    event = make_event(STRENGTHS, fraction=0.0)
    with EventStore(event.path) as store, pytest.raises(ValueError, match="confidence level"):
        build_leaderboard(store, level=level)


def test_team_margin_interval_is_clustered_by_board() -> None:
    """Board means 20, 0, 20: s.d. 11.547, s.e. 6.667, 95% half-width 13.07."""
    from arena.tournament.leaderboard import _clustered_ci

    boards = {"1": [10.0, 30.0], "2": [-10.0, 10.0], "3": [40.0, 0.0]}
    assert abs(_clustered_ci(boards) - 13.0667) < 1e-3
    assert _clustered_ci({"1": [5.0, 7.0]}) == 0.0


def test_every_format_shows_failures_per_bot_by_kind_with_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = make_spec(["ace", "king", "queen", "jack"], boards_per_round=2)
    plan = plan_event(spec)
    monkeypatch.chdir(tmp_path)  # log paths as the run saw them, beside its database
    path = Path("failures.db")
    with EventStore(path) as store:
        event_id = store.create_event(spec, plan, created=CREATED)
        for k, stored in enumerate(store.pending_plays(event_id)):
            seat = stored.play.seats.index("king")
            failures = [FailureRow(seat, "exception", "KeyError: 'x'", f"logs/p{k}/king.log")]
            if k == 0:
                failures.append(FailureRow(seat, "timeout", "no answer within 1000 ms"))
            row = HandRow(
                hand=0,
                score_a=50 + 10 * k,
                score_b=50 - 10 * k,
                card_points=(50 + 10 * k, 50 - 10 * k),
                bets=(0, 0),
                out=(0, 1, 2),
                failures=tuple(failures),
            )
            store.record_play(stored.id, [row], "r.json")
        board = build_leaderboard(store)
    plays = len(plan.plays)
    (row,) = board.failures
    assert (row.bot, row.total, row.hands, row.log) == (
        "king",
        plays + 1,
        plays,
        "logs/p0/king.log",
    )
    assert row.kinds == (("exception", plays), ("timeout", 1))
    assert (
        f"| king | {plays + 1} | exception {plays}, timeout 1 | {plays} | `logs/p0/king.log` |"
        in (render_markdown(board))
    )
    data = json.loads(render_json(board))
    assert data["failures"] == [
        {
            "bot": "king",
            "total": plays + 1,
            "hands": plays,
            "kinds": {"exception": plays, "timeout": 1},
            "log": "logs/p0/king.log",
        }
    ]
    page = render_html(board)
    assert f"exception {plays}, timeout 1" in page and "<code>logs/p0/king.log</code>" in page


def test_the_progress_lines_leaders_are_fitted_off_the_callers_thread_and_spaced(
    make_event: MakeEvent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fit of the leaders never runs on the thread that asks for them (the loop that
    referees the local tables), never two at once, and waits share-times its length."""
    event = make_event(STRENGTHS, cycles=2, boards_per_round=8)
    with EventStore(event.path) as store:
        expected = leaders_text(store, event.spec.name)
    threads: list[str] = []
    release = threading.Event()
    real = leaderboard_module.fit_ratings

    def slow_fit(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        assert release.wait(60), "the test never let the fit end"
        return real(*args, **kwargs)

    monkeypatch.setattr(leaderboard_module, "fit_ratings", slow_fit)
    leaders = Leaders(event.path, event.spec.name, every_s=0.0, share=0.001)
    started = time.monotonic()
    assert leaders.text() == ""  # at once, with no fit yet: the caller does not wait
    assert leaders.text() == "" and time.monotonic() - started < 5
    release.set()
    leaders.wait(60)
    assert threads == ["leaders"] and leaders.fits == 1  # one fit, in its own thread
    assert expected and leaders.text() == expected
    assert leaders.fits == 1 and threads == ["leaders"]  # the next is not due yet
