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
