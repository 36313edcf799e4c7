"""Replay files uploaded through the start page of ``arena web``: hostile input, kept a while.

A person picks a replay file on their disk; the page sends its bytes as the body of
``POST /api/replay/upload?name=FILE`` and opens the answer's address in the replay viewer,
as for a file given on the command line. The upload is treated as hostile:

* its size is capped (``MAX_UPLOAD_BYTES``): a declared ``Content-Length`` past the cap is
  refused before a byte is read, and the body is streamed to disk and refused at the cap,
  so it never reaches memory or disk beyond it;
* it is read by ``ReplayFiles``, the reader of ``arena web FILE.json``, and re-played
  through the rules core before it is kept, so a file that is no replay is refused with the
  reader's one-line reason (one longer than any match, past ``MAX_UPLOAD_ACTIONS``, before it
  is re-played: its timeline takes memory by the step);
* it is kept in a private temporary folder (mode 0700) for the server's lifetime, the newest
  ``UPLOADS_KEPT`` only, each under an unguessable id (``secrets.token_urlsafe``) that names
  its event. No page lists them: an upload is found by its id alone.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from arena.rules import ArenaError
from arena.web.data import EventData, NotFound
from arena.web.files import FILES_EVENT, ReplayFiles
from arena.web.timeline import Timeline

__all__ = [
    "MAX_UPLOAD_ACTIONS",
    "MAX_UPLOAD_BYTES",
    "UPLOADS_KEPT",
    "UploadRefused",
    "UploadedReplays",
]

MAX_UPLOAD_BYTES = 4 << 20
"""The largest replay upload: a long match's replay is a few hundred KiB."""
MAX_UPLOAD_ACTIONS = 10_000
"""The most actions an uploaded replay may hold (a match to 1,000 has a few hundred to a few
thousand): its timeline keeps the table after each one, about 5 KB a step."""
UPLOADS_KEPT = 8
"""How many uploads the server keeps (their timelines in memory, at most about 50 MB each);
a new one past it drops the oldest."""


class UploadRefused(ArenaError):
    """An upload refused, in one line; ``status`` is the HTTP status to answer."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def upload_name(name: str) -> str:
    """The file's name as the page sent it, made safe to quote in a one-line message."""
    shown = "".join(c if c.isprintable() else "?" for c in Path(name).name)[:80]
    return shown or "the upload"


def _read(path: Path, shown: str) -> ReplayFiles:
    """The upload read as ``arena web FILE.json`` reads a file, and re-played (so a replay the
    rules refuse is refused now, not at its first step)."""
    try:
        files = ReplayFiles([path], [shown])
        actions = len(files.replays[0].recorded or [])
        if actions > MAX_UPLOAD_ACTIONS:
            raise UploadRefused(
                f"{shown}: {actions} actions, more than any match: a replay upload may hold"
                f" {MAX_UPLOAD_ACTIONS}",
                422,
            )
        files.timeline(FILES_EVENT, 0)
    except ArenaError as e:
        raise UploadRefused(str(e) if str(e).startswith(shown) else f"{shown}: {e}", 422) from None
    return files


class UploadedReplays(EventData):
    """The uploads: each one event, named by its id, of one play (``play=0``)."""

    def __init__(self, kept: int = UPLOADS_KEPT, max_bytes: int = MAX_UPLOAD_BYTES) -> None:
        # No database: EventData's constructor is skipped.
        self.path = Path("uploaded replays")
        self.kept = kept
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._uploads: OrderedDict[str, ReplayFiles] = OrderedDict()
        self._folder: Path | None = None  # made at the first upload

    def folder(self) -> Path:
        """The private folder the uploads are kept in (made on first use, mode 0700)."""
        with self._lock:
            if self._folder is None:
                self._folder = Path(tempfile.mkdtemp(prefix="arena-web-uploads-"))
            return self._folder

    def close(self) -> None:
        """Forgets every upload and removes their folder (the server stops)."""
        with self._lock:
            self._uploads.clear()
            folder, self._folder = self._folder, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    async def receive(self, name: str, chunks: AsyncIterator[bytes], declared: str | None) -> str:
        """Streams one upload to disk, reads and re-plays it, keeps it; returns its id.

        Raises:
            UploadRefused: Past the cap (413), empty (400), or no replay (422), in one line.
        """
        shown = upload_name(name)
        over = f"{shown}: over the {self.max_bytes >> 20} MiB a replay upload may hold"
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            raise UploadRefused(over, 413)  # refused before a byte is read (the server
            # checked the header's form; the streamed count below holds whatever it says)
        upload_id = secrets.token_urlsafe(18)
        target = self.folder() / f"{upload_id}.json"
        size = 0
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "wb") as out:
                async for chunk in chunks:
                    size += len(chunk)
                    if size > self.max_bytes:
                        raise UploadRefused(over, 413)
                    out.write(chunk)
            if size == 0:
                raise UploadRefused(f"{shown}: the file is empty: choose a replay file", 400)
            files = await asyncio.to_thread(_read, target, shown)
        except BaseException:
            target.unlink(missing_ok=True)
            raise
        with self._lock:
            self._uploads[upload_id] = files
            while len(self._uploads) > self.kept:
                _, dropped = self._uploads.popitem(last=False)
                dropped.paths[0].unlink(missing_ok=True)
        return upload_id

    def _files(self, event: str) -> ReplayFiles:
        with self._lock:
            found = self._uploads.get(event)
        if found is None:
            raise NotFound(
                f"no uploaded replay {event[:40]!r}: the server keeps its newest {self.kept}"
                " uploads while it runs; upload the file again"
            )
        return found

    def is_league(self) -> bool:
        return False

    def names(self) -> list[str]:
        return []  # listed nowhere

    def has_event(self, name: str) -> bool:
        with self._lock:
            return name in self._uploads

    def events(self) -> list[dict[str, Any]]:
        return []

    def progress(self, event: str) -> dict[str, Any]:
        return self._files(event).progress(FILES_EVENT)

    def timeline(self, event: str, ordinal: int) -> Timeline:
        return self._files(event).timeline(FILES_EVENT, ordinal)

    def replay_file(self, event: str, ordinal: int) -> Path:
        return self._files(event).replay_file(FILES_EVENT, ordinal)

    def board_in_play(self, event: str, ordinal: int) -> bool:
        return self._files(event).board_in_play(FILES_EVENT, ordinal)

    def board_plays(self, event: str, ordinal: int) -> list[dict[str, Any]]:
        plays = self._files(event).board_plays(FILES_EVENT, ordinal)
        return [{**p, "table": "uploaded"} for p in plays]  # not the server's own file name

    def compare(self, event: str, ordinal: int) -> dict[str, Any]:
        return self._files(event).compare(FILES_EVENT, ordinal)

    def event_page(self, name: str) -> dict[str, Any]:
        raise NotFound("an uploaded replay has no event page")

    def games(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        raise NotFound("an uploaded replay has no game list")

    def league(self, season: int | None) -> dict[str, Any]:
        raise NotFound("an uploaded replay is not a league")
