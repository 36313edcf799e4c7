"""An honest bot's scratch files: a private ``/tmp`` (and ``HOME``) it can write, capped."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.security.hostile import BOTS, arena

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def test_a_bot_writes_and_reads_its_tmp_until_the_cap(tmp_path: Path) -> None:
    shutil.copytree(BOTS / "scratch", tmp_path / "scratch")
    done = arena("play", "scratch", "random", "random", "random", "--hands", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    (log,) = (tmp_path / "runs" / "play").glob("*-logs/*scratch*.log")
    text = log.read_text()
    assert "scratch: tempfile in /tmp: 'kept for later'" in text, text
    assert "scratch: home /tmp: 'home is writable'" in text, text
    full = re.search(r"scratch: full after (\d+) MiB \(ENOSPC\)", text)
    assert full is not None, text
    assert int(full.group(1)) < 8  # the manifest's tmp_mb
