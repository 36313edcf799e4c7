"""Event schedules: which bots sit at which table and seat in each round, and the plays of a board.

Vocabulary:

* A **table** seats four bots North, East, South, West (seats 0..3). Partners sit opposite:
  team A is North–South (seats 0 & 2), team B is East–West (seats 1 & 3). Play order is
  N→E→S→W, so each seat's *successor* (the next seat) is an opponent.
* A **round** is a set of tables played at the same time, plus the bots that sit out (**byes**).
  Every table of a round plays the same boards.
* A **cycle** is one pass of a design: for a whist design every pair of bots partners once and
  opposes twice per cycle.
* A **board** is one fixed deal; it is played in several **rotations** (duplicate play), each
  a **play** with its own seed.

Everything here is pure and deterministic given a seed: no I/O, no clock, no global random
state. The designs are the ones tabulated in the note; they are built by cyclic development of
base rounds and relabelled per cycle with a seeded random map so that repeated events differ.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import math
import random
from collections.abc import Callable, Iterable, Sequence
from typing import TypeAlias, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = [
    "ALL_ROTATIONS",
    "DEFAULT_ANNEAL_STEPS",
    "DEFAULT_ROTATIONS",
    "EAST",
    "NORTH",
    "SEATS",
    "SOUTH",
    "WEST",
    "FloatMatrix",
    "IntMatrix",
    "Method",
    "Round",
    "Schedule",
    "ScheduleKind",
    "TableDraw",
    "annealed_schedule",
    "build_schedule",
    "bye_counts",
    "default_anneal_rounds",
    "design_matrix",
    "design_rank",
    "fillers_needed",
    "fixed_schedule",
    "games_played",
    "gauntlet_schedule",
    "opponent_counts",
    "partner_counts",
    "round_robin_schedule",
    "successor_counts",
    "turnier_schedule",
    "two_fold_sizes",
    "whist_sizes",
]

SEATS = 4
NORTH, EAST, SOUTH, WEST = 0, 1, 2, 3
DEFAULT_ROTATIONS: tuple[int, ...] = (0, 1)
ALL_ROTATIONS: tuple[int, ...] = (0, 1, 2, 3)
DEFAULT_ANNEAL_STEPS = 400_000

IntMatrix: TypeAlias = npt.NDArray[np.int64]
FloatMatrix: TypeAlias = npt.NDArray[np.float64]
_Quad: TypeAlias = tuple[int, int, int, int]
_T = TypeVar("_T")

# Seat pairs (p, p+1 mod 4): the second seat plays immediately after the first, as an opponent.
_SUCCESSOR_SEATS = ((NORTH, EAST), (EAST, SOUTH), (SOUTH, WEST), (WEST, NORTH))
_PARTNER_SEATS = ((NORTH, SOUTH), (EAST, WEST))


class ScheduleKind(enum.StrEnum):
    """The kinds of event the entry point ``build_schedule`` can plan."""

    ROUND_ROBIN = "round_robin"
    GAUNTLET = "gauntlet"
    FIXED = "fixed"
    TURNIER = "turnier"


class Method(enum.StrEnum):
    """How a schedule's rounds were produced; stored with the event for reproducibility."""

    WHIST = "whist"
    TWO_FOLD = "two_fold"
    WHIST_WITH_FILLERS = "whist_with_fillers"
    ANNEAL = "anneal"
    GAUNTLET = "gauntlet"
    FIXED = "fixed"
    TURNIER = "turnier"


# ---------------------------------------------------------------------------------------------
# Data


@dataclasses.dataclass(frozen=True, slots=True)
class TableDraw:
    """Four distinct bots by seat; team A is North–South (seats 0 & 2), team B East–West."""

    north: str
    east: str
    south: str
    west: str

    def __post_init__(self) -> None:
        if len(set(self.seats)) != SEATS:
            raise ValueError(f"a table needs four distinct bots, got {self.seats!r}")

    @classmethod
    def from_seats(cls, seats: Sequence[str]) -> TableDraw:
        """Builds a table from bots listed in seat order N, E, S, W."""
        if len(seats) != SEATS:
            raise ValueError(f"a table has {SEATS} seats, got {len(seats)} bots: {seats!r}")
        return cls(seats[NORTH], seats[EAST], seats[SOUTH], seats[WEST])

    @property
    def seats(self) -> tuple[str, str, str, str]:
        """The bots in seat order N, E, S, W."""
        return (self.north, self.east, self.south, self.west)

    @property
    def team_a(self) -> tuple[str, str]:
        """The North–South partnership (seats 0 & 2)."""
        return (self.north, self.south)

    @property
    def team_b(self) -> tuple[str, str]:
        """The East–West partnership (seats 1 & 3)."""
        return (self.east, self.west)

    def seat_of(self, bot: str) -> int:
        """Returns the seat (0..3) of ``bot`` at this table."""
        try:
            return self.seats.index(bot)
        except ValueError:
            raise ValueError(f"{bot!r} does not sit at {self.seats!r}") from None

    def mirrored(self) -> TableDraw:
        """Swaps the East and West bots: same partnerships, reversed play order (§1.2)."""
        return TableDraw(self.north, self.west, self.south, self.east)


