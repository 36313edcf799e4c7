"""The position notation: ``format_position``/``parse_position`` and ``Match.from_position``.

Positions come from random self-play: the string round-trips exactly, the rebuilt match shows
every seat the same view, and it plays on exactly as the original does.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.rules import (
    CALL_TICHU,
    FULL_DECK,
    MAHJONG_BIT,
    Action,
    Exchange,
    Match,
    Options,
    Phase,
    card_name,
    cards_of,
    format_position,
    observe,
    parse_cards,
    parse_position,
)
from arena.rules.position import position


def _random_answer(m: Match, rng: random.Random) -> Action:
    if m.phase is Phase.EXCHANGE:
        a, b, c = rng.sample(list(cards_of(m.hands[m.seat])), 3)
        return Exchange(a, b, c)
    if m.can_call_tichu() and rng.random() < 0.15:
        return CALL_TICHU
    return rng.choice(m.legal_actions())


def _play_to(seed: int, decisions: int, options: Options) -> tuple[Match, random.Random]:
    m = Match(options, seed=seed)
    rng = random.Random(seed)
    for _ in range(decisions):
        if m.over:
            break
        m.apply(_random_answer(m, rng))
    return m, rng


def _views(m: Match) -> list[object]:
    return [observe(m, s) for s in range(4)]


OPTIONS = st.sampled_from(
    [Options(hands=2), Options(hands=2, grand_tichu=False), Options.turnier(), Options(500)]
)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 400), OPTIONS)
def test_a_position_round_trips_and_plays_on_identically(
    seed: int, decisions: int, options: Options
) -> None:
    m, rng = _play_to(seed, decisions, options)
    if m.over:
        with pytest.raises(ValueError, match="over"):
            format_position(m)
        return
    text = format_position(m)
    rebuilt = parse_position(text)
    assert format_position(rebuilt) == text
    assert _views(rebuilt) == _views(m)
    assert rebuilt.legal_actions() == m.legal_actions()
    # The same answers from here lead to the same views, to the end of the next hand.
    hand = m.hand_no
    while not m.over and m.hand_no <= hand + 1:
        answer = _random_answer(m, rng)
        m.apply(answer)
        rebuilt.apply(answer)
        assert _views(rebuilt) == _views(m)


def test_the_notation_of_a_known_position() -> None:
    m = position(["Mj 2j", "Kp", "", "Ph"], trick=[(3, "9s")], to_act=0, out=[2])
    text = format_position(m)
    assert text.split(" ")[:10] == [
        "1000g",
        "0:0:0,0:0,0",
        "play:0:0",
        "Mj2j/Kp/-/Ph",
        "".join(map(card_name, cards_of(FULL_DECK & ~parse_cards("Mj 2j Kp Ph 9s")))) + "/-/-/-",
        "3:9s",
        "----",
        "-/-/-/-",
        "-",
        "2",
    ]
    assert text.split(" ")[10] == "-H,-X,2o1,3:9s"
    assert format_position(parse_position(text)) == text
    assert _views(parse_position(text)) == _views(m)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("1000g 0:0:0,0:0,0 play:0:0", "11 fields"),
        ("1000x " + "x " * 9 + "x", "options"),
    ],
)
def test_a_malformed_position_is_a_clear_error(text: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse_position(text)


def test_from_position_refuses_cards_placed_twice_or_nowhere() -> None:
    hands = [parse_cards("Mj"), parse_cards("Mj"), 0, 0]
    with pytest.raises(ValueError, match="placed twice"):
        Match.from_position(
            hands, phase=Phase.PLAY, seat=0, won=[FULL_DECK & ~MAHJONG_BIT, 0, 0, 0]
        )
    with pytest.raises(ValueError, match="placed nowhere"):
        Match.from_position([0, 0, 0, 0], phase=Phase.PLAY, seat=0)


def test_the_examples_in_the_rules_docs_round_trip() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text()
    examples = re.findall(r"```text\n(.*?)\n```", doc)
    assert len(examples) == 3
    for text in examples:
        assert format_position(parse_position(text)) == text
