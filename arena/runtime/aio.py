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
import gc
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["ENV_LOOP", "YOUNG_COLLECTION", "loop_name", "run", "tune_gc"]

ENV_LOOP = "TICHU_ARENA_LOOP"
"""``uvloop`` (the default, where installed) or ``asyncio``."""

YOUNG_COLLECTION = 20_000
"""Net new container objects between two collections of the youngest generation (Python: 700)."""

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


def tune_gc() -> None:
    """Readies the cyclic collector for a long-running process (a referee or a bot).

    What is alive now (modules, the bot's tables) lives as long as the process, so it is
    frozen out of the collector: full collections need not rescan it (8-15 % more decisions
    per second at 8 tables of minimal bots). A decision allocates a few hundred short-lived
    objects, nearly all freed by reference counting at once, so the youngest generation is
    collected every ``YOUNG_COLLECTION`` net allocations rather than every 700: about 3 %
    less referee CPU per decision, the same peak memory (docs/referee.md, section 9).
    Long-running commands call this once, before play.
    """
    gc.collect()
    gc.freeze()
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_COLLECTION), middle, old)
