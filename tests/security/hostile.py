"""What the security tests share: the hostile bots' folder and the ``arena`` command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BOTS = Path(__file__).resolve().parent / "bots"
ARENA = [sys.executable, "-m", "arena.cli.main"]


def arena(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Runs ``arena ARGS`` in ``cwd`` (as an organiser would), its output captured."""
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [*ARENA, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )
