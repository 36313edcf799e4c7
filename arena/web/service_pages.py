"""The service's league pages and their JSON twins: status and standings, a bot's page.

Standings count finished rounds only: a round in progress shows its progress (plays done
of planned), never its hands, so nothing the live rules hide (a board still being played
at another table) is served early. Each finished round links to its games in the viewer
(``/games?event=...``). A bot's seat logs are listed and served to its owner alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse
from jinja2 import Environment, PackageLoader

from arena.server.bots import seat_log
from arena.service.scheduler import plan
from arena.tournament.league.season import season_table, table_json
from arena.tournament.league.store import LeagueStore
from arena.web.service_privacy import Part, may, require, shown
from arena.web.service_state import ServiceState, State
from arena.web.viewer import PROBLEMS

__all__ = ["render", "router"]


PAGES = Environment(
    loader=PackageLoader("arena.web", "templates"), autoescape=True, keep_trailing_newline=False
)
"""The service's page templates (``arena/web/templates``): every value autoescaped, so no
page depends on an escape added by hand."""


def render(template: str, title: str, twin: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A page from its template: its title, the service's links, the body, its JSON twin."""
    text = PAGES.get_template(template).render(title=title, twin=twin, **context)
    return HTMLResponse(text, status_code=status)


router = APIRouter(responses=PROBLEMS)
"""The routes (``service.py`` includes them); each gets the service's state as a dependency."""


def status(state: ServiceState) -> dict[str, Any]:
    with state.store() as store, state.service() as service:
        spec = store.league()
        season = store.current_season().number
        rounds = store.rounds(season)
        finished = [r for r in rounds if r.finished]
        upto = finished[-1].number if finished else 0
        key = f"table:{season}:{upto}:{len(store.versions())}"
        if key not in state.cache:  # one fit per finished round (or new version)
            state.cache.clear()
            state.cache[key] = table_json(season_table(store, season, upto)) if upto else None
        standings = state.cache[key]
        current = None
        if rounds and not rounds[-1].finished:
            r = rounds[-1]
            plays = [p for _, name, e in r.events if e is not None for p in store.plays(name)]
            current = {
                "round": r.number,
                "plays": len(plays),
                "plays_done": sum(p.done for p in plays),
            }
        return {
            "league": spec.name,
            "season": season,
            "season_rounds": spec.season_rounds,
            "schedule": None if spec.schedule is None else spec.schedule.model_dump(),
            "next": plan(store, service).to_json(),
            "in_progress": current,
            "rounds": [
                {
                    "round": r.number,
                    "finished": r.finished,
                    "events": [name for _, name, _ in r.events],
                }
                for r in rounds
            ],
            "standings": standings,
        }


@router.get("/api/service/status")
def status_api(state: State) -> dict[str, Any]:
    return status(state)


@router.get("/service", include_in_schema=False)
def status_page(state: State) -> HTMLResponse:
    data = status(state)
    standings = data["standings"]
    divisions = [
        [
            (
                row["rank"],
                {"href": f"/service/bots/{row['bot']}", "text": row["entry"],
                 "after": row["status"]},
                "-" if row["rating"] is None else f"{row['rating']:+.0f}",
                "-" if row["ci_low"] is None
                else f"[{row['ci_low']:+.0f}, {row['ci_high']:+.0f}]",
                row["hands"],
                ", ".join(f"{k} {n}" for k, n in row["failures"].items()) or "-",
                "new" if row["movement"] is None else f"{row['movement']:+d}",
            )
            for row in division["rows"]
        ]
        for division in (standings or {}).get("divisions", [])
    ]  # fmt: skip
    games = [(r["round"], r["events"]) for r in data["rounds"] if r["finished"]]
    return render(
        "status.html",
        f"League {data['league']}",
        "/api/service/status",
        data=data,
        standings=standings,
        divisions=divisions,
        games=games,
    )


