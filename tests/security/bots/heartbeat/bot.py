"""A bot that shows when it runs: a thread of it notes the clock every half millisecond.

It plays the first legal answer and notes ``asked <ns>`` at each decision. Beside it a
thread writes ``beat <ns>`` (CLOCK_MONOTONIC, shared by every process of the machine) to
stderr about every half millisecond, so the bot's log shows every stretch of time in which
it ran. With ``HEARTBEAT_SPIN=1`` the thread never sleeps: a bot still computing after its
answer, which the referee must wait for to stop. Two copies
at a table whose logs hold beats in the same stretch ran at the same moment
(tests/security/test_turns.py).
"""

from __future__ import annotations

import os
import sys
import threading
import time

import sdk
from arena.rules import Action, Observation, Play
from sdk import Bot


def beat(spin: bool) -> None:
    """Notes the clock while this process runs (a frozen process notes nothing); with
    ``spin`` it never sleeps, as a bot computing past its answer."""
    last = 0
    while True:
        now = time.monotonic_ns()
        if now - last >= 500_000:
            note("beat")
            last = now
        elif not spin:
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
    spin = os.environ.get("HEARTBEAT_SPIN") == "1"
    threading.Thread(target=beat, args=(spin,), daemon=True).start()
    raise SystemExit(sdk.run(HeartbeatBot()))
