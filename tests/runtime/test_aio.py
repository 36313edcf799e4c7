"""``arena.runtime.aio.run``: uvloop by default where installed, asyncio's loop on request."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from arena.runtime.aio import ENV_LOOP, loop_name, run


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


def test_tune_gc_freezes_the_heap_and_collects_the_young_less_often() -> None:
    """In a fresh process: the settings are process-wide."""
    probe = (
        "import gc\n"
        "from arena.runtime.aio import YOUNG_COLLECTION, tune_gc\n"
        "before = gc.get_threshold()\n"
        "tune_gc()\n"
        "after = gc.get_threshold()\n"
        "assert gc.get_freeze_count() > 10_000, gc.get_freeze_count()\n"
        "assert after == (YOUNG_COLLECTION, before[1], before[2]), (before, after)\n"
        "gc.set_threshold(50_000)\n"
        "tune_gc()\n"
        "assert gc.get_threshold()[0] == 50_000  # a larger setting is kept\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=60)