def bot_data(state: ServiceState, bot: str, request: Request) -> dict[str, Any]:
    owner = state.owner(request, required=False)
    with state.store() as store:
        known = {b.name: b for b in store.bots()}
        if bot not in known:
            raise HTTPException(404, f"no bot {bot!r} in the league")
        info = known[bot]
        finished = {r.id for r in store.rounds() if r.finished}
        history: list[dict[str, Any]] = []
        for season in store.seasons():
            for r in store.rounds(season.number):
                if r.id not in finished:
                    continue
                key = (season.number, r.number)
                if key not in state.tables:  # a finished round's table never changes
                    table = season_table(store, season.number, r.number, movement=False)
                    state.tables[key] = table_json(table)
                rows = state.tables[key]
                for division in rows["divisions"]:
                    history.extend(
                        {"season": season.number, "round": r.number, **row}
                        for row in division["rows"]
                        if row["bot"] == bot
                    )
        failures: dict[str, int] = {}
        for row in history:
            if row["round"] == max(h["round"] for h in history):
                for kind, n in row["failures"].items():
                    failures[kind] = failures.get(kind, 0) + n
        versions = [
            {
                "version": v.number,
                "hash": v.hash,
                "submitted": v.submitted,
                "gate": None if v.gate is None else v.gate.get("verdict"),
            }
            for v in store.versions(bot)
        ]
        logs = (
            _logs(store.path, store, bot, finished) if may(Part.LOGS, owner, info.owner) else None
        )
    answer = {
        "bot": bot,
        "owner": info.owner,
        "retired": info.retired,
        "versions": versions,
        "history": [
            {
                k: row[k]
                for k in ("season", "round", "version", "rating", "ci_low", "ci_high", "hands")
            }
            for row in history
        ],
        "failures": failures,
        "logs": logs,
    }
    return shown(answer, owner, info.owner)


@router.get("/api/service/bots/{bot}")
def bot_api(state: State, bot: str, request: Request) -> dict[str, Any]:
    return bot_data(state, bot, request)


@router.get("/service/bots/{bot}", include_in_schema=False)
def bot_page(state: State, bot: str, request: Request) -> HTMLResponse:
    data = bot_data(state, bot, request)
    versions = [
        (v["version"], v["hash"][:12], v["submitted"], v["gate"] or "-") for v in data["versions"]
    ]
    history = [
        (
            h["season"],
            h["round"],
            h["version"],
            "-" if h["rating"] is None else f"{h['rating']:+.0f}",
            "-" if h["ci_low"] is None else f"[{h['ci_low']:+.0f}, {h['ci_high']:+.0f}]",
            h["hands"],
        )
        for h in data["history"]
    ]
    failures = ", ".join(f"{k} {n}" for k, n in data["failures"].items()) or "none"
    return render(
        "bot.html",
        f"Bot {bot}",
        f"/api/service/bots/{bot}",
        bot=bot,
        versions=versions,
        history=history,
        failures=failures,
        logs=data["logs"],
    )


@router.get("/service/bots/{bot}/logs/{path:path}", include_in_schema=False)
def bot_log(state: State, bot: str, path: str, request: Request) -> FileResponse:
    """One seat log of a finished round, to the bot's owner alone."""
    with state.store() as store:
        known = {b.name: b for b in store.bots()}
        require(Part.LOGS, state.owner(request), known[bot].owner if bot in known else None)
        finished = {r.id for r in store.rounds() if r.finished}
        listed = _logs(store.path, store, bot, finished)
    if path not in listed:
        raise HTTPException(404, f"no log {path!r} of {bot}")
    root = store.path.parent / f"{store.path.name}.logs"
    return FileResponse(root / path, media_type="text/plain")


def _logs(db: Path, store: LeagueStore, bot: str, finished: set[int]) -> list[str]:
    """The bot's seat logs of finished rounds, relative to ``<db>.logs``."""
    root = db.parent / f"{db.name}.logs"
    names = {seat_log(Path(), seat, bot).name for seat in range(4)}  # named by the manifest
    out: list[str] = []
    for r in store.rounds():
        if r.id not in finished:
            continue
        for _, name, _ in r.events:
            folder = root / name
            if folder.is_dir():
                out.extend(
                    p.relative_to(root).as_posix()
                    for p in sorted(folder.rglob("seat*.log"))
                    if p.name in names and not p.is_symlink()
                )
    return out
