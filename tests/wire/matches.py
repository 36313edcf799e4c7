"""Random matches for the wire tests: every decision's view, and a match's numbered events."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import replace

from arena.rules import (
    CALL_TICHU,
    GRAND,
    NO_GRAND,
    EventKind,
    Exchange,
    Match,
    Observation,
    Options,
    Phase,
    Play,
    cards_of,
    observe,
)
from arena.wire import pb
from arena.wire.events import encode_event
from arena.wire.values import encode_hand_result, encode_scores

OPTIONS = (
    Options(hands=3),
    Options(hands=2, grand_tichu=False),
    Options.turnier(),
    Options(target_score=300),
)
MAX_HANDS = 6  # random bets can keep a match to a target score going for ever


def simultaneous_view(m: Match, seat: int) -> Observation:
    """A view of a decision asked of all four seats at once, as the referee builds it."""
    obs = observe(m, seat)
    if m.phase is Phase.GRAND_TICHU:
        return replace(obs, to_act=seat, legal=(NO_GRAND, GRAND), may_call_tichu=False)
    may = m.hands[seat].bit_count() == 14 and not m.grand[seat] and not m.tichu[seat]
    return replace(obs, to_act=seat, legal=(), may_call_tichu=may)


def random_states(
    seed: int, options: Options, *, calls: float = 0.1, bombs: float = 0.5
) -> Iterator[tuple[Match, Observation]]:
    """Plays a random match and yields every decision's view (with the match at that moment).

    The policy calls Grand Tichu and Tichu now and then and prefers bombs when offered, so
    that bomb windows, wishes, Dragon gifts, Dog leads and bets all occur.
    """
    rng = random.Random(seed)
    m = Match(options, seed=seed)
    while not m.over and m.hand_no < MAX_HANDS:
        if m.phase in (Phase.GRAND_TICHU, Phase.EXCHANGE):
            for s in range(4):
                if m.seat != s:
                    yield m, simultaneous_view(m, s)
        obs = observe(m, m.seat)
        yield m, obs
        if obs.may_call_tichu and rng.random() < calls:
            m.apply(CALL_TICHU)
        if obs.phase is Phase.EXCHANGE:
            a, b, c = rng.sample(list(cards_of(obs.hand)), 3)
            m.apply(Exchange(a, b, c))
        elif obs.phase is Phase.GRAND_TICHU:
            m.apply(GRAND if rng.random() < calls else NO_GRAND)
        else:
            bombs_offered = [p for p in obs.legal if type(p) is Play and p.is_bomb]
            if bombs_offered and rng.random() < bombs:
                m.apply(rng.choice(bombs_offered))
            else:
                m.apply(rng.choice(obs.legal))


def hand_end(m: Match, h: int) -> pb.HandResult:
    """Hand ``h``'s result with the cumulative scores after it."""
    done = m.hand_results[: h + 1]
    scores = [sum(r.score[0] for r in done), sum(r.score[1] for r in done)]
    vp = [sum(r.victory_points[0] for r in done), sum(r.victory_points[1] for r in done)]
    return encode_hand_result(
        m.hand_results[h], scores=scores, tournament=m.options.tournament, victory_points=vp
    )


class NumberedEvents:
    """A match's public events as wire events numbered 1, 2, ... (what a referee streams).

    Call ``advance()`` after each ``Match.apply`` for the events it added; ``next_seq()``
    numbers an event the caller makes itself (a match end).
    """

    def __init__(self, match: Match) -> None:
        self.match = match
        self.state_seq = 0
        self._hand = 0
        self._read = 0

    def next_seq(self) -> int:
        """Reserves the next ``state_seq``."""
        self.state_seq += 1
        return self.state_seq

    def advance(self) -> list[pb.Event]:
        """The wire events of everything the match did since the last call."""
        m = self.match
        out: list[pb.Event] = []
        while True:
            h = self._hand
            finished = h < len(m.log)
            events = m.log[h] if finished else m.events
            for e in events[self._read :]:
                end = hand_end(m, h) if e.kind == EventKind.HAND_END else None
                out.append(encode_event(e, state_seq=self.next_seq(), hand_no=h, hand_end=end))
            self._read = len(events)
            if not finished or (m.over and h == len(m.log) - 1):
                return out
            self._hand += 1
            self._read = 0


def encode_match_result(
    match: Match,
    *,
    termination: int = pb.TERMINATION_NORMAL,
    given_up: Iterable[int] = (),
    detail: str = "",
) -> pb.MatchResult:
    """The ``MatchResult`` of a match as it stands (winners: the team ahead, none if level)."""
    msg = pb.MatchResult(
        termination=termination,  # type: ignore[arg-type]
        hands_played=len(match.hand_results),
        detail=detail,
    )
    tournament = match.options.tournament
    encode_scores(msg.scores, match.scores, tournament=tournament, victory_points=match.vp)
    key = match.vp if tournament else match.scores
    if termination != pb.TERMINATION_ABORTED and key[0] != key[1]:
        team = 0 if key[0] > key[1] else 1
        msg.winners.extend((team, team + 2))
    msg.given_up.extend(given_up)
    return msg
