"""The failure policy: default actions, strikes, giving up, grace, private bomb-window failures."""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import Callable

import pytest

from arena.referee import (
    Adjudicator,
    Answer,
    Decision,
    FailureKind,
    FailureOutcome,
    FailurePolicy,
    GiveUp,
    InProcessSeat,
    MatchConfig,
    MatchInfo,
    MatchRecord,
    Referee,
    TableEvent,
    Termination,
    TimeControl,
    default_action,
)
from arena.referee import replay as replays
from arena.rules import (
    NO_GRAND,
    NO_WISH,
    PASS,
    EventKind,
    Exchange,
    Gift,
    Match,
    Observation,
    Options,
    Phase,
    Play,
    cards_of,
    observe,
)
from sdk.testing import RandomBot

Rule = Callable[[int, Decision], Answer | None]


class Scripted:
    """A seat played by a random bot, except where ``rule(n, decision)`` answers instead."""

    def __init__(self, seat: int, rule: Rule | None = None) -> None:
        self.inner = InProcessSeat(RandomBot(seat))
        self.rule = rule
        self.asked = 0
        self.events: list[TableEvent] = []
        self.decisions: list[Decision] = []

    async def start(self, info: MatchInfo) -> None:
        pass

    def notify(self, event: TableEvent) -> None:
        self.events.append(event)

    async def decide(self, decision: Decision) -> Answer:
        self.asked += 1
        self.decisions.append(decision)
        if self.rule is not None:
            answer = self.rule(self.asked, decision)
            if answer is not None:
                return answer
        return await self.inner.decide(decision)


def timeout_at(*numbers: int) -> Rule:
    def rule(n: int, d: Decision) -> Answer | None:
        if n in numbers:
            return Answer(None, elapsed_ms=1000.0, failure=FailureKind.TIMEOUT, request_id=n)
        return None

    return rule


def play(seats: list[Scripted], **config: object) -> MatchRecord:
    cfg = MatchConfig(**config)  # type: ignore[arg-type]
    return asyncio.run(Referee(seats, cfg).run())


def failures(record: MatchRecord) -> list[tuple[int, FailureKind, FailureOutcome, int]]:
    return [(f.seat, f.kind, f.outcome, f.strikes) for f in record.failures]


# --------------------------------------------------------------------------- default actions


def test_default_actions_follow_the_protocol_table() -> None:
    m = Match(Options(), seed=4)
    assert default_action(observe(m, 0)) == NO_GRAND
    for _ in range(4):
        m.apply(NO_GRAND)
    obs = observe(m, 0)
    assert m.phase is Phase.EXCHANGE
    low = list(cards_of(m.hands[0]))[:3]
    assert default_action(obs) == Exchange(*low)
    rng = random.Random(1)
    seen: set[Phase] = set()
    while not m.over and len(seen) < 4:
        obs = observe(m, m.seat)
        d = default_action(obs)
        if m.phase is Phase.EXCHANGE:
            assert d == Exchange(*list(cards_of(m.hands[m.seat]))[:3])
        elif m.phase is Phase.PLAY:
            legal = m.legal_actions()
            assert d == (PASS if PASS in legal else legal[0])
            seen.add(m.phase)
        elif m.phase is Phase.WISH:
            assert d == NO_WISH
            seen.add(m.phase)
        elif m.phase is Phase.DRAGON_GIFT:
            assert d == Gift((m.seat + 1) % 4)
            seen.add(m.phase)
        elif m.phase is Phase.BOMB_WINDOW:
            assert d == PASS
            seen.add(m.phase)
        m.apply(
            d if rng.random() < 0.5 or m.phase is Phase.EXCHANGE else rng.choice(m.legal_actions())
        )
    assert {Phase.PLAY, Phase.WISH} <= seen


