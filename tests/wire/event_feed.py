"""A second, independent model of the referee's public events, for tests.

``EventFeed`` turns a match's rules events into wire events with ``arena.wire.convert``'s
``hand_events`` (the conversion the SDK's local harness uses); the tests check that the
referee's live events and every view's history agree with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from arena.rules import Match, Phase
from arena.rules.state import Event, EventKind
from arena.wire import pb
from arena.wire.convert import encode_hand_result, encode_scores, hand_events


class EventList(list[pb.Event]):
    """A list with the ``add`` method of a repeated message field."""

    def add(self, **kwargs: Any) -> pb.Event:
        ev = pb.Event(**kwargs)
        self.append(ev)
        return ev


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


class EventFeed:
    """Turns a match's rules events into the wire's public events as the match advances.

    A model of the referee's public events for tests, built on ``hand_events`` rather than
    on the referee: call ``advance()`` after every ``Match.apply``; it returns the new events,
    numbered with consecutive ``state_seq`` values, with the wire's own shapes (the Grand
    Tichu reveal, the Dog's ``trick_won``, one ``dragon_given``, ``trick_won`` cards,
    ``hand_end`` results). Tichu calls made with exchange answers are held back until the
    exchange is done (docs/protocol.md section 9). Events the referee makes itself
    (failures, ``match_end``) take their number from ``next_seq()`` and may be appended to
    ``history``, the current hand's events as a view's ``history`` shows them.
    """

    def __init__(self, match: Match, *, state_seq: int = 0) -> None:
        self.match = match
        self.state_seq = state_seq  # the last number used
        self.history: list[pb.Event] = []
        self._hand = 0  # the hand being converted
        self._pos = 0  # how many of its rules events are converted
        self._revealed = False

    def next_seq(self) -> int:
        """Reserves the next ``state_seq`` for an event the referee makes itself."""
        self.state_seq += 1
        return self.state_seq

    def advance(self) -> list[pb.Event]:
        """The wire events for everything the match did since the last call."""
        m = self.match
        out = EventList()
        while True:
            h = self._hand
            finished = h < len(m.log)
            events: Sequence[Event] = m.log[h] if finished else m.events
            stop = len(events)
            if not finished and m.phase is Phase.EXCHANGE:
                # Calls riding on exchange answers wait for the exchange to complete.
                stop = 1
                while stop < len(events) and events[stop][0] == EventKind.GRAND_TICHU:
                    stop += 1
                stop = max(stop, self._pos)
            reveal = (
                m.options.grand_tichu
                and not self._revealed
                and (finished or m.phase is not Phase.GRAND_TICHU)
            )
            before = len(out)
            self.state_seq += hand_events(
                events,
                out,
                hand_no=h,
                first_seq=self.state_seq + 1,
                start=self._pos,
                stop=stop,
                reveal_grand=reveal,
                hand_end=self._hand_end(h) if finished and self._pos < stop else None,
            )
            self.history.extend(out[before:])
            self._revealed = self._revealed or reveal
            self._pos = stop
            if not finished or (h == len(m.log) - 1 and m.over):
                return out
            self._hand = h + 1
            self._pos = 0
            self._revealed = False
            self.history = []

    def _hand_end(self, h: int) -> pb.HandResult:
        m = self.match
        done = m.hand_results[: h + 1]
        scores = [sum(r.score[0] for r in done), sum(r.score[1] for r in done)]
        vp = [sum(r.victory_points[0] for r in done), sum(r.victory_points[1] for r in done)]
        return encode_hand_result(
            m.hand_results[h], scores=scores, tournament=m.options.tournament, victory_points=vp
        )
