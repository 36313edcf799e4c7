"""The environment against PettingZoo's own tests, and its contract with the referee: the same
seed gives the same deal, rewards are the hand's margin, the parallel view's cycles."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from gymnasium import spaces
from pettingzoo.test import api_test, max_cycles_test, seed_test

from arena.env import tichu_v0
from arena.env.encoding import GRAND_BASE, N_ACTIONS, TICHU_ACTION
from arena.rules import Match, Options, deal_from_seed, mask_of


def test_pettingzoo_api() -> None:
    api_test(tichu_v0.env(render_mode="ansi"), num_cycles=1000)


def test_pettingzoo_api_of_a_match_with_full_information() -> None:
    api_test(tichu_v0.env(target_score=300, full_information=True), num_cycles=1000)


def test_pettingzoo_seed() -> None:
    seed_test(tichu_v0.env, num_cycles=500)


class _LegalNoBets(spaces.Discrete):
    """Samples uniformly from the seat's current mask, never the Tichu call (the engine
    benchmark's random player): then the first four cycles of a hand are exactly one Grand
    Tichu answer and three exchange picks per seat, as ``max_cycles_test`` counts them."""

    def __init__(self, env: tichu_v0.raw_env, seed: int) -> None:
        super().__init__(N_ACTIONS, seed=seed)
        self.env = env

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        own = self.env.observe(self.env.agent_selection)["action_mask"].copy()
        own[TICHU_ACTION] = 0
        return np.int64(self.np_random.choice(np.flatnonzero(own)))


class _Sampled(tichu_v0.raw_env):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._action_spaces = {a: _LegalNoBets(self, 7 + i) for i, a in enumerate(tichu_v0.AGENTS)}


def _parallel(max_cycles: int) -> Any:
    par = tichu_v0.parallel_env(max_cycles=max_cycles)
    par.aec = _Sampled(max_cycles=max_cycles)  # type: ignore[attr-defined]
    return par


def test_pettingzoo_max_cycles() -> None:
    module = SimpleNamespace(
        env=lambda max_cycles: _Sampled(max_cycles=max_cycles), parallel_env=_parallel
    )
    max_cycles_test(module)


def test_max_cycles_truncates_after_four_decisions_per_cycle() -> None:
    env = tichu_v0.raw_env(max_cycles=3)
    env.reset(seed=11)
    steps = 0
    for agent in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        if term or trunc:
            assert trunc and not term
            env.step(None)
            continue
        env.step(int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))
        steps += 1
    assert steps == 12


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_reset_with_a_seed_deals_the_referees_deal(seed: int) -> None:
    env = tichu_v0.raw_env()
    env.reset(seed=seed)
    deal = deal_from_seed(seed, 0)
    for s in range(4):
        assert env.match.hands[s] == mask_of(deal[s][:8])
    assert env.match.dealt == Match(Options(), seed).dealt


def test_a_hand_pays_each_team_its_margin() -> None:
    env = tichu_v0.raw_env()
    env.reset(seed=4)
    total = dict.fromkeys(tichu_v0.AGENTS, 0.0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        total[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        mask = obs["action_mask"]
        mask[GRAND_BASE + 1] = mask[TICHU_ACTION] = 0  # no bets: the margin is card points
        env.step(int(np.flatnonzero(mask)[-1]))
    result = env.match.hand_results[0]
    margin = (result.score[0] - result.score[1]) / 100
    assert total == {"seat_0": margin, "seat_1": -margin, "seat_2": margin, "seat_3": -margin}
    assert margin != 0 or result.card_points == (50, 50)


def test_a_match_to_a_target_pays_plus_and_minus_one_at_its_end() -> None:
    env = tichu_v0.raw_env(target_score=200)
    env.reset(seed=2)
    total = dict.fromkeys(tichu_v0.AGENTS, 0.0)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        total[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        mask = obs["action_mask"]
        mask[GRAND_BASE + 1] = mask[TICHU_ACTION] = 0
        env.step(int(rng.choice(np.flatnonzero(mask))))
    a, b = env.match.scores
    assert len(env.match.hand_results) >= 2 and max(a, b) >= 200
    won = 1.0 if a > b else -1.0
    assert total == {"seat_0": won, "seat_1": -won, "seat_2": won, "seat_3": -won}


def test_an_action_outside_the_mask_is_the_referees_default_or_raises() -> None:
    env = tichu_v0.raw_env()
    env.reset(seed=3)
    env.step(TICHU_ACTION)  # Grand Tichu decision: no Tichu call there
    assert env.infos["seat_0"] == {"illegal": True}
    assert env.match.grand[0] is False and env.match.seat == 1
    strict = tichu_v0.raw_env(illegal="raise")
    strict.reset(seed=3)
    with pytest.raises(ValueError, match="not in seat_0's mask"):
        strict.step(TICHU_ACTION)


def test_render_shows_the_table() -> None:
    env = tichu_v0.env(render_mode="ansi")
    env.reset(seed=1)
    text = env.render()
    assert isinstance(text, str)
    assert text.startswith("hand 1, scores 0:0") and "seat 0 to answer: grand_tichu" in text


def test_parallel_view_plays_cycles_to_the_end() -> None:
    par = tichu_v0.parallel_env()
    par.reset(seed=9)
    cycles = 0
    while par.agents:
        actions = {}
        for a in par.agents:
            mask = par.aec.observe(a)["action_mask"]  # type: ignore[attr-defined]
            legal = np.flatnonzero(mask)
            actions[a] = int(legal[0]) if len(legal) else 0
        _, _, terms, _, _ = par.step(actions)
        cycles += 1
    assert all(terms.values()) and cycles > 10