def test_the_adjudicator_counts_strikes_and_gives_up_once() -> None:
    adj = Adjudicator(FailurePolicy(max_strikes=2, give_up=GiveUp.FALLBACK_BOT))
    assert not adj.strike(1)
    assert adj.strike(1)
    assert adj.give_up(1) is FailureOutcome.FALLBACK_BOT
    assert adj.given_up == [1]
    assert not adj.lost(1, FailureKind.DISCONNECT)  # given up: nothing to hold
    assert adj.lost(2, FailureKind.DISCONNECT)
    assert not adj.lost(2, FailureKind.DISCONNECT)  # already held
    assert adj.back(2) is FailureKind.DISCONNECT
    assert adj.rejections_exhausted(3) is True
    assert Adjudicator(FailurePolicy(max_rejections=0)).rejections_exhausted(99) is False


# --------------------------------------------------------------------------- strikes


def test_timeouts_cost_strikes_then_the_seat_plays_default_actions() -> None:
    seats = [Scripted(s, timeout_at(2, 3) if s == 1 else None) for s in range(4)]
    rec = play(seats, seed=3, options=Options(hands=2), policy=FailurePolicy(max_strikes=2))
    assert rec.termination is Termination.NORMAL
    assert failures(rec) == [
        (1, FailureKind.TIMEOUT, FailureOutcome.DEFAULT_ACTION, 1),
        (1, FailureKind.TIMEOUT, FailureOutcome.DEFAULT_ACTION, 2),
        (1, FailureKind.TIMEOUT, FailureOutcome.DEFAULT_ACTIONS, 2),
    ]
    assert seats[1].asked == 3  # never asked again once given up
    assert rec.outcome.given_up == (1,)
    assert rec.defaults > 2
    meta = rec.replay.meta
    assert [f["outcome"] for f in meta["failures"]] == [
        "default_action",
        "default_action",
        "default_actions",
    ]
    assert replays.verify(rec.replay).mismatches == []
    # Each failure is announced to every seat, in state_seq order.
    for seat in seats:
        got = [e.failure for e in seat.events if e.failure is not None]
        assert got == rec.failures
        seqs = [e.seq for e in seat.events]
        assert seqs == list(range(1, len(seqs) + 1))


def test_a_seat_given_up_to_the_fallback_bot_keeps_playing() -> None:
    seats = [Scripted(s, timeout_at(1) if s == 2 else None) for s in range(4)]
    policy = FailurePolicy(max_strikes=1, give_up=GiveUp.FALLBACK_BOT)
    rec = play(seats, seed=9, options=Options(hands=2), policy=policy)
    assert failures(rec)[-1] == (2, FailureKind.TIMEOUT, FailureOutcome.FALLBACK_BOT, 1)
    assert seats[2].asked == 1
    assert rec.termination is Termination.NORMAL
    assert rec.outcome.hands_played == 2
    assert rec.defaults == 1  # the fallback bot answers; only the timeout was defaulted


def test_forfeit_ends_the_match_and_the_other_team_wins() -> None:
    seats = [Scripted(s, timeout_at(2) if s == 3 else None) for s in range(4)]
    policy = FailurePolicy(max_strikes=1, give_up=GiveUp.FORFEIT)
    rec = play(seats, seed=1, policy=policy)
    assert rec.termination is Termination.FORFEIT
    assert rec.outcome.winners == (0, 2)
    assert failures(rec)[-1] == (3, FailureKind.TIMEOUT, FailureOutcome.FORFEIT, 1)
    assert seats[0].events[-1].outcome == rec.outcome
    verified = replays.verify(rec.replay)
    assert not verified.match.over
    assert rec.replay.meta["termination"] == "forfeit"


