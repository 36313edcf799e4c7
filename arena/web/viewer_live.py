"""The viewer's live route: a table being played, event by event, within the delay."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, BinaryIO

from fastapi import APIRouter, Depends, Header, HTTPException
from fastapi.sse import EventSourceResponse, ServerSentEvent

from arena.tournament.live import live_path
from arena.web.data import EventData
from arena.web.live import PublicTable, read_feed, visible_count
from arena.web.viewer import PROBLEMS, Viewer, resume_id

__all__ = ["live_routes"]


def live_routes(v: Viewer) -> APIRouter:
    """Routes: ``/api/live/stream``."""
    router = APIRouter(responses=PROBLEMS)

    def feed(
        db: int = 0, event: str | None = None, play: int = 0
    ) -> tuple[EventData, str, BinaryIO]:
        """The stream's database, event and feed file, held open (the runner removes it once
        the play is recorded; the open file stays readable), or 404 before the stream starts
        (a refusal inside the stream would come after its 200)."""
        d = v.pick(db)
        name = v.event_name(d, event)
        try:
            return d, name, live_path(d.path, name, play).open("rb")
        except OSError:
            raise HTTPException(
                404, f"event {name[:40]!r} has no live feed for play {play}"
            ) from None

    @router.get("/api/live/stream", response_class=EventSourceResponse)
    async def live_stream(
        # a default, not Annotated: the string annotation could not name a closure
        found: tuple[EventData, str, BinaryIO] = Depends(feed),
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> AsyncIterator[ServerSentEvent]:
        """A live table: one ``table`` message per public event the delay lets through.

        The id is the event's position in the feed; each message carries the event and the
        table after it. ``end`` follows the match's last event.
        """
        d, name, feed = found
        with feed:
            async for message in _stream(d, name, feed, resume_id(last_event_id, 0)):
                yield message

    async def _stream(
        d: EventData, name: str, feed: BinaryIO, sent: int
    ) -> AsyncIterator[ServerSentEvent]:
        while True:
            header, events = await asyncio.to_thread(read_feed, feed)
            if header is not None:
                shown = visible_count(events, v.delay)
                table = PublicTable(header)
                for i, ev in enumerate(events[:shown], 1):
                    table.apply(ev)
                    if i > sent:
                        sent = i
                        yield ServerSentEvent(
                            data={"event": ev, "view": table.view(), "header": header},
                            event="table",
                            id=str(i),
                        )
                if shown and events[shown - 1]["type"] == "match_end":
                    yield ServerSentEvent(data={"view": table.view()}, event="end", id=str(sent))
                    return
                if (await asyncio.to_thread(d.progress, name))["status"] != "running":
                    # The runner stopped mid-play: this feed will not go on (a resume
                    # plays the play again from its start, in a new file).
                    view = {**table.view(), "termination": "interrupted"}
                    yield ServerSentEvent(data={"view": view}, event="end", id=str(sent))
                    return
            await asyncio.sleep(v.poll_s)

    return router
