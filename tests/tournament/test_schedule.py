"""Tests for event schedules: balance of every design, determinism, and duplicate rotations.

Expected numbers are worked out by hand and written out here rather than recomputed by the
code under test.
"""

from __future__ import annotations

import doctest
import functools
import itertools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournament import schedule as schedule_module
from arena.tournament.boards import (
    BoardPlay,
    board_plays,
    board_seed,
    play_seed,
    rotation_hands,
    round_boards,
    round_plays,
    schedule_plays,
    seat_seed,
)
from arena.tournament.schedule import (
    ALL_ROTATIONS,
    DEFAULT_ROTATIONS,
    IntMatrix,
    Method,
    Round,
    Schedule,
    ScheduleKind,
    TableDraw,
    annealed_schedule,
    build_schedule,
    bye_counts,
    default_anneal_rounds,
    design_matrix,
    design_rank,
    fillers_needed,
    fixed_schedule,
    games_played,
    gauntlet_schedule,
    opponent_counts,
    partner_counts,
    successor_counts,
    turnier_schedule,
    two_fold_sizes,
    whist_sizes,
)

WHIST_SIZES = (4, 5, 8, 9, 12, 13, 16)
TWO_FOLD_SIZES = (6, 7)
PADDED_SIZES = (10, 11, 14, 15)  # N ≡ 2, 3 (mod 4), N ≥ 10: fillers or the annealer


def names(n: int, prefix: str = "bot") -> list[str]:
    return [f"{prefix}{i:02d}" for i in range(n)]


@functools.cache
def round_robin(n: int, cycles: int = 1, seed: int = 0) -> Schedule:
    """Caches builds: the annealed sizes take most of this file's runtime."""
    return build_schedule(names(n), ScheduleKind.ROUND_ROBIN, cycles=cycles, seed=seed)


def off_diagonal(matrix: IntMatrix) -> IntMatrix:
    return matrix[~np.eye(len(matrix), dtype=bool)]


def assert_well_formed(schedule: Schedule) -> None:
    """Each table has four distinct participants; each bot appears once per round."""
    known = set(schedule.participants)
    for round_ in schedule.rounds:
        everyone = [*round_.seated, *round_.byes]
        assert len(everyone) == len(set(everyone))
        assert set(everyone) == known
        for table in round_.tables:
            assert len(set(table.seats)) == 4


def assert_exact_balance(schedule: Schedule, lam: int) -> None:
    """§1.7: every pair partners λ times and opposes 2λ times."""
    assert schedule.partner_lambda == lam
    assert set(off_diagonal(partner_counts(schedule)).tolist()) == {lam}
    assert set(off_diagonal(opponent_counts(schedule)).tolist()) == {2 * lam}


# ---------------------------------------------------------------------------------------------
# Tabulated designs


def test_tabulated_sizes_are_the_notes() -> None:
    assert whist_sizes() == WHIST_SIZES
    assert two_fold_sizes() == TWO_FOLD_SIZES


@pytest.mark.parametrize(
    ("n", "rounds", "tables", "byes_each"),
    [
        (4, 3, 1, 0),
        (5, 5, 1, 1),
        (8, 7, 2, 0),
        (9, 9, 2, 1),
        (12, 11, 3, 0),
        (13, 13, 3, 1),
        (16, 15, 4, 0),
    ],
)
def test_whist_partners_once_opposes_twice(
    n: int, rounds: int, tables: int, byes_each: int
) -> None:
    schedule = round_robin(n)
    assert schedule.method is Method.WHIST
    assert_well_formed(schedule)
    assert_exact_balance(schedule, 1)
    assert len(schedule.rounds) == rounds
    assert {len(round_.tables) for round_ in schedule.rounds} == {tables}
    assert set(bye_counts(schedule).values()) == {byes_each}
    assert set(games_played(schedule).values()) == {n - 1}
    assert design_rank(schedule) == n - 1


@pytest.mark.parametrize(("n", "rounds", "played", "byes"), [(6, 15, 10, 5), (7, 21, 12, 9)])
def test_two_fold_partners_twice_opposes_four_times(
    n: int, rounds: int, played: int, byes: int
) -> None:
    schedule = round_robin(n)
    assert schedule.method is Method.TWO_FOLD
    assert_well_formed(schedule)
    assert_exact_balance(schedule, 2)
    assert len(schedule.rounds) == rounds
    assert {len(round_.tables) for round_ in schedule.rounds} == {1}
    assert set(games_played(schedule).values()) == {played}
    assert set(bye_counts(schedule).values()) == {byes}
    assert design_rank(schedule) == n - 1


