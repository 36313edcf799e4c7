"""Duplicate boards: the plays of a board (its rotations), their order and their seeds.

A **board** is one fixed deal; it is played in several **rotations** (duplicate play), each a
**play** with its own seed. Everything here is pure and deterministic given the event's key.

An event's key is either its **secret** (16 random bytes drawn when the event is created and
kept in its database): every seed is then an HMAC-SHA256 of the secret, so no seat can guess
a deal from what it sees; or, for tests and reproductions, a public **seed** (``secret`` is
``None``): seeds are then a public hash of the seed and anyone who knows it knows every deal.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import random
import secrets
from collections.abc import Sequence

from arena.tournament.schedule import (
    ALL_ROTATIONS,
    DEFAULT_ROTATIONS,
    SEATS,
    Round,
    Schedule,
    TableDraw,
    _derive,
    _rng,
    _shuffle,
)

__all__ = [
    "BoardPlay",
    "board_plays",
    "board_seed",
    "derived_secret",
    "keyed_seed",
    "new_secret",
    "play_seed",
    "rotation_hands",
    "round_boards",
    "round_plays",
    "schedule_plays",
    "schedule_seed",
    "seat_seed",
]


def _check_board(board: int) -> None:
    if board < 0:
        raise ValueError(f"board numbers start at 0, got {board}")


def _check_rotation(rotation: int) -> None:
    if rotation not in ALL_ROTATIONS:
        raise ValueError(f"rotation must be one of {ALL_ROTATIONS}, got {rotation}")


SECRET_BYTES = 16
"""Length of an event secret: 128 bits, out of reach of any search."""

_KEY_DOMAIN = "tichu-arena/events/keyed/v1"


def new_secret() -> bytes:
    """Draws a fresh event secret from the operating system's random source."""
    return secrets.token_bytes(SECRET_BYTES)