@dataclasses.dataclass(frozen=True, slots=True)
class Round:
    """Tables played at the same time and the bots sitting out; ``cycle`` is the design cycle."""

    tables: tuple[TableDraw, ...]
    byes: tuple[str, ...] = ()
    cycle: int = 0

    def __post_init__(self) -> None:
        everyone = [*self.seated, *self.byes]
        if len(set(everyone)) != len(everyone):
            raise ValueError(f"a bot appears twice in one round: {everyone!r}")

    @property
    def seated(self) -> tuple[str, ...]:
        """The bots at the tables, table by table in seat order."""
        return tuple(bot for table in self.tables for bot in table.seats)


@dataclasses.dataclass(frozen=True, slots=True)
class Schedule:
    """An event plan: its rounds, every bot that takes a seat, and how it was built.

    ``participants`` fixes the index order of the count matrices and includes ``fillers``
    (reference bots that pad the field; rated, but hidden from standings). ``labelings[c]``
    maps design label to bot for cycle ``c`` (empty when no labelled design was developed).
    ``partner_lambda`` is the exact number of times every pair of participants partners when
    the design guarantees one (opponents then meet exactly twice as often), else ``None``.
    ``directed`` claims that every opposing pair meets equally often in both seat orders.
    """

    kind: ScheduleKind
    method: Method
    participants: tuple[str, ...]
    rounds: tuple[Round, ...]
    cycles: int
    seed: int
    fillers: tuple[str, ...] = ()
    candidate: str | None = None
    labelings: tuple[tuple[str, ...], ...] = ()
    partner_lambda: int | None = None
    directed: bool = False

    def __post_init__(self) -> None:
        known = set(self.participants)
        if len(known) != len(self.participants):
            raise ValueError(f"duplicate participants: {self.participants!r}")
        for number, round_ in enumerate(self.rounds):
            strangers = set(round_.seated) - known
            if strangers:
                raise ValueError(f"round {number} seats non-participants {sorted(strangers)!r}")

    @property
    def tables(self) -> tuple[TableDraw, ...]:
        """Every table of every round, in round order: one entry per game."""
        return tuple(table for round_ in self.rounds for table in round_.tables)

    @property
    def bots(self) -> tuple[str, ...]:
        """The participants that appear in standings (fillers excluded)."""
        return tuple(bot for bot in self.participants if bot not in self.fillers)


# ---------------------------------------------------------------------------------------------
# Counts over any schedule


def _index(schedule: Schedule) -> dict[str, int]:
    return {bot: i for i, bot in enumerate(schedule.participants)}


def partner_counts(schedule: Schedule) -> IntMatrix:
    """Returns P with P[i, j] = games in which participants i and j are partners (symmetric)."""
    index = _index(schedule)
    counts = np.zeros((len(index), len(index)), dtype=np.int64)
    for table in schedule.tables:
        seats = table.seats
        for p, q in _PARTNER_SEATS:
            i, j = index[seats[p]], index[seats[q]]
            counts[i, j] += 1
            counts[j, i] += 1
    return counts


def opponent_counts(schedule: Schedule) -> IntMatrix:
    """Returns O with O[i, j] = games in which participants i and j are opponents (symmetric)."""
    successors = successor_counts(schedule)
    return successors + successors.T


def successor_counts(schedule: Schedule) -> IntMatrix:
    """Returns S with S[i, j] = games in which j sits immediately after i in play order."""
    index = _index(schedule)
    counts = np.zeros((len(index), len(index)), dtype=np.int64)
    for table in schedule.tables:
        seats = table.seats
        for p, q in _SUCCESSOR_SEATS:
            counts[index[seats[p]], index[seats[q]]] += 1
    return counts


def bye_counts(schedule: Schedule) -> dict[str, int]:
    """Returns the number of rounds each participant sits out."""
    counts = dict.fromkeys(schedule.participants, 0)
    for round_ in schedule.rounds:
        for bot in round_.byes:
            counts[bot] += 1
    return counts


def games_played(schedule: Schedule) -> dict[str, int]:
    """Returns the number of tables (games) each participant sits at."""
    counts = dict.fromkeys(schedule.participants, 0)
    for table in schedule.tables:
        for bot in table.seats:
            counts[bot] += 1
    return counts


def design_matrix(schedule: Schedule) -> FloatMatrix:
    """Returns X with one row per game: +½ for team A's bots, −½ for team B's, 0 elsewhere.

    This is the bot-vs-team incidence of the rating fit (§3.2): the team gap of a game is
    ``X @ r`` when team rating is the mean of its members' ratings.
    """
    index = _index(schedule)
    tables = schedule.tables
    matrix = np.zeros((len(tables), len(index)), dtype=np.float64)
    for row, table in enumerate(tables):
        for bot in table.team_a:
            matrix[row, index[bot]] = 0.5
        for bot in table.team_b:
            matrix[row, index[bot]] = -0.5
    return matrix


