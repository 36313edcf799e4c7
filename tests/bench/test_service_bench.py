"""``arena bench service`` plays a real season under a real service and prints every figure."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from arena.cli.main import app

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def test_the_service_bench_measures_a_season_of_one_round() -> None:
    out = CliRunner().invoke(
        app, ["bench", "service", "--rounds", "1", "--requests", "3", "--no-gate"]
    )
    assert out.exit_code == 0, out.output
    text = out.output
    assert "round 1 by hand" in text and "round 1: " in text, text  # progress, step by step
    assert "by arena league run" in text and "scheduled by the service" in text, text
    assert "upload to verdict" in text and "with the gate" not in text, text
    assert "after round 1" in text, text
    for page in ("/service ", "/api/service/status", "/api/service/bots/alice"):
        assert page in text, text
