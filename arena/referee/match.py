"""The match loop: four seats, one rules ``Match``, the clock and the failure policy.

``Referee(seats, config).run()`` plays one match and returns a ``MatchRecord``. It asks the
seat to act for each decision (the four seats at once for Grand Tichu and the exchange),
applies the answer through the rules core, and sends every public event of the rules core
(``Match.events``) to every seat as a ``TableEvent``, numbered by the table's ``state_seq``;
its own events are the failures and the match's end.

* **Forced actions.** With ``skip_forced`` (the default) a decision with exactly one legal
  answer, for a seat that may not call Tichu, is applied without asking: in practice the
  pass of a seat that cannot beat the table. Its event is sent as usual. With
  ``pace_forced`` the referee first waits as long as the seat took for one of its recent
  asked passes (drawn at random from its last ``PACE_SAMPLES``), so that the other seats
  cannot tell a forced pass from an asked one by the time it took; and where a private
  bomb window could have opened but did not, it pauses as long as a recent window took,
  so that nobody learns from the timing that someone holds a bomb (docs/security.md).
* **Simultaneous decisions.** Grand Tichu and the exchange are asked of all four seats at
  once and applied in seat order when all have answered (the rules core takes them seat by
  seat). Tichu calls riding on exchange answers are therefore announced in seat order.
* **Failures.** A seat's answer may report a timeout, malformed or illegal answers, or a
  crash; transports report lost and resumed seats through ``seat_lost``/``seat_back``. The
  ``Adjudicator`` decides the outcome, which is recorded and announced as a ``FAILURE``
  event (privately, for a bomb window). Other seats never see a failure's detail, only its
  ``public`` text; the strike count they see leaves out bomb-window strikes, and a seat whose
  strike limit a bomb window reached is given up only when that hand is over (docs/security.md).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from arena.referee.config import MatchConfig
from arena.referee.policy import (
    Adjudicator,
    Failure,
    FailureKind,
    FailureOutcome,
    GiveUp,
    Termination,
    cap_text,
)
from arena.referee.record import MatchRecord
from arena.referee.seat import (
    Answer,
    Decision,
    MatchInfo,
    MatchOutcome,
    Seat,
    TableEvent,
    fallback_seat,
)
from arena.rules import (
    CALL_TICHU,
    PASS,
    Action,
    Event,
    EventKind,
    IllegalActionError,
    Match,
    Observation,
    Phase,
    Play,
    observe,
)
from arena.rules.observe import default_action

PACE_SAMPLES = 64
"""Recent asked passes per seat whose answer times a forced action's delay is drawn from."""
PACE_NEIGHBOURS = 8
"""A forced pass imitates one of the seat's asked passes made holding about as many cards:
one of the nearest this many by card count (a bot thinks longer with a fuller hand, and the
card count is public, so imitating the seat's passes regardless of it would show)."""

_PASS_KIND = PASS.kind
_PACE_SPIN = 0.002
_LATE_WEIGHT = 0.1  # of the latest lateness in its running average
_HAND_END = EventKind.HAND_END
_PASS_EVENT = EventKind.PASS
_OPENERS = frozenset({EventKind.PLAY, EventKind.WISH})
"""Public events after which a private bomb window may open (a play, a wish's play)."""
_new = tuple.__new__
_NO_SCORES = (0, 0)


async def _wait_until(until: float) -> None:
    """Sleeps until ``perf_counter()`` reaches ``until``: the loop's timers round to whole
    milliseconds, so the last ``_PACE_SPIN`` seconds are waited by yielding to the loop."""
    clock = time.perf_counter
    coarse = until - _PACE_SPIN - clock()
    if coarse > 0:
        await asyncio.sleep(coarse)
    while clock() < until:
        await asyncio.sleep(0)


class _Stop(Exception):
    """Raised inside the loop when the match must end now (forfeit, abort)."""


