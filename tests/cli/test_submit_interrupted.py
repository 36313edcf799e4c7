"""``league submit --server`` stopped with Ctrl-C says the server carries on and where its
verdict will be (it printed nothing before; issue 51)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arena.cli import league_service
from arena.cli.main import app
from arena.kit.scaffold import new_bot


@pytest.mark.parametrize("received", [True, False])
def test_ctrl_c_while_waiting_says_the_server_carries_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, received: bool
) -> None:
    def interrupted(
        folder: Path,
        server: str,
        token: str,
        *,
        on_received: Callable[[int], None] | None = None,
        **_: Any,
    ) -> dict[str, Any]:
        if received:
            assert on_received is not None
            on_received(7)
        raise KeyboardInterrupt

    monkeypatch.setattr(league_service, "submit_remote", interrupted)
    monkeypatch.setenv("ARENA_TOKEN", "t" * 20)
    folder = new_bot(tmp_path, "alice")
    argv = ["league", "submit", str(folder), "--server", "http://league.example/", "--gate"]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 130, result.output
    said = " ".join(result.output.split())
    if received:
        assert "the server carries on with submission 7" in said
        assert "http://league.example/service/submissions/7" in said
    else:
        assert "http://league.example/service/submissions" in said
