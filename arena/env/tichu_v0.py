"""Tichu as a PettingZoo AEC environment over the rules core (``arena.rules.Match``).

``env()`` follows the classic games' conventions: agents ``seat_0`` .. ``seat_3`` (teams
0 + 2 and 1 + 3), observations ``{"observation", "action_mask"}`` (``arena.env.encoding``),
``last()``, ``agent_iter()``, ``reset(seed=...)`` and ``render_mode="ansi"``. An episode is
one hand, with each seat's reward its team's margin of the hand divided by 100 (card points
and bets), or, with ``target_score``, a match to that score with a reward of +1 for the
winning team and -1 for the other at its end. ``reset(seed=s)`` plays the deals the referee
plays for a match seeded ``s`` (``Match(options, seed)``, ``deal_from_seed``).

Every decision is the rules core's, answered through the fixed action indices: Grand
Tichu, the Tichu call (before an answer, while allowed), the exchange (three card picks),
plays and passes, out-of-turn bombs (the bomb windows), the wish and the Dragon gift. A
play whose shape leaves a choice of cards takes more than one step (``Decision``).

An action outside the mask is answered as the referee answers a seat that gives no
acceptable answer (``default_action``; ``infos[agent]["illegal"]`` is set), or raises with
``illegal="raise"``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv

from arena.env.encoding import (
    FULL_SIZE,
    N_ACTIONS,
    OBS_SIZE,
    Decision,
    add_played,
    encode_observation,
)
from arena.rules import (
    CallTichu,
    Match,
    Observation,
    Options,
    Phase,
    default_action,
    format_cards,
    observe,
)
from arena.rules.scoring import team_of

AGENTS = tuple(f"seat_{s}" for s in range(4))
RENDER_MODES = ("ansi",)
ObsDict = dict[str, npt.NDArray[Any]]


class raw_env(AECEnv[str, ObsDict, int | None]):
    """One hand of Tichu (or a match to ``target_score``) for four learning seats."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": list(RENDER_MODES),
        "name": "tichu_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        render_mode: str | None = None,
        target_score: int | None = None,
        grand_tichu: bool = True,
        full_information: bool = False,
        max_cycles: int | None = None,
        illegal: Literal["default", "raise"] = "default",
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode {render_mode!r}: only 'ansi' is supported")
        if illegal not in ("default", "raise"):
            raise ValueError(f"illegal={illegal!r}: use 'default' or 'raise'")
        self.render_mode = render_mode
        self.options = (
            Options(hands=1, grand_tichu=grand_tichu)
            if target_score is None
            else Options(target_score=target_score, grand_tichu=grand_tichu)
        )
        self.full_information = full_information
        self.max_cycles = max_cycles
        self.illegal = illegal
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        size = FULL_SIZE if full_information else OBS_SIZE
        self._observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(-10.0, 10.0, (size,), np.float32),
                    "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8),
                }
            )
            for a in AGENTS
        }
        self._action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in AGENTS}
        self.match: Match = Match(self.options, 0)
        self.decision: Decision | None = None
        self.seed_used = 0
        self.decisions = 0
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in AGENTS}
        self.agent_selection = AGENTS[0]
        self._views: dict[int, Observation] = {}
        self._played: list[int] = [0, 0, 0, 0]
        self._played_at = (-1, 0)  # (hand, events read) behind ``_played``

    # -------------------------------------------------------------- spaces

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The ``{"observation", "action_mask"}`` space (the same for every seat)."""
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """``Discrete(N_ACTIONS)``: the fixed action indices of ``arena.env.encoding``."""
        return self._action_spaces[agent]

    # -------------------------------------------------------------- episode

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deals a new hand (or match): the referee's deal for match seed ``seed`` when given,
        else one drawn from the environment's random numbers."""
        if seed is not None:
            self.np_random, _ = gymnasium.utils.seeding.np_random(seed)
            match_seed = seed
        else:
            if not hasattr(self, "np_random") or self.np_random is None:
                self.np_random, _ = gymnasium.utils.seeding.np_random(None)
            match_seed = int(self.np_random.integers(0, 2**62))
        self.seed_used = match_seed
        self.match = Match(self.options, match_seed)
        self.decisions = 0
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {a: {} for a in AGENTS}
        self._new_decision()

    def _new_decision(self) -> None:
        m = self.match
        self._views = {}
        if m.over:
            self.decision = None
            return
        s = m.seat
        legal = m.legal_actions() if m.phase is not Phase.EXCHANGE else ()
        self.decision = Decision(m.phase, s, legal, m.hands[s], m.can_call_tichu(s))
        self.agent_selection = AGENTS[s]

    def view(self, seat: int) -> Observation:
        """The rules core's redacted view of ``seat`` now (built once per decision)."""
        v = self._views.get(seat)
        if v is None:
            v = self._views[seat] = observe(self.match, seat)
        return v

    def played(self) -> list[int]:
        """The cards each seat played this hand, read from the events not read before."""
        m = self.match
        hand, read = self._played_at
        if hand != m.hand_no or read > len(m.events):
            self._played = [0, 0, 0, 0]
            read = 0
        add_played(self._played, m.events[read:])
        self._played_at = (m.hand_no, len(m.events))
        return self._played

    def observe(self, agent: str) -> ObsDict:
        """The seat's observation vector and its action mask (zeros when it is not to act)."""
        seat = AGENTS.index(agent)
        acting = (
            self.decision is not None
            and self.decision.seat == seat
            and agent == self.agent_selection
            and not (self.terminations[agent] or self.truncations[agent])
        )
        decision = self.decision if acting else None
        hidden = self.match.hands if self.full_information else None
        vector = encode_observation(self.view(seat), decision, self.played(), hidden)
        mask = decision.mask() if decision is not None else np.zeros(N_ACTIONS, dtype=np.int8)
        return {"observation": vector, "action_mask": mask}

    def step(self, action: int | None) -> None:
        """Answers the selected seat's decision with one action index."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        decision = self.decision
        assert decision is not None
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self.infos[agent] = {}
        answer = None
        if action is not None and 0 <= int(action) < N_ACTIONS:
            try:
                answer = decision.step(int(action))
                legal = True
            except ValueError:
                legal = False
        else:
            legal = False
        if not legal:
            if self.illegal == "raise":
                raise ValueError(f"action {action!r} is not in {agent}'s mask")
            self.infos[agent] = {"illegal": True}
            answer = default_action(self.view(decision.seat))
        self.decisions += 1
        m = self.match
        if answer is not None:
            hand_no = m.hand_no
            m.apply(answer)
            if type(answer) is CallTichu:
                self._views = {}
                decision.may_call_tichu = False
            else:
                self._new_decision()
            if m.over or m.hand_no != hand_no:
                self._score(hand_no)
        if (
            self.max_cycles is not None
            and self.decisions >= self.max_cycles * len(AGENTS)
            and not m.over
        ):
            self.truncations = dict.fromkeys(AGENTS, True)
        self._accumulate_rewards()

    def _score(self, hand_no: int) -> None:
        m = self.match
        if self.options.hands == 1:
            result = m.hand_results[hand_no]
            a, b = result.score
            for s, agent in enumerate(AGENTS):
                margin = a - b if team_of(s) == 0 else b - a
                self.rewards[agent] = margin / 100
        elif m.over:
            a, b = m.scores
            winner = 0 if a > b else 1 if b > a else -1
            for s, agent in enumerate(AGENTS):
                self.rewards[agent] = 0.0 if winner < 0 else 1.0 if team_of(s) == winner else -1.0
        if m.over:
            self.terminations = dict.fromkeys(AGENTS, True)

    # -------------------------------------------------------------- rendering

    def render(self) -> str | None:
        """The table as text: scores, every hand, the trick and the seat to act."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode")
            return None
        m = self.match
        lines = [f"hand {m.hand_no + 1}, scores {m.scores[0]}:{m.scores[1]}"]
        for s in range(4):
            calls = " GT" if m.grand[s] else " T" if m.tichu[s] else ""
            lines.append(f"  seat {s}{calls}: {format_cards(m.hands[s])}")
        trick = ", ".join(f"{s}: {p}" for s, p in m.trick) or "-"
        lines.append(f"  trick: {trick}" + (f"  wish {m.wish}" if m.wish else ""))
        if m.over:
            lines.append("  over")
        else:
            lines.append(f"  seat {m.seat} to answer: {m.phase.name.lower()}")
        return "\n".join(lines)

    def close(self) -> None:
        """Nothing to release."""


