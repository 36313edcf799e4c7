"""Tests for the event file: validation messages, defaults, deal books and the planned plays."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest

from arena.rules import Options
from arena.rules.state import deal_from_seed
from arena.tournament.boards import (
    board_seed,
    rotation_hands,
)
from arena.tournament.model import (
    BUILTIN_BOTS,
    DealBook,
    EventFileError,
    EventSpec,
    deal_to_json,
    load_deal_book,
    load_event,
    parse_event,
    plan_event,
)
from arena.tournament.schedule import (
    ScheduleKind,
)
from tests.helpers import ROOT

FIVE = 'bots = ["random", "greedy", "heuristic", "search", {bot = "random", name = "random-2"}]'


def write(tmp_path: Path, text: str, name: str = "event.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(tmp_path: Path, text: str) -> tuple[str, dict[str, str]]:
    """Loads a bad event file; returns the message and the problems by field."""
    with pytest.raises(EventFileError) as caught:
        load_event(write(tmp_path, text))
    return str(caught.value), dict(caught.value.problems)


def test_example_file_loads_and_plans() -> None:
    spec = load_event(ROOT / "docs" / "event-example.toml")
    plan = plan_event(spec)
    assert spec.kind is ScheduleKind.ROUND_ROBIN
    assert len(spec.bots) >= 4
    assert plan.plays and plan.boards == len(plan.schedule.rounds) * spec.boards_per_round


def test_minimal_event_takes_the_documented_defaults(tmp_path: Path) -> None:
    spec = load_event(
        write(tmp_path, 'name = "mini"\nbots = ["random", "greedy", "heuristic", "search"]\n')
    )
    assert spec.schedule == "round_robin" and spec.cycles == 1
    assert spec.format == "board" and spec.hands_per_board == 1
    assert spec.rotation_list == (0, 1)
    assert spec.boards_per_round == 1 and spec.seed is None and spec.jobs == 1
    assert spec.time_control.decision_ms == 1000
    assert spec.deal_book is None
    assert spec.names == ("random", "greedy", "heuristic", "search")
    assert spec.match_options() == Options(hands=1)
    assert spec.deals_per_board == 1


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        (f'name = "x"\n{FIVE}\nrotation = 2\n', "rotation", "unknown field"),
        (f'name = "x"\n{FIVE}\nrotations = 3\n', "rotations", "2 or 4, got 3"),
        (f'name = "x"\n{FIVE}\ncycles = 0\n', "cycles", "greater than or equal to 1"),
        (f'name = "x"\n{FIVE}\nseed = -1\n', "seed", "greater than or equal to 0"),
        (f'name = "x"\n{FIVE}\nboards_per_round = "4"\n', "boards_per_round", "valid integer"),
        (f'name = "x"\n{FIVE}\nformat = "match"\n', "format", "'board' or 'game'"),
        (f'name = "x"\n{FIVE}\nschedule = "swiss"\n', "schedule", "round_robin"),
        (f'name = "two words"\n{FIVE}\n', "name", "not a usable event name"),
        (f"{FIVE}\n", "name", "missing"),
        ('name = "x"\n', "bots", "missing"),
        ('name = "x"\nbots = "random"\n', "bots", "expected a list, got 'random'"),
        ('name = "x"\nbots = ["random", "greedy", "heuristic", 3]\n', "bots[3]", "expected a bot"),
        (f'name = "x"\n{FIVE}\nrules = 3\n', "rules", "expected a table, got 3"),
        (
            'name = "x"\nbots = ["random", "greedy", "heuristic", {bot = "search", name = "?"}]\n',
            "bots[3].name",
            "not a usable bot name",
        ),
        (
            'name = "x"\nbots = ["random", "greedy", "heuristic", {bot = "search", nick = "s"}]\n',
            "bots[3].nick",
            "unknown field (known fields: bot, name, env, args, owner)",
        ),
        (
            'name = "x"\nbots = ["random", "greedy", "heuristic", "nope/bot.toml"]\n',
            "bots[3].bot",
            "neither a built-in bot",
        ),
        (
            'name = "x"\nbots = ["random", "greedy", "heuristic", "random"]\n',
            "bots[3]",
            "'random' is taken by bots[0]",
        ),
        (f'name = "x"\n{FIVE}\nschedule = "gauntlet"\n', "candidate", "needs a candidate"),
        (
            f'name = "x"\n{FIVE}\nschedule = "gauntlet"\ncandidate = "nobody"\n',
            "candidate",
            "'nobody' is not one of the bots",
        ),
        (f'name = "x"\n{FIVE}\ncandidate = "random"\n', "candidate", "only a gauntlet"),
        (f'name = "x"\n{FIVE}\nschedule = "fixed"\n', "bots", "exactly 4 bots, got 5"),
        (f'name = "x"\n{FIVE}\nschedule = "turnier"\n', "bots", "exactly 4 bots, got 5"),
        ('name = "x"\nbots = ["random", "greedy", "heuristic"]\n', "bots", "at least 4 bots"),
        (f'name = "x"\n{FIVE}\nfillers = ["random"]\n', "fillers", "need no fillers"),
        (f'name = "x"\n{FIVE}\n[rules]\nhands = 3\n', "rules.hands", 'format = "game" only'),
        (
            f'name = "x"\n{FIVE}\n[rules]\ntarget_score = 500\n',
            "rules.target_score",
            'format = "game" only',
        ),
        (
            f'name = "x"\n{FIVE}\nformat = "game"\nhands_per_board = 2\n',
            "hands_per_board",
            'applies to format = "board"',
        ),
        (f'name = "x"\n{FIVE}\n[rules]\ngrand = false\n', "rules.grand", "grand_tichu"),
        (f'name = "x"\n{FIVE}\n[rules]\ngrand_tichu = 1\n', "rules.grand_tichu", "valid boolean"),
        (
            f'name = "x"\n{FIVE}\n[time_control]\ndecision_ms = 0\n',
            "time_control.decision_ms",
            "greater than or equal to 1",
        ),
        (f'name = "x"\n{FIVE}\ndeal_book = "missing.txt"\n', "deal_book", "no deal book at"),
    ],
)
def test_validation_errors_name_the_field(
    tmp_path: Path, body: str, field: str, words: str
) -> None:
    message, problems = problems_of(tmp_path, body)
    assert field in problems, message
    assert words in problems[field], message
    assert message.startswith(str(tmp_path / "event.toml")), message


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    message, problems = problems_of(
        tmp_path, f'name = "x"\n{FIVE}\nrotations = 3\ncycles = 0\njobs = 0\n'
    )
    assert set(problems) == {"rotations", "cycles", "jobs"}
    assert message.splitlines()[0].endswith("3 problems:")


def test_toml_syntax_error_names_the_file(tmp_path: Path) -> None:
    message, _ = problems_of(tmp_path, 'name = "x"\nbots = [\n')
    assert "event.toml: not valid TOML" in message


def test_missing_event_file(tmp_path: Path) -> None:
    with pytest.raises(EventFileError, match="cannot read the event file"):
        load_event(tmp_path / "nope.toml")


def test_manifests_resolve_against_the_event_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bots" / "alpha").mkdir(parents=True)
    (tmp_path / "bots" / "alpha" / "bot.toml").write_text("", encoding="utf-8")
    (tmp_path / "bots" / "beta.toml").write_text("", encoding="utf-8")
    (tmp_path / "bots" / "gamma.toml").write_text('name = "Gamma 2"\n', encoding="utf-8")
    event = write(
        tmp_path,
        'name = "m"\nbots = ["random", "greedy", "bots/alpha/bot.toml",'
        ' {bot = "bots/beta.toml", name = "b2"}, "bots/beta.toml", "bots/gamma.toml"]\n',
    )
    monkeypatch.chdir(tmp_path / "bots")  # relative to the file, not the working directory
    spec = load_event(event)
    assert spec.names == ("random", "greedy", "alpha", "b2", "beta", "Gamma 2")
    assert spec.bots[2].name == "alpha"  # stored, so the event keeps it
    assert spec.bots[2].bot == str((tmp_path / "bots" / "alpha" / "bot.toml").resolve())
    assert not spec.bots[2].builtin and spec.bots[0].builtin
    assert spec.bot_sources()["random"] == "builtin:random"
    assert set(BUILTIN_BOTS) == {"random", "greedy", "heuristic", "quick", "search", "strong"}


def test_unusable_manifests_are_caught(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text("name = \n", encoding="utf-8")
    (tmp_path / "odd.toml").write_text('name = "no/slashes"\n', encoding="utf-8")
    body = 'name = "x"\nbots = ["random", "greedy", "bad.toml", "odd.toml"]\n'
    _, problems = problems_of(tmp_path, body)
    assert problems["bots[2]"].startswith(f"cannot read the manifest {tmp_path / 'bad.toml'}")
    assert "'no/slashes' is not usable here" in problems["bots[3]"]


BOT = 'name = "x"\nbots = ["random", "greedy", "heuristic", {{bot = "search", {extra}}}]\n'


@pytest.mark.parametrize(
    ("extra", "field", "words"),
    [
        ('env = {PATH = "/x"}', "bots[3].env", "'PATH' is set by the arena"),
        ('env = {TICHU_ARENA_TOKEN = "t"}', "bots[3].env", "set by the arena"),
        ('env = {"A-B" = "1"}', "bots[3].env", "'A-B' is not a plain variable name"),
        ("env = {LEVEL = 2}", "bots[3].env.LEVEL", "valid string, got 2"),
        ('env = "LEVEL=2"', "bots[3].env", "expected a table"),
        ('args = "--level 2"', "bots[3].args", "expected a list"),
        ('args = ["--level", 2]', "bots[3].args[1]", "valid string, got 2"),
        ('args = [""]', "bots[3].args", "non-empty"),
    ],
)
def test_bad_bot_env_and_args_name_the_field(
    tmp_path: Path, extra: str, field: str, words: str
) -> None:
    message, problems = problems_of(tmp_path, BOT.format(extra=extra))
    assert field in problems, message
    assert words in problems[field], message


def test_bot_env_and_args_are_part_of_the_stored_identity_only_when_given(
    tmp_path: Path,
) -> None:
    plain = load_event(write(tmp_path, BOT.format(extra='name = "s"')))
    # Stored as before env and args existed: events stored then still match their files.
    assert plain.identity()["bots"][3] == {"bot": "search", "name": "s"}
    extra = 'name = "s", env = {LEVEL = "2"}, args = ["--level", "2"]'
    configured = load_event(write(tmp_path, BOT.format(extra=extra)))
    assert configured.identity()["bots"][3] == {
        "bot": "search",
        "name": "s",
        "env": {"LEVEL": "2"},
        "args": ["--level", "2"],
    }
    assert configured.bot_configs()["s"] != plain.bot_configs()["s"]
    assert parse_event(json.loads(json.dumps(configured.identity()))) == configured
    assert hash(configured) == hash(parse_event(configured.identity()))


def test_stored_spec_round_trips() -> None:
    spec = parse_event(
        {
            "name": "rt",
            "bots": ["random", "greedy", "heuristic", "search"],
            "schedule": "gauntlet",
            "candidate": "search",
            "format": "game",
            "rules": {"target_score": 500, "grand_tichu": False},
        }
    )
    assert parse_event(json.loads(json.dumps(spec.model_dump(mode="json")))) == spec
    assert spec.match_options() == Options(target_score=500, hands=0, grand_tichu=False)
    assert spec.deals_per_board is None
    assert "jobs" not in spec.identity()


def test_seed_book_skips_comments_and_blank_lines(tmp_path: Path) -> None:
    book = load_deal_book(write(tmp_path, "# seeds\n\n17\n  42  # the answer\n7\n", "seeds.txt"))
    assert book == DealBook(str(tmp_path / "seeds.txt"), seeds=(17, 42, 7))
    assert not book.explicit and len(book) == 3


def test_seed_book_errors_name_the_line(tmp_path: Path) -> None:
    with pytest.raises(EventFileError) as caught:
        load_deal_book(write(tmp_path, "1\nabc\n3\n-4\n", "seeds.txt"))
    assert dict(caught.value.problems) == {
        "line 2": "not an integer seed: 'abc'",
        "line 4": "a seed must be in 0..2**64-1, got -4",
    }
    with pytest.raises(EventFileError, match="holds no seeds"):
        load_deal_book(write(tmp_path, "# nothing\n", "empty.txt"))


def test_explicit_deal_book_in_replay_notation(tmp_path: Path) -> None:
    deals = [deal_from_seed(5, k) for k in range(3)]
    path = write(tmp_path, json.dumps([deal_to_json(d) for d in deals]), "deals.json")
    book = load_deal_book(path)
    assert book.explicit and book.deals == tuple(deals)
    # A replay file (an object with "deals") reads the same.
    replay = write(
        tmp_path, json.dumps({"format": "x", "deals": [deal_to_json(deals[0])]}), "r.json"
    )
    assert load_deal_book(replay).deals == (deals[0],)


def test_explicit_deal_errors_name_the_deal_and_seat(tmp_path: Path) -> None:
    good = deal_to_json(deal_from_seed(1, 0))
    short = [*good[:2], " ".join(good[2].split()[:13]), good[3]]
    twice = [good[0], good[0], good[2], good[3]]
    card = [good[0].replace(good[0].split()[0], "Zz"), *good[1:]]
    path = write(tmp_path, json.dumps([good, short, twice, card]), "deals.json")
    with pytest.raises(EventFileError) as caught:
        load_deal_book(path)
    problems = dict(caught.value.problems)
    assert set(problems) == {"deal 1", "deal 2", "deal 3"}
    assert problems["deal 1"] == "seat 2 holds 13 cards, not 14"
    assert "repeated" in problems["deal 2"]
    assert problems["deal 3"].startswith("seat 0: unknown card 'Zz'")


def test_plan_shape_with_all_four_rotations() -> None:
    spec = parse_event(
        {
            "name": "p",
            "bots": ["random", "greedy", "heuristic", "search", {"bot": "random", "name": "r2"}],
            "boards_per_round": 2,
            "rotations": 4,
            "seed": 9,
        }
    )
    plan = plan_event(spec)
    # Wh(5): 5 rounds of one table; 2 boards per round; 4 rotations per board.
    assert len(plan.schedule.rounds) == 5 and plan.boards == 10
    assert len(plan.plays) == 5 * 2 * 4
    assert [p.ordinal for p in plan.plays] == list(range(40))
    by_board: dict[int, list[int]] = {}
    for play in plan.plays:
        by_board.setdefault(play.board, []).append(play.rotation)
        assert play.round == play.board // 2 and play.table == 0
        assert play.deal_seed == board_seed(9, play.board)
    assert all(sorted(r) == [0, 1, 2, 3] for r in by_board.values())
    assert len({p.seed for p in plan.plays}) == 40
    assert len({s for p in plan.plays for s in p.seat_seeds}) == 160


def test_rotated_deals_move_the_hands_not_the_bots() -> None:
    spec = parse_event(
        {"name": "r", "bots": ["random", "greedy", "heuristic", "search"], "seed": 3}
    )
    plan = plan_event(spec)
    board0 = [p for p in plan.plays if p.board == 0]
    first = next(p for p in board0 if p.rotation == 0)
    second = next(p for p in board0 if p.rotation == 1)
    assert first.seats == second.seats
    base = deal_from_seed(board_seed(3, 0), 0)
    assert first.deal(0) == base
    assert second.deal(0) == tuple(base[h] for h in rotation_hands(1))
    assert second.deal(0)[0] == base[1]  # North now holds East's cards
    assert second.deals(2)[1] == tuple(deal_from_seed(board_seed(3, 0), 1)[h] for h in (1, 2, 3, 0))


def test_plan_is_deterministic() -> None:
    data = {
        "name": "d",
        "bots": ["random", "greedy", "heuristic", "search"],
        "boards_per_round": 3,
        "seed": 0,
    }
    assert plan_event(parse_event(data)).digest() == plan_event(parse_event(data)).digest()
    other = plan_event(parse_event({**data, "seed": 1})).digest()
    assert other != plan_event(parse_event(data)).digest()


def test_an_event_without_a_seed_is_keyed_by_a_fresh_secret() -> None:
    spec = parse_event(
        {"name": "d", "bots": ["random", "greedy", "heuristic", "search"], "boards_per_round": 3}
    )
    first, second = plan_event(spec), plan_event(spec)
    assert first.secret is not None and len(first.secret) == 16
    assert first.secret != second.secret and first.digest() != second.digest()
    again = plan_event(spec, secret=first.secret)
    assert again.digest() == first.digest()  # the secret alone reproduces the event
    play = first.plays[0]
    text = f"tichu-arena/events/keyed/v1:board:{play.board}".encode()
    mac = hmac.new(first.secret, text, hashlib.sha256).digest()
    assert play.deal_seed == int.from_bytes(mac[:16], "big")  # 128 bits of HMAC-SHA256
    # HMAC-SHA256 of the secret: the public derivation from any seed gives other deals
    assert {board_seed(s, play.board) for s in range(1000)}.isdisjoint({play.deal_seed})
    with pytest.raises(ValueError, match="not both"):
        plan_event(parse_event({**spec.identity(), "seed": 5}), secret=first.secret)


def test_seed_book_gives_each_board_its_seed(tmp_path: Path) -> None:
    seeds = write(tmp_path, "\n".join(str(100 + i) for i in range(20)), "seeds.txt")
    event = write(
        tmp_path,
        'name = "s"\nbots = ["random", "greedy", "heuristic", "search"]\n'
        'boards_per_round = 2\ndeal_book = "seeds.txt"\n',
    )
    spec = load_event(event)
    assert spec.deal_book == str(seeds.resolve())
    plan = plan_event(spec)
    assert plan.boards == 6  # Wh(4): 3 rounds
    for play in plan.plays:
        assert play.deal_seed == 100 + play.board
        assert play.deal(0)[0] == deal_from_seed(100 + play.board, 0)[play.rotation]


def test_explicit_book_fills_each_board_with_its_deals(tmp_path: Path) -> None:
    deals = [deal_from_seed(77, k) for k in range(12)]
    write(tmp_path, json.dumps([deal_to_json(d) for d in deals]), "deals.json")
    event = write(
        tmp_path,
        'name = "e"\nbots = ["random", "greedy", "heuristic", "search"]\n'
        'hands_per_board = 2\nboards_per_round = 2\ndeal_book = "deals.json"\n',
    )
    plan = plan_event(load_event(event))
    assert plan.boards == 6
    for play in plan.plays:
        assert play.deal_seed is None
        assert play.book_deals == (deals[2 * play.board], deals[2 * play.board + 1])
        assert play.deal(1)[0] == deals[2 * play.board + 1][play.rotation]
    with pytest.raises(ValueError, match="has 2 deals"):
        plan.plays[0].deal(2)


def test_deal_book_too_short_is_caught_before_play(tmp_path: Path) -> None:
    write(tmp_path, "1\n2\n3\n", "seeds.txt")
    event = write(
        tmp_path,
        'name = "short"\nbots = ["random", "greedy", "heuristic", "search"]\n'
        'boards_per_round = 2\ndeal_book = "seeds.txt"\n',
    )
    with pytest.raises(EventFileError) as caught:
        plan_event(load_event(event))
    assert dict(caught.value.problems)["deal_book"].endswith(
        "holds 3 seeds; the event needs 6 (6 boards)"
    )


def test_explicit_book_needs_a_fixed_number_of_deals(tmp_path: Path) -> None:
    write(tmp_path, json.dumps([deal_to_json(deal_from_seed(1, 0))]), "deals.json")
    event = write(
        tmp_path,
        'name = "g"\nbots = ["random", "greedy", "heuristic", "search"]\n'
        'format = "game"\ndeal_book = "deals.json"\n',
    )
    _, problems = problems_of(tmp_path, event.read_text(encoding="utf-8"))
    assert "explicit deals need a fixed number of deals per board" in problems["deal_book"]


def test_gauntlet_and_fillers_plan() -> None:
    gauntlet = parse_event(
        {
            "name": "g",
            "bots": ["random", "greedy", "heuristic", "search"],
            "schedule": "gauntlet",
            "candidate": "search",
        }
    )
    plays = plan_event(gauntlet).plays
    assert all("search" in p.seats for p in plays)
    ten = [{"bot": "random", "name": f"b{i}"} for i in range(10)]
    spec = parse_event(
        {"name": "f", "bots": ten, "fillers": [{"bot": "greedy", "name": "f1"}, "heuristic"]}
    )
    assert spec.filler_names == ("f1", "heuristic")
    assert plan_event(spec).schedule.fillers == ("f1", "heuristic")


def test_spec_model_is_frozen() -> None:
    spec = parse_event({"name": "z", "bots": ["random", "greedy", "heuristic", "search"]})
    with pytest.raises(ValueError):
        spec.seed = 3  # type: ignore[misc]
    assert isinstance(spec, EventSpec)
