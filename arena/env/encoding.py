"""The learning environment's encodings: a fixed action index space and the observation vector.

Only the rules core and numpy: a bot process decodes its policy's answer with this module
without the environment's libraries (``example_bots/learned``). docs/learning.md documents
both encodings field by field.

**Actions** (``N_ACTIONS`` indices, fixed): a play is chosen by its *shape* (kind, length,
rank, the rank the Phoenix stands for), which names every play up to the suits of its cards;
when the hand holds several legal plays of the chosen shape (a single 8 from two 8s, a
straight with two 9s), the cards that tell them apart are then picked one at a time, lowest
first (``CARD_BASE + card``), until one play is left. The exchange is three card picks (to
the next seat, the partner, the previous seat); Grand Tichu, the Tichu call, the wish and
the Dragon gift have their own indices. Every complete sequence of indices is exactly one
legal answer of the referee, and every legal answer has exactly one sequence.

**Observations**: a float32 vector of ``OBS_SIZE`` built from the seat's redacted
``Observation`` (``arena.rules.observe``), seats relative to the observer (0 itself, 1 the
next seat, 2 the partner, 3 the previous seat); ``FULL_SIZE`` adds the three other hands
for critics that train with the whole deal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from arena.rules import (
    CARD_RANKS,
    DOG_K,
    FLUSH_BOMB,
    FOUR_BOMB,
    FULL_HOUSE,
    PAIR,
    PASS,
    PASS_K,
    PHOENIX_BIT,
    RANK_MASKS,
    SINGLE,
    STEPS,
    STRAIGHT,
    TRIPLE,
    Action,
    Event,
    EventKind,
    Exchange,
    Gift,
    GrandTichu,
    Mask,
    Observation,
    Phase,
    Play,
    Wish,
    cards_of,
)

Shape = tuple[int, int, int, int, int]
"""A play up to its suits: (kind, length, rank, the rank the Phoenix stands for or 0, the
pair's rank of a full house or 0)."""

#: The lone Phoenix's shape: its rank depends on the table, so it has one shape of its own.
PHOENIX_SINGLE: Shape = (SINGLE, 1, 0, -1, 0)


def _shapes() -> tuple[Shape, ...]:
    """Every shape a play can have, in a fixed order (pass first)."""
    out: list[Shape] = [
        (PASS_K, 0, 0, 0, 0),
        (DOG_K, 1, 0, 0, 0),
        (SINGLE, 1, 1, 0, 0),
        PHOENIX_SINGLE,
    ]
    out += [(SINGLE, 1, r, 0, 0) for r in range(2, 16)]  # 2..A, then the Dragon (15)
    for kind, length in ((PAIR, 2), (TRIPLE, 3)):
        for r in range(2, 15):
            out += [(kind, length, r, 0, 0), (kind, length, r, r, 0)]
    for pairs in range(2, 8):
        for hi in range(pairs + 1, 15):
            lo = hi - pairs + 1
            out += [(STEPS, 2 * pairs, hi, ph, 0) for ph in (0, *range(lo, hi + 1))]
    for t in range(2, 15):
        for p in range(2, 15):
            if p != t:
                out += [(FULL_HOUSE, 5, t, ph, p) for ph in (0, t, p)]
    for length in range(5, 15):
        for hi in range(length, 15):
            lo = hi - length + 1
            out += [(STRAIGHT, length, hi, ph, 0) for ph in (0, *range(max(lo, 2), hi + 1))]
    out += [(FOUR_BOMB, 4, r, 0, 0) for r in range(2, 15)]
    for length in range(5, 14):
        out += [(FLUSH_BOMB, length, hi, 0, 0) for hi in range(length + 1, 15)]
    return tuple(out)


SHAPES: tuple[Shape, ...] = _shapes()
SHAPE_INDEX: dict[Shape, int] = {s: i for i, s in enumerate(SHAPES)}
N_SHAPES = len(SHAPES)

PASS_ACTION = 0  #: pass (a turn) or decline (a bomb window): shape 0
CARD_BASE = N_SHAPES  #: + card id: pick that card (a play's suits, the exchange)
GRAND_BASE = CARD_BASE + 56  #: + 0 no Grand Tichu, + 1 Grand Tichu
TICHU_ACTION = GRAND_BASE + 2  #: call Tichu, then answer the same decision
WISH_BASE = TICHU_ACTION + 1  #: + 0 no wish, + rank - 1 for a wish of rank 2..14
GIFT_BASE = WISH_BASE + 14  #: + 0 the Dragon trick to the next seat, + 1 to the previous
N_ACTIONS = GIFT_BASE + 2


def shape_of(play: Play) -> Shape:
    """The shape of a play (``PHOENIX_SINGLE`` for the lone Phoenix, whatever its rank)."""
    if play.length == 1 and play.cards == PHOENIX_BIT:
        return PHOENIX_SINGLE
    pair = 0
    if play.kind == FULL_HOUSE:
        rest = play.cards & ~PHOENIX_BIT & ~RANK_MASKS[play.rank]
        pair = CARD_RANKS[rest.bit_length() - 1]
    return (play.kind, play.length, play.rank, play.phoenix_rank, pair)


_PLAY_INDEX: dict[Play, int] = {}


def play_index(play: Play) -> int:
    """The action index of a play's shape (remembered: plays recur)."""
    i = _PLAY_INDEX.get(play)
    if i is None:
        if len(_PLAY_INDEX) >= 200_000:
            _PLAY_INDEX.clear()
        i = _PLAY_INDEX[play] = SHAPE_INDEX[shape_of(play)]
    return i


def describe_action(index: int) -> str:
    """Names an action index, e.g. ``shape straight 5 cards to 9, Phoenix as 7`` or ``card 2s``."""
    from arena.rules import card_name
    from arena.rules.combos import Combo

    if not 0 <= index < N_ACTIONS:
        raise ValueError(f"no action {index}: the indices are 0..{N_ACTIONS - 1}")
    if index < N_SHAPES:
        kind, length, rank, ph, pair = SHAPES[index]
        if index == PASS_ACTION:
            return "pass"
        if SHAPES[index] == PHOENIX_SINGLE:
            return "shape single Phoenix"
        text = f"shape {Combo(kind).name.lower()} {length} cards to rank {rank}"
        text += f" over a pair of {pair}" if pair else ""
        return text + (f", Phoenix as {ph}" if ph else "")
    if index < GRAND_BASE:
        return f"card {card_name(index - CARD_BASE)}"
    if index < TICHU_ACTION:
        return "grand tichu" if index - GRAND_BASE else "no grand tichu"
    if index == TICHU_ACTION:
        return "tichu"
    if index < GIFT_BASE:
        rank = index - WISH_BASE + 1
        return f"wish {rank}" if rank > 1 else "no wish"
    return "dragon trick to the " + ("previous seat" if index - GIFT_BASE else "next seat")


# ----------------------------------------------------------------------------- decisions


@dataclass
class Pending:
    """A decision in progress: the plays of the chosen shape still possible, or the exchange
    cards picked so far."""

    plays: list[tuple[Play, tuple[int, ...]]]  # each play with its distinguishing cards
    picked: list[int]


def _variants(plays: Sequence[Play]) -> list[tuple[Play, tuple[int, ...]]]:
    common = ~0
    union = 0
    for p in plays:
        common &= p.cards
        union |= p.cards
    open_cards = union & ~common
    return [(p, tuple(cards_of(p.cards & open_cards))) for p in plays]


class Decision:
    """One seat's decision over the action indices: its mask and the answer its indices make.

    ``legal`` is the referee's legal list for the decision (empty for the exchange, whose
    answers are any three different cards of ``hand``). ``step(index)`` returns the referee
    answer once the indices name one, else ``None`` (another card to pick).
    """

    __slots__ = (
        "_indices",
        "by_shape",
        "hand",
        "legal",
        "may_call_tichu",
        "pending",
        "phase",
        "seat",
    )

    def __init__(
        self,
        phase: Phase,
        seat: int,
        legal: tuple[Action, ...],
        hand: Mask,
        may_call_tichu: bool,
    ) -> None:
        self.phase = phase
        self.seat = seat
        self.legal = legal
        self.hand = hand
        self.may_call_tichu = may_call_tichu
        self.pending: Pending | None = None
        self._indices: list[int] | None = None
        self.by_shape: dict[int, list[Play]] = {}
        if phase is Phase.PLAY or phase is Phase.BOMB_WINDOW:
            by_shape = self.by_shape
            for a in legal:
                assert type(a) is Play
                i = play_index(a)
                group = by_shape.get(i)
                if group is None:
                    by_shape[i] = [a]
                else:
                    group.append(a)

    @property
    def started(self) -> bool:
        """Whether some indices of the answer have been given (no Tichu call then)."""
        return self.pending is not None

    def indices(self) -> list[int]:
        """The legal action indices now, ascending (the caller must not change the list)."""
        if self._indices is None:
            self._indices = self._compute_indices()
        return self._indices

    def _compute_indices(self) -> list[int]:
        pending = self.pending
        ph = self.phase
        if pending is not None:
            if ph is Phase.EXCHANGE:
                free = self.hand
                for c in pending.picked:
                    free &= ~(1 << c)
                return [CARD_BASE + c for c in cards_of(free)]
            k = len(pending.picked)
            return sorted({CARD_BASE + seq[k] for _, seq in pending.plays})
        tichu = [TICHU_ACTION] if self.may_call_tichu else []
        if ph is Phase.PLAY or ph is Phase.BOMB_WINDOW:
            return sorted(self.by_shape) + tichu
        if ph is Phase.EXCHANGE:
            return [CARD_BASE + c for c in cards_of(self.hand)] + tichu
        if ph is Phase.GRAND_TICHU:
            return [GRAND_BASE, GRAND_BASE + 1]
        if ph is Phase.WISH:
            return list(range(WISH_BASE, WISH_BASE + 14))
        if ph is Phase.DRAGON_GIFT:
            return [GIFT_BASE, GIFT_BASE + 1]
        return []

    def mask(self) -> npt.NDArray[np.int8]:
        """The legal indices as an ``int8`` mask of ``N_ACTIONS``."""
        m = np.zeros(N_ACTIONS, dtype=np.int8)
        m[self.indices()] = 1
        return m

    def step(self, index: int) -> Action | None:
        """The answer the indices so far make, or ``None`` when a card is still to pick.

        Raises ``ValueError`` for an index outside ``indices()``. ``TICHU_ACTION`` returns
        ``CALL_TICHU`` (the seat then answers the same decision).
        """
        if index not in self.indices():
            raise ValueError(f"action {index} ({describe_action(index)}) is not legal here")
        self._indices = None
        ph = self.phase
        if index == TICHU_ACTION:
            from arena.rules import CALL_TICHU

            self.may_call_tichu = False
            return CALL_TICHU
        if ph is Phase.GRAND_TICHU:
            return GrandTichu(index == GRAND_BASE + 1)
        if ph is Phase.WISH:
            rank = index - WISH_BASE + 1
            return Wish(rank if rank > 1 else 0)
        if ph is Phase.DRAGON_GIFT:
            return Gift((self.seat + (1 if index == GIFT_BASE else 3)) & 3)
        if ph is Phase.EXCHANGE:
            if self.pending is None:
                self.pending = Pending([], [])
            self.pending.picked.append(index - CARD_BASE)
            picked = self.pending.picked
            if len(picked) < 3:
                return None
            return Exchange(picked[0], picked[1], picked[2])
        pending = self.pending
        if pending is None:
            group = self.by_shape[index]
            if len(group) == 1:
                return group[0]
            pending = self.pending = Pending(_variants(group), [])
        else:
            c = index - CARD_BASE
            k = len(pending.picked)
            pending.picked.append(c)
            pending.plays = [v for v in pending.plays if v[1][k] == c]
        # Pick on while more than one play is left; skip picks with a single choice.
        while len(pending.plays) > 1:
            k = len(pending.picked)
            nxt = {seq[k] for _, seq in pending.plays}
            if len(nxt) > 1:
                return None
            pending.picked.append(nxt.pop())
        return pending.plays[0][0]


def path_of(decision: Decision, answer: Action) -> list[int]:
    """The action indices that give ``answer`` from the decision's start (no Tichu call):
    how a recorded answer becomes training targets. Raises ``ValueError`` if not legal."""
    ph = decision.phase
    if ph is Phase.EXCHANGE:
        assert type(answer) is Exchange
        path = [CARD_BASE + c for c in answer]
    elif ph is Phase.GRAND_TICHU:
        assert type(answer) is GrandTichu
        path = [GRAND_BASE + int(answer.call)]
    elif ph is Phase.WISH:
        assert type(answer) is Wish
        path = [WISH_BASE + (answer.rank - 1 if answer.rank else 0)]
    elif ph is Phase.DRAGON_GIFT:
        assert type(answer) is Gift
        path = [GIFT_BASE + (0 if answer.to == (decision.seat + 1) & 3 else 1)]
    else:
        assert type(answer) is Play
        shape = play_index(answer)
        group = decision.by_shape.get(shape, [])
        if answer not in group:
            raise ValueError(f"{answer} is not a legal answer here")
        path = [shape]
        if len(group) > 1:
            variants = _variants(group)
            seq = next(q for p, q in variants if p == answer)
            k = 0
            while len(variants) > 1:
                if len({q[k] for _, q in variants}) > 1:
                    path.append(CARD_BASE + seq[k])
                variants = [v for v in variants if v[1][k] == seq[k]]
                k += 1
    return path


# Action features: the cards the index commits (0..55), the hand left (56..111), then these.
_KIND_AT = 112  # one-hot kind of a play's shape (10)
LENGTH_RANK_AT = 122  #: action features: a shape's length / 14, rank / 15
_FLAG_AT = 124  # pass, card pick, no Grand Tichu, Grand Tichu, Tichu call, bomb
_WISH_AT = 130  # no wish, wish 2..A (14)
_GIFT_AT = 144  # the Dragon trick to the next seat, to the previous seat
#: The width of one index's features (``action_features``).
N_ACTION_FEATURES = 146


def action_features(decision: Decision) -> npt.NDArray[np.float32]:
    """One row of ``N_ACTION_FEATURES`` per index of ``decision.indices()``: what the index
    commits, for policies that score (observation, action) pairs rather than a fixed output.

    A play's shape commits the cards of its lowest legal play of that shape (the picks that
    follow tell the suits apart); a card pick commits that card. The hand left is the own
    hand without the cards committed so far and those of the index (exchange picks and a
    play's picks included).
    """
    indices = decision.indices()
    rows = np.zeros((len(indices), N_ACTION_FEATURES), dtype=np.float32)
    committed = 0
    pending = decision.pending
    if pending is not None:
        for c in pending.picked:
            committed |= 1 << c
        if decision.phase is not Phase.EXCHANGE:
            common = ~0
            for p, _ in pending.plays:
                common &= p.cards
            committed |= common
    masks: list[Mask] = []
    for r, i in enumerate(indices):
        cards = 0
        if i < CARD_BASE:
            if i == PASS_ACTION:
                rows[r, _FLAG_AT] = 1.0
            else:
                kind, length, rank = SHAPES[i][:3]
                group = decision.by_shape.get(i)
                if group:
                    cards = group[0].cards
                rows[r, _KIND_AT + kind] = 1.0
                rows[r, LENGTH_RANK_AT] = length / 14
                rows[r, LENGTH_RANK_AT + 1] = rank / 15
                rows[r, _FLAG_AT + 5] = float(kind >= FOUR_BOMB)
        elif i < GRAND_BASE:
            cards = 1 << (i - CARD_BASE)
            rows[r, _FLAG_AT + 1] = 1.0
        elif i < TICHU_ACTION:
            rows[r, _FLAG_AT + 2 + i - GRAND_BASE] = 1.0
        elif i == TICHU_ACTION:
            rows[r, _FLAG_AT + 4] = 1.0
        elif i < GIFT_BASE:
            rows[r, _WISH_AT + i - WISH_BASE] = 1.0
        else:
            rows[r, _GIFT_AT + i - GIFT_BASE] = 1.0
        masks += [cards, decision.hand & ~committed & ~cards]
    rows[:, :_KIND_AT] = cards_matrix(masks).reshape(len(indices), _KIND_AT)
    return rows


def answer_paths(decision: Decision) -> list[tuple[list[int], Action]]:
    """Every sequence of indices the decision accepts from now and the answer it makes
    (a test aid and a policy's full enumeration; the exchange's 2,184 included)."""
    import copy

    out: list[tuple[list[int], Action]] = []

    def walk(d: Decision, prefix: list[int]) -> None:
        for i in d.indices():
            if i == TICHU_ACTION:
                continue
            branch = copy.deepcopy(d)
            answer = branch.step(i)
            if answer is None:
                walk(branch, [*prefix, i])
            else:
                out.append(([*prefix, i], answer))

    walk(decision, [])
    return out


# ----------------------------------------------------------------------------- observations

_BLOCKS = (
    "hand",
    "played_0",
    "played_1",
    "played_2",
    "played_3",
    "top_cards",
    "trick_cards",
    "given_next",
    "given_partner",
    "given_prev",
    "received_prev",
    "received_partner",
    "received_next",
    "pick_options",
    "picked",
)
#: The 56-card blocks, in order, at the start of the vector.
CARD_BLOCKS: tuple[str, ...] = _BLOCKS
N_CARD_BLOCKS = len(_BLOCKS)
_SCALARS = (
    ("top_kind", 10),  # one-hot Combo of the play to beat (PASS: the table is empty)
    ("top_length_rank", 2),  # its length / 14 and rank / 15
    ("top_owner", 4),  # relative seat that played it
    ("cards_left", 4),  # per relative seat, / 14
    ("grand", 4),
    ("tichu", 4),
    ("out_place", 12),  # per relative seat, one-hot place 1..3
    ("wish", 15),  # one-hot: 0 none active, 1..13 rank 2..14, 14 unused
    ("mahjong_played", 1),
    ("phase", 6),  # Grand Tichu, exchange, play, bomb window, wish, Dragon gift
    ("exchange_pick", 3),  # which exchange card is picked now (next, partner, previous)
    ("picking_play", 1),  # the cards of a chosen play shape are being picked
    ("may_call_tichu", 1),
    ("won_points", 4),  # per relative seat, / 100
    ("trick_points", 1),  # / 100
    ("scores", 2),  # own team, other team, / 1000, clipped to [-10, 10]
    ("turn", 4),  # relative seat that plays next if nobody bombs
)
SCALAR_FIELDS: tuple[tuple[str, int], ...] = _SCALARS
_OFFSETS: dict[str, int] = {}
_at = 56 * N_CARD_BLOCKS
for _name, _width in _SCALARS:
    _OFFSETS[_name] = _at
    _at += _width
OBS_SIZE = _at
#: With ``full_information``: the hands of relative seats 1, 2, 3 appended.
FULL_SIZE = OBS_SIZE + 3 * 56
FIELD_OFFSETS: dict[str, int] = _OFFSETS
_PHASES = {
    Phase.GRAND_TICHU: 0,
    Phase.EXCHANGE: 1,
    Phase.PLAY: 2,
    Phase.BOMB_WINDOW: 3,
    Phase.WISH: 4,
    Phase.DRAGON_GIFT: 5,
}


def cards_matrix(masks: Sequence[Mask]) -> npt.NDArray[np.uint8]:
    """Card masks as rows of 56 zeros and ones (one pass: the masks side by side in one int)."""
    big = 0
    for i, m in enumerate(masks):
        big |= m << (56 * i)
    raw = np.frombuffer(big.to_bytes(7 * len(masks), "little"), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little").reshape(len(masks), 56)


def played_by_seat(obs: Observation) -> list[Mask]:
    """The cards each seat played this hand (absolute seats), read from the public events."""
    played = [0, 0, 0, 0]
    add_played(played, obs.events)
    return played


def add_played(played: list[Mask], events: Sequence[Event]) -> None:
    """Adds the cards played in ``events`` to ``played`` (absolute seats)."""
    for e in events:
        k = e[0]
        if k == _PLAY:
            played[e[1]] |= e[2].cards  # type: ignore[union-attr]
        elif k == _TRICK_WON and e[5] == 1:  # the Dog's trick ends at once
            played[e[1]] |= 1


_PLAY = EventKind.PLAY
_TRICK_WON = EventKind.TRICK_WON
_N_SCALARS = OBS_SIZE - 56 * N_CARD_BLOCKS


def encode_observation(
    obs: Observation,
    decision: Decision | None = None,
    played: Sequence[Mask] | None = None,
    hidden: Sequence[Mask] | None = None,
) -> npt.NDArray[np.float32]:
    """The observation vector of ``obs`` (its seat's redacted view).

    ``decision`` is the seat's decision in progress (its pick options and picks so far);
    ``played`` the cards each seat played this hand (absolute seats; default: read from the
    events); ``hidden`` the four hands for the full-information vector (critics only).
    """
    seat = obs.seat
    rel = ((seat) & 3, (seat + 1) & 3, (seat + 2) & 3, (seat + 3) & 3)
    if played is None:
        played = played_by_seat(obs)
    trick = obs.trick
    top = trick[-1][1] if trick else None
    trick_cards = 0
    for _, p in trick:
        trick_cards |= p[3]
    given = [0, 0, 0]
    if obs.given is not None:
        given = [1 << c for c in obs.given]
    received = [1 << c for c in obs.received] if obs.received else [0, 0, 0]
    options = picked = 0
    exchange_pick = -1
    picking_play = False
    started = False
    if decision is not None:
        pending = decision.pending
        if pending is not None:
            started = True
            if decision.phase is Phase.EXCHANGE:
                for k, c in enumerate(pending.picked):
                    given[k] = 1 << c
                exchange_pick = len(pending.picked)
            else:
                picking_play = True
                for c in pending.picked:
                    picked |= 1 << c
                for i in decision.indices():
                    options |= 1 << (i - CARD_BASE)
        elif decision.phase is Phase.EXCHANGE:
            exchange_pick = 0
    masks = [
        obs.hand,
        played[rel[0]],
        played[rel[1]],
        played[rel[2]],
        played[rel[3]],
        top[3] if top is not None else 0,
        trick_cards,
        *given,
        *received,
        options,
        picked,
    ]
    if hidden is not None:
        masks += [hidden[s] for s in rel[1:]]
    x = [0.0] * _N_SCALARS  # the scalar fields, filled in Python and converted once
    o = _SCALAR_AT
    if top is not None:
        x[o["top_kind"] + top[0]] = 1.0
        x[o["top_length_rank"]] = top[1] / 14
        x[o["top_length_rank"] + 1] = top[2] / 15
        x[o["top_owner"] + ((trick[-1][0] - seat) & 3)] = 1.0
    else:
        x[o["top_kind"]] = 1.0
    counts, grand, tichu, won = obs.card_counts, obs.grand, obs.tichu, obs.won_points
    for k in range(4):
        s = rel[k]
        x[o["cards_left"] + k] = counts[s] / 14
        x[o["grand"] + k] = float(grand[s])
        x[o["tichu"] + k] = float(tichu[s])
        x[o["won_points"] + k] = won[s] / 100
    for place, s in enumerate(obs.out[:3]):
        x[o["out_place"] + 3 * ((s - seat) & 3) + place] = 1.0
    x[o["wish"] + (obs.wish - 1 if obs.wish else 0)] = 1.0
    x[o["mahjong_played"]] = float(obs.mahjong_played)
    ph = _PHASES.get(obs.phase)
    if ph is not None and obs.to_act == seat:
        x[o["phase"] + ph] = 1.0
    if exchange_pick >= 0:
        x[o["exchange_pick"] + exchange_pick] = 1.0
    x[o["picking_play"]] = float(picking_play)
    x[o["may_call_tichu"]] = float(obs.may_call_tichu and not started)
    x[o["trick_points"]] = obs.trick_points / 100
    team = seat & 1
    x[o["scores"]] = min(10.0, max(-10.0, obs.scores[team] / 1000))
    x[o["scores"] + 1] = min(10.0, max(-10.0, obs.scores[1 - team] / 1000))
    if obs.turn >= 0:
        x[o["turn"] + ((obs.turn - seat) & 3)] = 1.0
    cards = cards_matrix(masks).ravel()
    own = 56 * N_CARD_BLOCKS
    parts: list[npt.NDArray[Any]] = [cards[:own], np.array(x, dtype=np.float32)]
    if hidden is not None:
        parts.append(cards[own:])
    return np.concatenate(parts, dtype=np.float32)


_SCALAR_AT = {name: at - 56 * N_CARD_BLOCKS for name, at in _OFFSETS.items()}


__all__ = [
    "CARD_BASE",
    "CARD_BLOCKS",
    "FIELD_OFFSETS",
    "FULL_SIZE",
    "GIFT_BASE",
    "GRAND_BASE",
    "LENGTH_RANK_AT",
    "N_ACTIONS",
    "N_ACTION_FEATURES",
    "N_SHAPES",
    "OBS_SIZE",
    "PASS",
    "PASS_ACTION",
    "PHOENIX_SINGLE",
    "SCALAR_FIELDS",
    "SHAPES",
    "SHAPE_INDEX",
    "TICHU_ACTION",
    "WISH_BASE",
    "Decision",
    "Pending",
    "Shape",
    "action_features",
    "add_played",
    "answer_paths",
    "cards_matrix",
    "describe_action",
    "encode_observation",
    "path_of",
    "play_index",
    "played_by_seat",
    "shape_of",
]