@pytest.mark.parametrize(
    ("n", "base"),
    [
        (5, [(1, 2, 4, 3)]),
        (8, [(7, 3, 2, 0), (1, 4, 6, 5)]),
        (9, [(1, 3, 2, 6), (4, 5, 8, 7)]),
        (12, [(11, 6, 1, 8), (0, 4, 5, 3), (2, 7, 9, 10)]),
        (13, [(1, 5, 12, 8), (2, 3, 11, 10), (4, 7, 9, 6)]),
        (16, [(15, 0, 1, 3), (2, 6, 13, 7), (4, 9, 12, 11), (5, 8, 10, 14)]),
    ],
)
def test_first_round_is_the_notes_base_round(n: int, base: list[tuple[int, ...]]) -> None:
    schedule = round_robin(n, seed=11)
    label = {bot: i for i, bot in enumerate(schedule.labelings[0])}
    first = [tuple(label[bot] for bot in table.seats) for table in schedule.rounds[0].tables]
    assert first == base


def test_round_r_of_a_cyclic_design_adds_r_to_every_label() -> None:
    schedule = round_robin(13, seed=5)
    label = {bot: i for i, bot in enumerate(schedule.labelings[0])}
    third = [tuple(label[bot] for bot in t.seats) for t in schedule.rounds[3].tables]
    assert third == [(4, 8, 2, 11), (5, 6, 1, 0), (7, 10, 12, 9)]
    assert [label[bot] for bot in schedule.rounds[3].byes] == [3]  # bye in round r is bot r


def test_z3xz3_development_adds_digits_without_carry() -> None:
    schedule = round_robin(9, seed=5)
    label = {bot: i for i, bot in enumerate(schedule.labelings[0])}
    # Round r = 4 is (1, 1): label 3a+b -> 3((a+1) mod 3) + (b+1) mod 3.
    fifth = [tuple(label[bot] for bot in t.seats) for t in schedule.rounds[4].tables]
    assert fifth == [(5, 7, 3, 1), (8, 6, 0, 2)]


@pytest.mark.parametrize("n", [5, 9, 13])
def test_directed_designs_meet_each_opponent_once_from_each_side(n: int) -> None:
    schedule = round_robin(n)
    assert schedule.directed
    assert set(off_diagonal(successor_counts(schedule)).tolist()) == {1}


@pytest.mark.parametrize("n", [4, 6, 7, 8, 12, 16])
def test_mirrored_second_cycle_balances_seat_direction(n: int) -> None:
    one = round_robin(n, cycles=1, seed=3)
    two = round_robin(n, cycles=2, seed=3)
    assert not one.directed
    successors = successor_counts(one)
    assert not np.array_equal(successors, successors.T)
    assert two.directed
    assert two.labelings[0] == two.labelings[1]
    per_cycle = len(one.rounds)
    for first, second in zip(two.rounds[:per_cycle], two.rounds[per_cycle:], strict=True):
        assert second.tables == tuple(table.mirrored() for table in first.tables)
    lam = two.partner_lambda
    assert lam is not None
    assert set(off_diagonal(successor_counts(two)).tolist()) == {lam}


@pytest.mark.parametrize("n", [5, 9, 13])
def test_directed_designs_get_a_fresh_map_every_cycle(n: int) -> None:
    schedule = round_robin(n, cycles=3, seed=8)
    assert len(set(schedule.labelings)) == 3
    assert_exact_balance(schedule, 3)
    assert set(off_diagonal(successor_counts(schedule)).tolist()) == {3}


@settings(max_examples=60, deadline=None)
@given(
    n=st.sampled_from(WHIST_SIZES + TWO_FOLD_SIZES),
    cycles=st.integers(1, 4),
    seed=st.integers(0, 2**32),
)
def test_exact_designs_hold_for_any_seed_and_cycle_count(n: int, cycles: int, seed: int) -> None:
    schedule = build_schedule(names(n), ScheduleKind.ROUND_ROBIN, cycles=cycles, seed=seed)
    assert_well_formed(schedule)
    lam = cycles if n in WHIST_SIZES else 2 * cycles
    assert_exact_balance(schedule, lam)
    byes = bye_counts(schedule).values()
    assert max(byes) - min(byes) <= 1
    assert design_rank(schedule) == n - 1
    assert [r.cycle for r in schedule.rounds] == sorted(r.cycle for r in schedule.rounds)
    if schedule.directed:
        assert set(off_diagonal(successor_counts(schedule)).tolist()) == {lam}


