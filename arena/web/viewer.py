"""What the viewer's routes share: the databases served, the spectator delay, and how a
request names a database, an event and a view.

Databases are named by their position (``db=0``, the default): the event databases of
``--db``, then the replay files given on the command line (one more), then the replays
uploaded from the start page (last, listed nowhere).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException
from pydantic import BaseModel

from arena.web.data import EventData
from arena.web.timeline import PERSPECTIVES
from arena.web.uploads import UploadedReplays

__all__ = ["PROBLEMS", "Problem", "Viewer", "resume_id"]


class Problem(BaseModel):
    """An error's answer: one line, or FastAPI's list of the request's invalid parameters."""

    detail: str | list[dict[str, Any]]


PROBLEMS: dict[int | str, dict[str, Any]] = {
    422: {"model": Problem, "description": "A request, or a replay, that cannot be read"}
}
"""The routers' documented 422 (FastAPI documents only its own list form)."""


@dataclass
class Viewer:
    """The state of one viewer app."""

    data: list[EventData]  # every database, the uploads last
    listed: int  # how many of them ``/api/dbs`` lists (not the uploads)
    uploads: UploadedReplays
    delay: str  # the spectator delay of live tables (``arena.web.live.DELAYS``)
    poll_s: float  # how often streams look at the databases and the live feeds
    public: bool = False  # served to strangers: databases named, not their paths

    def pick(self, db: int) -> EventData:
        """Database ``db`` (404 when there is none)."""
        if not 0 <= db < len(self.data):
            raise HTTPException(404, f"no database {db}: there are {len(self.data)}")
        return self.data[db]

    @staticmethod
    def event_name(d: EventData, event: str | None) -> str:
        """The event asked for (the first one when none is named; 404 when it is unknown)."""
        if event is None:
            names = d.names()
            if not names:
                raise HTTPException(404, f"{d.path.name}: no events yet")
            return str(names[0])
        if not d.has_event(event):
            raise HTTPException(404, f"{d.path.name}: no event {event[:40]!r}")
        return event

    def check_view(
        self, view: str, d: EventData | None = None, name: str = "", play: int = 0
    ) -> None:
        """Refuses an unknown view, and every view of a play whose board is in play: its
        other rotations deal the same cards, so even the spectator's (the cards played) would
        tell most of each hand still being played."""
        if view not in PERSPECTIVES:
            raise HTTPException(422, f"view {view!r}: use one of {', '.join(PERSPECTIVES)}")
        if d is not None and d.board_in_play(name, play):
            raise HTTPException(
                403,
                f"play {play}'s board is still being played at another table, which holds the"
                " same cards: its hands are hidden until every play of the board ends",
            )


def resume_id(header: str | None, new: int) -> int:
    """The ``Last-Event-ID`` a reconnecting client sent (``new`` for a new client)."""
    try:
        return max(0, int(header)) if header else new
    except ValueError:
        return new
