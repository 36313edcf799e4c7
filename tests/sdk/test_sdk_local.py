"""Tests for ``sdk.testing``: local matches, call order, conformance checks; and RandomBot."""

from __future__ import annotations

import pytest

from arena.rules import (
    PASS,
    Action,
    Exchange,
    Match,
    Observation,
    Options,
    Phase,
    Play,
    cards_of,
    observe,
)
from arena.rules import bot_seed as seat_seed
from example_bots.random.bot import RandomBot
from sdk import Bot
from sdk.testing import IllegalAnswer, check_bot_local, play_local


def test_four_random_bots_finish_a_match_to_1000() -> None:
    m = play_local([RandomBot(seed) for seed in range(4)], seed=1)
    assert m.over
    assert max(m.scores) >= 1000 and m.scores[0] != m.scores[1]
    assert len(m.hand_results) >= 3
    assert not any(any(r.tichu) or any(r.grand) for r in m.hand_results)  # random never bets
    # The match is a replay: the same seed and answers give the same result.
    again = Match(Options(), seed=1)
    for _, action in m.actions:
        again.apply(action)
    assert again.over and again.scores == m.scores


def test_wire_mode_plays_the_same_match() -> None:
    direct = play_local([RandomBot(seed) for seed in range(4)], options=Options(hands=2), seed=3)
    wired = play_local(
        [RandomBot(seed) for seed in range(4)], options=Options(hands=2), seed=3, wire=True
    )
    assert wired.actions == direct.actions and wired.scores == direct.scores


def test_the_seat_seeds_make_random_bots_replay_the_match() -> None:
    """play_local re-seeds each bot from (seed, seat): fresh or reused bots, the same match."""
    bots = [RandomBot() for _ in range(4)]
    first = play_local(bots, options=Options(hands=3), seed=5)
    assert [b.seed for b in bots] == [seat_seed(5, s) for s in range(4)]
    again = play_local(bots, options=Options(hands=3), seed=5)
    fresh = play_local([RandomBot() for _ in range(4)], options=Options(hands=3), seed=5)
    assert first.actions == again.actions == fresh.actions
    other = play_local(bots, options=Options(hands=3), seed=6)
    assert other.actions != first.actions
    assert seat_seed(5, 0) == 11998890063726037896  # pinned: the derivation never changes


class Recorder(RandomBot):
    """Records the order of the calls it receives."""

    def __init__(self, seed: int, call_at: int = -1) -> None:
        super().__init__(seed)
        self.log: list[tuple[str, Phase, int]] = []
        self.call_at = call_at

    def call_tichu(self, obs: Observation) -> bool:
        self.log.append(("call_tichu", obs.phase, len(self.log)))
        return len(self.log) == self.call_at

    def act(self, obs: Observation) -> Action:
        self.log.append(("act", obs.phase, len(self.log)))
        return super().act(obs)

    def on_match_start(self, seat: int) -> None:
        self.log.append(("start", Phase.GRAND_TICHU, seat))

    def on_match_end(self, scores: tuple[int, int]) -> None:
        self.log.append(("end", Phase.MATCH_OVER, sum(scores)))


def test_call_order_matches_the_client() -> None:
    bots = [Recorder(s) for s in range(4)]
    m = play_local(bots, options=Options(hands=1), seed=4)
    for seat, bot in enumerate(bots):
        log = bot.log
        assert log[0] == ("start", Phase.GRAND_TICHU, seat)
        assert log[-1][0] == "end"
        # call_tichu is always followed by act on the same decision.
        for i, (what, phase, _) in enumerate(log):
            if what == "call_tichu":
                assert log[i + 1][:2] == ("act", phase)
        asked = [phase for what, phase, _ in log if what == "call_tichu"]
        assert Phase.GRAND_TICHU not in asked  # eight cards: that decision is the Grand Tichu
        assert Phase.EXCHANGE in asked  # 14 cards and no bet yet: a call is allowed
    assert m.over


