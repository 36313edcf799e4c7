"""The live feed of a running event: each play's public table events, one JSON line each.

The runner hands a ``LiveFeed`` to every table it starts; the table calls it with each event
it sends its seats (``Table.watchers``). Only events every seat receives are written: a
private failure (a bomb window's) and every hand, exchange or legal list never reach the
feed, so the file holds no hidden card, and nothing in it can act on the table. ``arena web``
tails these files to show live tables (docs/web.md).

Layout: ``<db>.live/<event>/<ordinal>.jsonl`` (folders and files readable by their owner
alone), the first line a ``header`` (the play's round,
table, board, rotation and seat names), then one line per table event in ``seq`` order, the
last a ``match_end``. The file is flushed after every event, so a live table (with the
spectator delay ``none``) moves play by play; one small write per event is a few
microseconds beside a decision's round trip.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from arena.referee import TableEvent
from arena.rules import EventKind, format_cards
from arena.tournament.model import PlannedPlay

__all__ = ["FeedLines", "LiveFeed", "event_json", "event_line", "live_dir", "live_path"]

# The feed's names of the rules events (those of the wire's ``Event`` fields).
_TYPES = {
    EventKind.HAND_START: "hand_started",
    EventKind.GRAND_TICHU: "grand_tichu_revealed",
    EventKind.TICHU: "tichu_called",
    EventKind.EXCHANGE: "exchange_done",
    EventKind.PLAY: "played",
    EventKind.PASS: "passed",
    EventKind.WISH: "wish_made",
    EventKind.WISH_FULFILLED: "wish_fulfilled",
    EventKind.TRICK_WON: "trick_won",
    EventKind.DRAGON_GIFT: "dragon_given",
    EventKind.OUT: "player_out",
    EventKind.HAND_END: "hand_end",
}


def live_dir(db: Path) -> Path:
    """The folder of an event database's live feeds."""
    return db.parent / f"{db.name}.live"


def live_path(db: Path, event: str, ordinal: int) -> Path:
    """The live feed file of one play."""
    return live_dir(db) / event / f"{ordinal:06d}.jsonl"


def event_json(ev: TableEvent) -> dict[str, Any]:
    """One public table event as a JSON-ready dict (only the fields its kind uses)."""
    out: dict[str, Any] = {"seq": ev.seq, "hand": ev.hand}
    e = ev.event
    if e is None:
        if ev.outcome is not None:
            o = ev.outcome
            out["type"] = "match_end"
            out["termination"] = o.termination.name.lower()
            out["scores"] = list(o.scores)
            out["winners"] = list(o.winners)
        elif ev.failure is not None:
            f = ev.failure
            out.update(type="failure", seat=f.seat)
            out["kind"] = f.kind.name.lower()
            out["outcome"] = f.outcome.name.lower()
        return out
    kind = EventKind(e.kind)
    out["type"] = _TYPES[kind]
    if e.seat >= 0:
        out["seat"] = e.seat
    if kind is EventKind.PLAY and e.play is not None:
        out["play"] = str(e.play)
        out["combo"] = e.play.describe()
        out["out_of_turn"] = e.value == 1
    elif kind in (EventKind.WISH, EventKind.WISH_FULFILLED, EventKind.OUT):
        out["value"] = e.value
    elif kind in (EventKind.TRICK_WON, EventKind.DRAGON_GIFT):
        out["points"] = e.points
        out["cards"] = format_cards(e.cards) if e.cards else ""
        if kind is EventKind.DRAGON_GIFT:
            out["to"] = e.value
    elif kind is EventKind.GRAND_TICHU:
        out["called"] = list(e.called)
    elif kind is EventKind.HAND_END and ev.result is not None:
        r = ev.result
        out["result"] = {
            "score": list(r.score),
            "card_points": list(r.card_points),
            "bets": list(r.bets),
            "out": list(r.out),
            "double_victory": r.double_victory,
        }
        out["scores"] = list(ev.scores)
    return out


class LiveFeed:
    """Writes the public events of one table's plays, a file per play, in running order.

    Called with each ``TableEvent`` of a table it watches; ``write`` takes lines a Dask worker
    made of them (``FeedLines``) and sent to the driver, which writes the feeds."""

    def __init__(self, db: Path, event: str, plays: Sequence[PlannedPlay]) -> None:
        self.db = db
        self.event = event
        self.plays = list(plays)
        self._k = 0  # index of the play being written
        self._file: IO[str] | None = None

    def __call__(self, ev: TableEvent) -> None:
        if ev.only_seat >= 0 or self._k >= len(self.plays):
            return  # private to one seat, or past the planned plays
        self.write([event_line(ev)], ev.event is None and ev.outcome is not None)

    def write(self, lines: Sequence[str], end: bool = False) -> None:
        """Appends public event lines to the current play's feed (opened with its header on
        the first); ``end``: the match has ended, the next lines are the next play's."""
        if self._k >= len(self.plays):
            return
        if self._file is None:
            self._open(self.plays[self._k])
        assert self._file is not None
        self._file.write("".join(f"{line}\n" for line in lines))
        if end:
            self.close()
            self._k += 1
        else:
            self._file.flush()

    def _open(self, play: PlannedPlay) -> None:
        path = live_path(self.db, self.event, play.ordinal)
        for folder in (path.parent.parent, path.parent):
            folder.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self._file = os.fdopen(fd, "w", encoding="utf-8")
        header = {
            "type": "header",
            "event": self.event,
            "ordinal": play.ordinal,
            "round": play.round,
            "table": play.table,
            "board": play.board,
            "rotation": play.rotation,
            "seats": list(play.seats),
        }
        self._file.write(json.dumps(header, separators=(",", ":")) + "\n")

    def close(self) -> None:
        """Closes the current file (a play cut short is left without its ``match_end``)."""
        if self._file is not None:
            self._file.close()
            self._file = None


def event_line(ev: TableEvent) -> str:
    """One public table event as its feed line (without the newline)."""
    return json.dumps(event_json(ev), separators=(",", ":"))


class FeedLines:
    """A Dask worker's side of a live feed: collects the public events of a task's plays as
    feed lines and hands them to ``send`` as ``(play index, lines, end)``: at each match's
    end, and otherwise at most every ``every_s`` (a message per event would be thousands a
    second to the scheduler)."""

    def __init__(
        self, plays: int, send: Callable[[int, list[str], bool], None], every_s: float = 0.25
    ) -> None:
        self.plays = plays
        self.send = send
        self.every_s = every_s
        self._k = 0
        self._lines: list[str] = []
        self._sent = time.monotonic()

    def __call__(self, ev: TableEvent) -> None:
        if ev.only_seat >= 0 or self._k >= self.plays:
            return
        self._lines.append(event_line(ev))
        end = ev.event is None and ev.outcome is not None
        now = time.monotonic()
        if end or now - self._sent >= self.every_s:
            lines, self._lines, self._sent = self._lines, [], now
            self.send(self._k, lines, end)
            self._k += end
