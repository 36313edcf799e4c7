"""A bot that shows when it runs: a thread of it notes the clock every half millisecond.

It plays the first legal answer and notes ``asked <ns>`` at each decision. Beside it a
thread writes ``beat <ns>`` (CLOCK_MONOTONIC, shared by every process of the machine) to
stderr about every half millisecond, so the bot's log shows every stretch of time in which
it ran. Two copies
at a table whose logs hold beats in the same stretch ran at the same moment
(tests/security/test_turns.py).
"""

from __future__ import annotations

import sys
import threading
import time

import sdk
from arena.rules import Action, Observation, Play
from sdk import Bot


def beat() -> None:
    """Notes the clock while this process runs (a frozen process notes nothing)."""
    while True:
        note("beat")
        time.sleep(0.0005)


def note(what: str) -> None:
    sys.stderr.write(f"{what} {time.monotonic_ns()}\n")
    sys.stderr.flush()


class HeartbeatBot(Bot):
    """The first legal answer (and the SDK's defaults); the beats come from the thread."""

    def answer(self, obs: Observation) -> tuple[Action, bool]:
        note("asked")
        return super().answer(obs)

    def play(self, obs: Observation) -> Play:
        return obs.legal[0]


if __name__ == "__main__":
    threading.Thread(target=beat, daemon=True).start()
    raise SystemExit(sdk.run(HeartbeatBot()))
