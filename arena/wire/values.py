"""Rules values on the wire: plays, figures, rule options, scores, hand results, phases.

The mapping where the wire and the rules core describe the same thing differently:

* **Combos**: wire value = rules kind + 1 (docs/protocol.md section 5).
* **Hand numbers**: the rules core counts hands from 0, the wire from 1.
* **Phases**: the decision kinds equal the rules phases 1..6; the view's phase is ``PLAY``
  for bomb windows, wishes and Dragon gifts.
* **Rule options** are not part of a view; they travel once, in ``Welcome.rules``.
* **Scores**: team points in normal mode; in tournament mode ``player_points`` (by player,
  seating is the identity) and, when given, ``victory_points``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arena.rules.actions import Phase
from arena.rules.cards import PHOENIX_BIT
from arena.rules.combos import Play
from arena.rules.errors import InvalidActionError
from arena.rules.state import HandResult, Options
from arena.wire import FIGURE_COUNT, FIGURE_MASK_BYTES, pb

_new = tuple.__new__

PASS_K = 0
DOG_K = 1
SINGLE_K = 2
COMBO_PASS = pb.COMBO_PASS
UINT32_MAX = (1 << 32) - 1
IDENTITY_SEATING = (0, 1, 2, 3)
"""``View.seating`` and ``HandStarted.seating``: player ``p`` sits in seat ``p``."""

# ----------------------------------------------------------------------------- figures


def _figure_rows() -> list[tuple[int, int, int, int]]:
    """The rows of docs/protocol.md section 7: (rules kind, length, lowest rank, highest rank)."""
    rows = [(1, 1, 0, 0), (2, 1, 1, 15), (2, 1, -1, -1)]  # Dog, singles, Phoenix single
    rows += [(3, 2, 2, 14), (4, 3, 2, 14)]
    rows += [(5, 2 * n, n + 1, 14) for n in range(2, 8)]
    rows += [(6, 5, 2, 14)]
    rows += [(7, n, n, 14) for n in range(5, 15)]
    rows += [(8, 4, 2, 14)]
    rows += [(9, n, n + 1, 14) for n in range(5, 14)]
    return rows


def _figure_table() -> list[list[list[int]]]:
    table = [[[-1] * 16 for _ in range(15)] for _ in range(10)]
    table[PASS_K][0][0] = 0
    f = 1
    for kind, length, lo, hi in _figure_rows():
        if lo < 0:  # the Phoenix single: one figure whatever its rank
            f += 1
            continue
        for rank in range(lo, hi + 1):
            table[kind][length][rank] = f
            f += 1
    assert f == FIGURE_COUNT
    return table


_FIGURES = _figure_table()
_PHOENIX_FIGURE = 17


def figure_index(play: Play) -> int:
    """The figure 0..226 of a play (docs/protocol.md section 7): type, length, rank, no suits."""
    kind, length, rank, cards = play
    if kind == SINGLE_K and cards == PHOENIX_BIT:
        return _PHOENIX_FIGURE
    try:
        f = _FIGURES[kind][length][rank]
    except IndexError:
        f = -1
    if f < 0:
        raise ValueError(f"no figure for {play!r}")
    return f


def figure_mask(figures: Iterable[int]) -> bytes:
    """``LegalActions.figure_mask``: bit ``f`` set for each figure ``f`` (little-endian)."""
    bits = 0
    for f in figures:
        bits |= 1 << f
    return bits.to_bytes(FIGURE_MASK_BYTES, "little")


# ----------------------------------------------------------------------------- values


def encode_play(msg: pb.Play, play: Play) -> None:
    """Writes a rules ``Play`` into a wire ``Play`` message (in place, no copy)."""
    msg.combo = play[0] + 1  # type: ignore[assignment]
    msg.length = play[1]
    msg.rank = play[2]
    msg.cards = play[3]
    if play[3] & PHOENIX_BIT and play[1] > 1:
        msg.phoenix_rank = play.phoenix_rank


def decode_play(msg: pb.Play) -> Play:
    """Reads a wire ``Play`` as a rules ``Play`` (the Phoenix reading is implied by the rank)."""
    combo = msg.combo
    if not 1 <= combo <= 10:
        raise InvalidActionError(f"unknown combo {combo} in a play")
    result: Play = _new(Play, (combo - 1, msg.length, msg.rank, msg.cards))
    return result


def encode_options(options: Options) -> pb.RulesOptions:
    """The rule options as sent in ``Welcome.rules``."""
    return pb.RulesOptions(
        target_score=options.target_score,
        hand_count=options.hands,
        grand_tichu=options.grand_tichu,
        tournament_mode=options.tournament,
    )


def decode_options(msg: pb.RulesOptions) -> Options:
    """Reads ``Welcome.rules``; a target of 0 (ignored with a hand count) reads as 1000."""
    return Options(
        target_score=msg.target_score or 1000,
        hands=msg.hand_count,
        grand_tichu=msg.grand_tichu,
        tournament=msg.tournament_mode,
    )


def encode_scores(
    msg: pb.Scores,
    scores: Sequence[int],
    *,
    tournament: bool = False,
    victory_points: Sequence[int] | None = None,
) -> None:
    """Writes cumulative team scores into ``msg``: team points, or per-player fields."""
    if tournament:
        msg.player_points.extend([scores[0], scores[1], scores[0], scores[1]])
        if victory_points is not None:
            vp = victory_points
            msg.victory_points.extend([vp[0], vp[1], vp[0], vp[1]])
    else:
        msg.team_points.extend(scores)


def decode_scores(msg: pb.Scores) -> tuple[int, int]:
    """Team scores from a wire ``Scores`` (tournament mode: the players of seats 0 and 1)."""
    t = msg.team_points
    if len(t) == 2:
        return (t[0], t[1])
    p = msg.player_points
    if len(p) == 4:
        return (p[0], p[1])
    if not t and not p:
        return (0, 0)
    raise InvalidActionError(f"scores have {len(t)} team entries and {len(p)} player entries")


def encode_hand_result(
    result: HandResult,
    *,
    scores: Sequence[int],
    tournament: bool = False,
    victory_points: Sequence[int] | None = None,
) -> pb.HandResult:
    """A rules ``HandResult`` on the wire; ``scores`` (and ``victory_points``) are cumulative."""
    msg = pb.HandResult(hand_number=result.hand + 1)
    msg.finishing_order.extend(result.out)
    if len(result.out) == 3:  # the last seat is listed too
        msg.finishing_order.append(next(t for t in range(4) if t not in result.out))
    double = result.double_victory
    cards = [0, 0] if double >= 0 else list(result.card_points)
    msg.double_victory = double >= 0
    msg.card_points.extend(cards)
    msg.bet_points.extend(result.bets)
    msg.hand_points.extend(result.score)
    first = result.out[0]
    for t in range(4):
        if result.grand[t] or result.tichu[t]:
            stake = 200 if result.grand[t] else 100
            msg.bets.add(
                seat=t,
                grand=result.grand[t],
                won=t == first,
                points=stake if t == first else -stake,
            )
    if tournament:
        msg.victory_points.extend(result.victory_points)
    encode_scores(msg.scores, scores, tournament=tournament, victory_points=victory_points)
    return msg


VIEW_PHASE = {
    Phase.GRAND_TICHU: pb.PHASE_GRAND_TICHU,
    Phase.EXCHANGE: pb.PHASE_EXCHANGE,
    Phase.PLAY: pb.PHASE_PLAY,
    Phase.BOMB_WINDOW: pb.PHASE_PLAY,
    Phase.WISH: pb.PHASE_PLAY,
    Phase.DRAGON_GIFT: pb.PHASE_PLAY,
}
"""The view's phase for each decision kind (a rules phase that asks a seat)."""
PHASES = {int(p): p for p in VIEW_PHASE}
"""The rules phase of each ``DecisionRequest.kind``."""


def clamp_ms(ms: int) -> int:
    """A time in ms as a ``uint32`` field holds it (negative: 0)."""
    return 0 if ms < 0 else UINT32_MAX if ms > UINT32_MAX else ms
