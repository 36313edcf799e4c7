"""``arena.aio.run``: uvloop by default where installed, asyncio's loop on request."""

from __future__ import annotations

import asyncio

import pytest

from arena.aio import ENV_LOOP, loop_name, run


async def _loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_uvloop_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("uvloop")
    monkeypatch.delenv(ENV_LOOP, raising=False)
    assert loop_name() == "uvloop"
    assert run(_loop_module()).startswith("uvloop")


def test_asyncio_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_LOOP, "asyncio")
    assert loop_name() == "asyncio"
    assert run(_loop_module()).startswith("asyncio")


def test_run_returns_the_result_and_raises_the_error() -> None:
    async def ok() -> int:
        await asyncio.sleep(0)
        return 7

    async def fails() -> None:
        raise KeyError("x")

    assert run(ok()) == 7
    with pytest.raises(KeyError):
        run(fails())
