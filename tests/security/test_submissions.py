"""League submissions a hostile author makes too large, too many or linked out: refused at
once, with one line, leaving nothing in the league's store."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.tournament.league.season import MAX_SUBMISSION_BYTES, MAX_SUBMISSION_FILES
from tests.security.hostile import BOTS, arena

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

LEAGUE = 'name = "caps"\n'


def author_bot(root: Path) -> Path:
    folder = root / "bot"
    folder.mkdir()
    (folder / "bot.toml").write_text((BOTS / "predictor" / "bot.toml").read_text())
    (folder / "bot.py").write_text((BOTS / "predictor" / "bot.py").read_text())
    return folder


@pytest.mark.parametrize("attack", ["bytes", "files", "link"])
def test_an_oversized_or_linked_submission_is_refused(tmp_path: Path, attack: str) -> None:
    folder = author_bot(tmp_path)
    if attack == "bytes":  # sparse: a size that would take seconds and GiBs to hash twice
        with (folder / "weights.bin").open("wb") as f:
            f.truncate(16 * MAX_SUBMISSION_BYTES)
    elif attack == "files":
        data = folder / "data"
        data.mkdir()
        for k in range(MAX_SUBMISSION_FILES + 1):
            (data / f"{k}.txt").write_text("x")
    else:
        (folder / "league.sqlite").symlink_to(tmp_path / "runs" / "league.sqlite")
    (tmp_path / "league.toml").write_text(LEAGUE)
    db = ["--db", "runs/league.sqlite"]
    assert arena("league", "init", "league.toml", *db, cwd=tmp_path).returncode == 0
    done = arena("league", "submit", "bot", *db, cwd=tmp_path, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode == 2 and "Traceback" not in out, out  # bad input
    why = {
        "bytes": "at most 4096 files and 64 MiB",
        "files": "at most 4096 files and 64 MiB",
        "link": "may not hold symbolic links",
    }[attack]
    assert why in out, out
    store = tmp_path / "runs" / "league.sqlite.bots"
    assert not store.exists() or not any(store.rglob("*")), list(store.rglob("*"))