def env(**kwargs: Any) -> AECEnv[str, ObsDict, int | None]:
    """The environment with PettingZoo's order and bounds checks (arguments of ``raw_env``)."""
    from pettingzoo.utils import wrappers

    wrapped: AECEnv[str, ObsDict, int | None] = wrappers.AssertOutOfBoundsWrapper(raw_env(**kwargs))
    return wrappers.OrderEnforcingWrapper(wrapped)


class _CycleParallel(ParallelEnv[str, ObsDict, int | None]):
    """The parallel view: each step is one cycle of four decisions of the AEC environment,
    each taken from the acting seat's submitted action (a seat asked twice in a cycle
    submits once). For tools that need a parallel API (``max_cycles_test``)."""

    metadata: ClassVar[dict[str, Any]] = raw_env.metadata

    def __init__(self, **kwargs: Any) -> None:
        self.aec = raw_env(**kwargs)
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self.render_mode = self.aec.render_mode

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """As the AEC environment's."""
        return self.aec.observation_space(agent)

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """As the AEC environment's."""
        return self.aec.action_space(agent)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, ObsDict], dict[str, dict[str, Any]]]:
        """Deals as ``raw_env.reset``."""
        self.aec.reset(seed=seed, options=options)
        self.agents = list(AGENTS)
        return {a: self.aec.observe(a) for a in AGENTS}, {a: {} for a in AGENTS}

    def step(
        self, actions: dict[str, int | None]
    ) -> tuple[
        dict[str, ObsDict],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        """Plays one cycle: four decisions, or fewer when the episode ends."""
        e = self.aec
        rewards = dict.fromkeys(AGENTS, 0.0)
        for _ in range(len(AGENTS)):
            agent = e.agent_selection
            e.step(actions.get(agent))
            for a in AGENTS:
                rewards[a] += e.rewards[a]
            if any(e.terminations.values()) or any(e.truncations.values()):
                break
        observations = {a: e.observe(a) for a in AGENTS}
        terminations = dict(e.terminations)
        truncations = dict(e.truncations)
        infos = {a: dict(e.infos[a]) for a in AGENTS}
        if any(terminations.values()) or any(truncations.values()):
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def render(self) -> str | None:
        """As the AEC environment's."""
        return self.aec.render()

    def close(self) -> None:
        """Nothing to release."""


def parallel_env(**kwargs: Any) -> ParallelEnv[str, ObsDict, int | None]:
    """The parallel view of cycles (see ``_CycleParallel``); arguments of ``raw_env``."""
    return _CycleParallel(**kwargs)


__all__ = ["AGENTS", "env", "parallel_env", "raw_env"]
