"""The match loop with in-process seats: events, forced actions, simultaneous decisions."""

from __future__ import annotations

import asyncio

from arena.referee import (
    Answer,
    Decision,
    InProcessSeat,
    MatchConfig,
    MatchInfo,
    Referee,
    TableEvent,
    Termination,
)
from arena.referee import replay as replays
from arena.rules import (
    CALL_TICHU,
    Event,
    EventKind,
    Exchange,
    Match,
    Observation,
    Options,
    Phase,
    Play,
    points_of,
)
from sdk.bot import Bot
from sdk.testing import RandomBot


class Recorder:
    """A seat that records what it is told and asks an in-process bot for answers."""

    def __init__(self, bot: Bot) -> None:
        self.inner = InProcessSeat(bot)
        self.events: list[TableEvent] = []
        self.decisions: list[Decision] = []
        self.infos: list[MatchInfo] = []

    async def start(self, info: MatchInfo) -> None:
        self.infos.append(info)
        await self.inner.start(info)

    def notify(self, event: TableEvent) -> None:
        self.events.append(event)
        self.inner.notify(event)

    async def decide(self, decision: Decision) -> Answer:
        self.decisions.append(decision)
        return await self.inner.decide(decision)


def public(seat: Recorder) -> list[Event]:
    """The rules events a seat was sent (leaving out failures and the match end)."""
    return [e.event for e in seat.events if e.event is not None]


def run(referee: Referee) -> object:
    return asyncio.run(referee.run())


def test_a_match_to_1000_replays_exactly_and_numbers_every_event() -> None:
    seats = [Recorder(RandomBot(s)) for s in range(4)]
    record = asyncio.run(Referee(seats, MatchConfig(seed=11)).run())
    assert record.termination is Termination.NORMAL
    assert max(record.scores) >= 1000
    assert record.failures == []
    verified = replays.verify(record.replay)
    assert verified.mismatches == []
    assert list(verified.match.scores) == list(record.scores)
    # Every seat gets the same events, numbered 1, 2, 3, ... and ending with match_end.
    streams = [[(e.seq, e.event, e.failure, e.outcome) for e in seat.events] for seat in seats]
    assert all(s == streams[0] for s in streams)
    seqs = [seq for seq, *_ in streams[0]]
    assert seqs == list(range(1, len(seqs) + 1))
    assert seats[0].events[-1].outcome == record.outcome
    hands = record.outcome.hands_played
    kinds = [e.kind for _, e, _, _ in streams[0] if e is not None]
    assert kinds.count(EventKind.HAND_START) == hands
    assert kinds.count(EventKind.HAND_END) == hands
    assert kinds.count(EventKind.GRAND_TICHU) == hands
    # The rules events are sent as they are: what every seat sees is ``Match.log``.
    sent = [e for _, e, _, _ in streams[0] if e is not None]
    assert sent == [e for hand in verified.match.log for e in hand]
    # A request's state_seq is the last event sent before it.
    for seat in seats:
        assert all(d.state_seq <= seqs[-1] for d in seat.decisions)


def test_forced_actions_are_applied_without_asking_and_change_nothing() -> None:
    def play(skip: bool) -> tuple[list[Recorder], replays.Replay, int]:
        seats = [Recorder(RandomBot(s)) for s in range(4)]
        # A bot that consumes no randomness on forced decisions gives the same match
        # whether they are asked or not.
        cfg = MatchConfig(options=Options(hands=3), seed=5, skip_forced=skip)
        rec = asyncio.run(Referee(seats, cfg).run())
        return seats, rec.replay, rec.forced

    class ForcedFree(RandomBot):
        def act(self, obs: Observation) -> Play | Exchange:  # type: ignore[override]
            if len(obs.legal) == 1:
                return obs.legal[0]  # type: ignore[return-value]
            return super().act(obs)

    seats_skip, _, forced = play(True)
    assert forced > 0
    for seat in seats_skip:
        for d in seat.decisions:
            assert len(d.obs.legal) != 1 or d.obs.may_call_tichu
    seats_all = [Recorder(ForcedFree(s)) for s in range(4)]
    rec_all = asyncio.run(
        Referee(seats_all, MatchConfig(options=Options(hands=3), seed=5, skip_forced=False)).run()
    )
    seats_one = [Recorder(ForcedFree(s)) for s in range(4)]
    rec_one = asyncio.run(
        Referee(seats_one, MatchConfig(options=Options(hands=3), seed=5, skip_forced=True)).run()
    )
    assert rec_all.forced == 0
    assert rec_all.replay.actions == rec_one.replay.actions
    assert rec_all.decisions == rec_one.decisions + rec_one.forced
    # Every seat still receives the forced passes as events.
    log = replays.verify(rec_one.replay).match.log
    passes = [e for e in public(seats_one[0]) if e.kind == EventKind.PASS]
    assert len(passes) == sum(1 for hand in log for e in hand if e.kind == EventKind.PASS)