def test_an_illegal_answer_gets_the_default_and_a_strike() -> None:
    def illegal(n: int, d: Decision) -> Answer | None:
        if d.obs.phase is Phase.PLAY and n > 3:
            return Answer(Play(2, 1, 2, 1 << 2 | 1 << 3))  # not a single, maybe not held
        return None

    seats = [Scripted(s, illegal if s == 0 else None) for s in range(4)]
    rec = play(seats, seed=6, options=Options(hands=1), policy=FailurePolicy(max_strikes=0))
    kinds = {(f.seat, f.kind, f.outcome) for f in rec.failures}
    assert kinds == {(0, FailureKind.ILLEGAL, FailureOutcome.DEFAULT_ACTION)}
    assert "single" in rec.failures[0].detail or "hand" in rec.failures[0].detail
    assert replays.verify(rec.replay).mismatches == []


def test_a_bot_that_raises_is_a_crash_and_is_given_up_at_once() -> None:
    class Buggy(RandomBot):
        def act(self, obs: Observation) -> Play | Exchange:  # type: ignore[override]
            if obs.phase is Phase.PLAY:
                raise ZeroDivisionError("oops")
            return super().act(obs)

    seats = [Scripted(s) for s in range(4)]
    seats[1].inner = InProcessSeat(Buggy(1))
    rec = play(seats, seed=2, options=Options(hands=1))
    assert failures(rec) == [(1, FailureKind.CRASH, FailureOutcome.DEFAULT_ACTIONS, 0)]
    assert "ZeroDivisionError" in rec.failures[0].detail
    assert rec.termination is Termination.NORMAL


# --------------------------------------------------------------------------- the clock


def test_an_in_process_bot_is_told_its_time_and_a_late_answer_is_a_timeout() -> None:
    """In-process seats keep the clock: the bot is told its time; a late answer is discarded."""
    told: list[tuple[float | None, float | None]] = []

    class Slow(RandomBot):
        def act(self, obs: Observation) -> Play | Exchange:  # type: ignore[override]
            told.append((self.deadline_ms, self.time_left_ms))
            if obs.phase is Phase.PLAY and len(told) == 6:
                time.sleep(0.3)  # beyond the 200 ms allowed
            return super().act(obs)

    seats = [Scripted(s) for s in range(4)]
    seats[2].inner = InProcessSeat(Slow(2))
    rec = play(seats, seed=3, options=Options(hands=1), time=TimeControl(200, 0))
    assert set(told) == {(200.0, 200.0)}
    assert failures(rec) == [(2, FailureKind.TIMEOUT, FailureOutcome.DEFAULT_ACTION, 1)]
    assert "beyond the 200 ms allowed" in rec.failures[0].detail
    assert rec.termination is Termination.NORMAL
    assert replays.verify(rec.replay).mismatches == []


def test_slow_answers_draw_on_the_bank_and_a_timeout_empties_it() -> None:
    def slow(n: int, d: Decision) -> Answer | None:
        if d.obs.phase is Phase.PLAY and n in (5, 9):
            return Answer(d.obs.legal[0], elapsed_ms=d.deadline_ms + 300.0)
        if d.obs.phase is Phase.PLAY and n == 12:
            return Answer(None, elapsed_ms=2000.0, failure=FailureKind.TIMEOUT)
        return None

    seats = [Scripted(s, slow if s == 0 else None) for s in range(4)]
    rec = play(
        seats,
        seed=12,
        options=Options(hands=2),
        time=TimeControl(decision_ms=100, bank_ms_per_hand=1000),
    )
    banks = [(d.obs.hand_no, d.bank_ms) for d in seats[0].decisions]
    first_hand = [b for h, b in banks if h == 0]
    assert first_hand[0] == 1000
    assert 700 in first_hand and 400 in first_hand
    if len(first_hand) > 12:
        assert first_hand[12] == 0
    assert next(b for h, b in banks if h == 1) == 1000  # refilled for the next hand
    assert [f.kind for f in rec.failures] == [FailureKind.TIMEOUT]


# --------------------------------------------------------------------------- lost seats


