"""The fast simulator is the rules core: playouts of random positions replayed on ``Match``.

Random seeded matches are played with random answers (bets included, so stakes count); at
random turns and bomb windows the position is handed to ``FastHand`` twice: with the real
hidden hands, replayed step by step beside the real match, and with hidden hands re-dealt
by ``sdk.sim.Determinizer``, replayed beside the determinized match. At every step the two
must ask the same seat the same kind of decision with the same legal list, and the finished
hand must score the same. Both a uniformly random policy and ``StrongBot``'s greedy policy
(whose every answer must be legal) drive the playouts.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

import pytest

from arena.rules import (
    CARD_POINTS,
    FULL_DECK,
    Action,
    Deal,
    Gift,
    Match,
    Options,
    Phase,
    Play,
    Wish,
    observe,
)
from example_bots.strong.policy import answer
from sdk.playout import BOMB_WINDOW, GIFT, OVER, PLAY, WISH, FastHand, points_of_mask
from sdk.sim import Determinizer
from tests.helpers import random_answer

PHASES = {
    PLAY: Phase.PLAY,
    BOMB_WINDOW: Phase.BOMB_WINDOW,
    WISH: Phase.WISH,
    GIFT: Phase.DRAGON_GIFT,
}

Policy = Callable[[FastHand, random.Random], "Play | int"]


def _uniform(h: FastHand, rng: random.Random) -> Play | int:
    if h.phase in (PLAY, BOMB_WINDOW):
        play: Play = rng.choice(h.plays())
        return play
    seats = ((h.seat + 1) & 3, (h.seat + 3) & 3) if h.phase == GIFT else (0, *range(2, 15))
    answer: int = rng.choice(seats)
    return answer


def _greedy(h: FastHand, rng: random.Random) -> Play | int:
    return answer(h, rng.random, 0.2)


def bomb_deal(rng: random.Random) -> Deal:
    """A deal in which every seat holds a bomb: four of a kind or a straight flush."""
    ranks = rng.sample(range(2, 15), 4)
    hands: list[list[int]] = []
    used: set[int] = set()
    for t, r in enumerate(ranks):
        if t == 3 and r <= 10:  # a straight flush of five in one suit
            suit = rng.randrange(4)
            cards = [2 + (k - 2) * 4 + suit for k in range(r, r + 5)]
            if used.isdisjoint(cards):
                hands.append(cards)
                used.update(cards)
                continue
        cards = [c for c in range(2 + (r - 2) * 4, 6 + (r - 2) * 4) if c not in used]
        hands.append(cards)
        used.update(cards)
    rest = [c for c in range(56) if c not in used]
    rng.shuffle(rest)
    for hand in hands:
        while len(hand) < 14:
            hand.append(rest.pop())
        rng.shuffle(hand)
    a, b, c, d = (tuple(h) for h in hands)
    return (a, b, c, d)


def positions(seed: int, every: float = 0.15) -> Iterator[Match]:
    """Copies of a random match at every bomb window and at random turns of its first hand
    (odd seeds deal every seat a bomb)."""
    rng = random.Random(seed)
    deals = [bomb_deal(rng)] if seed % 2 else []
    m = Match(Options(hands=1), seed=seed, deals=deals)
    while not m.over:
        if m.phase is Phase.BOMB_WINDOW or (m.phase is Phase.PLAY and rng.random() < every):
            yield m.copy()
        m.apply(random_answer(m, rng, grand=0.1, tichu=0.1))


def replay(m: Match, h: FastHand, policy: Policy, rng: random.Random) -> int:
    """Plays ``h`` to its end with ``policy``, each answer also applied to ``m`` (which
    validates it); checks every step and the score. Returns the number of answers."""
    hand_no = m.hand_no
    steps = 0
    while h.phase != OVER:
        assert PHASES[h.phase] is m.phase, m.where()
        assert h.seat == m.seat, m.where()
        if h.phase in (PLAY, BOMB_WINDOW):
            assert h.plays() == m.legal_actions(), m.where()
        a = policy(h, rng)
        action: Action
        if h.phase == WISH:
            assert isinstance(a, int)
            action = Wish(a)
        elif h.phase == GIFT:
            assert isinstance(a, int)
            action = Gift(a)
        else:
            assert isinstance(a, Play)
            action = a
        m.apply(action)  # raises IllegalActionError for an illegal answer
        h.apply(a)
        steps += 1
        if h.phase != OVER:
            assert h.hands == m.hands and h.wish == m.wish and h.out == m.out
    result = m.hand_results[-1]
    assert result.hand == hand_no
    assert h.score == result.score
    return steps


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("policy", [_uniform, _greedy], ids=["uniform", "greedy"])
def test_playouts_from_real_positions_match_the_rules_core(seed: int, policy: Policy) -> None:
    rng = random.Random(seed)
    for m in positions(seed):
        obs = observe(m, m.seat)
        h = FastHand.from_observation(obs, m.hands)
        assert h.plays() == m.legal_actions()
        replay(m, h, policy, rng)


@pytest.mark.parametrize("seed", range(40, 70))
def test_playouts_from_determinized_positions_match_the_rules_core(seed: int) -> None:
    rng = random.Random(seed)
    for real in positions(seed, every=0.1):
        obs = observe(real, real.seat)
        det = Determinizer(obs)
        template = FastHand.from_observation(obs, det.sample(rng).hands)
        for k in range(12 if real.phase is Phase.BOMB_WINDOW else 4):
            m = det.sample(rng)
            if k % 2:
                h = FastHand.from_observation(obs, m.hands)
            else:  # a new deal into a copy, as a search does
                hands = det.deal(rng)
                hands[obs.seat] = obs.hand
                m = det.build(hands)
                h = template.with_hands(hands)
            replay(m, h, _greedy, rng)


def test_points_of_mask_counts_every_card() -> None:
    assert points_of_mask(FULL_DECK) == 100
    for c in range(56):
        assert points_of_mask(1 << c) == CARD_POINTS[c]


def test_the_start_must_be_a_turn_or_a_bomb_window() -> None:
    m = Match(Options(hands=1), seed=1)
    with pytest.raises(ValueError, match="turn or a bomb window"):
        FastHand.from_observation(observe(m, 0), m.hands)