def test_grand_tichu_and_exchange_are_asked_of_all_four_at_once() -> None:
    asked: list[tuple[Phase, int]] = []

    class AllTogether:
        """Answers Grand Tichu and the exchange only once all four seats have been asked."""

        def __init__(self, seat: int, barrier: asyncio.Barrier) -> None:
            self.seat = seat
            self.barrier = barrier
            self.inner = InProcessSeat(RandomBot(seat))

        async def start(self, info: MatchInfo) -> None:
            pass

        def notify(self, event: TableEvent) -> None:
            pass

        async def decide(self, decision: Decision) -> Answer:
            obs = decision.obs
            if obs.phase in (Phase.GRAND_TICHU, Phase.EXCHANGE):
                asked.append((obs.phase, self.seat))
                assert obs.to_act == self.seat
                assert len(obs.legal) == (2 if obs.phase is Phase.GRAND_TICHU else 0)
                await asyncio.wait_for(self.barrier.wait(), 5)
            return await self.inner.decide(decision)

    async def main() -> None:
        barrier = asyncio.Barrier(4)
        seats = [AllTogether(s, barrier) for s in range(4)]
        await Referee(seats, MatchConfig(options=Options(hands=2), seed=3)).run()

    asyncio.run(main())
    assert asked == [(Phase.GRAND_TICHU, s) for s in range(4)] + [
        (Phase.EXCHANGE, s) for s in range(4)
    ] + [(Phase.GRAND_TICHU, s) for s in range(4)] + [(Phase.EXCHANGE, s) for s in range(4)]


def test_tichu_with_an_exchange_answer_is_announced_before_the_exchange_in_seat_order() -> None:
    class Caller(RandomBot):
        def call_tichu(self, obs: Observation) -> bool:
            return obs.phase is Phase.EXCHANGE

    seats = [Recorder(Caller(s) if s in (1, 3) else RandomBot(s)) for s in range(4)]
    cfg = MatchConfig(options=Options(hands=1, grand_tichu=False), seed=8)
    record = asyncio.run(Referee(seats, cfg).run())
    kinds = [(e.kind, e.seat) for e in public(seats[0])]
    i = kinds.index((EventKind.EXCHANGE, -1))
    assert kinds[i - 2 : i] == [(EventKind.TICHU, 1), (EventKind.TICHU, 3)]
    calls = [s for s, a in record.replay.actions if a == CALL_TICHU]
    assert calls == [1, 3]
    assert replays.verify(record.replay).mismatches == []


def test_events_say_what_the_rules_core_did() -> None:
    seats = [Recorder(RandomBot(s)) for s in range(4)]
    record = asyncio.run(Referee(seats, MatchConfig(options=Options(hands=6), seed=21)).run())
    m = Match(record.replay.options, record.replay.seed, record.replay.deals)
    plays = [e for e in public(seats[2]) if e.kind == EventKind.PLAY]
    played = [(s, a) for s, a in record.replay.actions if isinstance(a, Play) and a.length]
    assert [(e.seat, e.play) for e in plays] == played
    for _, a in record.replay.actions:
        m.apply(a)
    tricks = [e for e in public(seats[2]) if e.kind in (EventKind.TRICK_WON, EventKind.DRAGON_GIFT)]
    # Every trick's cards are the cards played into it; the points are theirs.
    for e in tricks:
        assert e.points == points_of(e.cards)
    ends = [
        e for e in seats[2].events if e.event is not None and e.event.kind == EventKind.HAND_END
    ]
    assert [e.result for e in ends] == m.hand_results
    assert ends[-1].scores == tuple(m.scores)


def test_a_hand_cap_adjudicates_and_an_abort_stops_without_a_result() -> None:
    seats = [InProcessSeat(RandomBot(s)) for s in range(4)]
    capped = asyncio.run(Referee(seats, MatchConfig(seed=2, max_hands=2)).run())
    assert capped.termination is Termination.ADJUDICATED
    assert capped.outcome.hands_played == 2
    assert capped.replay.meta["termination"] == "adjudicated"

    class Stalling:
        def __init__(self) -> None:
            self.inner = InProcessSeat(RandomBot(0))

        async def start(self, info: MatchInfo) -> None:
            pass

        def notify(self, event: TableEvent) -> None:
            pass

        async def decide(self, decision: Decision) -> Answer:
            await asyncio.sleep(3600)
            raise AssertionError("never answered")

    async def main() -> object:
        referee = Referee([Stalling(), *seats[1:]], MatchConfig(seed=2))
        task = asyncio.ensure_future(referee.run())
        await asyncio.sleep(0.05)
        referee.abort("operator")
        return await asyncio.wait_for(task, 5)

    aborted = asyncio.run(main())
    assert aborted.termination is Termination.ABORTED  # type: ignore[attr-defined]
    assert aborted.outcome.winners == ()  # type: ignore[attr-defined]
    assert replays.verify(aborted.replay).mismatches == []  # type: ignore[attr-defined]


def test_every_asked_decision_is_timed_in_the_replay() -> None:
    seats = [Recorder(RandomBot(s)) for s in range(4)]
    referee = Referee(seats, MatchConfig(options=Options(hands=2), seed=7))
    sizes = iter(range(1_000_000))
    referee.log_size = lambda seat: next(sizes)  # a log that grows with every look
    record = asyncio.run(referee.run())
    think = record.replay.meta["think"]
    assert len(think) == record.decisions == sum(len(s.decisions) for s in seats)
    actions = record.replay.actions
    for at, seat, ms, log_from, log_to in think:
        assert actions[at][0] == seat  # the decision's (first) action is the seat's
        assert ms >= 0 and log_to > log_from >= 0
    assert [t[0] for t in think if t[0] >= 8] == sorted(t[0] for t in think if t[0] >= 8)