class Referee:
    """Runs one match between four ``Seat``s; see the module docstring."""

    def __init__(
        self,
        seats: Sequence[Seat],
        config: MatchConfig | None = None,
        watch: Callable[[TableEvent], None] | None = None,
        on_give_up: Callable[[int], None] | None = None,
        broadcast: Callable[[TableEvent], None] | None = None,
    ) -> None:
        if len(seats) != 4:
            raise ValueError(f"a match needs four seats, not {len(seats)}")
        self.config = cfg = config or MatchConfig()
        self.seats: list[Seat] = list(seats)
        self.players: list[Seat | None] = list(seats)  # who answers; None = default actions
        start = cfg.start
        self.match = start.copy() if start is not None else Match(cfg.options, cfg.seed, cfg.deals)
        self.adjudicator = Adjudicator(cfg.policy)
        self.failures: list[Failure] = []
        self.watch = watch
        self.on_give_up = on_give_up
        # Delivers a public event to the four seats at once (a table that encodes it once
        # and fans it out itself); without it, each seat's ``notify``.
        self.broadcast = broadcast
        self.seq = 0
        self.decisions = 0
        self.forced = 0
        self.defaults = 0
        self.bank = [cfg.time.bank_ms_per_hand] * 4
        self._hand = 0  # rules hand index whose events were last read
        self._read = 0  # rules events of that hand already sent
        self._decision_ms = cfg.time.decision_ms
        self._grace: dict[int, asyncio.TimerHandle] = {}
        # per seat, its recent asked passes: (cards held, answering a play?, seconds taken)
        self._paces = [deque[tuple[int, bool, float]](maxlen=PACE_SAMPLES) for _ in range(4)]
        self._pace_rng = random.Random()  # from the OS: not the match's seed, not guessable
        # Bomb windows, imitated when pacing (``_imitate_window``): how long recent ones kept
        # the table waiting, when the last public event went out, when the open window began,
        # whether the last event could have opened one, and whether events are held back.
        self._windows = deque[float](maxlen=PACE_SAMPLES)
        self._event_t = 0.0
        self._last_kind = -1  # the kind of the last public rules event sent
        self._late = 0.0  # how late a paced pass's event goes out, on average (seconds)
        self._window_from: float | None = None
        self._opener = False
        self._held = False
        self._holding = False
        # seat -> (hand, failure) of a bomb window that reached the seat's strike limit
        self._deferred: dict[int, tuple[int, FailureKind]] = {}
        self._task: asyncio.Task[Any] | None = None
        self._stop: tuple[Termination, str, int] | None = None
        self._outcome: MatchOutcome | None = None
        #: Each asked decision: (index of its action, seat, think ms, log size before, after).
        self.clock: list[tuple[int, int, float, int, int]] = []
        #: The size of a seat's log file now (-1: none), to find what it wrote per decision.
        self.log_size: Callable[[int], int] | None = None

    # ------------------------------------------------------------------ public

    async def run(self, absent: Sequence[tuple[int, FailureKind, str]] = ()) -> MatchRecord:
        """Plays the match to its end (or forfeit or abort) and returns its record.

        ``absent`` lists the seats with no bot (seat, failure kind, detail): they are given up
        before the first hand.
        """
        self._task = asyncio.current_task()
        started = time.time()
        t0 = time.perf_counter()
        cfg = self.config
        try:
            for s, seat in enumerate(self.seats):
                info = MatchInfo(
                    cfg.table_id,
                    s,
                    cfg.options,
                    cfg.time,
                    cfg.policy,
                    cfg.names,
                    cfg.match_no,
                    cfg.seat_seed(s),
                )
                await seat.start(info)
            for s, kind, detail in absent:
                self._give_up(s, kind, detail, 0)
            if self._stop is not None:
                raise _Stop
            self._publish_new()
            self._holding = cfg.pace_forced
            await self._loop()
            self._release()
            self._give_up_deferred(True)
            outcome = self._normal_outcome()
        except _Stop:
            outcome = self._stopped_outcome()
        except asyncio.CancelledError:
            if self._stop is None:
                raise  # cancelled from outside: not ours to swallow
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            outcome = self._stopped_outcome()
        finally:
            for handle in self._grace.values():
                handle.cancel()
            self._grace.clear()
        self._release()
        self._outcome = outcome
        self.seq += 1
        self._send(TableEvent(self.seq, self.match.hand_no + 1, outcome=outcome))
        return MatchRecord.of(
            self.match,
            cfg,
            outcome,
            list(self.failures),
            decisions=self.decisions,
            forced=self.forced,
            defaults=self.defaults,
            started=started,
            seconds=time.perf_counter() - t0,
            clock=self.clock,
        )

    def abort(self, reason: str) -> None:
        """Stops the match now without a result (operator, shutdown)."""
        self._halt(Termination.ABORTED, reason, -1)

    def seat_lost(self, seat: int, kind: FailureKind, detail: str, resumable: bool = True) -> None:
        """A transport reports that a seat's stream or process is gone.

        With ``resumable`` the seat is held ``reconnect_grace_ms`` for a resume (its clock
        keeps running); otherwise (a crashed bot nobody restarts) it is given up at once.
        """
        if self._outcome is not None or self._stop is not None:
            return
        adj = self.adjudicator
        if not resumable:
            if adj.seats[seat].given_up:
                return
            self._cancel_grace(seat)
            self._give_up(seat, kind, detail, 0)
            return
        if not adj.lost(seat, kind):
            return
        self._record(seat, kind, FailureOutcome.AWAITING_RECONNECT, 0, detail)
        loop = asyncio.get_running_loop()
        grace = self.config.policy.reconnect_grace_ms / 1000.0
        self._grace[seat] = loop.call_later(grace, self._grace_over, seat, kind)

    def seat_back(self, seat: int, took_over: bool = False, peer: str = "") -> None:
        """A transport reports that a seat resumed: held in its grace period, or not.

        Every resume is recorded (``RECONNECTED``, with ``peer`` in the detail); one that
        ``took_over`` a live stream (a stolen token, or a bot that lost track of its stream)
        is recorded as a ``DISCONNECT`` of the old stream.
        """
        if self._outcome is not None or self._stop is not None:
            return
        kind = self.adjudicator.back(seat)
        self._cancel_grace(seat)
        detail = f"resumed from {peer}" if peer else "resumed"
        if took_over:
            detail += " over a live stream, which was closed"
        kind = kind or FailureKind.DISCONNECT
        self._record(seat, kind, FailureOutcome.RECONNECTED, 0, detail)

    def given_up(self, seat: int) -> bool:
        """Whether ``seat`` has been given up in this match."""
        return self.adjudicator.seats[seat].given_up

    @property
    def over(self) -> bool:
        """Whether the match has ended (its ``MATCH_END`` was built)."""
        return self._outcome is not None

    # ------------------------------------------------------------------ the loop

    async def _loop(self) -> None:
        m = self.match
        cfg = self.config
        skip = cfg.skip_forced
        pace = cfg.pace_forced
        cap = cfg.max_hands
        decision_ms = cfg.time.decision_ms
        tournament = cfg.options.tournament
        players = self.players
        while not m.over:
            if pace:
                await self._imitate_window()
            if self._stop is not None:
                raise _Stop
            if self._deferred:
                self._give_up_deferred(False)
            if cap and len(m.hand_results) >= cap:
                self._halt(Termination.ADJUDICATED, f"hand cap {cap} reached", -1)
                raise _Stop
            ph = m.phase
            if ph is Phase.GRAND_TICHU or ph is Phase.EXCHANGE:
                await self._simultaneous(ph)
                continue
            s = m.seat
            legal = m.legal_actions()
            if skip and len(legal) == 1 and not m.can_call_tichu(s):
                self.forced += 1
                if pace:
                    before_t = self._event_t
                    wanted = await self._pace(s)
                    self._apply(s, legal[0])
                    if wanted is not None:  # how late its event went out, on average
                        late = self._event_t - before_t - wanted
                        self._late += (late - self._late) * _LATE_WEIGHT
                    continue
                self._apply(s, legal[0])
                continue
            player = players[s]
            obs = observe(m, s)
            if player is None:
                self._apply_default(s, obs)
                continue
            self.decisions += 1
            vp = (m.vp[0], m.vp[1]) if tournament else None
            at = len(m.actions)
            before = self._log_mark(s)
            answer = await player.decide(Decision(obs, self.seq, decision_ms, self.bank[s], vp))
            a = answer.action
            window = ph is Phase.BOMB_WINDOW
            before_t, after_play = self._event_t, self._last_kind in _OPENERS
            self._settle(s, obs, answer, window)
            if pace and not window and type(a) is Play and a.kind == _PASS_KIND:
                # A public pass, timed as the other seats saw it: from the previous event to
                # its own (a window's pause and the answer's checks included).
                took = self._event_t - before_t
                self._paces[s].append((m.hands[s].bit_count(), after_play, took))
            self._time(at, s, answer.elapsed_ms, before)

    async def _pace(self, s: int) -> float | None:
        """Waits until one of seat ``s``'s recent asked passes, drawn at random, would be in.

        The pass is drawn from those made in the same public context: answering a play (or
        another pass), and holding about as many cards as the seat holds now
        (``PACE_NEIGHBOURS``). A seat that has not passed yet borrows another seat's passes.

        An asked pass is timed as the other seats saw it, from the previous event to its own
        (all the referee's work included), so a paced pass costs them the same time, whatever
        the transport. The loop's timers round to whole milliseconds, and asked passes often
        take less: the last ``_PACE_SPIN`` seconds are waited by yielding to the loop. A
        wait ends a little late (the loop's other work), so the average lateness is taken off.
        Returns the time imitated, or None when there was nothing to imitate.
        """
        paces = self._paces[s] or max(self._paces, key=len)
        if not paces:
            return None  # nobody has passed yet: nothing to imitate
        after_play = self._last_kind in _OPENERS
        alike = [p for p in paces if p[1] == after_play] or list(paces)
        cards = self.match.hands[s].bit_count()
        near = sorted(abs(held - cards) for held, _, _ in alike)
        reach = near[min(PACE_NEIGHBOURS, len(near)) - 1]
        pool = [took for held, _, took in alike if abs(held - cards) <= reach]
        took = self._pace_rng.choice(pool)
        await _wait_until(self._event_t + took - self._late)
        return took

    async def _imitate_window(self) -> None:
        """Pauses where a bomb window could have opened but did not, as long as one of the
        recent windows took, and releases the events held back meanwhile.

        A seat asked in a private bomb window holds a bomb; while it declines, the table
        waits with no public event. Without this the others would see that wait after a play
        (before the next seat acts) or after a trick's last pass (before the trick is
        collected: ``_send_events`` holds those events back), and learn that someone holds a
        bomb. Windows not yet seen in the match are imitated by asked passes.
        """
        m = self.match
        clock = time.perf_counter
        if m.phase is Phase.BOMB_WINDOW:
            if self._window_from is None:
                self._window_from = self._event_t
            self._opener = False
            return
        if self._window_from is not None:
            self._windows.append(clock() - self._window_from)
            self._window_from = None
        could_open = self._held or (self._opener and m.phase is Phase.PLAY)
        self._opener = False
        if not could_open:
            return
        pool: Sequence[float] = self._windows or [t for seat in self._paces for *_, t in seat]
        if pool:
            await _wait_until(self._event_t + self._pace_rng.choice(pool))
        self._release()

    def _release(self) -> None:
        """Sends the events held back after a trick's last pass (see ``_imitate_window``)."""
        if self._held:
            self._held = False
            self._publish_new()

    async def _simultaneous(self, phase: Phase) -> None:
        """Asks all four seats at once, then applies the answers in seat order (a table of
        the arena's bot processes thaws them for it one at a time: ``arena.server.turns``)."""
        m = self.match
        obs = [observe(m, s) for s in range(4)]  # every seat to act: none has answered yet
        asks: list[asyncio.Future[Answer] | None] = [None, None, None, None]
        decision_ms = self.config.time.decision_ms
        vp = (m.vp[0], m.vp[1]) if self.config.options.tournament else None
        before = [self._log_mark(s) for s in range(4)]
        try:
            for s in range(4):
                player = self.players[s]
                if player is not None:
                    self.decisions += 1
                    d = Decision(obs[s], self.seq, decision_ms, self.bank[s], vp)
                    asks[s] = asyncio.ensure_future(player.decide(d))
            waiting = [f for f in asks if f is not None]
            if waiting:
                await asyncio.wait(waiting)
        finally:
            for f in asks:
                if f is not None and not f.done():
                    f.cancel()
        for s in range(4):
            fut = asks[s]
            if fut is None:
                self._apply_default(s, obs[s])
            else:
                at = len(m.actions)
                answer = fut.result()
                self._settle(s, obs[s], answer, False)
                self._time(at, s, answer.elapsed_ms, before[s])

    def _log_mark(self, s: int) -> int:
        return -1 if self.log_size is None else self.log_size(s)

    def _time(self, at: int, s: int, elapsed_ms: float, before: int) -> None:
        """Notes an asked decision: its first action, think time and the seat's log lines."""
        self.clock.append((at, s, round(elapsed_ms, 2), before, self._log_mark(s)))

    def _settle(self, s: int, obs: Observation, answer: Answer, window: bool) -> None:
        """Applies an answer, or the default action with the failure it calls for."""
        action = answer.action
        elapsed = answer.elapsed_ms
        if elapsed > self._decision_ms:
            self.bank[s] = max(0, self.bank[s] - int(elapsed - self._decision_ms + 0.999))
        if action is None:
            kind = answer.failure or FailureKind.MALFORMED
            self._fail_decision(s, obs, kind, answer.detail, answer.request_id, window)
            return
        if answer.failure is not None:  # the bot's client answered for it: counted, no strike
            # Private: what a bot reports of itself must not reach the other seats (a bot
            # could choose to report, one bit per decision, to signal its partner).
            outcome = FailureOutcome.CLIENT_ANSWER
            self._record(s, answer.failure, outcome, answer.request_id, answer.detail, True)
        m = self.match
        try:
            if answer.call_tichu:
                # The answer is atomic: check the action before the call takes effect.
                probe = m.copy()
                probe.apply(CALL_TICHU)
                probe.apply(action)
                self._apply(s, CALL_TICHU)
            self._apply(s, action)
        except IllegalActionError as e:
            detail = f"{action!s}: {e.rule}"
            self._fail_decision(s, obs, FailureKind.ILLEGAL, detail, answer.request_id, window)

    def _fail_decision(
        self, s: int, obs: Observation, kind: FailureKind, detail: str, rid: int, window: bool
    ) -> None:
        """The default action for a decision that got no acceptable answer, and its price."""
        if self.adjudicator.seats[s].given_up:
            self._apply_default(s, obs)  # already paid for: no further strikes
            return
        if kind is FailureKind.TIMEOUT:
            self.bank[s] = 0
        decision = len(self.match.actions)
        if kind is FailureKind.CRASH:
            self._give_up(s, kind, detail, rid, decision)
            self._apply_default(s, obs)
            return
        give_up = self.adjudicator.strike(s, window)
        self._record(s, kind, FailureOutcome.DEFAULT_ACTION, rid, detail, window, decision)
        self._apply_default(s, obs)
        if give_up and window:  # now would tell the table the seat holds a bomb
            self._deferred.setdefault(s, (self.match.hand_no, kind))
        elif give_up:
            strikes = self.adjudicator.seats[s].strikes
            self._give_up(s, kind, f"{strikes} strikes", 0)

    def _give_up_deferred(self, match_over: bool) -> None:
        """Gives up the seats whose limit a bomb window reached, once their hand is over."""
        hand = self.match.hand_no
        for s, (k, kind) in list(self._deferred.items()):
            if match_over or k < hand:
                del self._deferred[s]
                if not self.adjudicator.seats[s].given_up:
                    strikes = self.adjudicator.seats[s].strikes
                    self._give_up(s, kind, f"{strikes} strikes", 0)

    def _apply_default(self, s: int, obs: Observation) -> None:
        self.defaults += 1
        self._apply(s, default_action(obs))

    def _apply(self, s: int, action: Action) -> None:
        m = self.match
        assert m.seat == s, f"seat {s} answered but seat {m.seat} is to act"
        m.apply(action)
        self._publish_new()

    # ------------------------------------------------------------------ failures

    def _give_up(
        self, s: int, kind: FailureKind, detail: str, rid: int, decision: int | None = None
    ) -> None:
        outcome = self.adjudicator.give_up(s)
        self._record(s, kind, outcome, rid, detail, False, decision)
        if self.on_give_up is not None:
            self.on_give_up(s)
        policy = self.config.policy.give_up
        if policy is GiveUp.FORFEIT:
            self._halt(Termination.FORFEIT, f"seat {s} forfeits ({kind.name.lower()})", s)
        elif policy is GiveUp.FALLBACK_BOT:
            self.players[s] = fallback_seat()
        else:
            self.players[s] = None

    def _grace_over(self, s: int, kind: FailureKind) -> None:
        self._grace.pop(s, None)
        if self.adjudicator.seats[s].away is None or self.over or self._stop is not None:
            return
        grace = self.config.policy.reconnect_grace_ms
        self._give_up(s, kind, f"not back within the {grace} ms grace period", 0)

    def _cancel_grace(self, s: int) -> None:
        handle = self._grace.pop(s, None)
        if handle is not None:
            handle.cancel()

    def _record(
        self,
        s: int,
        kind: FailureKind,
        outcome: FailureOutcome,
        rid: int,
        detail: str,
        private: bool = False,
        decision: int | None = None,
    ) -> None:
        """Records a failure and announces it at once.

        A failure about a bomb window is private: it goes to its seat only and does not
        advance the table's ``state_seq``, so the other seats see no gap in the numbering.
        The detail is capped (``cap_text``); a public failure shows the publicly counted
        strikes.
        """
        m = self.match
        rec = self.adjudicator.seats[s]
        failure = Failure(
            seat=s,
            kind=kind,
            outcome=outcome,
            hand=m.hand_no + 1,
            decision=len(m.actions) if decision is None else decision,
            request_id=rid,
            strikes=rec.strikes if private else rec.shown,
            detail=cap_text(detail),
            private=private,
        )
        self.failures.append(failure)
        if not private:
            self.seq += 1
        only = s if private else -1
        self._send(TableEvent(self.seq, m.hand_no + 1, failure=failure, only_seat=only))

    def _halt(self, termination: Termination, detail: str, seat: int) -> None:
        """Ends the match at the next opportunity: at once if the loop is waiting."""
        if self._stop is not None or self._outcome is not None:
            return
        self._stop = (termination, detail, seat)
        task = self._task
        if task is not None and task is not asyncio.current_task():
            task.cancel()

    # ------------------------------------------------------------------ events

    def _send(self, ev: TableEvent) -> None:
        if self.watch is not None:
            self.watch(ev)
        only = ev.only_seat
        if only >= 0:
            self.seats[only].notify(ev)
        elif self.broadcast is not None:
            self.broadcast(ev)
        else:
            for seat in self.seats:
                seat.notify(ev)

    def _publish_new(self) -> None:
        """Sends the rules events since the last call, numbered (while pacing, those after
        a trick's last pass wait: ``_imitate_window``)."""
        if self._held:
            return
        m = self.match
        k = self._hand
        if k != m.hand_no:
            if self._send_events(m.log[k], k):
                return
            self._hand = k = m.hand_no
            self._read = 0
            self.bank = [self.config.time.bank_ms_per_hand] * 4
        if len(m.events) > self._read:
            self._send_events(m.events, k)

    def _send_events(self, events: Sequence[Event], k: int) -> bool:
        """Sends ``events[self._read:]`` of hand ``k`` as they are, each with its number.

        Returns whether it held the rest back: while pacing, the events that follow a pass
        in the same step (the trick's collection, with no bomb window before it).
        """
        hand = k + 1
        i = self._read
        end = len(events)
        self._read = end
        send = self._send
        seq = self.seq
        holding = self._holding
        if i < end:
            self._event_t = time.perf_counter()
            self._opener = events[end - 1][0] in _OPENERS
        for j in range(i, end):
            e = events[j]
            if holding and j > i and events[j - 1][0] == _PASS_EVENT:
                self._read = j
                self._held = True
                return True
            seq += 1
            self._last_kind = e[0]
            if e[0] == _HAND_END:  # no later hand has ended: the totals are the match's
                m = self.match
                ev = TableEvent(
                    seq,
                    hand,
                    e,
                    result=m.hand_results[k],
                    scores=(m.scores[0], m.scores[1]),
                    victory_points=(m.vp[0], m.vp[1]),
                )
            else:
                ev = _new(TableEvent, (seq, hand, e, None, None, None, _NO_SCORES, _NO_SCORES, -1))
            self.seq = seq
            send(ev)
        return False

    # ------------------------------------------------------------------ outcomes

    def _normal_outcome(self) -> MatchOutcome:
        m = self.match
        a, b = m.scores
        if self.config.options.tournament:
            va, vb = m.vp
            team = 0 if va > vb else 1 if vb > va else -1
        else:
            team = 0 if a > b else 1 if b > a else -1
        winners = (team, team + 2) if team >= 0 else ()
        return MatchOutcome(
            Termination.NORMAL,
            (a, b),
            winners,
            len(m.hand_results),
            tuple(self.adjudicator.given_up),
            "",
            (m.vp[0], m.vp[1]),
        )

    def _stopped_outcome(self) -> MatchOutcome:
        assert self._stop is not None
        termination, detail, seat = self._stop
        m = self.match
        a, b = m.scores
        if termination is Termination.FORFEIT:
            team = 1 - (seat & 1)
            winners: tuple[int, ...] = (team, team + 2)
        elif termination is Termination.ADJUDICATED:
            team = 0 if a > b else 1 if b > a else -1
            winners = (team, team + 2) if team >= 0 else ()
        else:
            winners = ()
        return MatchOutcome(
            termination,
            (a, b),
            winners,
            len(m.hand_results),
            tuple(self.adjudicator.given_up),
            detail,
            (m.vp[0], m.vp[1]),
        )
