"""The web app: JSON and server-sent events over event databases, and one static page a view.

``create_app(dbs)`` builds the FastAPI application; ``arena web`` serves it with uvicorn.
Pages (``/``, ``/event``, ``/games``, ``/replay``, ``/live``) are static files from the
package with plain JavaScript that asks the JSON API; nothing is fetched from elsewhere.
The JSON routes live by concern (``viewer_events``, ``viewer_games``, ``viewer_live``, over
the state they share in ``viewer``): building the app is wiring. Databases are named by their
position in ``--db`` (``db=0``, the default).

Streams (``text/event-stream``): each message has an ``id``; a client that reconnects with
``Last-Event-ID`` gets only what follows; a stream that is complete sends an ``end`` event
and closes, so a browser stops reconnecting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from importlib import resources
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from arena.rules import ArenaError
from arena.web.data import EventData, NotFound
from arena.web.live import DELAYS
from arena.web.service_guard import Guard, guarded_config
from arena.web.uploads import UploadedReplays
from arena.web.viewer import Viewer
from arena.web.viewer_events import event_routes
from arena.web.viewer_games import game_routes
from arena.web.viewer_live import live_routes

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
    dbs: Sequence[Path],
    *,
    delay: str = "trick",
    poll_s: float = 0.5,
    files: Sequence[Path] = (),
    public: bool = False,
    body_s: float = 300.0,
) -> FastAPI:
    """The application over these event databases (and replay ``files``, one more database
    after them: ``arena.web.files``).

    ``delay`` is the spectator delay of live tables (``trick``, ``hand`` or ``none``);
    ``poll_s`` how often streams look at the database and the live feeds. ``public``: served
    to strangers (the league service): no bot's log lines, a league's finished rounds only,
    no server path named (``EventData``). Every request passes ``service_guard.Guard``
    (security headers, no cross-site posts, a body whole within ``body_s``).

    Raises:
        StoreError: A file is not an event database.
        ValueError: An unknown delay.
    """
    if delay not in DELAYS:
        raise ValueError(f"spectator delay {delay!r}: use one of {', '.join(DELAYS)}")
    data = [EventData(Path(p), public=public) for p in dbs]
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
    app.add_middleware(Guard, body_s=body_s)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    shell = (STATIC / "page.html").read_text(encoding="utf-8")
    for page, title in PAGES.items():
        html = shell.replace("{title}", title).replace("{page}", page)

        def serve(html: str = html) -> HTMLResponse:
            return HTMLResponse(html)

        app.get("/" if page == "index" else f"/{page}", include_in_schema=False)(serve)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    viewer = Viewer(data, listed, uploads, delay, poll_s, public)
    for routes in (event_routes, game_routes, live_routes):
        app.include_router(routes(viewer))

    @app.exception_handler(NotFound)
    async def not_found(_request: Request, exc: NotFound) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(ArenaError)  # a replay that cannot be re-played, say
    async def arena_error(_request: Request, exc: ArenaError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=422)

    return app


@contextmanager
def running(app: FastAPI, *, timeout_s: float = 30.0, header_s: float = 10.0) -> Iterator[str]:
    """Serves ``app`` with uvicorn on a free loopback port in a thread; yields its address.

    For the benchmark, the screenshots and the tests; ``arena web`` runs uvicorn itself (both
    with ``guarded_config``: a connection closed when no request's headers come in
    ``header_s``).
    """
    import uvicorn

    config = guarded_config(app, "127.0.0.1", 0, header_s)
    server = uvicorn.Server(config)
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