class Hanging(Scripted):
    """Hangs on decisions once ``stall`` is set, like a seat whose bot has gone away."""

    def __init__(self, seat: int) -> None:
        super().__init__(seat)
        self.stall = asyncio.Event()
        self.release = asyncio.Event()

    async def decide(self, decision: Decision) -> Answer:
        await asyncio.sleep(0)  # let the test interleave, like a real transport
        if self.stall.is_set() and not self.release.is_set():
            try:
                await asyncio.wait_for(self.release.wait(), 0.3)
            except TimeoutError:
                return Answer(None, failure=FailureKind.TIMEOUT, elapsed_ms=300.0)
        return await super().decide(decision)


def lost_seat_match(back_after: float | None, policy: FailurePolicy) -> MatchRecord:
    async def main() -> MatchRecord:
        seats: list[Scripted] = [Scripted(0), Hanging(1), Scripted(2), Scripted(3)]
        referee = Referee(seats, MatchConfig(seed=4, options=Options(hands=1), policy=policy))
        task = asyncio.ensure_future(referee.run())
        hanging = seats[1]
        assert isinstance(hanging, Hanging)
        while hanging.asked < 3:
            await asyncio.sleep(0)
        hanging.stall.set()
        referee.seat_lost(1, FailureKind.DISCONNECT, "the stream ended")
        if back_after is not None:
            await asyncio.sleep(back_after)
            hanging.release.set()
            referee.seat_back(1)
        return await asyncio.wait_for(task, 30)

    return asyncio.run(main())


def test_a_seat_back_within_the_grace_period_is_restored() -> None:
    rec = lost_seat_match(0.05, FailurePolicy(reconnect_grace_ms=2000))
    assert failures(rec)[:2] == [
        (1, FailureKind.DISCONNECT, FailureOutcome.AWAITING_RECONNECT, 0),
        (1, FailureKind.DISCONNECT, FailureOutcome.RECONNECTED, 0),
    ]
    assert rec.outcome.given_up == ()


def test_a_seat_gone_past_the_grace_period_is_given_up() -> None:
    rec = lost_seat_match(None, FailurePolicy(max_strikes=0, reconnect_grace_ms=100))
    got = failures(rec)
    assert got[0] == (1, FailureKind.DISCONNECT, FailureOutcome.AWAITING_RECONNECT, 0)
    assert (1, FailureKind.DISCONNECT, FailureOutcome.DEFAULT_ACTIONS, 0) in [
        (s, k, o, 0) for s, k, o, _ in got
    ]
    assert rec.outcome.given_up == (1,)
    assert rec.termination is Termination.NORMAL


def test_a_crash_nobody_restarts_gives_the_seat_up_at_once() -> None:
    async def main() -> MatchRecord:
        seats: list[Scripted] = [Scripted(0), Scripted(1), Hanging(2), Scripted(3)]
        policy = FailurePolicy(give_up=GiveUp.FORFEIT)
        referee = Referee(seats, MatchConfig(seed=4, policy=policy))
        task = asyncio.ensure_future(referee.run())
        while seats[2].asked < 3:
            await asyncio.sleep(0)
        referee.seat_lost(2, FailureKind.CRASH, "exit code 3", resumable=False)
        return await asyncio.wait_for(task, 30)

    rec = asyncio.run(main())
    assert failures(rec) == [(2, FailureKind.CRASH, FailureOutcome.FORFEIT, 0)]
    assert rec.termination is Termination.FORFEIT
    assert rec.outcome.winners == (1, 3)


# --------------------------------------------------------------------------- privacy


@pytest.mark.parametrize("seed", [7])
def test_a_failed_bomb_window_is_told_to_its_seat_only(seed: int) -> None:
    def no_bombs(n: int, d: Decision) -> Answer | None:
        if d.obs.phase is Phase.BOMB_WINDOW:
            return Answer(None, failure=FailureKind.TIMEOUT, elapsed_ms=1000.0)
        return None

    seats = [Scripted(s, no_bombs) for s in range(4)]
    rec = play(seats, seed=seed, options=Options(hands=30), policy=FailurePolicy(max_strikes=0))
    private = [f for f in rec.failures if f.private]
    assert private, "no bomb window came up: pick another seed"
    assert all(f.kind is FailureKind.TIMEOUT for f in rec.failures)
    for s, seat in enumerate(seats):
        mine = [f for f in private if f.seat == s]
        told = [e.failure for e in seat.events if e.failure is not None]
        assert told == mine
        seqs = [e.seq for e in seat.events if e.failure is None]
        assert seqs == list(range(1, len(seqs) + 1))  # no gaps: the windows stay hidden


