"""The viewer's event routes: the databases, an event's page and its stream, a league."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header
from fastapi.sse import EventSourceResponse, ServerSentEvent

from arena.web.data import EventData
from arena.web.viewer import PROBLEMS, Viewer, resume_id

__all__ = ["event_routes"]


def event_routes(v: Viewer) -> APIRouter:
    """Routes: ``/api/dbs``, ``/api/event`` and its stream, ``/api/league``."""
    router = APIRouter(responses=PROBLEMS)

    @router.get("/api/dbs")
    def dbs_api() -> list[dict[str, Any]]:
        return [
            {
                "db": i,
                "path": d.path.name if v.public else str(d.path),
                "events": d.events(),
                "league": d.is_league(),
                "delay": v.delay,
            }
            for i, d in enumerate(v.data[: v.listed])
        ]

    @router.get("/api/event")
    def event_api(db: int = 0, event: str | None = None) -> dict[str, Any]:
        d = v.pick(db)
        name = v.event_name(d, event)
        return {"event": name, "progress": d.progress(name), **d.event_page(name)}

    def stream_event(db: int = 0, event: str | None = None) -> tuple[EventData, str]:
        """The stream's database and event, or 404 before the stream starts."""
        d = v.pick(db)
        return d, v.event_name(d, event)

    @router.get("/api/event/stream", response_class=EventSourceResponse)
    async def event_stream(
        # a default, not Annotated: the string annotation could not name a closure
        found: tuple[EventData, str] = Depends(stream_event),
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> AsyncIterator[ServerSentEvent]:
        """One ``progress`` message each time a play is recorded (id: plays done)."""
        d, name = found
        sent = resume_id(last_event_id, -1)
        while True:
            progress = await asyncio.to_thread(d.progress, name)
            done = progress["plays_done"]
            if done != sent:
                sent = done
                yield ServerSentEvent(data=progress, event="progress", id=str(done))
            if progress["status"] in ("finished", "interrupted"):
                yield ServerSentEvent(data=progress, event="end", id=str(done))
                return
            await asyncio.sleep(v.poll_s)

    @router.get("/api/league")
    def league_api(db: int = 0, season: int | None = None) -> dict[str, Any]:
        return v.pick(db).league(season)

    return router
