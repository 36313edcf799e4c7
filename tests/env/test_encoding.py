"""The encodings: every legal answer has exactly one sequence of action indices and every
sequence the mask allows is a legal answer; observations carry no hidden card."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.env.encoding import (
    CARD_BASE,
    CARD_BLOCKS,
    N_ACTION_FEATURES,
    N_ACTIONS,
    OBS_SIZE,
    SHAPES,
    TICHU_ACTION,
    Decision,
    action_features,
    answer_paths,
    describe_action,
    encode_observation,
    path_of,
    play_index,
)
from arena.rules import (
    CALL_TICHU,
    Exchange,
    Match,
    Options,
    Phase,
    cards_of,
    observe,
    parse_cards,
    parse_play,
)
from arena.rules.combos import generate


def _decision(m: Match) -> Decision:
    s = m.seat
    legal = m.legal_actions() if m.phase is not Phase.EXCHANGE else ()
    return Decision(m.phase, s, legal, m.hands[s], m.can_call_tichu(s))


def test_shape_table_counts() -> None:
    kinds = Counter(s[0] for s in SHAPES)
    # pass 1, dog 1, singles: Mah Jong, Phoenix, 2..A, Dragon = 16; pairs and triples 13 x 2;
    # steps sum over 2..7 pairs of (14 - n) tops x (n + 1) Phoenix slots = 296; full houses
    # 13 x 12 x 3 = 468; straights: sum over 5..14 cards of (15 - L) tops x (L + 1) Phoenix
    # slots = 495, less the Phoenix as the Mah Jong in the ten straights from 1 = 485;
    # four-bombs 13; flush bombs 9 + 8 + ... + 1 = 45 (the suit is picked as cards).
    assert [kinds[k] for k in range(10)] == [1, 1, 16, 26, 26, 296, 468, 485, 13, 45]
    assert len(set(SHAPES)) == len(SHAPES)


def test_every_generated_play_has_a_shape() -> None:
    rng = random.Random(3)
    for _ in range(500):
        hand = sum(1 << c for c in rng.sample(range(56), 14))
        for play in generate(hand):
            assert 0 <= play_index(play) < len(SHAPES)


def test_describe_action_names_every_index() -> None:
    names = [describe_action(i) for i in range(N_ACTIONS)]
    assert names[0] == "pass" and names[TICHU_ACTION] == "tichu"
    assert names[CARD_BASE + 2] == "card 2j"
    with pytest.raises(ValueError):
        describe_action(N_ACTIONS)


def test_two_eights_of_three_are_picked_by_their_cards() -> None:
    m = Match.from_position(
        [parse_cards("8j 8s 8p 3j"), *(0, 0, 0)],
        phase=Phase.PLAY,
        seat=0,
        turn=0,
        won=(parse_cards("-"), 0, 0, (1 << 56) - 1 & ~parse_cards("8j 8s 8p 3j")),
    )
    paths = {str(a): p for p, a in answer_paths(_decision(m))}
    pair = play_index(parse_play("8j 8s"))
    j, s, p = (CARD_BASE + c for c in cards_of(parse_cards("8j 8s 8p")))
    # the pair's shape, then its lowest card, then the other when there is still a choice
    assert paths["8j 8s"] == [pair, j, s]
    assert paths["8j 8p"] == [pair, j, p]
    assert paths["8s 8p"] == [pair, s]
    assert paths["3j"] == [play_index(parse_play("3j"))]


def test_action_features_commit_the_lowest_play_and_leave_the_rest() -> None:
    hand = parse_cards("8j 8s 8p 3j")
    m = Match.from_position(
        [hand, *(0, 0, 0)],
        phase=Phase.PLAY,
        seat=0,
        turn=0,
        won=(parse_cards("-"), 0, 0, (1 << 56) - 1 & ~hand),
    )
    d = _decision(m)
    rows = action_features(d)
    pair = rows[d.indices().index(play_index(parse_play("8j 8s")))]
    assert set(np.flatnonzero(pair[:56])) == set(cards_of(parse_cards("8j 8s")))
    assert set(np.flatnonzero(pair[56:112])) == set(cards_of(parse_cards("8p 3j")))
    assert pair[112 + 3] == 1 and pair[122] == pytest.approx(2 / 14)  # a pair of length 2
    d.step(play_index(parse_play("8j 8s")))  # the pair: now pick its cards, 8j first
    picks = action_features(d)
    assert [set(np.flatnonzero(r[:56])) for r in picks] == [{c} for c in cards_of(
        parse_cards("8j 8s"))]  # fmt: skip
    assert all(r[124 + 1] == 1 for r in picks)  # the card-pick flag


def _known(m: Match, seat: int) -> int:
    obs = observe(m, seat)
    known = obs.hand | obs.played
    if obs.given is not None:
        known |= sum(1 << c for c in obs.given)
    known |= sum(1 << c for c in obs.received)
    return known


def _check_decision(m: Match, rng: random.Random) -> Decision:
    d = _decision(m)
    if m.phase is Phase.EXCHANGE:
        # The exchange's 2,184 sequences are the ordered choices of three different cards.
        assert d.indices()[: m.hands[m.seat].bit_count()] == [
            CARD_BASE + c for c in range(56) if m.hands[m.seat] >> c & 1
        ]
        if rng.random() < 0.1:
            answers = [a for _, a in answer_paths(d)]
            assert len(answers) == len(set(answers)) == 14 * 13 * 12
            assert all(type(a) is Exchange for a in answers)
        return d
    paths = answer_paths(d)
    answers = [a for _, a in paths]
    assert Counter(answers) == Counter(m.legal_actions())  # each once, nothing else
    assert all(path_of(d, a) == p for p, a in paths)
    assert (TICHU_ACTION in d.indices()) == m.can_call_tichu(m.seat)
    return d


def _check_features(d: Decision) -> None:
    """One row per index, each different (a scorer can tell every index apart), carrying
    only the seat's own cards."""
    rows = action_features(d)
    assert rows.shape == (len(d.indices()), N_ACTION_FEATURES)
    assert len({r.tobytes() for r in rows}) == len(rows)
    cards = rows[:, :112].reshape(-1, 56).max(axis=0)
    assert sum(1 << int(c) for c in np.flatnonzero(cards)) & ~d.hand == 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), grand=st.booleans(), bets=st.booleans())
def test_mask_is_the_referees_legal_set_and_views_stay_redacted(
    seed: int, grand: bool, bets: bool
) -> None:
    rng = random.Random(seed)
    m = Match(Options(hands=1, grand_tichu=grand), seed)
    while not m.over:
        seat = m.seat
        d = _check_decision(m, rng)
        for s in range(4):
            vec = encode_observation(observe(m, s), d if s == seat else None)
            assert vec.shape == (OBS_SIZE,)
            cards = vec[: 56 * len(CARD_BLOCKS)].reshape(len(CARD_BLOCKS), 56).max(axis=0)
            seen = sum(1 << int(c) for c in np.flatnonzero(cards))
            assert seen & ~_known(m, s) == 0, f"seat {s} sees a hidden card"
        answer = None
        while answer is None:
            _check_features(d)
            options = list(d.indices())
            if not bets and TICHU_ACTION in options and len(options) > 1:
                options.remove(TICHU_ACTION)
            answer = d.step(rng.choice(options))
        if answer == CALL_TICHU:
            assert bets
        m.apply(answer)
