"""``arena league backup``: a consistent copy of a league database while it is in use."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from arena.rules import ArenaError

__all__ = ["BackupError", "backup"]


class BackupError(ArenaError):
    """A backup that cannot be made (no database, an existing target)."""


def backup(db: Path, out: Path) -> int:
    """Copies ``db`` to ``out`` with SQLite's online backup API; returns the pages copied.

    The copy is a snapshot taken page by page under SQLite's own locking, so it is safe
    while a round writes (a write during the copy restarts the remaining steps). The bot
    store (``<db>.bots``) is plain files: copy it beside the backup (docs/deploy.md).

    Raises:
        BackupError: ``db`` is not a file or ``out`` exists.
    """
    if not db.is_file():
        raise BackupError(f"{db}: no database here")
    if out.exists():
        raise BackupError(f"{out} exists already; a backup never overwrites a file")
    out.parent.mkdir(parents=True, exist_ok=True)
    source = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30.0)
    target = sqlite3.connect(out)
    pages = 0

    def progress(_status: int, remaining: int, total: int) -> None:
        nonlocal pages
        pages = total - remaining

    try:
        with target:
            source.backup(target, pages=256, progress=progress)
    except sqlite3.Error as e:
        target.close()
        out.unlink(missing_ok=True)
        raise BackupError(f"{db}: backup failed: {e}") from None
    finally:
        source.close()
    target.close()
    return pages
