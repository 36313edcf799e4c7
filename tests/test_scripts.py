"""Every script in ``scripts/`` answers ``--help`` with its usage (argparse), not a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a process per script

SCRIPTS = sorted((Path(__file__).resolve().parent.parent / "scripts").glob("*.py"))


def test_there_are_scripts() -> None:
    assert len(SCRIPTS) >= 7


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_script_answers_help(script: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage:"), done.stdout
    assert "Traceback" not in done.stderr


def test_inference_quality_runs_as_its_docstring_shows_from_another_folder(
    tmp_path: Path,
) -> None:
    """Both modes on a few hands, run from elsewhere as ``python <path> ...``."""
    script = next(p for p in SCRIPTS if p.name == "inference_quality.py")
    for args, expect in (
        (["--hands", "4", "--workers", "1"], ["uniform", "weighted", "without LED_MATES"]),
        (["--fit", "--hands", "4", "--workers", "1"], ["led: no rank-mate in hand 9"]),
    ):
        done = subprocess.run(
            [sys.executable, str(script), *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        for word in expect:
            assert word in done.stdout, done.stdout


@pytest.mark.timeout(1200)
def test_screenshots_writes_every_view_at_both_widths_from_another_folder(
    tmp_path: Path,
) -> None:
    """The script that makes ``docs/screenshots`` plays its event, serves it, opens
    ``arena table`` and writes every picture the docs hold, here into a relative ``--out``."""
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("no browser: /usr/bin/chromium is missing (apt-get install chromium)")
    script = next(p for p in SCRIPTS if p.name == "screenshots.py")
    done = subprocess.run(
        [sys.executable, str(script), "--out", "shots"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    docs = script.parent.parent / "docs" / "screenshots"
    expected = sorted(p.name for p in docs.glob("*.png"))
    written = sorted(p.name for p in (tmp_path / "shots").glob("*.png"))
    assert written == expected and len(expected) == 30, written
    assert all((tmp_path / "shots" / name).stat().st_size > 10_000 for name in written)
