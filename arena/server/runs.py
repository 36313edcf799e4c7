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

__all__ = ["RUNS", "runs_folder", "state_runs_folder"]

RUNS = Path("runs")
"""The default folder, relative to the working folder."""


def state_runs_folder() -> Path:
    """``$XDG_STATE_HOME/tichu-arena/runs`` (``~/.local/state/tichu-arena/runs`` by default)."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "tichu-arena" / "runs"


def runs_folder(bot_folders: Iterable[Path]) -> Path:
    """``runs`` here, or the state folder when ``runs`` would lie inside one of ``bot_folders``."""
    here = RUNS.resolve()
    for folder in bot_folders:
        inside = folder.resolve()
        if here == inside or inside in here.parents:
            return state_runs_folder()
    return RUNS
