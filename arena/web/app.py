"""The web app: JSON and server-sent events over event databases, and one static page a view.

``create_app(dbs)`` builds the FastAPI application; ``arena web`` serves it with uvicorn.
Pages (``/``, ``/event``, ``/games``, ``/replay``, ``/live``) are static files from the
package with plain JavaScript that asks the JSON API; nothing is fetched from elsewhere.
Databases are named by their position in ``--db`` (``db=0``, the default).

Streams (``text/event-stream``): each message has an ``id``; a client that reconnects with
``Last-Event-ID`` gets only what follows; a stream that is complete sends an ``end`` event
and closes, so a browser stops reconnecting.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from importlib import resources
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import FastAPI, Header, HTTPException, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent
from fastapi.staticfiles import StaticFiles

from arena.rules import ArenaError
from arena.tournament.live import live_path
from arena.web.data import EventData, GameFilter, NotFound
from arena.web.live import DELAYS, PublicTable, read_feed, visible_count
from arena.web.timeline import PERSPECTIVES
from arena.web.uploads import UploadedReplays, UploadRefused

__all__ = ["PAGES", "create_app", "running"]

PAGES = {
    "index": "Events",
    "event": "Event",
    "games": "Games",
    "replay": "Replay",
    "live": "Live table",
    "league": "League",
}
"""Each page's script (``static/<page>.js``) and title; they share the ``page.html`` shell."""
STATIC = Path(str(resources.files("arena.web") / "static"))