def test_bomb_window_strikes_stay_out_of_the_public_count_and_give_up_after_the_hand() -> None:
    def bad_windows(n: int, d: Decision) -> Answer | None:
        if d.obs.phase is Phase.BOMB_WINDOW:
            return Answer(None, failure=FailureKind.MALFORMED, detail="echo 0xC0FFEE")
        return None

    seats = [Scripted(s, bad_windows) for s in range(4)]
    rec = play(seats, seed=7, options=Options(hands=30), policy=FailurePolicy(max_strikes=2))
    private = [f for f in rec.failures if f.private]
    assert private, "no bomb window came up: pick another seed"
    for s in range(4):  # a window's failure tells its seat every strike, in order
        assert [f.strikes for f in private if f.seat == s] == list(
            range(1, 1 + sum(f.seat == s for f in private))
        )
    assert all(f.strikes == 0 for f in rec.failures if not f.private)  # none counted publicly
    # the limit was reached in a window: the seat is given up once that hand is over
    gave = [f for f in rec.failures if f.outcome is FailureOutcome.DEFAULT_ACTIONS]
    assert gave
    for g in gave:
        second = [f for f in private if f.seat == g.seat][1]
        assert g.hand > second.hand and g.detail.endswith(" strikes")
    for s, seat in enumerate(seats):  # all the others saw of it
        told = [e.failure for e in seat.events if e.failure is not None and e.failure.seat != s]
        assert len(told) == sum(g.seat != s for g in gave)
        assert all(
            f is not None
            and f.public == "malformed answers; the seat was given up to default actions"
            for f in told
        )


def test_pace_forced_makes_forced_passes_take_as_long_as_asked_ones() -> None:
    """Compared in the same public context (a pass answering a play, which a bomb window's
    imitation may precede, or another pass): forced passes take as long as asked ones."""

    def timings(pace: bool) -> dict[bool, tuple[float, float]]:
        seats = [Scripted(s, slow) for s in range(4)]
        stamps: list[tuple[float, TableEvent, int]] = []
        referee = Referee(
            seats,
            MatchConfig(seed=3, options=Options(hands=3), pace_forced=pace),
            watch=lambda ev: stamps.append((time.perf_counter(), ev, referee.forced)),
        )
        asyncio.run(referee.run())
        times: dict[tuple[bool, bool], list[float]] = {}
        for (t0, before, n0), (t1, ev, n1) in itertools.pairwise(stamps):
            if ev.event is not None and ev.event.kind == EventKind.PASS:
                after_play = before.event is not None and before.event.kind == EventKind.PLAY
                times.setdefault((after_play, n1 != n0), []).append(t1 - t0)
        medians = {}
        for after_play in (False, True):
            asked, forced = times.get((after_play, False), []), times.get((after_play, True), [])
            assert len(asked) > 3 and len(forced) > 3, (after_play, len(asked), len(forced))
            medians[after_play] = (sorted(asked)[len(asked) // 2], sorted(forced)[len(forced) // 2])
        return medians

    def slow(n: int, d: Decision) -> Answer | None:
        time.sleep(0.004)  # a bot that thinks 4 ms before every answer
        return None

    for asked, forced in timings(False).values():
        assert asked >= 0.004 and forced < 0.002  # unpaced: a forced pass is instant
    for asked, forced in timings(True).values():
        assert forced >= 0.75 * asked and forced >= 0.003
