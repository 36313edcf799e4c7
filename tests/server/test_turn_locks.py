"""The machine's turn locks (``arena.server.turns.TurnLocks`` with a folder): two referees of
one machine, as a Dask worker's tasks are, hold a key's turn one after the other, and a
referee that stops lets its lock files go."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from arena.server.turns import TurnLocks


def test_two_referees_of_a_machine_take_a_keys_turn_in_turn(tmp_path: Path) -> None:
    async def run() -> list[str]:
        first, second = TurnLocks(tmp_path), TurnLocks(tmp_path)
        (a,) = first.get(["bot"])
        (b,) = second.get(["bot"])
        (other,) = second.get(["another bot"])
        seen: list[str] = []
        await a.acquire()
        waiting = asyncio.ensure_future(b.acquire())
        await other.acquire()  # another key is free meanwhile
        other.release()
        await asyncio.sleep(0.05)
        seen.append("waiting" if not waiting.done() else "not kept apart")
        a.release()
        await asyncio.wait_for(waiting, 30)
        seen.append("taken")
        b.release()
        fds = len(os.listdir("/proc/self/fd"))
        first.close()
        second.close()
        seen.append(f"closed {fds - len(os.listdir('/proc/self/fd'))}")
        return seen

    assert asyncio.run(run()) == ["waiting", "taken", "closed 3"]
    assert len(list(tmp_path.glob("*.lock"))) == 2  # a file per key, named by its hash
