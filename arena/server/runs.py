"""Where the arena keeps its own files (results, replays, bot logs) when no path is given.

``runs/`` in the working folder, as the README's commands expect, unless that folder lies
inside the folder of a bot taking part: a bot author runs ``arena play bot.toml ...`` or the
CI workflow's ``arena gate`` from the bot's own folder, and files there are readable by the bot
in its sandbox (which the runner refuses) and would change a league's hash of the bot. Then
the user's state folder is used instead, and the commands say where their files went.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from arena.server.manifest import BUILTIN_DIR, Manifest

__all__ = ["RUNS", "bot_folders", "runs_folder", "state_runs_folder"]

RUNS = Path("runs")
"""The default folder, relative to the working folder."""


def state_runs_folder() -> Path:
    """``$XDG_STATE_HOME/tichu-arena/runs`` (``~/.local/state/tichu-arena/runs`` by default)."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "tichu-arena" / "runs"


def bot_folders(manifests: Iterable[Manifest]) -> list[Path]:
    """The folders whose files are a bot's: its manifest's folder and the folder it runs in.

    A built-in bot's is its folder of ``example_bots`` alone: it runs in the project's root
    (``workdir = "../.."``, so ``python -m`` finds ``example_bots``), which its sandbox does
    not show, and the project root is where the README's commands write ``runs/``.
    """
    folders: list[Path] = []
    for m in manifests:
        builtin = m.folder.resolve().parent == BUILTIN_DIR.resolve()
        folders += [m.folder] if builtin else [m.folder, m.cwd]
    return folders


def runs_folder(manifests: Iterable[Manifest]) -> Path:
    """``runs`` here, or the state folder when ``runs`` would lie inside a bot's folder
    (``bot_folders``)."""
    here = RUNS.resolve()
    for folder in bot_folders(manifests):
        inside = folder.resolve()
        if here == inside or inside in here.parents:
            return state_runs_folder()
    return RUNS
