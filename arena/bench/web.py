"""``arena bench web``: the viewer's game list of a large event and its replay steps.

An event of random plays (the rules core alone, no bots) is written to a temporary
database with a replay per play; the web app then serves it on loopback and the figures are
the wall times of whole HTTP requests: the game list of every hand, and replay steps (the
first step of a play re-plays it, later ones read the kept timeline).
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from arena.referee.replay import from_match, save
from arena.rules import Match
from arena.tournament.model import load_event, plan_event
from arena.tournament.store import EventStore, HandRow

__all__ = ["WebFigures", "bench_web"]


@dataclass(frozen=True)
class WebFigures:
    """Seconds for the event page and the game list, milliseconds per replay step."""

    hands: int
    build_s: float
    event_cold_s: float
    event_warm_s: float
    games_s: float
    first_step_ms: float
    step_ms_median: float
    step_ms_max: float


def _event(folder: Path, boards: int) -> Path:
    toml = folder / "bench.toml"
    toml.write_text(
        'name = "bench"\nbots = ["random", "greedy", "heuristic", "search"]\n'
        'schedule = "round_robin"\nhands_per_board = 1\nrotations = 2\n'
        f"boards_per_round = {boards}\n",
        encoding="utf-8",
    )
    spec = load_event(toml)
    db = folder / "bench.sqlite"
    rng = random.Random(1)
    with EventStore(db) as store:
        store.create_event(spec, plan_event(spec))
        for sp in store.pending_plays("bench"):
            m = Match(spec.match_options(), sp.play.seed, sp.play.deals(1))
            while not m.over:
                m.apply(rng.choice(m.legal_actions()))
            path = store.replay_path("bench", sp.play)
            save(from_match(m, sp.play.seats), path)
            store.record_play(sp.id, [HandRow.from_result(r) for r in m.hand_results], path)
    return db


def bench_web(hands: int = 1000, steps: int = 200) -> WebFigures:
    """Builds an event of about ``hands`` hands, serves it, times the game list and steps."""
    import httpx

    from arena.web.app import create_app, running

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        db = _event(Path(tmp), max(1, round(hands / 6)))
        build = time.perf_counter() - t0
        with running(create_app([db])) as url, httpx.Client(base_url=url, timeout=60) as client:
            client.get("/api/dbs").raise_for_status()
            times = []
            for _ in range(2):  # the first reads every replay, the second what is kept
                t0 = time.perf_counter()
                client.get("/api/event").raise_for_status()
                times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            games = client.get("/api/games", params={"limit": 10_000})
            games_s = time.perf_counter() - t0
            games.raise_for_status()
            rows = games.json()["rows"]
            play = rows[len(rows) // 2]["play"]
            t0 = time.perf_counter()
            outline = client.get("/api/replay", params={"play": play}).json()
            client.get("/api/step", params={"play": play, "step": 0}).raise_for_status()
            first = (time.perf_counter() - t0) * 1000
            rng = random.Random(2)
            times = []  # now the steps
            for _ in range(steps):
                step = rng.randrange(outline["steps"] + 1)
                view = rng.choice(["spectator", "all", "0"])
                t0 = time.perf_counter()
                client.get(
                    "/api/step", params={"play": play, "step": step, "view": view}
                ).raise_for_status()
                times.append((time.perf_counter() - t0) * 1000)
    return WebFigures(
        hands=len(rows),
        build_s=build,
        event_cold_s=times[0],
        event_warm_s=times[1],
        games_s=games_s,
        first_step_ms=first,
        step_ms_median=statistics.median(times),
        step_ms_max=max(times),
    )
