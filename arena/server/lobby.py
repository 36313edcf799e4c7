"""Open tables: bots that start on their own join with a registered key and wait for three more.

A bot sends ``Hello{bot_key}``; the lobby queues its stream and tells every waiting bot how
many are queued (``Waiting``). When four are queued, the first four make a table: under the
``tichujoin`` seating the first two to join sit together as partners (seats 0 and 2, the
next two seats 1 and 3); under ``random`` the seats are drawn. Each stream then gets its
seat's ``Welcome`` (with a fresh seat token for resuming) and the match starts. A stream that
drops while waiting simply leaves the queue.

A key fills one seat of a table (``seats`` may allow a key more, up to four): a second
stream with a key that already waits is refused, so one bot author cannot sit as both
partners (or as an opponent too) by joining twice.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace
from enum import StrEnum

import grpc

from arena.server.codec import error_bytes, waiting_bytes
from arena.server.seat import Refused, Stream
from arena.server.table import Table, TableManager, TableSpec
from arena.wire import pb

TICHUJOIN_SEATS = (0, 2, 1, 3)
"""Seat of the 1st, 2nd, 3rd and 4th bot to join under ``tichujoin`` seating."""


class Seating(StrEnum):
    """How the lobby seats four bots."""

    TICHUJOIN = "tichujoin"
    RANDOM = "random"


class Lobby:
    """The queue of bots waiting for an open table; see the module docstring."""

    def __init__(
        self,
        manager: TableManager,
        keys: Mapping[str, str],
        spec: TableSpec | None = None,
        seating: Seating = Seating.TICHUJOIN,
        rng: random.Random | None = None,
        seats: Mapping[str, int] | None = None,
    ) -> None:
        self.manager = manager
        self.keys = dict(keys)  # bot key -> registered bot name
        self.seats = dict(seats or {})  # bot key -> seats it may fill at one table (default 1)
        self.spec = spec or TableSpec()
        self.seating = seating
        self.rng = rng or random.Random()
        self.queue: list[Stream] = []
        self.tables: list[Table] = []
        self._names: dict[int, str] = {}
        self._keys: dict[int, str] = {}  # id(stream) -> its bot key, while it waits

    def join(self, stream: Stream, key: str) -> None:
        """Queues a stream that sent ``Hello{bot_key}``; raises ``Refused`` for a bad key."""
        name = self.keys.get(key)
        if name is None:
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, "unknown bot_key")
        if not self.manager.accepting:
            raise Refused(grpc.StatusCode.UNAVAILABLE, "the referee is shutting down")
        allowed = self.seats.get(key, 1)
        waiting = sum(1 for st in self.queue if self._keys[id(st)] == key)
        if waiting >= allowed:
            raise Refused(
                grpc.StatusCode.ALREADY_EXISTS,
                f"bot {name!r} already waits for a table: its key fills {allowed} seat"
                f"{'s' if allowed > 1 else ''} of a table",
            )
        stream.owner = self
        self._names[id(stream)] = name
        self._keys[id(stream)] = key
        self.queue.append(stream)
        if len(self.queue) >= 4:
            self._form()
        self._announce()

    def _announce(self) -> None:
        n = len(self.queue)
        for st in self.queue:
            st.send(waiting_bytes(n))

    def _form(self) -> None:
        joined, self.queue = self.queue[:4], self.queue[4:]
        if self.seating is Seating.TICHUJOIN:
            seats: tuple[int, ...] = TICHUJOIN_SEATS
        else:
            seats = tuple(self.rng.sample(range(4), 4))
        names = ["", "", "", ""]
        for st, seat in zip(joined, seats, strict=True):
            st.send(waiting_bytes(4))
            names[seat] = self._names.pop(id(st))
            del self._keys[id(st)]
        table = self.manager.create(replace(self.spec, names=tuple(names)))
        self.tables.append(table)
        for st, seat in zip(joined, seats, strict=True):
            table.seats[seat].attach(st, resume=False)
        del self.tables[:-100]  # the recent ones, for runners and tests

    def on_message(self, stream: Stream, data: bytes) -> None:
        """A waiting bot has nothing to answer: tell it so (not counted against it)."""
        stream.send(error_bytes(pb.ERROR_CODE_UNKNOWN_REQUEST, 0, "waiting for a table"))

    def on_lost(self, stream: Stream) -> None:
        """A waiting bot left the queue."""
        if stream in self.queue:
            self.queue.remove(stream)
            self._names.pop(id(stream), None)
            self._keys.pop(id(stream), None)
            self._announce()
