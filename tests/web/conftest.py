"""A real event played over gRPC by the runner, and the web app serving it on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed")
from arena.tournament.model import load_event, plan_event
from arena.tournament.runner import EventRunner
from arena.tournament.store import EventStore
from arena.web.app import create_app, running

BOTS = Path(__file__).parent / "bots"


def event_toml(folder: Path, name: str, first: str, boards: int) -> Path:
    """A round robin of four bots on ``boards`` boards a round, both rotations."""
    path = folder / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\n'
        f'bots = [{{ bot = "{BOTS / first}" }}, "random", "greedy",'
        ' { bot = "greedy", name = "greedy-b" }]\n'
        'schedule = "round_robin"\nformat = "board"\nhands_per_board = 1\nrotations = 2\n'
        f"boards_per_round = {boards}\nseed = 11\njobs = 2\n"
        "[time_control]\ndecision_ms = 2000\n",
        encoding="utf-8",
    )
    return path


def play_event(toml: Path, db: Path) -> None:
    """Plans and plays the event to the end, with bot logs beside the database."""
    spec = load_event(toml)
    with EventStore(db) as store:
        store.create_event(spec, plan_event(spec))
        EventRunner(store, spec.name, spec, log_dir=db.parent / f"{db.name}.logs").run()


@pytest.fixture(scope="session")
def event_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished event of 6 plays (a log-writing random bot, random and two greedy bots)."""
    folder = tmp_path_factory.mktemp("web-event")
    db = folder / "events.sqlite"
    play_event(event_toml(folder, "webtest", "logbot.toml", 1), db)
    return db


@dataclass
class Served:
    """A running web app: its base address and what it serves."""

    url: str
    db: Path


def serve(dbs: list[Path]) -> Iterator[str]:
    """The app over ``dbs`` on a free loopback port (polling fast); yields the base URL."""
    with running(create_app(dbs, poll_s=0.1)) as url:
        yield url


@pytest.fixture(scope="session")
def web(event_db: Path) -> Iterator[Served]:
    """The web app over the finished event."""
    for url in serve([event_db]):
        yield Served(url, event_db)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Runs every test of the played event on one xdist worker, so it is played once."""
    for item in items:
        if "event_db" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("web-event"))
