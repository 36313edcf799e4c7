"""``--cluster tcp://...`` names the scheduler that answered (anyone's may: issue 51)."""

from __future__ import annotations

from types import TracebackType
from typing import Any

import distributed
import pytest

from arena.tournament.cluster import DaskExecutor, scheduler_identity

INFO = {
    "id": "Scheduler-0b6c",
    "address": "tcp://10.0.0.5:8786",
    "started": 1_796_623_200.0,  # 2026-12-07 06:00:00 UTC
    "workers": {"tcp://10.0.0.6:40001": {}, "tcp://10.0.0.6:40002": {}, "tcp://10.0.0.7:1": {}},
}


def test_the_identity_names_the_scheduler_its_start_and_its_workers() -> None:
    assert scheduler_identity(INFO) == (
        "Scheduler-0b6c at tcp://10.0.0.5:8786, started 2026-12-07 06:00:00 UTC,"
        " 3 workers on 10.0.0.6, 10.0.0.7"
    )
    assert scheduler_identity({"id": "S", "address": "tcp://h:1", "workers": {}}) == (
        "S at tcp://h:1, 0 workers"
    )


class _Client:
    """Stands in for ``distributed.Client`` at an address: what a scheduler answers."""

    def __init__(self, address: str, timeout: float) -> None:
        self.address = address

    def scheduler_info(self) -> dict[str, Any]:
        return INFO

    def __enter__(self) -> _Client:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None


def test_connecting_to_an_address_says_who_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(distributed, "Client", _Client)
    heard: list[str] = []
    executor = DaskExecutor("tcp://10.0.0.5:8786", on_connected=heard.append)
    with executor._connect() as client:
        assert heard == [scheduler_identity(INFO)]  # before any task is sent
        assert client.address == "tcp://10.0.0.5:8786"


def test_every_runner_of_a_cluster_can_hear_who_answered() -> None:
    """event run, the gate and league rounds build their executor with the hook."""
    import inspect

    from arena.tournament.cluster import executor_for
    from arena.tournament.gate import run_gate
    from arena.tournament.league.season import play_round

    heard: list[str] = []
    executor = executor_for("tcp://10.0.0.5:8786", on_connected=heard.append)
    assert executor is not None and executor.on_connected == heard.append
    for runs in (run_gate, play_round):
        assert "on_connected" in inspect.signature(runs).parameters
