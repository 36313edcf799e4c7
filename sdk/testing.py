"""Local play for bot authors: whole matches in-process, no referee and no gRPC.

``play_local(bots)`` runs a match on the rules core with the client's call order: the four
seats are asked the simultaneous decisions (Grand Tichu, exchange) from views taken before
any answer is applied, as the referee asks them; then, for every decision,
``call_tichu`` (only when a call is allowed), then ``act``. A bad answer raises
``IllegalAnswer`` naming the bot, the seat, the decision and the answer. ``wire=True`` also
sends every view and answer through the wire encoding (``arena.wire``), so a bot
sees exactly what it would see over gRPC.

``check_bot_local(bot)`` is a conformance check: the bot plays every seat against random
bots and must answer every decision legally.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.rules import (
    CALL_TICHU,
    NO_GRAND,
    Action,
    ArenaError,
    Exchange,
    IllegalActionError,
    Match,
    Observation,
    Options,
    Phase,
    bot_seed,
    cards_of,
    observe,
)
from arena.wire.answer import decode_answer, encode_answer
from arena.wire.request import decode_request, encode_request
from sdk.bot import Bot

__all__ = ["IllegalAnswer", "RandomBot", "check_bot_local", "play_local"]


class IllegalAnswer(ArenaError):
    """A bot gave an answer the rules (or the wire) do not accept."""


class RandomBot(Bot):
    """A uniformly random legal answer; never bets. The opponent of ``check_bot_local``.

    Draws from ``self.rng``, which the SDK re-seeds from the seat's seed at every match;
    ``seed`` seeds it until then.
    """

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__()
        self.reseed(seed)

    def act(self, obs: Observation) -> Action:
        """A random legal answer; three random different cards for the exchange."""
        if obs.phase is Phase.EXCHANGE:
            a, b, c = self.rng.sample(list(cards_of(obs.hand)), 3)
            return Exchange(a, b, c)
        if obs.phase is Phase.GRAND_TICHU:
            return NO_GRAND
        return self.rng.choice(obs.legal)


def _where(bot: Bot, obs: Observation) -> str:
    return (
        f"{bot.name} at seat {obs.seat} (hand {obs.hand_no + 1},"
        f" {obs.phase.name.lower().replace('_', ' ')} decision)"
    )


def _ask(bot: Bot, obs: Observation, wire: bool, request_id: int) -> tuple[Action, bool]:
    """Asks ``bot`` as the client does (``Bot.answer``), through the wire when ``wire``."""
    if wire:
        req = encode_request(
            obs, request_id=request_id, state_seq=request_id, deadline_ms=0, bank_ms=0
        )
        seen = decode_request(req, options=obs.options)
        if seen != obs:  # pragma: no cover - guarded by the convert round-trip tests
            raise AssertionError(f"the wire changed the view of {_where(bot, obs)}")
        obs = seen
    try:
        action, call = bot.answer(obs)
    except Exception as e:
        e.add_note(f"raised by {_where(bot, obs)}")
        raise
    if wire:
        try:
            action, call = decode_answer(encode_answer(action, obs, call), obs)
        except ArenaError as e:
            raise IllegalAnswer(f"{_where(bot, obs)} answered {action!r}: {e}") from e
    return action, call


def _apply(m: Match, bot: Bot, obs: Observation, action: Action, call: bool) -> None:
    try:
        if call:
            m.apply(CALL_TICHU)
        m.apply(action)
    except IllegalActionError as e:
        raise IllegalAnswer(
            f"{_where(bot, obs)} answered {action!r}{' with a Tichu call' if call else ''},"
            f" which is illegal: {e.rule} ({e.where}); legal answers: {len(obs.legal)}"
        ) from e


def play_local(
    bots: Sequence[Bot],
    *,
    options: Options | None = None,
    seed: int = 0,
    wire: bool = False,
) -> Match:
    """Plays one match between four bots (seat = index) and returns the finished ``Match``.

    ``match.scores`` holds the result, ``match.hand_results`` the hands and
    ``match.actions`` every answer (with ``options`` and ``seed``, a complete replay). Each
    bot is re-seeded first with its seat's seed (``arena.rules.bot_seed(seed, seat)``), as the
    referee does, so the same ``seed`` plays the same match.
    """
    if len(bots) != 4:
        raise ValueError(f"a match needs four bots, not {len(bots)}")
    m = Match(options or Options(), seed=seed)
    for s, bot in enumerate(bots):
        bot.reseed(bot_seed(seed, s))
        bot.on_match_start(s)
    asked = 0
    while not m.over:
        phase = m.phase
        if phase is Phase.GRAND_TICHU or phase is Phase.EXCHANGE:
            hand = m.hand_no
            views = [observe(m, s) for s in range(4)]  # all four to act, none answered yet
            answers = []
            for s in range(4):
                asked += 1
                answers.append(_ask(bots[s], views[s], wire, asked))
            for s in range(4):
                if m.over or m.hand_no != hand or m.phase is not phase or m.seat != s:
                    raise AssertionError(f"seat {s} is not due to answer {phase.name}")
                _apply(m, bots[s], views[s], *answers[s])
            continue
        s = m.seat
        obs = observe(m, s)
        asked += 1
        action, call = _ask(bots[s], obs, wire, asked)
        _apply(m, bots[s], obs, action, call)
    scores = (m.scores[0], m.scores[1])
    for bot in bots:
        bot.on_match_end(scores)
    return m


def check_bot_local(
    bot: Bot,
    *,
    matches: int = 1,
    options: Options | None = None,
    seed: int = 0,
    wire: bool = True,
) -> list[Match]:
    """Plays ``bot`` in each of the four seats against random bots, ``matches`` times.

    Raises ``IllegalAnswer`` (or the bot's own exception) at the first bad answer; returns
    the matches played. Default options: two-hand matches with Grand Tichu, through the
    wire encoding.
    """
    opts = options or Options(hands=2)
    played = []
    for k in range(matches):
        for seat in range(4):
            game_seed = seed + 4 * k + seat
            table: list[Bot] = [RandomBot() for _ in range(4)]
            table[seat] = bot
            played.append(play_local(table, options=opts, seed=game_seed, wire=wire))
    return played
