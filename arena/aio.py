"""The event loop of the referee, the runners and the SDK's bots: uvloop where installed.

uvloop runs the same asyncio code with less CPU per loop turn, and a referee turns the loop
several times per decision (the answer read, the match resumed, the next request written).
On the 2-core benchmark machine, against asyncio's own loop in interleaved runs, it takes
3 to 5 µs (7 to 9 %) off the referee's own CPU per decision, and eight tables of random bots
play 5 to 30 % more decisions per second (docs/referee.md, section 9). It is a dependency
where it exists (not on Windows); ``TICHU_ARENA_LOOP=asyncio`` picks asyncio's own loop
instead, to compare or to rule the loop out.

uvloop's ``loop.time()`` counts whole milliseconds, so the referee measures answers with
``time.monotonic()`` and uses the loop's clock only to set its alarms.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["ENV_LOOP", "loop_name", "run"]

ENV_LOOP = "TICHU_ARENA_LOOP"
"""``uvloop`` (the default, where installed) or ``asyncio``."""

T = TypeVar("T")


def _uvloop() -> Any:
    if os.environ.get(ENV_LOOP, "uvloop").strip().lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop


def loop_name() -> str:
    """The loop ``run`` uses: ``uvloop`` or ``asyncio``."""
    return "uvloop" if _uvloop() is not None else "asyncio"


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on uvloop when it is installed and not turned off."""
    uvloop = _uvloop()
    if uvloop is None:
        return asyncio.run(main)
    result: T = uvloop.run(main)
    return result