def create_app(
    dbs: Sequence[Path], *, delay: str = "trick", poll_s: float = 0.5, files: Sequence[Path] = ()
) -> FastAPI:
    """The application over these event databases (and replay ``files``, one more database
    after them: ``arena.web.files``).

    ``delay`` is the spectator delay of live tables (``trick``, ``hand`` or ``none``);
    ``poll_s`` how often streams look at the database and the live feeds.

    Raises:
        StoreError: A file is not an event database.
        ValueError: An unknown delay.
    """
    if delay not in DELAYS:
        raise ValueError(f"spectator delay {delay!r}: use one of {', '.join(DELAYS)}")
    data = [EventData(Path(p)) for p in dbs]
    if files:
        from arena.web.files import ReplayFiles

        data.append(ReplayFiles(files))
    listed = len(data)  # the uploads come last and are listed nowhere
    uploads = UploadedReplays()
    data.append(uploads)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        uploads.close()

    app = FastAPI(
        title="Tichu Arena", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )
    app.state.uploads = uploads
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def pick(db: int) -> EventData:
        if not 0 <= db < len(data):
            raise HTTPException(404, f"no database {db}: there are {len(data)}")
        return data[db]

    def event_name(d: EventData, event: str | None) -> str:
        if event is None:
            names = d.names()
            if not names:
                raise HTTPException(404, f"{d.path}: no events yet")
            return str(names[0])
        if not d.has_event(event):
            raise HTTPException(404, f"{d.path}: no event {event[:40]!r}")
        return event

    shell = (STATIC / "page.html").read_text(encoding="utf-8")
    for page, title in PAGES.items():
        html = shell.replace("{title}", title).replace("{page}", page)

        def serve(html: str = html) -> HTMLResponse:
            return HTMLResponse(html)

        app.get("/" if page == "index" else f"/{page}", include_in_schema=False)(serve)

    @app.get("/api/dbs")
    def dbs_api() -> list[dict[str, Any]]:
        return [
            {
                "db": i,
                "path": str(d.path),
                "events": d.events(),
                "league": d.is_league(),
                "delay": delay,
            }
            for i, d in enumerate(data[:listed])
        ]

    @app.post("/api/replay/upload")
    async def replay_upload(request: Request, name: str = "") -> dict[str, Any]:
        """A replay file from the person's disk (the body, ``name`` its file name), kept under
        an unguessable id; answers where the replay viewer opens it.

        Same origin only: a page of another site may make the browser post here (a form or
        a ``fetch`` needs no permission to send), though it cannot read the answer, so it
        could only store replays nobody can find and push the person's own uploads out of
        the kept ones. Nothing is changed but that store and no session is at stake, so no
        CSRF token is needed; a request whose ``Origin`` is another site's is refused, which
        stops that nuisance (browsers send ``Origin`` with every POST).
        """
        origin = request.headers.get("origin")
        host = request.headers.get("host", "")
        if origin is not None and origin != f"{request.url.scheme}://{host}":
            raise HTTPException(
                403, f"uploads come from this viewer's own pages, not from {origin[:80]!r}"
            )
        try:
            upload_id = await uploads.receive(
                name, request.stream(), request.headers.get("content-length")
            )
        except UploadRefused as e:
            raise HTTPException(e.status, str(e)) from None
        where = {"db": len(data) - 1, "event": upload_id, "play": 0}
        return {**where, "href": "/replay?" + urlencode(where)}

    @app.get("/api/event")
    def event_api(db: int = 0, event: str | None = None) -> dict[str, Any]:
        d = pick(db)
        name = event_name(d, event)
        return {"event": name, "progress": d.progress(name), **d.event_page(name)}

    @app.get("/api/event/stream", response_class=EventSourceResponse)
    async def event_stream(
        db: int = 0,
        event: str | None = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> AsyncIterator[ServerSentEvent]:
        """One ``progress`` message each time a play is recorded (id: plays done)."""
        d = pick(db)
        name = event_name(d, event)
        sent = _last_id(last_event_id, -1)
        while True:
            progress = await asyncio.to_thread(d.progress, name)
            done = progress["plays_done"]
            if done != sent:
                sent = done
                yield ServerSentEvent(data=progress, event="progress", id=str(done))
            if progress["status"] in ("finished", "interrupted"):
                yield ServerSentEvent(data=progress, event="end", id=str(done))
                return
            await asyncio.sleep(poll_s)

    @app.get("/api/league")
    def league_api(db: int = 0, season: int | None = None) -> dict[str, Any]:
        return pick(db).league(season)

    @app.get("/api/games")
    def games_api(
        db: int = 0,
        event: str | None = None,
        bot: str = "",
        round: int | None = None,
        board: int | None = None,
        result: Annotated[str, Query(pattern="^(|A|B|tie|double)$")] = "",
        failures: Annotated[str, Query(pattern="^(|yes|no)$")] = "",
        offset: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
    ) -> dict[str, Any]:
        d = pick(db)
        name = event_name(d, event)
        flt = GameFilter(bot, round, board, result, failures)
        return {"event": name, **d.games(name, flt, offset, limit)}

    def check_view(view: str, d: EventData | None = None, name: str = "", play: int = 0) -> None:
        """Refuses an unknown view, and any view but the spectator's of a board in play."""
        if view not in PERSPECTIVES:
            raise HTTPException(422, f"view {view!r}: use one of {', '.join(PERSPECTIVES)}")
        if view != "spectator" and d is not None and d.board_in_play(name, play):
            raise HTTPException(
                403,
                f"play {play}'s board is still being played at another table, which holds the"
                " same cards: its hands are hidden until every play of the board ends (the"
                " spectator view is open)",
            )

    @app.get("/api/replay")
    def replay_api(
        db: int = 0, event: str | None = None, play: int = 0, view: str = "spectator"
    ) -> dict[str, Any]:
        d = pick(db)
        name = event_name(d, event)
        check_view(view, d, name, play)
        tl = d.timeline(name, play)
        return {
            "event": name,
            "play": play,
            **tl.outline(view),
            "board": d.board_plays(name, play),
        }

    @app.get("/api/step")
    def step_api(
        db: int = 0,
        event: str | None = None,
        play: int = 0,
        step: Annotated[int, Query(ge=0)] = 0,
        view: str = "spectator",
        since: Annotated[str | None, Query(alias="from")] = None,
    ) -> dict[str, Any]:
        """Step ``step`` in ``view``'s count; with ``from``, step ``step`` of that view's count
        (the same moment, or the last one ``view`` may see before it)."""
        d = pick(db)
        name = event_name(d, event)
        check_view(view, d, name, play)
        tl = d.timeline(name, play)
        if since is not None:
            check_view(since, d, name, play)
            moments = tl.visible(since)
            step = tl.position(view, moments[min(step, len(moments) - 1)])
        return tl.view(min(step, len(tl.visible(view)) - 1), view)

    @app.get("/api/replay/download")
    def replay_download(db: int = 0, event: str | None = None, play: int = 0) -> FileResponse:
        """The play's replay file, as ``arena replay`` reads it (refused while its board is
        still being played: it holds every hand)."""
        d = pick(db)
        name = event_name(d, event)
        check_view("all", d, name, play)
        path = d.replay_file(name, play)
        if not path.is_file():
            raise HTTPException(404, f"play {play}'s replay file is missing")
        filename = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{name}-play{play}")
        return FileResponse(path, media_type="application/json", filename=filename + ".json")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    @app.get("/api/compare")
    def compare_api(db: int = 0, event: str | None = None, play: int = 0) -> dict[str, Any]:
        d = pick(db)
        return d.compare(event_name(d, event), play)

    @app.get("/api/live/stream", response_class=EventSourceResponse)
    async def live_stream(
        db: int = 0,
        event: str | None = None,
        play: int = 0,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> AsyncIterator[ServerSentEvent]:
        """A live table: one ``table`` message per public event the delay lets through.

        The id is the event's position in the feed; each message carries the event and the
        table after it. ``end`` follows the match's last event.
        """
        d = pick(db)
        name = event_name(d, event)
        path = live_path(d.path, name, play)
        if not path.is_file():
            raise HTTPException(404, f"event {name!r} has no live feed for play {play}")
        sent = _last_id(last_event_id, 0)
        while True:
            header, events = await asyncio.to_thread(read_feed, path)
            if header is not None:
                shown = visible_count(events, delay)
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
            await asyncio.sleep(poll_s)

    @app.exception_handler(NotFound)
    async def not_found(_request: Request, exc: NotFound) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(ArenaError)  # a replay that cannot be re-played, say
    async def arena_error(_request: Request, exc: ArenaError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=422)

    return app


def _last_id(header: str | None, new: int) -> int:
    """The ``Last-Event-ID`` a reconnecting client sent (``new`` for a new client)."""
    try:
        return max(0, int(header)) if header else new
    except ValueError:
        return new


@contextmanager
def running(app: FastAPI, *, timeout_s: float = 30.0) -> Iterator[str]:
    """Serves ``app`` with uvicorn on a free loopback port in a thread; yields its address.

    For the benchmark, the screenshots and the tests; ``arena web`` runs uvicorn itself.
    """
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the web app did not start")
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
