"""The player interface the referee drives in this process, and the built-in fallback player.

``Player`` is structural: ``sdk.Bot`` satisfies it without the referee importing the SDK, and
so does any object with the same members. ``InProcessSeat`` asks a player through
``answer(obs)``, which offers Tichu (when the view allows a call) and then asks for the
action, the same call order as the SDK client.
"""

from __future__ import annotations

from typing import Protocol

from arena.rules import (
    PASS,
    Action,
    Gift,
    GrandTichu,
    Observation,
    Phase,
    Play,
    Wish,
    plain_exchange,
    plain_gift,
)


class Player(Protocol):
    """What a bot played in-process offers the referee (``sdk.Bot`` has all of it).

    ``deadline_ms`` (the decision's allowance) and ``time_left_ms`` (what the player may
    use before its answer is late, the bank included) are set before each decision
    (docs/sdk.md, "Time").
    """

    name: str
    deadline_ms: float | None
    time_left_ms: float | None

    def act(self, obs: Observation) -> Action:
        """Answers the decision ``obs.phase`` with an action from ``obs.legal``."""
        ...

    def call_tichu(self, obs: Observation) -> bool:
        """Whether to call Tichu before the answer (asked only when a call is allowed)."""
        ...

    def answer(self, obs: Observation) -> tuple[Action, bool]:
        """The action and whether to call Tichu first: ``call_tichu`` if allowed, then ``act``."""
        ...

    def reseed(self, seed: int | None) -> None:
        """A match starts: the seat's seed for the player's randomness (``None``: none)."""
        ...

    def on_match_start(self, seat: int) -> None:
        """A match starts; the player sits at ``seat``."""
        ...

    def on_match_end(self, scores: tuple[int, int]) -> None:
        """The match ended with these team scores."""
        ...


class FallbackPlayer:
    """The built-in player that plays a seat given up under ``GIVE_UP_FALLBACK_BOT``.

    Plays the lowest play that beats the table (never a bomb), leads the lowest play, passes
    otherwise and in bomb windows; never bets or wishes; passes its lowest cards to the
    opponents and its strongest to the partner; gives a Dragon trick to the opponent holding
    more cards (the ``sdk.Bot`` defaults). Simple, legal and quick.
    """

    name = "fallback"
    deadline_ms: float | None = None
    time_left_ms: float | None = None

    def reseed(self, seed: int | None) -> None:
        """Nothing to seed: the fallback player draws nothing at random."""

    def act(self, obs: Observation) -> Action:
        """The answer to ``obs.phase``, as the class docstring says."""
        phase = obs.phase
        if phase is Phase.PLAY:
            for action in obs.legal:
                if isinstance(action, Play) and action.kind != PASS.kind and not action.is_bomb:
                    return action
            return obs.legal[0]
        if phase is Phase.BOMB_WINDOW:
            return PASS
        if phase is Phase.GRAND_TICHU:
            return GrandTichu(False)
        if phase is Phase.EXCHANGE:
            return plain_exchange(obs)
        if phase is Phase.WISH:
            return Wish(0)
        if phase is Phase.DRAGON_GIFT:
            return Gift(plain_gift(obs))
        raise ValueError(f"no decision to make in phase {phase.name}")

    def call_tichu(self, obs: Observation) -> bool:
        """Never."""
        return False

    def answer(self, obs: Observation) -> tuple[Action, bool]:
        """``act`` without a Tichu call."""
        return self.act(obs), False

    def on_match_start(self, seat: int) -> None:
        """Keeps no state."""

    def on_match_end(self, scores: tuple[int, int]) -> None:
        """Keeps no state."""
