"""The viewer's game routes: the game list, a replay step by step, its file, the duplicate
comparison, and replays uploaded from the start page."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import FileResponse

from arena.web.data import GameFilter
from arena.web.uploads import UploadRefused
from arena.web.viewer import PROBLEMS, Viewer

__all__ = ["game_routes"]


def game_routes(v: Viewer) -> APIRouter:
    """Routes: ``/api/games``, ``/api/replay`` (and its download and upload), ``/api/step``,
    ``/api/compare``."""
    router = APIRouter(responses=PROBLEMS)

    @router.post("/api/replay/upload")
    async def replay_upload(request: Request, name: str = "") -> dict[str, Any]:
        """A replay file from the person's disk (the body, ``name`` its file name), kept under
        an unguessable id; answers where the replay viewer opens it.

        Same origin only: a page of another site may make the browser post here (a form or
        a ``fetch`` needs no permission to send), though it cannot read the answer, so it
        could only store replays nobody can find and push the person's own uploads out of
        the kept ones. Nothing is changed but that store and no session is at stake, so no
        CSRF token is needed; ``service_guard.Guard`` refuses a post whose ``Origin`` is
        another site's, as it does for every form the arena serves.
        """
        try:
            upload_id = await v.uploads.receive(
                name, request.stream(), request.headers.get("content-length")
            )
        except UploadRefused as e:
            raise HTTPException(e.status, str(e)) from None
        where = {"db": len(v.data) - 1, "event": upload_id, "play": 0}
        return {**where, "href": "/replay?" + urlencode(where)}

    @router.get("/api/games")
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
        d = v.pick(db)
        name = v.event_name(d, event)
        flt = GameFilter(bot, round, board, result, failures)
        return {"event": name, **d.games(name, flt, offset, limit)}

    @router.get("/api/replay")
    def replay_api(
        db: int = 0, event: str | None = None, play: int = 0, view: str = "spectator"
    ) -> dict[str, Any]:
        d = v.pick(db)
        name = v.event_name(d, event)
        v.check_view(view, d, name, play)
        tl = d.timeline(name, play)
        return {
            "event": name,
            "play": play,
            **tl.outline(view),
            "board": d.board_plays(name, play),
        }

    @router.get("/api/step")
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
        d = v.pick(db)
        name = v.event_name(d, event)
        v.check_view(view, d, name, play)
        tl = d.timeline(name, play)
        if since is not None:
            v.check_view(since, d, name, play)
            moments = tl.visible(since)
            step = tl.position(view, moments[min(step, len(moments) - 1)])
        return tl.view(min(step, len(tl.visible(view)) - 1), view)

    @router.get("/api/replay/download")
    def replay_download(db: int = 0, event: str | None = None, play: int = 0) -> FileResponse:
        """The play's replay file, as ``arena replay`` reads it (refused while its board is
        still being played: it holds every hand)."""
        d = v.pick(db)
        name = v.event_name(d, event)
        v.check_view("all", d, name, play)
        path = d.replay_file(name, play)
        if not path.is_file():
            raise HTTPException(404, f"play {play}'s replay file is missing")
        filename = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{name}-play{play}")
        return FileResponse(path, media_type="application/json", filename=filename + ".json")

    @router.get("/api/compare")
    def compare_api(db: int = 0, event: str | None = None, play: int = 0) -> dict[str, Any]:
        """The board's finished plays side by side (refused while a play of the board is
        still being played: its other tables' actions tell its hands)."""
        d = v.pick(db)
        name = v.event_name(d, event)
        if d.board_in_play(name, play):
            raise HTTPException(
                403,
                f"play {play}'s board is still being played at another table: its tables are"
                " compared when every play of the board ends",
            )
        return d.compare(name, play)

    return router
