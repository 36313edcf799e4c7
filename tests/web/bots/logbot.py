"""A random bot that writes one log line per decision (and may think slowly), for the viewer."""

from __future__ import annotations

import os
import sys
import time

import sdk
from sdk.testing import RandomBot

SLEEP_S = int(os.environ.get("LOGBOT_SLEEP_MS", "0")) / 1000


class LogBot(RandomBot):
    """Answers at random and says so on stderr."""

    def act(self, obs):  # type: ignore[no-untyped-def]
        action = super().act(obs)
        if SLEEP_S:
            time.sleep(SLEEP_S)
        print(f"logbot hand {obs.hand_no + 1} {obs.phase.name.lower()}: {action}", file=sys.stderr)
        return action


if __name__ == "__main__":
    raise SystemExit(sdk.run(LogBot()))