# ---------------------------------------------------------------------------------------------
# N ≡ 2, 3 (mod 4): fillers and the annealer


@pytest.mark.parametrize(("n", "padded"), [(10, 12), (11, 12), (14, 16), (15, 16)])
def test_fillers_pad_to_a_whist_size(n: int, padded: int) -> None:
    fillers = names(fillers_needed(n), "ref")
    assert len(fillers) == padded - n
    schedule = build_schedule(names(n), ScheduleKind.ROUND_ROBIN, seed=4, fillers=fillers)
    assert schedule.method is Method.WHIST_WITH_FILLERS
    assert schedule.fillers == tuple(fillers)
    assert schedule.bots == tuple(names(n))
    assert len(schedule.participants) == padded
    assert_well_formed(schedule)
    assert_exact_balance(schedule, 1)  # real–real and real–filler pairs alike
    assert design_rank(schedule) == padded - 1


@pytest.mark.slow
@pytest.mark.parametrize("n", PADDED_SIZES)
def test_annealed_round_robin_within_bounds(n: int) -> None:
    """§1.6 targets: partners at ⌊λp⌋/⌈λp⌉, opponents within λo ± 2, byes within 1."""
    schedule = round_robin(n)
    assert schedule.method is Method.ANNEAL
    assert schedule.partner_lambda is None
    assert_well_formed(schedule)
    tables = n // 4
    rounds = math.ceil(n * (n - 1) / 2 / (2 * tables))
    assert len(schedule.rounds) == rounds == default_anneal_rounds(n)
    lam_p = 2 * rounds * tables / (n * (n - 1) / 2)
    partners = set(off_diagonal(partner_counts(schedule)).tolist())
    assert partners <= {math.floor(lam_p), math.ceil(lam_p)}
    opponents = off_diagonal(opponent_counts(schedule))
    assert 2 * lam_p - 2 <= opponents.min() and opponents.max() <= 2 * lam_p + 2
    byes = bye_counts(schedule).values()
    assert max(byes) - min(byes) <= 1
    assert design_rank(schedule) == n - 1