def test_a_tichu_call_is_applied_before_the_answer() -> None:
    # Seat 0 calls with its exchange answer (its first call_tichu question).
    bots = [Recorder(0, call_at=3), RandomBot(1), RandomBot(2), RandomBot(3)]
    m = play_local(bots, options=Options(hands=1), seed=5)
    assert m.hand_results[0].tichu == (True, False, False, False)
    calls = [(seat, a) for seat, a in m.actions if type(a).__name__ == "CallTichu"]
    assert calls and calls[0][0] == 0
    first = m.actions.index(calls[0])
    assert m.actions[first + 1][0] == 0 and isinstance(m.actions[first + 1][1], Exchange)


class Cheater(RandomBot):
    """Plays a card it does not hold on its first turn with a trick on the table."""

    name = "cheater"

    def act(self, obs: Observation) -> Action:
        if obs.phase is Phase.PLAY and obs.trick:
            missing = next(c for c in range(2, 54) if not obs.hand >> c & 1 and c % 4 == 0)
            return Play(2, 1, 2 + (missing - 2) // 4, 1 << missing)
        return super().act(obs)


class Crasher(RandomBot):
    """Raises on its first play."""

    name = "crasher"

    def act(self, obs: Observation) -> Action:
        if obs.phase is Phase.PLAY:
            raise RuntimeError("boom")
        return super().act(obs)


class BadExchange(RandomBot):
    """Passes the same card twice."""

    name = "bad-exchange"

    def act(self, obs: Observation) -> Action:
        if obs.phase is Phase.EXCHANGE:
            c = next(iter(cards_of(obs.hand)))
            return Exchange(c, c, c)
        return super().act(obs)


@pytest.mark.parametrize("wire", [False, True])
def test_illegal_answers_name_bot_seat_and_action(wire: bool) -> None:
    bots: list[Bot] = [RandomBot(0), Cheater(1), RandomBot(2), RandomBot(3)]
    with pytest.raises(IllegalAnswer) as e:
        play_local(bots, options=Options(hands=2), seed=2, wire=wire)
    text = str(e.value)
    assert "cheater at seat 1" in text and "play decision" in text and "Play(" in text
    with pytest.raises(IllegalAnswer, match=r"bad-exchange at seat 2 .*exchange decision"):
        play_local(
            [RandomBot(0), RandomBot(1), BadExchange(2), RandomBot(3)],
            options=Options(hands=1),
            wire=wire,
        )


def test_bot_exceptions_carry_the_decision() -> None:
    with pytest.raises(RuntimeError, match="boom") as e:
        play_local([Crasher(0), RandomBot(1), RandomBot(2), RandomBot(3)], seed=1)
    assert any("raised by crasher at seat 0" in n for n in e.value.__notes__)


def test_play_local_needs_four_bots() -> None:
    with pytest.raises(ValueError, match="four bots"):
        play_local([RandomBot(0)])


@pytest.mark.slow
def test_check_bot_local() -> None:
    played = check_bot_local(RandomBot(9), matches=2)
    assert len(played) == 8 and all(m.over for m in played)
    with pytest.raises(IllegalAnswer, match="cheater at seat 0"):
        check_bot_local(Cheater(0))

    class PassAlways(Bot):
        """Passes even when leading: illegal as soon as it must lead."""

        def play(self, obs: Observation) -> Play:
            return PASS

    with pytest.raises(IllegalAnswer, match="PassAlways at seat 0"):
        check_bot_local(PassAlways())


def test_random_bot_never_bets_and_exchanges_three_cards() -> None:
    bot = RandomBot(3)
    m = Match(Options(), seed=8)
    seen = set()
    while m.hand_no < 2:
        obs = observe(m, m.seat)
        assert not bot.call_tichu(obs)
        action = bot.act(obs)
        if obs.phase is Phase.EXCHANGE:
            assert isinstance(action, Exchange) and len(set(action)) == 3
            assert all(obs.hand >> c & 1 for c in action)
        elif obs.phase is Phase.GRAND_TICHU:
            assert action == obs.legal[0]
        else:
            assert action in obs.legal
        seen.add(obs.phase)
        m.apply(action)
    assert {Phase.GRAND_TICHU, Phase.EXCHANGE, Phase.PLAY} <= seen
