"""Journey: the README's "Matches, events, ratings" commands run from the project's root
itself, where the built-in bots run (``workdir = "../.."``), write and read ``./runs`` as the
README says (issue 49: the event's database went to the state folder there, and the next
three commands found none). ``tests/test_readme.py`` runs them from another folder.

The example event plays the search bot for many minutes: a 6-hand stand-in of a name of this
test's own replaces ``docs/event-example.toml`` and ``example-2026``, and what it writes in
the project (``runs/<name>.*``, ``leaderboards/<name>.*``, its ``arena play`` replay) is
removed after.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.journeys.journey import doc_commands, sh, user_env

pytestmark = pytest.mark.slow

README = ROOT / "README.md"
STAND_IN = """\
name = "{name}"
bots = ["random", "greedy", {{ bot = "random", name = "random-2" }},
        {{ bot = "greedy", name = "greedy-2" }}]
schedule = "round_robin"
"""


def test_the_readme_commands_from_the_project_root_write_runs_there(tmp_path: Path) -> None:
    name = f"root-{os.getpid()}-{tmp_path.name[-12:]}".replace("_", "-")
    event = tmp_path / "stand-in.toml"
    event.write_text(STAND_IN.format(name=name))
    env = user_env(tmp_path / "home")  # its own state folder: nothing may land there

    commands = doc_commands(README)

    def readme(command: str) -> str:
        """The README's command (as written there), for the stand-in event."""
        assert command in commands, f"the README no longer has {command!r}"
        return command.replace("example-2026", name).replace("docs/event-example.toml", str(event))

    db = f"runs/{name}.sqlite"
    made: list[Path] = []
    try:
        out = " ".join(sh(readme("arena event run docs/event-example.toml"), ROOT, env).split())
        assert f"results: {db}" in out and (ROOT / db).is_file(), out
        resume = readme("arena event resume runs/example-2026.sqlite")
        assert f"results in {db}" in sh(resume, ROOT, env)
        assert "hand-Elo" in sh(readme("arena ratings runs/example-2026.sqlite"), ROOT, env)
        board = readme("arena leaderboard runs/example-2026.sqlite")
        assert f"leaderboards/{name}.md" in sh(board, ROOT, env)
        played = sh(
            readme("arena play greedy heuristic greedy heuristic") + " --hands 1", ROOT, env
        )
        replay = played.split("replay written to ")[1].split()[0]
        made.append(ROOT / replay)
        made.append(ROOT / f"{replay.removesuffix('.json')}-logs")
        assert replay.startswith("runs/play/") and (ROOT / replay).is_file(), played
        assert not (tmp_path / "home" / ".local" / "state").exists()
    finally:
        made += [*(ROOT / "leaderboards").glob(f"{name}.*"), *(ROOT / "runs").glob(f"{name}.*")]
        for path in made:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