def design_rank(schedule: Schedule) -> int:
    """Returns rank(X); individual ratings are identifiable iff it is N−1 (§3.2)."""
    matrix = design_matrix(schedule)
    if matrix.size == 0:
        return 0
    return int(np.linalg.matrix_rank(matrix))


# ---------------------------------------------------------------------------------------------
# Tabulated designs (§1.3, §1.4), on labels 0..N-1


@dataclasses.dataclass(frozen=True, slots=True)
class _CyclicDesign:
    """Base tables developed over a group of ``order`` elements; ``fixed`` is never shifted."""

    order: int
    add: Callable[[int, int], int]
    base: tuple[_Quad, ...]
    fixed: int | None = None
    one_table_per_round: bool = False
    directed: bool = False

    def cycle(self) -> list[list[_Quad]]:
        """Returns one cycle as rounds of label tables (r = 0..order-1 adds r to each label)."""

        def shift(quad: _Quad, g: int) -> _Quad:
            a, b, c, d = (x if x == self.fixed else self.add(x, g) for x in quad)
            return (a, b, c, d)

        if self.one_table_per_round:
            return [[shift(quad, g)] for g in range(self.order) for quad in self.base]
        return [[shift(quad, g) for quad in self.base] for g in range(self.order)]


def _add_mod(modulus: int) -> Callable[[int, int], int]:
    def add(x: int, g: int) -> int:
        return (x + g) % modulus

    return add


