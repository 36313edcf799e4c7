"""Property tests over seeded random matches: conservation, scoring, rejection, secrecy,
replay and copying.

A random policy picks uniformly among ``legal_actions()``, samples the exchange (three
distinct cards of the hand) and calls Tichu now and then. Matches are ``Options(hands=k)``
so they end even when the policy calls Grand Tichu at random.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.rules import (
    CALL_TICHU,
    GRAND,
    NO_WISH,
    PASS,
    Action,
    ArenaError,
    CallTichu,
    Combo,
    Event,
    Exchange,
    Gift,
    GrandTichu,
    IllegalActionError,
    Match,
    Observation,
    Options,
    Phase,
    Play,
    Wish,
    cards_of,
    combinations,
    observe,
    parse_cards,
    parse_play,
    readings,
    team_of,
)
from arena.rules.cards import FULL_DECK, PHOENIX_BIT, Mask
from arena.rules.observe import TrickEntry, new_observation, replace_observation
from arena.rules.position import position
from arena.rules.state import total_cards
from tests.helpers import random_answer

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
TICHU_RATE = 0.1
MAX_ACTIONS_PER_HAND = 2000  # random hands take ~110; more means the state machine loops


def play_out(
    m: Match,
    rng: random.Random,
    before: Callable[[Match], None] | None = None,
    after: Callable[[Match, Action], None] | None = None,
    max_actions: int | None = None,
) -> Match:
    """Plays ``m`` with random answers (Grand Tichu half the time, Tichu sometimes) until it
    ends (or ``max_actions``), calling the hooks."""
    budget = MAX_ACTIONS_PER_HAND * max(m.options.hands, 1)
    n = 0
    while not m.over and (max_actions is None or n < max_actions):
        if before is not None:
            before(m)
        action = random_answer(m, rng, grand=0.5, tichu=TICHU_RATE)
        m.apply(action)
        if after is not None:
            after(m, action)
        n += 1
        assert n < budget, f"no end after {n} actions ({m.where()})"
    if before is not None and m.over:
        before(m)
    return m


def snapshot(m: Match) -> dict[str, Any]:
    """Every public slot of the match (caches excluded); lists are copied."""
    return {
        name: (v.copy() if isinstance(v, list) else v)
        for name in Match.__slots__
        if not name.startswith("_")
        for v in [getattr(m, name)]
    }


# ---------------------------------------------------------------- conservation, liveness


def places_of_cards(m: Match) -> int:
    """How many cards the hands, won piles and the table hold together (56 if none twice)."""
    return sum(p.bit_count() for p in [*m.hands, *m.won, m.trick_cards])


def check_state(m: Match) -> None:
    """Card conservation after the Grand Tichu phase, trick bookkeeping, and liveness."""
    if m.phase is Phase.GRAND_TICHU:
        union = m.hands[0] | m.hands[1] | m.hands[2] | m.hands[3]
        assert all(h.bit_count() == 8 for h in m.hands) and union.bit_count() == 32
    else:
        assert total_cards(m) == FULL_DECK, m.where()
        assert places_of_cards(m) == 56, f"a card is in two places: {m.where()}"
    trick_union = 0
    for _, play in m.trick:
        assert not trick_union & play.cards
        trick_union |= play.cards
    assert trick_union == m.trick_cards
    if m.phase is Phase.EXCHANGE:  # any three cards: the 2,184 answers are not listed here
        assert m.hands[m.seat].bit_count() == 14
        return
    legal = m.legal_actions()
    if m.over:
        assert legal == ()
    else:
        assert legal, f"no legal action: {m.where()}"
        if m.phase in (Phase.PLAY, Phase.BOMB_WINDOW):
            assert m.hands[m.seat], f"seat {m.seat} to play holds no card"


@pytest.mark.slow
@given(SEEDS)
@settings(max_examples=600, deadline=None)
def test_cards_conserved_and_always_an_action(seed: int) -> None:
    """All 56 cards are accounted for once at every step; non-terminal states can act."""
    play_out(Match(Options(hands=2), seed), random.Random(seed), before=check_state)


def test_final_state_holds_each_card_once() -> None:
    """At the end of a match each card is in exactly one place (hand, pile or table)."""
    for seed in range(20):
        m = play_out(Match(Options(hands=1), seed), random.Random(seed))
        assert places_of_cards(m) == 56, (seed, str(m.top), m.hand_results[-1].out)


# ---------------------------------------------------------------- scoring


def check_results(m: Match) -> None:
    """Card points, bets and totals of every hand are consistent with the rules."""
    assert len(m.hand_results) == m.options.hands
    totals = [0, 0]
    for r in m.hand_results:
        cp = r.card_points
        if r.double_victory >= 0:
            assert len(r.out) == 2 and team_of(r.out[0]) == team_of(r.out[1])
            assert r.double_victory == team_of(r.out[0])
            assert cp[r.double_victory] == 200 and cp[1 - r.double_victory] == 0
        else:
            assert len(r.out) == 3 and len(set(r.out)) == 3
            assert sum(cp) == 100, r
            for p in cp:
                assert p % 5 == 0 and -25 <= p <= 125, r
        bets = [0, 0]
        for seat in range(4):
            assert not (r.grand[seat] and r.tichu[seat])
            stake = 200 if r.grand[seat] else 100 if r.tichu[seat] else 0
            bets[team_of(seat)] += stake if seat == r.out[0] else -stake
        assert r.bets == (bets[0], bets[1])
        totals = [totals[0] + r.score[0], totals[1] + r.score[1]]
    assert m.scores == totals


@pytest.mark.slow
@given(SEEDS)
@settings(max_examples=600, deadline=None)
def test_hand_scores_are_consistent(seed: int) -> None:
    """100 card points per hand (200/0 in a double victory), multiples of 5 in [-25, 125]."""
    check_results(play_out(Match(Options(hands=3), seed), random.Random(seed)))


# ---------------------------------------------------------------- rejected actions


def illegal_candidates(m: Match, rng: random.Random) -> list[Any]:
    """Well-formed actions that are probably illegal now (the caller filters the legal ones)."""
    s = m.seat if m.seat >= 0 else 0
    hand = m.hands[s]
    other = m.hands[(s + 1) & 3] or m.hands[(s + 2) & 3]
    out: list[Any] = [
        PASS,
        CALL_TICHU,
        NO_WISH,
        Wish(1),
        Wish(15),
        GRAND,
        GrandTichu(False),
        Gift(s),
        Gift((s + 2) & 3),
        Gift((s + 1) & 3),
        ("not", "an", "action"),
    ]
    mine = combinations(hand)
    if mine:
        p = rng.choice(mine)
        out.append(p)  # well-formed plays; misshapen ones: test_misshapen_play_rejected
        if p.cards & PHOENIX_BIT and p.kind != Combo.SINGLE:
            out += [q for q in readings(p.cards) if q != p]  # another Phoenix reading
    theirs = combinations(other)
    if theirs:
        out.append(rng.choice(theirs))
    held = list(cards_of(hand))
    if len(held) >= 2:
        a, b = rng.sample(held, 2)
        out.append(Exchange(a, a, b))
    missing = list(cards_of(FULL_DECK & ~hand))
    if held and missing:
        out.append(Exchange(rng.choice(missing), *(held * 2)[:2]))
    out.append(Exchange(56, 57, 58))
    return out


def is_legal(m: Match, action: Any) -> bool:
    """Whether ``apply`` must accept ``action`` now, decided from the public query methods."""
    if isinstance(action, CallTichu):
        return m.can_call_tichu()
    if m.phase is Phase.EXCHANGE:
        hand = m.hands[m.seat]
        return (
            type(action) is Exchange
            and len(set(action)) == 3
            and all(0 <= c < 56 and hand >> c & 1 for c in action)
        )
    # NamedTuples of different types can compare equal (Wish(1) == Gift(1)): match the type.
    return any(type(a) is type(action) and a == action for a in m.legal_actions())


@pytest.mark.slow
@given(SEEDS)
@settings(max_examples=200, deadline=None)
def test_illegal_actions_rejected_without_change(seed: int) -> None:
    """An illegal action raises ``IllegalActionError`` and leaves every slot unchanged."""
    rng = random.Random(seed)
    tried = 0

    def probe(m: Match) -> None:
        nonlocal tried
        if rng.random() > 0.3 and not m.over:
            return
        if m.phase is not Phase.EXCHANGE:
            m.legal_actions()  # fill the cache first: it is not state
        before = snapshot(m)
        for action in illegal_candidates(m, rng):
            if is_legal(m, action):
                continue
            tried += 1
            try:
                m.apply(action)
            except IllegalActionError:
                pass
            else:
                raise AssertionError(f"{action!r} accepted at {m.where()}")
            after = snapshot(m)
            changed = sorted(k for k in before if before[k] != after[k])
            assert not changed, f"{action!r} changed {changed} at {m.where()}"

    play_out(Match(Options(hands=1), seed), rng, before=probe)
    assert tried > 0


@pytest.mark.parametrize(
    ("hand", "bad"),
    [
        # three cards called steps: AssertionError "no Phoenix slot"
        ("9j 9s Ph 2j", Play(int(Combo.STEPS), 3, 9, parse_cards("9j 9s Ph"))),
        # J-A + Phoenix called a straight to rank 15: IndexError in RANK_CHARS
        ("Jj Qs Kp At Ph 2j", Play(int(Combo.STRAIGHT), 5, 15, parse_cards("Jj Qs Kp At Ph"))),
    ],
    ids=["steps_of_three", "straight_to_rank_15"],
)
def test_misshapen_play_rejected(hand: str, bad: Play) -> None:
    """A Play whose kind or rank is not a reading of its cards is illegal, not a crash."""
    m = position([hand, "3j", "3s", "3p"], trick=[(3, "5j 5s")], to_act=0)
    before = snapshot(m)
    with pytest.raises(IllegalActionError):
        m.apply(bad)
    assert snapshot(m) == before


# ---------------------------------------------------------------- secrecy

# How each field of the observation's value types holds cards: a mask, a card id, card
# ids, or none ("data": walked further but its own ints are not cards). A field missing here
# fails the test, so a new field must be classified before it can leak.
MASK, ID, IDS, DATA = "mask", "id", "ids", "data"
CARD_FIELDS: dict[type, dict[str, str]] = {
    Observation: {
        "seat": DATA,
        "phase": DATA,
        "to_act": DATA,
        "hand_no": DATA,
        "hand": MASK,
        "card_counts": DATA,
        "grand": DATA,
        "tichu": DATA,
        "trick": DATA,
        "wish": DATA,
        "out": DATA,
        "played": MASK,
        "won_points": DATA,
        "given": DATA,
        "received": IDS,
        "scores": DATA,
        "options": DATA,
        "events": DATA,
        "legal": DATA,
        "may_call_tichu": DATA,
        "entries": DATA,
        "turn": DATA,
    },
    TrickEntry: {"seat": DATA, "play": DATA, "out_of_turn": DATA},
    Options: {"target_score": DATA, "hands": DATA, "grand_tichu": DATA, "tournament": DATA},
    Event: {
        "kind": DATA,
        "seat": DATA,
        "play": DATA,
        "value": DATA,
        "points": DATA,
        "cards": MASK,
    },
    Play: {"kind": DATA, "length": DATA, "rank": DATA, "cards": MASK},
    Exchange: {"to_next": ID, "to_partner": ID, "to_prev": ID},
    GrandTichu: {"call": DATA},
    Wish: {"rank": DATA},
    Gift: {"to": DATA},
    CallTichu: {},
}


_CARDS_OF: dict[tuple[type, Any], Mask] = {}
"""``cards_in`` of each immutable value walked once (a value's cards never change)."""


def cards_in(value: Any, role: str = DATA, path: str = "obs") -> Mask:
    """Collects every card an observation value holds, walking all its fields."""
    if role == MASK:
        assert isinstance(value, int) and 0 <= value <= FULL_DECK, path
        return value
    if role == ID:
        assert isinstance(value, int) and 0 <= value < 56, path
        return 1 << value
    if role == IDS:
        assert all(isinstance(c, int) and 0 <= c < 56 for c in value), path
        return sum(1 << c for c in set(value))
    if value is None or isinstance(value, (bool, int, float, str)):
        return 0
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        acc = 0
        for i, item in enumerate(value):
            acc |= cards_in(item, DATA, f"{path}[{i}]")
        return acc
    kind = type(value)
    assert kind in CARD_FIELDS, f"{path}: unclassified type {kind.__name__}"
    known = _CARDS_OF.get((kind, value))  # events and plays recur in every later view
    if known is not None:
        return known
    names = (
        [f.name for f in dataclasses.fields(value)]
        if dataclasses.is_dataclass(value)
        else list(value._fields)
    )
    assert set(names) == set(CARD_FIELDS[kind]), f"{path}: classify {kind.__name__}'s fields"
    acc = 0
    for name in names:
        acc |= cards_in(getattr(value, name), CARD_FIELDS[kind][name], f"{path}.{name}")
    if kind is not Observation:
        _CARDS_OF[kind, value] = acc
    return acc


@pytest.mark.slow
@given(SEEDS)
@settings(max_examples=50, deadline=None)
def test_observations_hide_other_hands(seed: int) -> None:
    """Every card in a seat's view is in its hand, was played, or was passed by the seat."""
    public = 0
    given_by = [0, 0, 0, 0]
    hand_no = 0

    def check(m: Match) -> None:
        for seat in range(4):
            obs = observe(m, seat)
            assert obs.hand == m.hands[seat]
            allowed = m.hands[seat] | public | given_by[seat]
            leaked = cards_in(obs) & ~allowed
            assert not leaked, f"seat {seat} sees {list(cards_of(leaked))} at {m.where()}"
            # A seat still to answer Grand Tichu is asked too (the exchange lists no answers).
            acting = m.asks(seat) and not m.over and m.phase is not Phase.EXCHANGE
            assert obs.legal == (m.legal_actions_of(seat) if acting else ())
            # ``observe`` builds it with ``new_observation``: the same value as the constructor's.
            values = [getattr(obs, f.name) for f in dataclasses.fields(Observation)]
            built = Observation(*values)
            assert obs == built and hash(obs) == hash(built) and vars(obs) == vars(built)

    def track(m: Match, action: Action) -> None:
        nonlocal public, hand_no
        if m.hand_no != hand_no:
            public, given_by[:], hand_no = 0, [0, 0, 0, 0], m.hand_no
            return
        seat = m.actions[-1][0]
        if isinstance(action, Play):
            public |= action.cards
        elif isinstance(action, Exchange):
            given_by[seat] = sum(1 << c for c in action)

    play_out(Match(Options(hands=1), seed), random.Random(seed), before=check, after=track)


def test_new_observation_takes_every_field_in_order() -> None:
    obs = observe(Match(Options(), 7), 0)
    values = [getattr(obs, f.name) for f in dataclasses.fields(Observation)]
    assert new_observation(*values) == obs
    assert dataclasses.replace(new_observation(*values), seat=1).seat == 1
    with pytest.raises(ValueError):
        new_observation(*values[:-1])
    with pytest.raises(dataclasses.FrozenInstanceError):
        new_observation(*values).seat = 2  # type: ignore[misc]


def test_replace_observation_is_dataclasses_replace() -> None:
    obs = observe(Match(Options(), 7), 0)
    changed = replace_observation(obs, to_act=3, legal=(), may_call_tichu=True)
    assert changed == dataclasses.replace(obs, to_act=3, legal=(), may_call_tichu=True)
    assert hash(changed) == hash(dataclasses.replace(obs, to_act=3, legal=(), may_call_tichu=True))
    assert obs.to_act == 0 and obs != changed  # the original is untouched
    with pytest.raises(TypeError, match="no field colour"):
        replace_observation(obs, colour=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        changed.seat = 2  # type: ignore[misc]


# ---------------------------------------------------------------- replay and copy


def play_logged(m: Match, rng: random.Random) -> tuple[list[list[Event]], list[Any]]:
    """Plays ``m`` out, returning each hand's full event list and each hand's deal."""
    logs = [m.events]
    deals = [m.dealt]

    def follow(m: Match, action: Action) -> None:
        if m.events is not logs[-1]:
            logs.append(m.events)
            deals.append(m.dealt)

    play_out(m, rng, after=follow)
    return logs, deals


def replay(m: Match, fresh: Match) -> list[list[Event]]:
    """Applies ``m``'s recorded actions to ``fresh``, checking the seat of each one."""
    logs = [fresh.events]
    for seat, action in m.actions:
        assert fresh.seat == seat
        fresh.apply(action)
        if fresh.events is not logs[-1]:
            logs.append(fresh.events)
    return logs


@pytest.mark.slow
@given(SEEDS)
@settings(max_examples=100, deadline=None)  # 200 hands, each replayed twice
def test_replay_is_exact(seed: int) -> None:
    """``(options, seed, actions)`` and ``(options, deals, actions)`` replay a match exactly."""
    m = Match(Options(hands=2), seed)
    logs, deals = play_logged(m, random.Random(seed))
    for fresh in (Match(m.options, seed), Match(m.options, seed + 1, deals=deals)):
        fresh_logs = replay(m, fresh)
        assert fresh.over
        assert fresh.scores == m.scores
        assert fresh.hand_results == m.hand_results
        assert fresh_logs == logs
        assert fresh.actions == m.actions
        assert fresh.hands == m.hands and fresh.won == m.won


@pytest.mark.slow
@given(SEEDS, st.integers(min_value=0, max_value=300))
@settings(max_examples=120, deadline=None)
def test_copy_is_independent(seed: int, steps: int) -> None:
    """Playing a copy to the end leaves the original untouched; the copy starts equal."""
    rng = random.Random(seed)
    m = play_out(Match(Options(hands=2), seed), rng, max_actions=steps)
    before = snapshot(m)
    c = m.copy()
    assert snapshot(c) == before
    play_out(c, random.Random(seed + 1))
    assert snapshot(m) == before
    if not m.over:
        play_out(m, rng)
        assert m.over and m.actions[: len(before["actions"])] == before["actions"]


def test_float_wish_rejected() -> None:
    """A wish whose rank is not an int is rejected and leaves the state unchanged."""
    m = position(["Mj 2j 8s", "3j", "3s", "3p"], to_act=0)
    m.apply(parse_play("Mj"))
    assert m.phase is Phase.WISH
    before = snapshot(m)
    with pytest.raises(ArenaError):
        m.apply(Wish(8.0))  # type: ignore[arg-type]
    assert snapshot(m) == before
