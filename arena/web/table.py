"""A table where people play against bots: its web app (the lobby, a person's seat, ``/live``).

The concerns live beside it: ``arena.web.room`` (``TableRoom``: seats, the game, the public
events), ``arena.web.seat`` (a person's seat and the bot that waits for them),
``arena.web.seat_view`` (what a person's page is sent), ``arena.web.live`` (``PublicTable``).

``TableRoom`` holds four seats. People take seats in the lobby (``/``) or through an invite
link carrying that seat's secret (``/seat?token=...``); when someone starts the game, bots
fill the empty seats. The referee is the same as for ``arena play``: an ``ArenaServer`` on
loopback, each bot a sandboxed process started by ``play_table``, and each person's seat a
client of that referee like any bot (``sdk.client.BotClient``): its ``PersonBot`` hands each
decision to the person's page and waits for the answer, which the SDK sends and the referee
checks as it checks every bot's. The game is recorded to a replay file.

Hidden information: a person's page asks ``/api/seat/state`` with its seat's secret and gets
the public table (the same public events as a spectator, without the delay) and its seat's
own part from ``observe(match, seat)`` (its hand, its exchange), and its own pending decision;
no other seat's card is ever in it. A bomb window offered to another seat is shown as the
ordinary turn, as the replay viewer does. When the game ends, a new one may start at the same
table (``/api/again``).

Spectators (``/live``, linked from the lobby) see the table's public events under the spectator
delay (``delay``: ``trick`` by default, as ``arena web``), drawn by the live page.

Clock: people get ``decision_ms`` per decision and a bank per hand (much longer than a bot's);
a bomb window waits ``window_s`` for the person's bomb, then passes. A person whose page has not
asked for ``away_s`` seconds has left: with ``leave="bot"`` a stand-in bot answers for them
until they come back; with ``leave="wait"`` the table waits for them up to their clock (then
the stand-in answers, as it does when a person's time runs out).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Body, FastAPI, Header, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent
from fastapi.staticfiles import StaticFiles

from arena.web.app import STATIC
from arena.web.live import PublicTable, visible_count
from arena.web.room import TableRoom
from arena.web.seat import LEAVE_RULES, Person, PersonBot, SeatError, TableSettings
from arena.web.service_guard import Guard, guarded_config
from arena.web.viewer import resume_id

__all__ = [
    "LEAVE_RULES",
    "Person",
    "PersonBot",
    "SeatError",
    "TableRoom",
    "TableSettings",
    "create_table_app",
    "serve_table",
]


def create_table_app(room: TableRoom, *, poll_s: float = 20.0) -> FastAPI:
    """The web app of one table: the lobby (``/``), a person's seat (``/seat``), their API.

    Pages long-poll (``since``: the version they have; the answer comes when something
    changed, or after ``poll_s``), so every response is a plain JSON document.
    """
    app = FastAPI(title="Tichu Arena table", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(Guard)  # security headers, no cross-site posts, bodies in time
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    shell = (STATIC / "page.html").read_text(encoding="utf-8")

    @app.on_event("startup")
    async def bind() -> None:
        room.bind(asyncio.get_running_loop())

    for page, title in (("lobby", "Table"), ("seat", "Your seat"), ("live", "Watch the table")):
        html = shell.replace("{title}", title).replace("{page}", page)

        async def serve(html: str = html) -> HTMLResponse:
            return HTMLResponse(html)

        app.get("/" if page == "lobby" else f"/{page}", include_in_schema=False)(serve)

    @app.get("/api/live/stream", response_class=EventSourceResponse)
    async def watch(
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> AsyncIterator[ServerSentEvent]:
        """Spectators: the table's public events under the spectator delay (``/live``)."""
        header = {"type": "header", "kind": "table", "seats": room.names}
        header["delay"] = room.settings.delay
        sent = resume_id(last_event_id, 0)
        while True:
            since = room.version
            events = list(room.feed)
            shown = visible_count(events, room.settings.delay)
            table = PublicTable(header)
            for i, ev in enumerate(events[:shown], 1):
                table.apply(ev)
                if i > sent:
                    sent = i
                    data = {"event": ev, "view": table.view(), "header": header}
                    yield ServerSentEvent(data=data, event="table", id=str(i))
            if room.state == "over":
                view = table.view()
                if not view["over"]:
                    view = {**view, "termination": room.error or "stopped"}
                yield ServerSentEvent(data={"view": view}, event="end", id=str(sent))
                return
            await room.wait(since, 5.0)

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> FileResponse:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    @app.get("/api/lobby")
    async def lobby_api(since: int = -1) -> dict[str, Any]:
        await room.wait(since, poll_s)
        return room.lobby()

    @app.post("/api/sit")
    async def sit_api(body: dict[str, Any] = Body(...)) -> dict[str, Any]:  # noqa: B008
        seat = body.get("seat")
        secret = body.get("token")
        if seat is None and isinstance(secret, str):  # an invite link names its seat
            seat = next(
                (s for s in range(4) if secrets.compare_digest(room.secrets[s], secret)), None
            )
        if not isinstance(seat, int):
            raise SeatError("name the seat to take (0..3), or use a seat's invite link")
        person = room.sit(seat, str(body.get("name", "")), secret if secret else None)
        return {"token": person.secret, "seat": person.seat, "name": person.name}

    @app.post("/api/start")
    async def start_api(body: dict[str, Any] = Body(...)) -> dict[str, Any]:  # noqa: B008
        room.person(str(body.get("token", "")))
        room.start()
        return room.lobby()

    @app.get("/api/invite")
    async def invite_api(token: str) -> dict[str, Any]:
        """What an invite link is for (its seat, team, partner), before sitting down."""
        return room.invite(token)

    @app.post("/api/again")
    async def again_api(body: dict[str, Any] = Body(...)) -> dict[str, Any]:  # noqa: B008
        """A new game at the same table, once this one is over (a seated person asks)."""
        room.person(str(body.get("token", "")))
        room.again()
        return room.lobby()

    @app.get("/api/seat/state")
    async def state_api(request: Request, token: str, since: int = -1) -> dict[str, Any]:
        person = room.person(token)
        person.polling += 1  # a page waiting here is present, however long it waits
        try:
            until = time.monotonic() + poll_s
            while room.version == since and time.monotonic() < until:
                await room.wait(since, 1.0)
                if await request.is_disconnected():  # the tab was closed
                    break
        finally:
            person.polling -= 1
            person.seen = time.monotonic()
        return room.seat_view(person)

    @app.post("/api/seat/answer")
    async def answer_api(body: dict[str, Any] = Body(...)) -> dict[str, Any]:  # noqa: B008
        person = room.person(str(body.get("token", "")))
        number = body.get("number")
        if not isinstance(number, int):
            raise SeatError("name the decision answered (number)")
        person.give(number, body)
        return {"ok": True}

    @app.get("/api/record")
    async def record_api() -> FileResponse:
        """The finished game's replay file (every hand is public once the game is over)."""
        if room.state != "over" or not room.out.is_file():
            raise SeatError("the game's record is written when the game is over")
        return FileResponse(room.out, media_type="application/json", filename=room.out.name)

    @app.exception_handler(SeatError)
    async def refused(_request: Request, exc: SeatError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=409)

    return app


async def serve_table(
    room: TableRoom, host: str, port: int, ready: Any = None, stop: asyncio.Event | None = None
) -> None:
    """Serves the table's pages with uvicorn on this loop, beside the referee, until ``stop``
    is set (or Ctrl-C); ``ready(port)`` hears the port bound."""
    import uvicorn

    config = guarded_config(create_table_app(room), host, port)
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve())
    while not server.started:
        if task.done():
            await task
            return
        await asyncio.sleep(0.05)
    if ready is not None:
        ready(server.servers[0].sockets[0].getsockname()[1])
    if stop is not None:
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait([task, stopping], return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
    server.should_exit = True  # uvicorn ends its connections and returns
    await task