def _add_z3xz3(x: int, g: int) -> int:
    """Adds in Z3×Z3 with label 3a+b for (a, b): base-3 digits added mod 3 without carry."""
    return 3 * ((x // 3 + g // 3) % 3) + (x % 3 + g % 3) % 3


def _game(team_a: tuple[int, int], team_b: tuple[int, int]) -> _Quad:
    """Seats the game {a0,a1} v {b0,b1} as the table (a0 b0 a1 b1)."""
    return (team_a[0], team_b[0], team_a[1], team_b[1])


# Wh(N): every pair partners once and opposes twice per cycle. Tables are (N E S W).
_WHIST: dict[int, _CyclicDesign] = {
    4: _CyclicDesign(
        1, _add_mod(4), ((0, 1, 2, 3), (0, 2, 1, 3), (0, 1, 3, 2)), one_table_per_round=True
    ),
    5: _CyclicDesign(5, _add_mod(5), ((1, 2, 4, 3),), directed=True),
    8: _CyclicDesign(7, _add_mod(7), ((7, 3, 2, 0), (1, 4, 6, 5)), fixed=7),
    9: _CyclicDesign(9, _add_z3xz3, ((1, 3, 2, 6), (4, 5, 8, 7)), directed=True),
    12: _CyclicDesign(11, _add_mod(11), ((11, 6, 1, 8), (0, 4, 5, 3), (2, 7, 9, 10)), fixed=11),
    13: _CyclicDesign(
        13, _add_mod(13), ((1, 5, 12, 8), (2, 3, 11, 10), (4, 7, 9, 6)), directed=True
    ),
    16: _CyclicDesign(
        15, _add_mod(15), ((15, 0, 1, 3), (2, 6, 13, 7), (4, 9, 12, 11), (5, 8, 10, 14)), fixed=15
    ),
}

# 2-fold designs (λ = 2): every pair partners twice and opposes four times; one table per round.
_TWO_FOLD: dict[int, _CyclicDesign] = {
    6: _CyclicDesign(
        5,
        _add_mod(5),
        (_game((0, 1), (2, 3)), _game((0, 2), (1, 5)), _game((0, 3), (1, 5))),
        fixed=5,
        one_table_per_round=True,
    ),
    7: _CyclicDesign(
        7,
        _add_mod(7),
        (_game((0, 1), (2, 3)), _game((0, 3), (1, 4)), _game((0, 5), (1, 3))),
        one_table_per_round=True,
    ),
}


def whist_sizes() -> tuple[int, ...]:
    """Returns the field sizes N with a tabulated whist design Wh(N)."""
    return tuple(sorted(_WHIST))


def two_fold_sizes() -> tuple[int, ...]:
    """Returns the field sizes N with a tabulated 2-fold design."""
    return tuple(sorted(_TWO_FOLD))


def fillers_needed(n: int) -> int:
    """Returns how many filler bots pad a round robin of ``n`` bots to a whist size (§1.4).

    Fillers apply only to N ≥ 10 with N ≡ 2, 3 (mod 4); everywhere else this is 0.
    """
    if n < 10 or n % 4 in (0, 1):
        return 0
    return -n % 4


# ---------------------------------------------------------------------------------------------
# Seeded randomness, and assembly of label designs into rounds of bots


_SEED_DOMAIN = "tichu-arena/events/v1"


def _derive(tag: str, *parts: int) -> int:
    """Returns a stable 64-bit seed for ``parts`` (blake2b, independent of PYTHONHASHSEED)."""
    text = ":".join([_SEED_DOMAIN, tag, *(str(part) for part in parts)])
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def _rng(tag: str, *seeds: int) -> random.Random:
    """Returns a generator for one purpose; distinct tags and seeds give independent streams.

    Only ``Random.random()`` is drawn from (see ``_shuffle``): Python keeps its sequence fixed
    across versions, while ``shuffle`` and ``randrange`` may change between minor releases.
    """
    return random.Random(_derive(tag, *seeds))


def _shuffle(items: list[_T], rng: random.Random) -> None:
    """Shuffles in place (Fisher–Yates) using only ``rng.random()``, so stored seeds replay."""
    for i in range(len(items) - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        items[i], items[j] = items[j], items[i]


def _check_bots(bots: Iterable[str], what: str = "bots") -> tuple[str, ...]:
    players = tuple(bots)
    if len(set(players)) != len(players):
        raise ValueError(f"{what} must be distinct, got {players!r}")
    return players


def _check_cycles(cycles: int) -> None:
    if cycles < 1:
        raise ValueError(f"cycles must be at least 1, got {cycles}")


def _cycle_maps(
    labels: Sequence[str], cycles: int, rng: random.Random, *, paired: bool, pinned: int = 0
) -> list[tuple[str, ...]]:
    """Draws one label→bot map per cycle; the last ``pinned`` labels keep their bots.

    With ``paired``, odd cycles reuse the previous map so that mirroring them balances seat
    direction over each pair of cycles (§1.2, §1.5).
    """
    free, fixed = list(labels[: len(labels) - pinned]), tuple(labels[len(labels) - pinned :])
    maps: list[tuple[str, ...]] = []
    for cycle in range(cycles):
        if paired and cycle % 2 == 1:
            maps.append(maps[-1])
            continue
        shuffled = free[:]
        _shuffle(shuffled, rng)
        maps.append((*shuffled, *fixed))
    return maps


def _assemble(
    label_cycle: Sequence[Sequence[_Quad]],
    maps: Sequence[tuple[str, ...]],
    participants: tuple[str, ...],
    *,
    mirror_odd: bool,
) -> tuple[Round, ...]:
    """Maps each cycle's label tables to bots, mirroring odd cycles when asked."""
    rounds: list[Round] = []
    for cycle, mapping in enumerate(maps):
        flip = mirror_odd and cycle % 2 == 1
        for quads in label_cycle:
            tables = tuple(TableDraw.from_seats([mapping[x] for x in quad]) for quad in quads)
            if flip:
                tables = tuple(table.mirrored() for table in tables)
            seated = {bot for table in tables for bot in table.seats}
            byes = tuple(bot for bot in participants if bot not in seated)
            rounds.append(Round(tables, byes, cycle))
    return tuple(rounds)


def _from_design(
    design: _CyclicDesign,
    participants: tuple[str, ...],
    *,
    kind: ScheduleKind,
    method: Method,
    cycles: int,
    seed: int,
    partner_lambda: int,
    fillers: tuple[str, ...] = (),
) -> Schedule:
    rng = _rng("labels", seed)
    mirror = not design.directed
    maps = _cycle_maps(participants, cycles, rng, paired=mirror)
    rounds = _assemble(design.cycle(), maps, participants, mirror_odd=mirror)
    return Schedule(
        kind=kind,
        method=method,
        participants=participants,
        rounds=rounds,
        cycles=cycles,
        seed=seed,
        fillers=fillers,
        labelings=tuple(maps),
        partner_lambda=partner_lambda,
        directed=design.directed or (mirror and cycles % 2 == 0),
    )


# ---------------------------------------------------------------------------------------------
# Builders


def round_robin_schedule(
    bots: Sequence[str], *, cycles: int = 1, seed: int = 0, fillers: Sequence[str] = ()
) -> Schedule:
    """Plans a partner-rotating round robin, choosing the design as the note orders (§1.4).

    Wh(N) for tabulated N ≡ 0, 1 (mod 4); the 2-fold design for N = 6, 7; Wh(N + k) with the
    given ``fillers`` when N ≥ 10 and k = ``fillers_needed(N)``; otherwise the seeded greedy +
    annealing fallback. Odd cycles of non-directed designs are mirrored copies of the cycle
    before them, so an even number of cycles balances seat direction.

    Raises:
        ValueError: fewer than 4 bots, duplicates, ``cycles`` < 1, or fillers that do not fit.
    """
    players = _check_bots(bots)
    _check_cycles(cycles)
    n = len(players)
    if n < SEATS:
        raise ValueError(f"a round robin needs at least {SEATS} bots, got {n}")
    extra = _check_bots(fillers, "fillers")
    if extra:
        if set(extra) & set(players):
            raise ValueError(f"fillers {extra!r} must differ from the bots {players!r}")
        needed = fillers_needed(n)
        if needed == 0:
            raise ValueError(f"fillers only pad N >= 10 with N = 2, 3 (mod 4), not N = {n}")
        if len(extra) != needed:
            raise ValueError(f"N = {n} needs exactly {needed} filler(s), got {len(extra)}")
        if n + needed not in _WHIST:
            raise ValueError(
                f"no tabulated whist design for N' = {n + needed}; omit fillers to anneal"
            )
        return _from_design(
            _WHIST[n + needed],
            players + extra,
            kind=ScheduleKind.ROUND_ROBIN,
            method=Method.WHIST_WITH_FILLERS,
            cycles=cycles,
            seed=seed,
            partner_lambda=cycles,
            fillers=extra,
        )
    if n in _WHIST:
        return _from_design(
            _WHIST[n],
            players,
            kind=ScheduleKind.ROUND_ROBIN,
            method=Method.WHIST,
            cycles=cycles,
            seed=seed,
            partner_lambda=cycles,
        )
    if n in _TWO_FOLD:
        return _from_design(
            _TWO_FOLD[n],
            players,
            kind=ScheduleKind.ROUND_ROBIN,
            method=Method.TWO_FOLD,
            cycles=cycles,
            seed=seed,
            partner_lambda=2 * cycles,
        )
    return annealed_schedule(players, cycles=cycles, seed=seed)


def turnier_schedule(bots: Sequence[str], *, cycles: int = 1, seed: int = 0) -> Schedule:
    """Plans the 4-bot 'turnier': 9 rounds per event, each of the 3 partnerships 3 times.

    One turnier is three cycles of Wh(4) (AB|CD, AC|BD, AD|BC), so the schedule has
    ``3 * cycles`` design cycles; every second one is mirrored.
    """
    players = _check_bots(bots)
    _check_cycles(cycles)
    if len(players) != SEATS:
        raise ValueError(f"a turnier needs exactly {SEATS} bots, got {len(players)}")
    return _from_design(
        _WHIST[SEATS],
        players,
        kind=ScheduleKind.TURNIER,
        method=Method.TURNIER,
        cycles=3 * cycles,
        seed=seed,
        partner_lambda=3 * cycles,
    )


def fixed_schedule(
    team_a: tuple[str, str], team_b: tuple[str, str], *, cycles: int = 1, seed: int = 0
) -> Schedule:
    """Plans a fixed-partnership match: one table per cycle, odd cycles mirrored.

    ``team_a`` sits North–South, ``team_b`` East–West; duplicate rotation 1 swaps the cards,
    so the teams never need to change seats. Only team sums are identifiable (rank 1).
    """
    _check_cycles(cycles)
    table = TableDraw(team_a[0], team_b[0], team_a[1], team_b[1])
    rounds = tuple(
        Round((table.mirrored() if cycle % 2 else table,), (), cycle) for cycle in range(cycles)
    )
    return Schedule(
        kind=ScheduleKind.FIXED,
        method=Method.FIXED,
        participants=table.seats,
        rounds=rounds,
        cycles=cycles,
        seed=seed,
        directed=cycles % 2 == 0,
    )


def _gauntlet_games(field_size: int) -> list[tuple[int, int, int]]:
    """Returns one gauntlet cycle as (partner, opponent, opponent) on field labels 0..F-1.

    Odd F: each field pair {a, b} is opposed once, with partner (a+b)/2 mod F; each bot
    partners the candidate (F-1)/2 times. Even F: labels Z_m ∪ {∞}, m = F-1, ∞ = m. Every
    pair is opposed twice: finite {a, b} once with partner (a+b)/2 and once with ∞ (difference
    ±1) or a-1 (other differences); {a, ∞} with partners a±1. Each bot partners F-1 times.
    Games are ordered round-robin over partners so any prefix stays near balanced.
    """
    if field_size % 2 == 1:
        m, infinity = field_size, None
    else:
        m, infinity = field_size - 1, field_size - 1
    half = (m + 1) // 2  # the inverse of 2 mod m (m is odd)
    by_partner: dict[int, list[tuple[int, int]]] = {p: [] for p in range(field_size)}
    for a in range(m):
        for b in range(a + 1, m):
            by_partner[(a + b) * half % m].append((a, b))
            if infinity is not None:
                diff = min(b - a, m - (b - a))
                low = a if (b - a) == diff else b  # the pair is {low, low + diff}
                by_partner[infinity if diff == 1 else (low - 1) % m].append((a, b))
    if infinity is not None:
        for a in range(m):
            by_partner[(a + 1) % m].append((a, infinity))
            by_partner[(a - 1) % m].append((a, infinity))
    per_partner = {len(games) for games in by_partner.values()}
    assert len(per_partner) == 1, f"unbalanced gauntlet construction: {by_partner!r}"
    rounds = per_partner.pop()
    return [(p, *by_partner[p][k]) for k in range(rounds) for p in range(field_size)]


def gauntlet_schedule(
    candidate: str, field: Sequence[str], *, cycles: int = 1, seed: int = 0
) -> Schedule:
    """Plans a gauntlet: one table per round, the candidate North with a field bot South.

    Per cycle each field bot partners the candidate equally often and each pair of field bots
    opposes the candidate equally often: C(F,2) games for an odd field of F, 2·C(F,2) for an
    even one. All other field bots have a bye. Odd cycles mirror the one before. Rounds do
    not depend on each other, so a runner may play several at once with candidate instances.
    """
    opponents = _check_bots(field, "field bots")
    _check_cycles(cycles)
    if candidate in opponents:
        raise ValueError(f"the candidate {candidate!r} cannot also be in the field")
    if len(opponents) < SEATS - 1:
        raise ValueError(f"a gauntlet needs at least {SEATS - 1} field bots, got {len(opponents)}")
    size = len(opponents)
    label_cycle = [[(size, a, p, b)] for p, a, b in _gauntlet_games(size)]
    participants = (candidate, *opponents)
    maps = _cycle_maps((*opponents, candidate), cycles, _rng("labels", seed), paired=True, pinned=1)
    return Schedule(
        kind=ScheduleKind.GAUNTLET,
        method=Method.GAUNTLET,
        participants=participants,
        rounds=_assemble(label_cycle, maps, participants, mirror_odd=True),
        cycles=cycles,
        seed=seed,
        candidate=candidate,
        labelings=tuple(maps),
        directed=cycles % 2 == 0,
    )


def build_schedule(
    bots: Sequence[str],
    kind: ScheduleKind,
    *,
    cycles: int = 1,
    seed: int = 0,
    candidate: str | None = None,
    fillers: Sequence[str] = (),
) -> Schedule:
    """Plans an event of ``kind`` for ``bots``; the single entry point for runners and the CLI.

    * ``round_robin``: ``round_robin_schedule(bots, cycles, seed, fillers)``.
    * ``gauntlet``: ``candidate`` (one of ``bots``) against the other bots.
    * ``fixed``: exactly four bots in seat order; team A = bots[0] & bots[2].
    * ``turnier``: exactly four bots; ``cycles`` turniers of 9 rounds.

    Raises:
        ValueError: an unknown kind or a request the kind cannot satisfy.

    >>> event = build_schedule(["a", "b", "c", "d", "e"], ScheduleKind.ROUND_ROBIN, seed=1)
    >>> event.method, len(event.rounds), bye_counts(event)["a"], design_rank(event)
    (<Method.WHIST: 'whist'>, 5, 1, 4)
    """
    kind = ScheduleKind(kind)
    players = _check_bots(bots)
    if kind is not ScheduleKind.ROUND_ROBIN and fillers:
        raise ValueError(f"fillers apply only to round robins, not {kind.value}")
    if kind is not ScheduleKind.GAUNTLET and candidate is not None:
        raise ValueError(f"a candidate applies only to gauntlets, not {kind.value}")
    if kind is ScheduleKind.ROUND_ROBIN:
        return round_robin_schedule(players, cycles=cycles, seed=seed, fillers=fillers)
    if kind is ScheduleKind.TURNIER:
        return turnier_schedule(players, cycles=cycles, seed=seed)
    if kind is ScheduleKind.FIXED:
        if len(players) != SEATS:
            raise ValueError(f"fixed partnerships need exactly {SEATS} bots, got {len(players)}")
        return fixed_schedule(
            (players[NORTH], players[SOUTH]),
            (players[EAST], players[WEST]),
            cycles=cycles,
            seed=seed,
        )
    if candidate is None:
        raise ValueError("a gauntlet needs a candidate")
    if candidate not in players:
        raise ValueError(f"the candidate {candidate!r} is not among the bots {players!r}")
    field = [bot for bot in players if bot != candidate]
    schedule = gauntlet_schedule(candidate, field, cycles=cycles, seed=seed)
    return dataclasses.replace(schedule, participants=players)  # keep the caller's order


# ---------------------------------------------------------------------------------------------
# Greedy + simulated annealing fallback (§1.6)

_W_PARTNER = 4.0
_W_OPPONENT = 1.0
_W_SUCCESSOR = 0.25
_W_BYE = 10.0
_GREEDY_RESTARTS = 5
_START_TEMPERATURE = 2.0
_EPSILON = 1e-9


def default_anneal_rounds(n: int, cycles: int = 1) -> int:
    """Returns the fewest rounds in which every pair can partner ``cycles`` times.

    That is ⌈cycles·C(N,2) / (2T)⌉ with T = ⌊N/4⌋ tables, each seating two partnerships.
    """
    if n < SEATS:
        raise ValueError(f"at least {SEATS} bots are needed, got {n}")
    slots = 2 * (n // SEATS)
    return -(-cycles * (n * (n - 1) // 2) // slots)


def _least_squares(total: int, count: int, mean: float) -> float:
    """Returns min Σ(x − mean)² over ``count`` integers summing to ``total`` (floor/ceil mix)."""
    low, high_count = divmod(total, count)
    return high_count * (low + 1 - mean) ** 2 + (count - high_count) * (low - mean) ** 2


class _Annealer:
    """Label-level state for §1.6: rows hold 4T seats (table by table, N E S W) then the byes."""

    def __init__(self, n: int, num_rounds: int, rng: random.Random) -> None:
        self.n = n
        self.tables = n // SEATS
        self.seated = SEATS * self.tables
        self.num_rounds = num_rounds
        self.rng = rng
        pairs = n * (n - 1) // 2
        games = num_rounds * self.tables
        self.lam_partner = 2 * games / pairs
        self.lam_opponent = 4 * games / pairs
        self.lam_bye = num_rounds * (n - self.seated) / n
        self.floor = (
            _W_PARTNER * _least_squares(2 * games, pairs, self.lam_partner)
            + _W_OPPONENT * _least_squares(4 * games, pairs, self.lam_opponent)
            + _W_BYE * _least_squares(num_rounds * (n - self.seated), n, self.lam_bye)
        )
        self.partners = [[0] * n for _ in range(n)]
        self.opponents = [[0] * n for _ in range(n)]
        self.successors = [[0] * n for _ in range(n)]
        self.byes = [0] * n
        self.rows: list[list[int]] = []

    # -- greedy, round by round

    def _arrangement_cost(self, quad: Sequence[int]) -> float:
        """Increase of the sums of squared counts if ``quad`` is committed as a table."""
        a, b, c, d = quad
        p, o, s = self.partners, self.opponents, self.successors
        return (
            _W_PARTNER * (2 * (p[a][c] + p[b][d]) + 2)
            + _W_OPPONENT * (2 * (o[a][b] + o[b][c] + o[c][d] + o[d][a]) + 4)
            + _W_SUCCESSOR * (2 * (s[a][b] + s[b][c] + s[c][d] + s[d][a]) + 4)
        )

    def _local_search(self, arrangement: list[int]) -> float:
        """Applies improving seat swaps until none is left; returns the arrangement's cost."""
        costs = [
            self._arrangement_cost(arrangement[SEATS * t : SEATS * t + SEATS])
            for t in range(self.tables)
        ]
        improved = True
        while improved:
            improved = False
            for x in range(self.seated):
                for y in range(x + 1, self.seated):
                    tx, ty = x // SEATS, y // SEATS
                    arrangement[x], arrangement[y] = arrangement[y], arrangement[x]
                    new_x = self._arrangement_cost(arrangement[SEATS * tx : SEATS * tx + SEATS])
                    new_y = (
                        self._arrangement_cost(arrangement[SEATS * ty : SEATS * ty + SEATS])
                        if ty != tx
                        else 0.0
                    )
                    old = costs[tx] + (costs[ty] if ty != tx else 0.0)
                    if new_x + new_y < old - _EPSILON:
                        costs[tx] = new_x
                        if ty != tx:
                            costs[ty] = new_y
                        improved = True
                    else:
                        arrangement[x], arrangement[y] = arrangement[y], arrangement[x]
        return sum(costs)

    def greedy(self) -> None:
        """Builds every round: byes to the fewest-bye bots, then the cheapest seating found.

        Bye ties go to bots that did not sit out the previous round, then to a seeded draw.
        Seating is first-improvement seat-swap search to a local optimum from 5 random starts.
        """
        previous: set[int] = set()
        out_count = self.n - self.seated
        for _ in range(self.num_rounds):
            draw = [self.rng.random() for _ in range(self.n)]
            order = sorted(range(self.n), key=lambda i: (self.byes[i], i in previous, draw[i]))
            out, active = order[:out_count], order[out_count:]
            best: list[int] = []
            best_cost = math.inf
            for _ in range(_GREEDY_RESTARTS):
                arrangement = active[:]
                _shuffle(arrangement, self.rng)
                cost = self._local_search(arrangement)
                if cost < best_cost - _EPSILON:
                    best, best_cost = arrangement, cost
            for t in range(self.tables):
                a, b, c, d = best[SEATS * t : SEATS * t + SEATS]
                for u, v in ((a, c), (b, d)):
                    self.partners[u][v] += 1
                    self.partners[v][u] += 1
                for u, v in ((a, b), (b, c), (c, d), (d, a)):
                    self.opponents[u][v] += 1
                    self.opponents[v][u] += 1
                    self.successors[u][v] += 1
            for i in out:
                self.byes[i] += 1
            previous = set(out)
            self.rows.append(best + sorted(out))

    # -- global pass

    def objective(self) -> float:
        """F = Σ_pairs [wp(P−λp)² + wo(O−λo)²] + wb·Σ_i (b_i−λb)²."""
        total = 0.0
        for i in range(self.n):
            for j in range(i + 1, self.n):
                total += _W_PARTNER * (self.partners[i][j] - self.lam_partner) ** 2
                total += _W_OPPONENT * (self.opponents[i][j] - self.lam_opponent) ** 2
        return total + _W_BYE * sum((b - self.lam_bye) ** 2 for b in self.byes)

    def _neighbours(self, row: list[int], x: int) -> tuple[int, int, int]:
        """Returns the partner, successor and predecessor of the bot at seat position ``x``."""
        base, seat = x - x % SEATS, x % SEATS
        return (
            row[base + (seat + 2) % SEATS],
            row[base + (seat + 1) % SEATS],
            row[base + (seat + 3) % SEATS],
        )

    def _swap_changes(
        self, row: list[int], x: int, y: int
    ) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
        """Lists the partner and opponent count changes (i, j, ±1) of swapping positions x, y.

        ``x`` is a seat; ``y`` is a seat or a bye. Every listed pair is distinct, so the change
        of F is the sum of the single-count changes.
        """
        u, v = row[x], row[y]
        seated = self.seated
        if y < seated and x // SEATS == y // SEATS:
            # Neighbours at one table swap seats: each takes the other's partner.
            pu, pv = self._neighbours(row, x)[0], self._neighbours(row, y)[0]
            return (
                [(u, pu, -1), (v, pv, -1), (u, pv, 1), (v, pu, 1)],
                [(u, pv, -1), (v, pu, -1), (u, pu, 1), (v, pv, 1)],
            )
        pu, lu, ru = self._neighbours(row, x)
        partner = [(u, pu, -1), (v, pu, 1)]
        opponent = [(u, lu, -1), (v, lu, 1), (u, ru, -1), (v, ru, 1)]
        if y < seated:
            pv, lv, rv = self._neighbours(row, y)
            partner += [(v, pv, -1), (u, pv, 1)]
            opponent += [(v, lv, -1), (u, lv, 1), (v, rv, -1), (u, rv, 1)]
        return partner, opponent

    def anneal(self, steps: int) -> float:
        """Swaps two bots inside one round (seat↔seat or seat↔bye); linear cooling 2 → 0.

        Stops early once F reaches its lower bound (every count at the floor or ceiling of its
        target). Returns the final F.
        """
        uniform, n, seated, num_rounds = self.rng.random, self.n, self.seated, self.num_rounds
        p, o, byes = self.partners, self.opponents, self.byes
        lam_p, lam_o, lam_b = self.lam_partner, self.lam_opponent, self.lam_bye
        value = self.objective()
        target = self.floor + 1e-6
        for step in range(steps):
            if value <= target:
                break
            # int(random() * k) draws a uniform index about 3x faster than randrange(k).
            row = self.rows[int(uniform() * num_rounds)]
            x = int(uniform() * seated)
            y = int(uniform() * (n - 1))
            if y >= x:
                y += 1
            if y < seated and x // SEATS == y // SEATS and (x - y) % 2 == 0:
                continue  # swapping partners changes no count
            partner, opponent = self._swap_changes(row, x, y)
            delta = 0.0
            for i, j, sign in partner:
                delta += _W_PARTNER * (2 * sign * (p[i][j] - lam_p) + 1)
            for i, j, sign in opponent:
                delta += _W_OPPONENT * (2 * sign * (o[i][j] - lam_o) + 1)
            if y >= seated:
                u, v = row[x], row[y]
                delta += _W_BYE * (2 * (byes[u] - lam_b) + 1) + _W_BYE * (1 - 2 * (byes[v] - lam_b))
            if delta > 0:
                temperature = _START_TEMPERATURE * (1.0 - step / steps)
                if temperature <= 0 or uniform() >= math.exp(-delta / temperature):
                    continue
            for i, j, sign in partner:
                p[i][j] += sign
                p[j][i] += sign
            for i, j, sign in opponent:
                o[i][j] += sign
                o[j][i] += sign
            if y >= seated:
                byes[row[x]] += 1
                byes[row[y]] -= 1
            row[x], row[y] = row[y], row[x]
            value += delta
        return value


def annealed_schedule(
    bots: Sequence[str],
    *,
    cycles: int = 1,
    seed: int = 0,
    rounds: int | None = None,
    steps: int = DEFAULT_ANNEAL_STEPS,
) -> Schedule:
    """Plans a round robin for any N ≥ 4 by greedy rounds plus simulated annealing (§1.6).

    ``rounds`` defaults to ``default_anneal_rounds(N, cycles)``; all rounds are optimised
    together, so balance holds over the whole event rather than per cycle. Deterministic
    given ``seed``; no exact balance is promised (``partner_lambda`` is ``None``).
    """
    players = _check_bots(bots)
    _check_cycles(cycles)
    n = len(players)
    if n < SEATS:
        raise ValueError(f"a round robin needs at least {SEATS} bots, got {n}")
    num_rounds = default_anneal_rounds(n, cycles) if rounds is None else rounds
    if num_rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {num_rounds}")
    annealer = _Annealer(n, num_rounds, _rng("anneal", seed))
    annealer.greedy()
    annealer.anneal(steps)
    seated = annealer.seated
    built: list[Round] = []
    for number, row in enumerate(annealer.rows):
        tables = tuple(
            TableDraw.from_seats([players[x] for x in row[start : start + SEATS]])
            for start in range(0, seated, SEATS)
        )
        byes = tuple(players[x] for x in sorted(row[seated:]))
        built.append(Round(tables, byes, number * cycles // num_rounds))
    return Schedule(
        kind=ScheduleKind.ROUND_ROBIN,
        method=Method.ANNEAL,
        participants=players,
        rounds=tuple(built),
        cycles=cycles,
        seed=seed,
    )
