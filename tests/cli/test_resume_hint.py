"""The command an interrupted event prints to continue it: it must run the event as before."""

from __future__ import annotations

from pathlib import Path

from arena.cli.event import resume_command
from arena.tournament.model import parse_event, plan_event
from arena.tournament.store import EventStore


def test_the_hint_repeats_what_the_command_line_changed(tmp_path: Path) -> None:
    """The event file's settings live in the database; ``--jobs``, ``--cluster``, ``--out``
    and ``--allow-unsandboxed`` given to ``run`` are repeated, and ``--event`` when several."""
    db = tmp_path / "my runs" / "e.sqlite"
    db.parent.mkdir()
    with EventStore(db) as store:
        for name in ("first", "second"):
            data = {
                "name": name,
                "seed": 1,
                "bots": [{"bot": "random", "name": f"r{i}"} for i in range(4)],
            }
            spec = parse_event(data)
            store.create_event(spec, plan_event(spec))
        hint = resume_command(db, "second", store, 3, "local:2", Path("boards"), True)
        assert hint == (
            f"arena event resume '{db}' --event second --jobs 3 --cluster local:2"
            " --out boards --allow-unsandboxed"
        )
        assert resume_command(db, "second", store, None, None, Path("leaderboards")) == (
            f"arena event resume '{db}' --event second"
        )
