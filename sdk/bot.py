"""The ``Bot`` base class: one method per decision, or a single ``act``.

A bot sees an ``Observation`` (``arena.rules.Observation``): its hand, the public history,
and ``legal``, the answers it may give now. The same object reaches the bot in-process and
over gRPC, so a bot can be tested locally and run remotely unchanged.

Override ``act`` to answer every decision yourself, or the per-decision methods:
``play`` (your turn) is the only one a bot must write; the others have sensible defaults.

Every bot has ``self.rng``, a ``random.Random`` the SDK re-seeds from the seat's seed as each
match starts (``reseed``): a bot that draws all its random numbers from it plays the same
match the same way every time (docs/sdk.md, "Reproducible bots").
"""

from __future__ import annotations

import random

from arena.rules import (
    NO_WISH,
    PASS,
    Action,
    Exchange,
    Gift,
    GrandTichu,
    Observation,
    Phase,
    Play,
    Wish,
    plain_exchange,
    plain_gift,
)


class Bot:
    """Base class of every bot. Subclass it and override ``play`` (or ``act``)."""

    #: Name shown in tables and leaderboards; defaults to the class name.
    name: str = ""
    #: The decision's own allowance in milliseconds: ``DecisionRequest.deadline_ms``, the
    #: table's ``decision_ms`` (less what a resume used up). Set before each decision.
    deadline_ms: float | None = None
    #: Milliseconds the bot may still think before its answer is late: ``deadline_ms`` plus
    #: what is left of the hand's time bank, less the SDK client's safety margin over the
    #: wire (none in-process). Set before each decision; budget a search with it.
    time_left_ms: float | None = None
    #: The seat's seed for the current match (``None``: none was given). Set by ``reseed``.
    seed: int | None = None

    def __init__(self) -> None:
        if not self.name:
            self.name = type(self).__name__
        #: The bot's random numbers; re-seeded from the seat's seed as each match starts.
        self.rng = random.Random()

    def reseed(self, seed: int | None) -> None:
        """Called as a match starts, before ``on_match_start``: ``seed`` and a fresh ``rng``.

        ``None`` (no seed given) seeds ``rng`` from the system's randomness.
        """
        self.seed = seed
        self.rng = random.Random(seed)

    def act(self, obs: Observation) -> Action:
        """Answers the decision ``obs.phase``; dispatches to the per-decision methods."""
        phase = obs.phase
        if phase is Phase.PLAY:
            return self.play(obs)
        if phase is Phase.BOMB_WINDOW:
            return self.bomb(obs)
        if phase is Phase.GRAND_TICHU:
            return GrandTichu(self.grand_tichu(obs))
        if phase is Phase.EXCHANGE:
            return self.exchange(obs)
        if phase is Phase.WISH:
            return Wish(self.wish(obs))
        if phase is Phase.DRAGON_GIFT:
            return Gift(self.gift(obs))
        raise ValueError(f"no decision to make in phase {phase.name}")

    def answer(self, obs: Observation) -> tuple[Action, bool]:
        """The answer and whether to call Tichu before it, in the order every caller uses.

        ``call_tichu`` is asked first, only when ``obs.may_call_tichu``, then ``act``. The
        referee (in-process), the SDK client and ``sdk.testing`` all ask a bot this way.
        """
        call = obs.may_call_tichu and bool(self.call_tichu(obs))
        return self.act(obs), call

    def play(self, obs: Observation) -> Play:
        """Your turn: a play from ``obs.legal`` (``PASS`` is first when passing is legal)."""
        raise NotImplementedError("a bot must implement play() or act()")

    def bomb(self, obs: Observation) -> Play:
        """A bomb window (out of turn): ``PASS`` or a bomb from ``obs.legal``. Default: pass."""
        return PASS

    def grand_tichu(self, obs: Observation) -> bool:
        """After eight cards: call Grand Tichu? Default: no."""
        return False

    def call_tichu(self, obs: Observation) -> bool:
        """Asked before each decision while you may still call Tichu. Default: no."""
        return False

    def exchange(self, obs: Observation) -> Exchange:
        """Three different cards from your hand: to the next seat, the partner, the previous.

        Default: the lowest card to each opponent and the highest to the partner.
        """
        return plain_exchange(obs)

    def wish(self, obs: Observation) -> int:
        """After playing the Mah Jong: a rank 2..14 to wish for, or 0. Default: no wish."""
        return NO_WISH.rank

    def gift(self, obs: Observation) -> int:
        """Which opponent (a seat) gets your Dragon trick. Default: the one with more cards."""
        return plain_gift(obs)

    # Hooks for bots that keep their own state; the defaults do nothing.
    def on_match_start(self, seat: int) -> None:
        """Called when a match starts, with the bot's seat."""

    def on_match_end(self, scores: tuple[int, int]) -> None:
        """Called when a match ends, with the final team scores."""