@pytest.mark.parametrize(("n", "rounds"), [(10, 12), (11, 14), (14, 16), (15, 18)])
def test_default_anneal_rounds_let_every_pair_partner_once(n: int, rounds: int) -> None:
    assert default_anneal_rounds(n) == rounds
    assert 2 * (n // 4) * rounds >= n * (n - 1) // 2  # enough partnership slots


def test_annealer_rebuilds_an_exact_whist_design_for_eight() -> None:
    schedule = annealed_schedule(names(8), rounds=7, seed=0)
    assert set(off_diagonal(partner_counts(schedule)).tolist()) == {1}
    assert set(off_diagonal(opponent_counts(schedule)).tolist()) == {2}


def test_stored_seeds_replay_the_same_event() -> None:
    # Pinned outputs: only Random.random() is drawn, whose stream Python keeps across versions.
    assert round_robin(5).labelings == (("bot01", "bot02", "bot00", "bot03", "bot04"),)
    first = annealed_schedule(names(10), seed=0, steps=2000).rounds[0]
    assert [t.seats for t in first.tables] == [
        ("bot02", "bot07", "bot08", "bot01"),
        ("bot05", "bot09", "bot04", "bot03"),
    ]
    assert first.byes == ("bot00", "bot06")


def test_annealer_is_deterministic_for_a_seed() -> None:
    first = annealed_schedule(names(11), seed=9, steps=20_000)
    assert first == annealed_schedule(names(11), seed=9, steps=20_000)
    assert first != annealed_schedule(names(11), seed=10, steps=20_000)


# ---------------------------------------------------------------------------------------------
# All sizes 4..16


@pytest.mark.slow
@pytest.mark.parametrize("n", range(4, 17))
def test_every_size_is_connected_and_fair_on_byes(n: int) -> None:
    schedule = round_robin(n)
    assert_well_formed(schedule)
    assert design_rank(schedule) == n - 1
    byes = bye_counts(schedule).values()
    assert max(byes) - min(byes) <= 1
    assert off_diagonal(partner_counts(schedule)).min() >= 1  # everyone partners everyone


@pytest.mark.parametrize("n", [n for n in range(4, 17) if n not in PADDED_SIZES])
def test_same_seed_same_schedule_new_seed_new_labels(n: int) -> None:
    # The annealed sizes are covered by test_annealer_is_deterministic_for_a_seed (fewer steps).
    again = build_schedule(names(n), ScheduleKind.ROUND_ROBIN, seed=0)
    assert again == round_robin(n)
    assert build_schedule(names(n), ScheduleKind.ROUND_ROBIN, seed=1) != again


# ---------------------------------------------------------------------------------------------
# Turnier, gauntlet, fixed partnerships


def test_turnier_has_nine_hands_each_partnership_three_times() -> None:
    schedule = build_schedule(list("ABCD"), ScheduleKind.TURNIER, seed=2)
    assert schedule.method is Method.TURNIER
    assert len(schedule.rounds) == 9
    assert all(len(round_.tables) == 1 and not round_.byes for round_ in schedule.rounds)
    splits = Counter(frozenset({frozenset(t.team_a), frozenset(t.team_b)}) for t in schedule.tables)
    assert splits == {
        frozenset({frozenset("AB"), frozenset("CD")}): 3,
        frozenset({frozenset("AC"), frozenset("BD")}): 3,
        frozenset({frozenset("AD"), frozenset("BC")}): 3,
    }
    assert_exact_balance(schedule, 3)
    assert design_rank(schedule) == 3


def test_two_turniers_have_eighteen_hands_and_balanced_direction() -> None:
    schedule = turnier_schedule(list("ABCD"), cycles=2, seed=2)
    assert len(schedule.rounds) == 18
    assert_exact_balance(schedule, 6)
    assert schedule.directed
    assert set(off_diagonal(successor_counts(schedule)).tolist()) == {6}


@pytest.mark.parametrize(
    ("field", "games", "partner_each", "pair_each"),
    [(3, 3, 1, 1), (4, 12, 3, 2), (5, 10, 2, 1), (6, 30, 5, 2), (7, 21, 3, 1), (12, 132, 11, 2)],
)
def test_gauntlet_balances_partners_and_opposing_pairs(
    field: int, games: int, partner_each: int, pair_each: int
) -> None:
    bots = names(field, "f")
    schedule = gauntlet_schedule("cand", bots, seed=6)
    assert_well_formed(schedule)
    assert len(schedule.rounds) == games
    assert all(t.north == "cand" for t in schedule.tables)
    partners = Counter(t.south for t in schedule.tables)
    assert partners == dict.fromkeys(bots, partner_each)
    pairs = Counter(frozenset(t.team_b) for t in schedule.tables)
    assert pairs == {frozenset(p): pair_each for p in itertools.combinations(bots, 2)}
    # Any prefix of whole partner sweeps is balanced too (for early-stopping runners).
    prefix = Counter(t.south for t in schedule.tables[:field])
    assert prefix == dict.fromkeys(bots, 1)
    assert design_rank(schedule) == field


@settings(max_examples=25, deadline=None)
@given(field=st.integers(3, 14), cycles=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_gauntlet_any_field(field: int, cycles: int, seed: int) -> None:
    bots = ["cand", *names(field, "f")]
    schedule = build_schedule(
        bots, ScheduleKind.GAUNTLET, candidate="cand", cycles=cycles, seed=seed
    )
    assert schedule.participants == tuple(bots)
    assert schedule.candidate == "cand"
    partners = Counter(t.south for t in schedule.tables)
    assert len(partners) == field and len(set(partners.values())) == 1
    opposed = Counter(frozenset(t.team_b) for t in schedule.tables)
    assert len(opposed) == field * (field - 1) // 2 and len(set(opposed.values())) == 1
    field_byes = {b for bot, b in bye_counts(schedule).items() if bot != "cand"}
    assert len(field_byes) == 1 and bye_counts(schedule)["cand"] == 0
    assert design_rank(schedule) == field
    successors = successor_counts(schedule)
    assert schedule.directed == (cycles % 2 == 0)
    if schedule.directed:
        assert np.array_equal(successors, successors.T)


def test_fixed_partnerships_keep_teams_and_mirror_odd_cycles() -> None:
    schedule = build_schedule(["a1", "b1", "a2", "b2"], ScheduleKind.FIXED, cycles=4)
    assert [t.seats for t in schedule.tables] == [
        ("a1", "b1", "a2", "b2"),
        ("a1", "b2", "a2", "b1"),
        ("a1", "b1", "a2", "b2"),
        ("a1", "b2", "a2", "b1"),
    ]
    assert schedule.directed
    successors = successor_counts(schedule)
    assert np.array_equal(successors, successors.T)
    assert design_rank(schedule) == 1  # only the team difference is identifiable (§3.2)
    assert schedule == fixed_schedule(("a1", "a2"), ("b1", "b2"), cycles=4)


# ---------------------------------------------------------------------------------------------
# Counting helpers on a hand-built schedule


def test_counts_on_a_hand_built_schedule() -> None:
    schedule = Schedule(
        kind=ScheduleKind.ROUND_ROBIN,
        method=Method.WHIST,
        participants=("a", "b", "c", "d", "e"),
        rounds=(
            Round((TableDraw("a", "b", "c", "d"),), ("e",)),
            Round((TableDraw("a", "e", "b", "d"),), ("c",)),
        ),
        cycles=1,
        seed=0,
    )
    partners = partner_counts(schedule)
    assert partners[0, 2] == partners[1, 3] == partners[0, 1] == partners[4, 3] == 1
    assert int(partners.sum()) == 2 * 4  # 4 partnerships, counted both ways
    successors = successor_counts(schedule)
    # a→b, b→c, c→d, d→a then a→e, e→b, b→d, d→a.
    assert successors[3, 0] == 2 and successors[0, 3] == 0
    assert successors[0, 1] == successors[1, 2] == successors[4, 1] == successors[1, 3] == 1
    opponents = opponent_counts(schedule)
    assert opponents[0, 3] == 2 and opponents[0, 2] == 0 and opponents[1, 3] == 1
    assert bye_counts(schedule) == {"a": 0, "b": 0, "c": 1, "d": 0, "e": 1}
    assert games_played(schedule) == {"a": 2, "b": 2, "c": 1, "d": 2, "e": 1}
    expected = np.array(
        [[0.5, -0.5, 0.5, -0.5, 0.0], [0.5, 0.5, 0.0, -0.5, -0.5]], dtype=np.float64
    )
    assert np.array_equal(design_matrix(schedule), expected)
    assert design_rank(schedule) == 2


# ---------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    ("bots", "kind", "options", "message"),
    [
        (["a", "b", "c"], ScheduleKind.ROUND_ROBIN, {}, "at least 4"),
        (["a", "b", "c", "d"], ScheduleKind.GAUNTLET, {}, "needs a candidate"),
        (["a", "b", "c", "d"], ScheduleKind.GAUNTLET, {"candidate": "z"}, "not among"),
        (["a", "b", "c"], ScheduleKind.GAUNTLET, {"candidate": "a"}, "at least 3 field"),
        (["a", "b", "c", "d", "e"], ScheduleKind.FIXED, {}, "exactly 4"),
        (["a", "b", "c"], ScheduleKind.TURNIER, {}, "exactly 4"),
        (["a", "b", "c", "a"], ScheduleKind.ROUND_ROBIN, {}, "distinct"),
        (["a", "b", "c", "d"], ScheduleKind.ROUND_ROBIN, {"cycles": 0}, "cycles"),
        (["a", "b", "c", "d"], ScheduleKind.FIXED, {"candidate": "a"}, "only to gauntlets"),
        (names(8), ScheduleKind.ROUND_ROBIN, {"fillers": ["r"]}, "fillers only pad"),
        (names(10), ScheduleKind.ROUND_ROBIN, {"fillers": ["r"]}, "exactly 2"),
        (names(18), ScheduleKind.ROUND_ROBIN, {"fillers": ["r", "s"]}, "no tabulated"),
        (names(11), ScheduleKind.ROUND_ROBIN, {"fillers": ["bot00"]}, "must differ"),
        (names(4), ScheduleKind.TURNIER, {"fillers": ["r"]}, "only to round robins"),
        (names(4), "swiss", {}, "swiss"),
    ],
)
def test_impossible_requests_raise(
    bots: list[str], kind: ScheduleKind, options: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        build_schedule(bots, kind, **options)  # type: ignore[arg-type]


def test_tables_and_rounds_reject_repeated_bots() -> None:
    with pytest.raises(ValueError, match="four distinct"):
        TableDraw("a", "b", "a", "c")
    with pytest.raises(ValueError, match="twice"):
        Round((TableDraw("a", "b", "c", "d"),), ("a",))


# ---------------------------------------------------------------------------------------------
# Duplicate boards and seeds


def test_rotation_hands_by_seat() -> None:
    # Seat p receives H[(p + k) % 4]: written out by hand for N, E, S, W.
    assert rotation_hands(0) == (0, 1, 2, 3)
    assert rotation_hands(1) == (1, 2, 3, 0)
    assert rotation_hands(2) == (2, 3, 0, 1)
    assert rotation_hands(3) == (3, 0, 1, 2)
    with pytest.raises(ValueError, match="rotation"):
        rotation_hands(4)


def test_rotation_one_swaps_team_hands_and_rotation_two_swaps_partners() -> None:
    table = TableDraw("n", "e", "s", "w")
    zero, one, two = board_plays(table, 5, event_seed=1, rotations=(0, 1, 2))
    team_a, team_b = table.team_a, table.team_b
    assert {zero.hand_of(b) for b in team_a} == {0, 2}
    assert {one.hand_of(b) for b in team_a} == {zero.hand_of(b) for b in team_b} == {1, 3}
    assert {one.hand_of(b) for b in team_b} == {0, 2}
    assert two.hand_of("n") == zero.hand_of("s") and two.hand_of("e") == zero.hand_of("w")


def test_board_plays_default_to_rotations_zero_and_one() -> None:
    table = TableDraw("n", "e", "s", "w")
    plays = board_plays(table, 3, event_seed=7)
    assert DEFAULT_ROTATIONS == (0, 1)
    assert plays == (
        BoardPlay(3, 0, table, (0, 1, 2, 3), play_seed(7, 3, 0)),
        BoardPlay(3, 1, table, (1, 2, 3, 0), play_seed(7, 3, 1)),
    )
    assert len(board_plays(table, 3, event_seed=7, rotations=ALL_ROTATIONS)) == 4
    with pytest.raises(ValueError, match="distinct"):
        board_plays(table, 3, event_seed=7, rotations=(1, 1))
    with pytest.raises(ValueError, match="board"):
        board_plays(table, -1, event_seed=7)


@given(rotation=st.sampled_from(ALL_ROTATIONS), seat=st.integers(0, 3))
def test_rotation_equals_bots_moving_k_seats(rotation: int, seat: int) -> None:
    # Bot at seat p in rotation k holds the cards seat p+k holds in rotation 0.
    assert rotation_hands(rotation)[seat] == rotation_hands(0)[(seat + rotation) % 4]


def test_all_four_rotations_give_every_bot_every_hand_once() -> None:
    table = TableDraw("n", "e", "s", "w")
    plays = board_plays(table, 0, event_seed=0, rotations=ALL_ROTATIONS)
    for bot in table.seats:
        assert sorted(play.hand_of(bot) for play in plays) == [0, 1, 2, 3]


def test_seeds_are_pinned_and_independent_of_the_process() -> None:
    assert board_seed(7, 3) == 13631792712185009135
    assert play_seed(7, 3, 0) == 11101340187667861474
    assert play_seed(7, 3, 1) == 11877505539594797526
    assert seat_seed(7, 3, 1, 2) == 11399627145149116765


@given(event=st.integers(-(2**63), 2**63), board=st.integers(0, 10**6))
def test_play_seeds_differ_across_rotations_and_boards(event: int, board: int) -> None:
    seeds = {play_seed(event, b, k) for b in (board, board + 1) for k in ALL_ROTATIONS}
    assert len(seeds) == 8
    assert all(0 <= s < 2**64 for s in seeds)
    assert play_seed(event, board, 1) == play_seed(event, board, 1)


def test_round_plays_share_a_fresh_board_set_across_tables() -> None:
    schedule = round_robin(8)
    assert list(round_boards(2, 3)) == [6, 7, 8]
    plays = round_plays(schedule.rounds[2], 2, boards_per_round=3, event_seed=5)
    assert len(plays) == 3 * 2 * 2  # boards × tables × rotations
    assert {p.board for p in plays} == {6, 7, 8}
    assert all(p.rotation == 0 for p in plays[:6]) and all(p.rotation == 1 for p in plays[6:])
    assert Counter((p.board, p.table) for p in plays) == {
        (b, t): 2 for b in (6, 7, 8) for t in schedule.rounds[2].tables
    }
    assert plays == round_plays(schedule.rounds[2], 2, boards_per_round=3, event_seed=5)
    every = schedule_plays(schedule, boards_per_round=3, event_seed=5)
    assert len(every) == 7 * 12 and len({p.board for p in every}) == 7 * 3


def test_docstring_examples_run() -> None:
    assert doctest.testmod(schedule_module).failed == 0
