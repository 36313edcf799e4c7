"""Replay files (``arena play``, ``arena table``) served beside the event databases.

``arena web FILE.json ...`` opens them as one more "database" holding one event, ``files``,
whose plays are the files in the order given (``play=0`` the first). The replay viewer, the
record download and the move list work as for an event's plays; a file has no other table of
its board to compare with and no live feed.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.referee.replay import load
from arena.web.data import EventData, NotFound
from arena.web.timeline import Timeline, replay_logs

__all__ = ["FILES_EVENT", "ReplayFiles"]

FILES_EVENT = "files"


class ReplayFiles(EventData):
    """Replay files read as the plays of one event (only what the replay viewer asks)."""

    def __init__(self, paths: Sequence[Path], sources: Sequence[str] = ()) -> None:
        """Reads every file (``sources``: their names in messages, default their paths).

        Raises:
            ReplayError: A file that is no replay, saying why in one line.
        """
        # No database: EventData's constructor is skipped.
        self.paths = [Path(p) for p in paths]
        self.path = Path(f"{len(self.paths)} replay file(s)")
        self._lock = threading.Lock()
        self._files: dict[int, Timeline] = {}
        names = list(sources) or [str(p) for p in self.paths]
        self.replays = [load(p, n) for p, n in zip(self.paths, names, strict=True)]

    def is_league(self) -> bool:
        return False

    def names(self) -> list[str]:
        return [FILES_EVENT]

    def events(self) -> list[dict[str, Any]]:
        return [
            {
                "name": FILES_EVENT,
                "status": "finished",
                "created": "",
                "plays_done": len(self.paths),
                "plays_total": len(self.paths),
                "hands": sum(len((r.result or {}).get("hands", [])) for r in self.replays),
                "bots": sorted({s for r in self.replays for s in r.seats}),
                "files": [str(p) for p in self.paths],
            }
        ]

    def progress(self, event: str) -> dict[str, Any]:
        n = len(self.paths)
        return {"status": "finished", "plays_done": n, "plays_total": n}

    def _index(self, ordinal: int) -> int:
        if not 0 <= ordinal < len(self.paths):
            raise NotFound(f"no replay file {ordinal}: there are {len(self.paths)} (from 0)")
        return ordinal

    def timeline(self, event: str, ordinal: int) -> Timeline:
        i = self._index(ordinal)
        with self._lock:
            hit = self._files.get(i)
        if hit is None:
            path, replay = self.paths[i], self.replays[i]
            logs = path.with_name(path.stem + "-logs")  # where arena play keeps the bots' logs
            hit = Timeline(replay, replay_logs(logs, replay.meta.get("log_files")))
            with self._lock:
                self._files[i] = hit
        return hit

    def replay_file(self, event: str, ordinal: int) -> Path:
        return self.paths[self._index(ordinal)]

    def board_in_play(self, event: str, ordinal: int) -> bool:
        self._index(ordinal)
        return False  # a finished match's file: every hand may be shown

    def board_plays(self, event: str, ordinal: int) -> list[dict[str, Any]]:
        i = self._index(ordinal)
        return [{"play": i, "round": "–", "table": self.paths[i].name, "rotation": "–"}]

    def compare(self, event: str, ordinal: int) -> dict[str, Any]:
        self._index(ordinal)
        return {"tables": []}

    def event_page(self, name: str) -> dict[str, Any]:
        raise NotFound("replay files have no event page: open each from the start page")

    def games(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        raise NotFound("replay files have no game list: open each from the start page")

    def league(self, season: int | None) -> dict[str, Any]:
        raise NotFound("replay files are not a league")