def keyed_seed(secret: bytes, tag: str, *parts: int, bits: int = 128) -> int:
    """Returns a ``bits``-bit seed for ``parts``: HMAC-SHA256 of the secret, truncated."""
    text = ":".join([_KEY_DOMAIN, tag, *(str(part) for part in parts)])
    digest = hmac.new(secret, text.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[: bits // 8], "big")


def derived_secret(secret: bytes, tag: str, *parts: int) -> bytes:
    """Returns the secret of a part (a league's round, a gate) keyed by its parent's secret:
    whoever holds the parent reproduces it; nobody else can guess it."""
    return keyed_seed(secret, tag, *parts, bits=8 * SECRET_BYTES).to_bytes(SECRET_BYTES, "big")


def _seed(secret: bytes | None, tag: str, *parts: int, bits: int = 128) -> int:
    """A keyed seed from ``secret``, or the public derivation when the event has a seed.

    With a public seed ``parts[0]`` is it; with a secret it is ignored (and 0).
    """
    if secret is None:
        return _derive(tag, *parts)
    return keyed_seed(secret, tag, *parts[1:], bits=bits)


def board_seed(event_seed: int, board: int, secret: bytes | None = None) -> int:
    """Returns the seed of the deal of ``board``: the same for every rotation and table."""
    _check_board(board)
    return _seed(secret, "board", event_seed, board)


def play_seed(event_seed: int, board: int, rotation: int, secret: bytes | None = None) -> int:
    """Returns the seed of one play (board, rotation): the referee's stream for that play."""
    _check_board(board)
    _check_rotation(rotation)
    return _seed(secret, "play", event_seed, board, rotation)


def seat_seed(
    event_seed: int, board: int, rotation: int, seat: int, secret: bytes | None = None
) -> int:
    """Returns the seed for the bot at ``seat`` in one play, so runs replay exactly (§2.2).

    A bot's own seed is 64 bits (it is handed to the bot and says nothing of the deal).
    """
    _check_board(board)
    _check_rotation(rotation)
    if seat not in range(SEATS):
        raise ValueError(f"seat must be 0..{SEATS - 1}, got {seat}")
    return _seed(secret, "seat", event_seed, board, rotation, seat, bits=64)


def schedule_seed(event_seed: int, secret: bytes | None = None) -> int:
    """Returns the seed of the schedule's draws (seating labels): the event seed, or keyed."""
    return event_seed if secret is None else keyed_seed(secret, "schedule", bits=64)


def rotation_hands(rotation: int) -> tuple[int, int, int, int]:
    """Returns, by seat, the index of the dealt hand its bot receives: seat p gets H[(p+k) % 4].

    =========  ====  ====  ====  ====
    rotation    N     E     S     W
    =========  ====  ====  ====  ====
    0           H0    H1    H2    H3
    1           H1    H2    H3    H0
    2           H2    H3    H0    H1
    3           H3    H0    H1    H2
    =========  ====  ====  ====  ====

    Rotation 1 gives team A (N/S) the cards E/W held in rotation 0 and team B the N/S cards,
    so the teams swap hands; rotation 2 swaps partners' hands within each team. Each hand
    keeps its card order, so the Grand Tichu window (first 8 cards) moves with it.

    >>> rotation_hands(1)
    (1, 2, 3, 0)
    """
    _check_rotation(rotation)
    return (
        rotation % SEATS,
        (1 + rotation) % SEATS,
        (2 + rotation) % SEATS,
        (3 + rotation) % SEATS,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class BoardPlay:
    """One play of a board at a table: ``hands[p]`` is the dealt hand the seat-p bot gets."""

    board: int
    rotation: int
    table: TableDraw
    hands: tuple[int, int, int, int]
    seed: int

    def hand_of(self, bot: str) -> int:
        """Returns the index of the dealt hand ``bot`` holds in this play."""
        return self.hands[self.table.seat_of(bot)]


def _check_rotations(rotations: Sequence[int]) -> tuple[int, ...]:
    chosen = tuple(rotations)
    if not chosen or len(set(chosen)) != len(chosen):
        raise ValueError(f"rotations must be distinct and non-empty, got {chosen!r}")
    for rotation in chosen:
        _check_rotation(rotation)
    return chosen


def board_plays(
    table: TableDraw,
    board: int,
    *,
    event_seed: int,
    rotations: Sequence[int] = DEFAULT_ROTATIONS,
    secret: bytes | None = None,
) -> tuple[BoardPlay, ...]:
    """Expands one table and one board into its plays, one per rotation (default 0 and 1).

    The bots keep their seats (team A stays North–South); the cards move. In rotation k the
    bot at seat p receives dealt hand H[(p+k) % 4] (see ``rotation_hands``). Rotations 0 and 1
    cancel team card luck; ``ALL_ROTATIONS`` also balances which partner holds which hand.
    Each play's seed is ``play_seed(event_seed, board, rotation, secret)``.
    """
    _check_board(board)
    return tuple(
        BoardPlay(board, k, table, rotation_hands(k), play_seed(event_seed, board, k, secret))
        for k in _check_rotations(rotations)
    )


def round_boards(round_index: int, boards_per_round: int) -> range:
    """Returns the board numbers of a round: a fresh set, shared by all its tables (§2.2)."""
    if round_index < 0 or boards_per_round < 1:
        raise ValueError(
            f"need round_index >= 0 and boards_per_round >= 1, got {round_index}, "
            f"{boards_per_round}"
        )
    return range(round_index * boards_per_round, (round_index + 1) * boards_per_round)


def round_plays(
    round_: Round,
    round_index: int,
    *,
    boards_per_round: int,
    event_seed: int,
    rotations: Sequence[int] = DEFAULT_ROTATIONS,
    secret: bytes | None = None,
) -> tuple[BoardPlay, ...]:
    """Returns every play of a round in running order.

    The plays of the first listed rotation come first (board by board, table by table), then
    the remaining plays in a seeded shuffle, so no rotation's plays follow each other in a
    fixed pattern (§2.2).
    """
    chosen = _check_rotations(rotations)
    boards = round_boards(round_index, boards_per_round)
    plays = [
        play
        for board in boards
        for table in round_.tables
        for play in board_plays(
            table, board, event_seed=event_seed, rotations=chosen, secret=secret
        )
    ]
    first = [play for play in plays if play.rotation == chosen[0]]
    rest = [play for play in plays if play.rotation != chosen[0]]
    rng = (
        _rng("order", event_seed, round_index)
        if secret is None
        else random.Random(keyed_seed(secret, "order", round_index))
    )
    _shuffle(rest, rng)
    return (*first, *rest)


def schedule_plays(
    schedule: Schedule,
    *,
    boards_per_round: int,
    event_seed: int,
    rotations: Sequence[int] = DEFAULT_ROTATIONS,
    secret: bytes | None = None,
) -> tuple[BoardPlay, ...]:
    """Returns every play of an event, round after round (see ``round_plays``)."""
    return tuple(
        play
        for number, round_ in enumerate(schedule.rounds)
        for play in round_plays(
            round_,
            number,
            boards_per_round=boards_per_round,
            event_seed=event_seed,
            rotations=rotations,
            secret=secret,
        )
    )
