"""The trick, the turn and the Mah Jong as ``Observation`` carries them (no history scan needed)."""

from __future__ import annotations

import random

from arena.rules import (
    MAHJONG,
    PASS,
    Exchange,
    Match,
    Options,
    Phase,
    cards_of,
    observe,
    parse_cards,
    parse_play,
    points_of,
)
from arena.rules.observe import TrickEntry, default_action
from arena.rules.position import position
from arena.rules.state import next_active


def test_fields_agree_with_the_state_over_random_matches() -> None:
    phases: set[Phase] = set()
    after_pass = 0
    for seed in range(30):
        m = Match(Options(hands=2), seed=seed)
        rng = random.Random(seed)
        while not m.over:
            obs = observe(m, m.seat)
            plays = [e for e in obs.entries if e.play is not PASS]
            assert [(e.seat, e.play) for e in plays] == list(m.trick)
            tail = 0
            for e in reversed(obs.entries):
                if e.play is not PASS:
                    break
                tail += 1
            assert tail == (m.passes if m.trick else 0)
            assert obs.leader == (m.trick[0][0] if m.trick else -1)
            assert obs.trick_points == points_of(m.trick_cards)
            held = any(h >> MAHJONG & 1 for h in m.hands)
            assert obs.mahjong_played == (m.phase not in (Phase.GRAND_TICHU,) and not held)
            ph = m.phase
            phases.add(ph)
            if ph is Phase.PLAY:
                assert obs.turn == m.seat
            elif ph is Phase.BOMB_WINDOW and m.resume == 0:
                assert obs.turn == m.turn  # the seat after the play
            elif ph is Phase.BOMB_WINDOW:
                after_pass += 1
                owner = m.owner
                assert obs.turn == (owner if m.hands[owner] else next_active(owner, m.hands))
            elif ph is Phase.WISH:
                assert obs.turn == next_active(m.seat, m.hands)
            elif ph is Phase.DRAGON_GIFT:
                assert obs.turn == (m.seat if m.hands[m.seat] else next_active(m.seat, m.hands))
            else:
                assert obs.turn == -1 and obs.entries == ()
            if ph is Phase.EXCHANGE:
                m.apply(Exchange(*rng.sample(list(cards_of(m.hands[m.seat])), 3)))
            elif ph is Phase.BOMB_WINDOW and rng.random() < 0.9:
                m.apply(PASS)  # keep the bombs for the windows after a last pass
            else:
                m.apply(rng.choice(m.legal_actions()))
    assert Phase.WISH in phases and Phase.DRAGON_GIFT in phases and after_pass > 0


def test_a_trick_with_passes_and_a_bomb_out_of_turn() -> None:
    m = position(["9j 2s", "3s 7j 7s 7p 7t", "Kj Ks", "Tp Jp"], trick=[(2, "5j")], to_act=3)
    m.apply(parse_play("Tp"))
    assert m.phase is Phase.BOMB_WINDOW and m.seat == 1
    m.apply(parse_play("7j 7s 7p 7t"))  # seat 1 bombs out of turn
    obs = observe(m, 2)
    assert obs.entries[-2:] == (
        TrickEntry(3, parse_play("Tp")),
        TrickEntry(1, parse_play("7j 7s 7p 7t"), True),
    )
    assert obs.leader == 2 and obs.trick_points == 15
    assert obs.turn == 2  # the seat after the bomber, if nobody bombs on
    m.apply(PASS)
    obs = observe(m, 3)
    assert obs.entries[-1] == TrickEntry(2, PASS) and obs.turn == 3


def test_mahjong_played_tells_no_wish_from_a_fulfilled_one() -> None:
    m = position(["Mj 9j", "8j 8s", "2j", "3j"], to_act=0)
    assert not observe(m, 1).mahjong_played and observe(m, 1).wish == 0
    m.apply(parse_play("Mj"))
    assert m.phase is Phase.WISH
    obs = observe(m, 0)
    assert obs.mahjong_played and obs.turn == 1  # seat 1 plays next once the wish is made
    assert default_action(obs) == obs.legal[0]
    m.apply(obs.legal[0])  # no wish
    assert observe(m, 1).mahjong_played and observe(m, 1).wish == 0
    assert parse_cards("Mj") == 1 << MAHJONG
