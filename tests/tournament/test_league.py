"""A league season end to end: real bot processes over gRPC, SQLite, kill -9 and resume."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.ratings import HandOutcome, fit_ratings
from arena.tournament.league.render import league_board, render_html, render_json
from arena.tournament.league.season import (
    LeagueError,
    bot_digest,
    close_season,
    combine,
    history,
    next_round,
    play_round,
    promote_relegate,
    round_spec,
    season_complete,
    season_table,
    split_divisions,
    submit,
    table_json,
)
from arena.tournament.league.spec import LeagueFileError, load_league, parse_league
from arena.tournament.league.store import LeagueStore
from arena.tournament.store import StoreError
from tests.helpers import ROOT

pytestmark = pytest.mark.slow

ARENA = [sys.executable, "-m", "arena.cli.main"]

LEAGUE = """\
name = "autumn"
season_rounds = 4
seed = 3
carry_sd = 50

[round]
boards_per_round = 1
rotations = 2
jobs = 2

[round.time_control]
decision_ms = 10000
"""

BOT = 'from example_bots.{module}.bot import {cls}\n\n__all__ = ["{cls}"]\n'
MANIFEST = (
    'name = "{name}"\ncommand = ["{{python}}", "-m", "sdk", "bot:{cls}"]\nworkdir = "."\n'
    "startup_timeout_s = 120\n"  # generous: the test machine may be loaded
)
KINDS = {"random": "RandomBot", "greedy": "GreedyBot"}


def make_bot(parent: Path, name: str, kind: str) -> Path:
    """A self-contained bot folder: bot.py re-exports an example bot, bot.toml starts it."""
    folder = parent / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(BOT.format(module=kind, cls=KINDS[kind]))
    (folder / "bot.toml").write_text(MANIFEST.format(name=name, cls=KINDS[kind]))
    return folder


def arena_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GRPC_")}


def arena(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Runs the CLI with the gRPC settings it makes itself (none inherited from this test)."""
    return subprocess.run(
        [*ARENA, *args],
        cwd=ROOT,
        env=arena_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def db_hands(db: Path) -> list[tuple[str, int, int, int, int]]:
    """Every stored hand as (event, play ordinal, hand, score A, score B), sorted."""
    with sqlite3.connect(db, timeout=5) as conn:
        rows = conn.execute(
            "SELECT e.name, p.ordinal, h.hand_no, h.score_a, h.score_b FROM hands h"
            " JOIN plays p ON p.id = h.play_id JOIN events e ON e.id = p.event_id"
            " ORDER BY e.name, p.ordinal, h.hand_no"
        ).fetchall()
    return [tuple(r) for r in rows]


def plays_done(db: Path, event: str) -> int:
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            (count,) = conn.execute(
                "SELECT COUNT(*) FROM plays JOIN events ON events.id = plays.event_id"
                " WHERE events.name = ? AND plays.status = 'done'",
                (event,),
            ).fetchone()
            return int(count)
    except sqlite3.OperationalError:
        return 0


def outcomes_by_hand(db: Path) -> list[HandOutcome]:
    """The season's hands read straight from the tables, as rating input."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT e.name, h.board, h.hand_no, h.seat_n, h.seat_e, h.seat_s, h.seat_w,"
            " h.score_a, h.score_b, h.rotation FROM hands h"
            " JOIN plays p ON p.id = h.play_id JOIN events e ON e.id = p.event_id"
            " JOIN league_round_events r ON r.event_id = e.id"
            " JOIN league_rounds lr ON lr.id = r.round_id WHERE lr.season = 1"
            " ORDER BY lr.number, p.ordinal, h.hand_no"
        ).fetchall()
    return [
        HandOutcome(
            board=f"{event}:{board}" if hand == 0 else f"{event}:{board}.{hand}",
            seats=(n, e, s, w),
            score_a=a,
            score_b=b,
            rotation=rotation,
        )
        for event, board, hand, n, e, s, w, a, b, rotation in rows
    ]


def test_a_small_season_with_a_late_bot_a_new_version_a_retirement_and_a_kill(
    tmp_path: Path,
) -> None:
    """6 bots, 4 rounds: echo retires after round 1, foxtrot joins and bravo gets v2 after
    round 2, the runner is killed (-9) in round 3 and resumed; nothing is lost or doubled."""
    bots = tmp_path / "bots"
    kinds = {
        "alpha": "random",
        "bravo": "greedy",
        "charlie": "random",
        "delta": "greedy",
        "echo": "random",
    }
    folders = {name: make_bot(bots, name, kind) for name, kind in kinds.items()}
    league_file = tmp_path / "autumn.toml"
    league_file.write_text(LEAGUE)
    db = tmp_path / "autumn.sqlite"

    store = LeagueStore(db, create=True)
    store.init_league(load_league(league_file))
    for name, folder in folders.items():
        submit(store, folder, owner="ann" if name < "c" else "ben")
    assert not submit(store, folders["alpha"]).new  # same content: still version 1

    first = next_round(store)
    assert play_round(store, first).finished
    assert store.retire("echo")
    second = next_round(store)
    assert play_round(store, second).finished

    foxtrot = make_bot(bots, "foxtrot", "greedy")
    submit(store, foxtrot, owner="cy")
    bravo_v1 = store.latest("bravo")
    (folders["bravo"] / "bot.py").write_text(BOT.format(module="random", cls="RandomBot"))
    (folders["bravo"] / "bot.toml").write_text(MANIFEST.format(name="bravo", cls="RandomBot"))
    bravo_v2 = submit(store, folders["bravo"], owner="ann").version
    (folders["bravo"] / "bot.py").write_text("raise SystemExit('edited after submission')\n")
    store.close()

    # Round 3 and 4 in a real `arena league run`, killed with its bots in round 3.
    out = tmp_path / "boards"
    command = ["league", "run", "--db", str(db), "--rounds", "2", "--out", str(out)]
    proc = subprocess.Popen(
        [*ARENA, *command, "--quiet"],
        cwd=ROOT,
        env=arena_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while plays_done(db, "autumn.s1.r3") < 3 and proc.poll() is None:
        assert time.monotonic() < deadline, "round 3 did not start"
        time.sleep(0.05)
    assert proc.poll() is None, "round 3 finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    before = db_hands(db)
    partial = plays_done(db, "autumn.s1.r3")
    assert 3 <= partial < 10
    resumed = arena(*command)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "season 1 round 3: 5 bots, 10 plays" in resumed.stdout
    assert "season 1 round 4" in resumed.stdout
    after = db_hands(db)
    assert set(before) <= set(after)  # what was recorded before the kill is untouched

    with LeagueStore(db) as store:
        rounds = store.rounds(1)
        assert [r.finished for r in rounds] == [True] * 4
        versions = {v.id: v.entry for v in store.versions()}
        fields = [sorted(versions[v] for v, _ in r.entries) for r in rounds]
        assert fields[0] == ["alpha v1", "bravo v1", "charlie v1", "delta v1", "echo v1"]
        assert fields[1] == ["alpha v1", "bravo v1", "charlie v1", "delta v1"]
        assert (
            fields[2]
            == fields[3]
            == [
                "alpha v1",
                "bravo v2",
                "charlie v1",
                "delta v1",
                "foxtrot v1",
            ]
        )
        # Whist designs for the field: Wh(5) 5 rounds, Wh(4) 3 rounds; 1 board, 2 rotations.
        plays = {r.number: len(store.plays(r.events[0][1])) for r in rounds}
        assert plays == {1: 10, 2: 6, 3: 10, 4: 10}
        # Every planned play is recorded with exactly one hand: none lost, none doubled.
        assert len(after) == len(set(after)) == 36
        with sqlite3.connect(db) as conn:
            counts = conn.execute(
                "SELECT p.status, COUNT(h.id) FROM plays p LEFT JOIN hands h ON h.play_id = p.id"
                " GROUP BY p.id"
            ).fetchall()
        assert set(counts) == {("done", 1)}

        # Version history: bravo v2 is its own entity, linked to v1; the copy is frozen.
        assert bravo_v1 is not None
        assert [v.number for v in store.versions("bravo")] == [1, 2]
        assert bravo_v2.predecessor == bravo_v1.id
        assert bravo_v2.hash != bravo_v1.hash and bravo_v2.owner == "ann"
        copy = store.resolve(bravo_v2.manifest)
        assert bot_digest(copy.parent, copy) == bravo_v2.hash
        assert "RandomBot" in (copy.parent / "bot.py").read_text()

        table = season_table(store, 1)
        (rows,) = table.divisions.values()
        by_entry = {row.entry: row for row in rows}
        assert {e: r.hands for e, r in by_entry.items()} == {
            "alpha v1": 30,
            "bravo v1": 14,
            "bravo v2": 16,
            "charlie v1": 30,
            "delta v1": 30,
            "echo v1": 8,
            "foxtrot v1": 16,
        }
        assert by_entry["bravo v1"].status == "superseded"
        assert by_entry["echo v1"].status == "retired"
        assert by_entry["bravo v2"].predecessor == "bravo v1"
        assert [r.rank for r in rows] == list(range(1, 8))
        assert all(r.failures == {} for r in rows)
        assert sum((r.points_per_hand or 0.0) * r.hands for r in rows) == pytest.approx(0.0)

        # The pooled fit equals a fit of the same hands read from the database by hand.
        manual = fit_ratings(outcomes_by_hand(db))
        assert set(manual.bots) == set(by_entry)
        for entry, row in by_entry.items():
            assert row.fit == pytest.approx(manual.rating(entry), abs=1e-9)
            assert row.fit_sd == pytest.approx(manual.stderr(entry), abs=1e-9)
            assert row.rating == row.fit  # no carried ratings in season 1

        # Movement: ranks gained since round 3.
        third = {r.entry: r.rank for r in season_table(store, 1, 3).divisions[1]}
        assert {r.entry: r.movement for r in rows} == {
            e: third[e] - by_entry[e].rank for e in by_entry
        }
        bravo = history(store, "bravo")
        assert sorted((s, n, r.entry) for s, n, r in bravo) == [
            (1, 1, "bravo v1"),
            (1, 2, "bravo v1"),
            (1, 3, "bravo v1"),
            (1, 3, "bravo v2"),
            (1, 4, "bravo v1"),
            (1, 4, "bravo v2"),
        ]

        # The leaderboards are regenerated from the database alone, byte for byte.
        board = league_board(store)
        assert (out / "autumn.json").read_text() == render_json(board)
        assert (out / "autumn.html").read_text() == render_html(board)
        assert board["table"] == table_json(table)
        assert render_html(board).count("<svg") == 6  # one chart per bot
        assert {v["entry"]: v["hash"] for v in board["versions"]}["bravo v2"] == bravo_v2.hash

        # Closing freezes the table; season 2 starts from the active versions' ratings.
        assert season_complete(store)
        with pytest.raises(LeagueError, match="played its 4 rounds"):
            next_round(store)
        close_season(store)
        assert not season_complete(store)
        assert store.seasons()[0].final_table == table_json(table)
        fresh = season_table(store, 2)
        carried = {r.entry: r for r in fresh.divisions[1]}
        assert set(carried) == {"alpha v1", "bravo v2", "charlie v1", "delta v1", "foxtrot v1"}
        for entry, row in carried.items():
            final = by_entry[entry]
            assert row.hands == 0 and row.rating == final.rating
            assert row.sd == pytest.approx(math.hypot(final.sd or 0.0, 50.0))
    frozen = arena("league", "standings", "--db", str(db), "--season", "1")
    assert frozen.returncode == 0, frozen.stderr
    assert "closed, frozen table" in frozen.stdout and "bravo (v2)" in frozen.stdout


# ---------------------------------------------------------------------------------------------
# Pieces, without playing


def test_league_file_errors_name_the_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('name = "x"\nseason_round = 3\n[round]\nrotations = 3\nseed = 1\n')
    with pytest.raises(LeagueFileError) as caught:
        load_league(path)
    assert "season_round: unknown field" in str(caught.value)
    path.write_text('name = "x"\n[round]\nrotations = 3\nseed = 1\n')
    with pytest.raises(LeagueFileError) as caught:
        load_league(path)
    assert "round.seed: set by the league" in str(caught.value)
    with pytest.raises(LeagueFileError) as caught:
        parse_league({"name": "x", "round": {"rotations": 3, "boards_per_round": 0}})
    text = str(caught.value)
    assert "round.rotations" in text and "round.boards_per_round" in text
    with pytest.raises(LeagueFileError, match="round robin"):
        parse_league({"name": "x", "round": {"schedule": "gauntlet"}})
    with pytest.raises(LeagueFileError, match=r"gate\.required"):
        parse_league({"name": "x", "gate": {"required": "yes"}})
    example = load_league(ROOT / "docs" / "league-example.toml")
    assert example.divisions is not None and example.round["boards_per_round"] == 4
    assert not example.gate.required
    spec = parse_league({"name": "x", "round": {"policy": {"max_strikes": 1}}})
    assert spec.round_event("e", [{"bot": "random", "name": f"b{k}"} for k in range(4)], 1, [])


def test_submit_copies_hashes_and_refuses_what_it_cannot_keep(tmp_path: Path) -> None:
    league = tmp_path / "l.toml"
    league.write_text(LEAGUE)
    with LeagueStore(tmp_path / "l.sqlite", create=True) as store:
        store.init_league(load_league(league))
        folder = make_bot(tmp_path, "alpha", "random")
        (folder / "__pycache__").mkdir()
        (folder / "__pycache__" / "bot.cpython.pyc").write_bytes(b"cache")
        first = submit(store, folder / "bot.toml", owner="ann").version
        assert first.entry == "alpha v1" and first.hash == bot_digest(folder, folder / "bot.toml")
        assert not (store.resolve(first.manifest).parent / "__pycache__").exists()
        (folder / "notes.txt").write_text("v2")
        with pytest.raises(StoreError, match="belongs to 'ann'"):
            submit(store, folder, owner="bob")
        second = submit(store, folder).version
        assert (second.number, second.owner, second.predecessor) == (2, "ann", first.id)
        (folder / "notes.txt").unlink()
        with pytest.raises(StoreError, match="submitted before"):
            submit(store, folder)
        outside = make_bot(tmp_path, "beta", "random")
        (outside / "bot.toml").write_text(
            (outside / "bot.toml").read_text().replace('workdir = "."', 'workdir = ".."')
        )
        with pytest.raises(LeagueError, match="self-contained"):
            submit(store, outside)
        with pytest.raises(LeagueError, match="at least 4"):
            next_round(store)


def test_a_built_in_bot_joins_a_league_by_name_or_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 23, finding 4: ``league submit greedy`` said "does not exist", and
    ``league submit example_bots/greedy`` that its workdir leaves the bot's folder."""
    league = tmp_path / "l.toml"
    league.write_text(LEAGUE)
    with LeagueStore(tmp_path / "l.sqlite", create=True) as store:
        store.init_league(load_league(league))
        first = submit(store, "greedy", owner="arena")
        assert first.new and first.version.manifest == "builtin:greedy"
        assert first.version.hash == bot_digest(
            ROOT / "example_bots" / "greedy", ROOT / "example_bots" / "greedy" / "bot.toml"
        )
        monkeypatch.chdir(ROOT)  # the README's relative path, from the repository
        again = submit(store, Path("example_bots/greedy"))
        assert not again.new and again.version.id == first.version.id
        assert not (store.bot_store / "greedy").exists()  # part of the arena: not copied
        for k in range(3):
            submit(store, make_bot(tmp_path, f"own{k}", "random"))
        round_ = next_round(store)
        event = round_spec(store, store.league(), round_, round_.events[0][0])
        greedy = next(b for b in event.bots if b.display_name == "greedy v1")
        assert greedy.builtin and greedy.bot == "greedy"
        # an owner's bots take turns as one bot (issue 45): the round's event says whose
        assert greedy.owner == "arena"
        assert {b.owner for b in event.bots if b is not greedy} == {None}
        assert submit(store, "minimal").version.manifest == "builtin:minimal"


def test_rounds_are_split_into_divisions_by_rating(tmp_path: Path) -> None:
    league = tmp_path / "d.toml"
    league.write_text(LEAGUE + "\n[divisions]\ncount = 2\npromote = 1\n")
    with LeagueStore(tmp_path / "d.sqlite", create=True) as store:
        store.init_league(load_league(league))
        for k in range(9):
            submit(store, make_bot(tmp_path, f"b{k}", "random"))
        round_ = next_round(store)
        assert [name for _, name, _ in round_.events] == ["autumn.s1.r1.d1", "autumn.s1.r1.d2"]
        sizes = [sum(1 for _, d in round_.entries if d == division) for division in (1, 2)]
        assert sizes == [5, 4]
        assert {b.name: b.division for b in store.bots()}["b0"] == 1
        assert (
            len(store.plays("autumn.s1.r1.d1")) == 10 and len(store.plays("autumn.s1.r1.d2")) == 6
        )
        assert next_round(store).id == round_.id  # unfinished: the same round again


def test_division_arithmetic() -> None:
    assert split_divisions([f"b{k}" for k in range(9)], 2) == {
        **{f"b{k}": 1 for k in range(5)},
        **{f"b{k}": 2 for k in range(5, 9)},
    }
    assert set(split_divisions([f"b{k}" for k in range(7)], 3).values()) == {1}
    moved = promote_relegate({1: ("a", "b", "c", "d"), 2: ("e", "f", "g", "h")}, 1)
    assert moved == {"a": 1, "b": 1, "c": 1, "d": 2, "e": 1, "f": 2, "g": 2, "h": 2}
    assert promote_relegate({1: ("a", "b", "c", "d")}, 2) == dict.fromkeys("abcd", 1)


def test_carried_rating_is_combined_by_precision() -> None:
    assert combine((100.0, 30.0), None) == (100.0, 30.0)
    assert combine(None, (50.0, 40.0)) == (50.0, 40.0)
    rating, sd = combine((100.0, 30.0), (0.0, 40.0)) or (0.0, 0.0)
    assert rating == pytest.approx(64.0) and sd == pytest.approx(24.0)
    assert json.loads(json.dumps(combine(None, None))) is None


@pytest.mark.parametrize("asked", ["--gate", "required = true"])
def test_the_gate_refuses_a_version_that_regresses(tmp_path: Path, asked: str) -> None:
    """greedy v1, then random content as v2, gated by ``--gate`` or by a league whose
    ``[gate]`` requires it (submitted without ``--gate``): H0 accepted, v2 refused (exit 1).
    At the ``[gate]`` defaults (2,000 boards in rounds of 50), where issue 44 found no board
    pair before 2,000 plays: the verdict comes in a few dozen boards."""
    league = tmp_path / "g.toml"
    required = "required = true\n" if asked == "required = true" else ""
    # a decision time ten times the default: no default answer on a loaded machine
    league.write_text(f'name = "g"\n[gate]\n{required}decision_ms = 10000\n')
    db = tmp_path / "g.sqlite"
    with LeagueStore(db, create=True) as store:
        store.init_league(load_league(league))
        folder = make_bot(tmp_path, "gamma", "greedy")
        submit(store, folder)
    make_bot(tmp_path, "gamma", "random")
    flag = ["--gate"] if asked == "--gate" else []
    done = arena("league", "submit", str(folder), "--db", str(db), *flag)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the gate refused gamma" in done.stdout and "H0 accepted" in done.stdout
    boards = re.search(r"; (\d+) boards, pentanomial", done.stdout)
    assert boards is not None and int(boards.group(1)) <= 60, done.stdout
    with LeagueStore(db) as store:
        assert [v.number for v in store.versions("gamma")] == [1]
        assert len(list(store.bot_store.joinpath("gamma").iterdir())) == 1


def test_cli_errors_are_one_line_without_a_traceback(tmp_path: Path) -> None:
    league = tmp_path / "x.toml"
    league.write_text('name = "x"\n[round]\nrotations = 3\n')
    db = tmp_path / "x.sqlite"
    bad = arena("league", "init", str(league), "--db", str(db))
    assert bad.returncode == 2 and "round.rotations" in bad.stdout
    assert "Traceback" not in bad.stdout + bad.stderr and not db.exists()
    missing = arena("league", "standings", "--db", str(db))
    assert missing.returncode == 2 and "no league database here" in missing.stdout


def test_failures_are_counted_by_kind_in_the_table(tmp_path: Path) -> None:
    """A bot that cannot start crashes in every play it sits in; the table counts each one."""
    league = tmp_path / "f.toml"
    league.write_text(LEAGUE.replace('"autumn"', '"faulty"'))
    with LeagueStore(tmp_path / "f.sqlite", create=True) as store:
        store.init_league(load_league(league))
        for name, kind in (("alpha", "random"), ("bravo", "greedy"), ("charlie", "random")):
            submit(store, make_bot(tmp_path, name, kind))
        crashy = tmp_path / "crashy"
        crashy.mkdir()
        (crashy / "bot.toml").write_text(
            'name = "crashy"\ncommand = ["{python}", "-m", "sdk", "no_such_module:Bot"]\n'
        )
        submit(store, crashy)
        assert play_round(store, next_round(store)).finished
        rows = {r.entry: r for r in season_table(store, 1).divisions[1]}
        assert rows["crashy v1"].hands == 6  # Wh(4): 3 rounds x 2 rotations, no byes
        assert rows["crashy v1"].failures == {"crash": 6}
        assert all(rows[e].failures == {} for e in rows if e != "crashy v1")
