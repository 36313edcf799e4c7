"""A random bot that writes one log line per decision (and may think slowly), for the viewer.

``LOGBOT_SLEEP_MS`` slows every decision; where the file named by ``LOGBOT_HOLD`` (relative to
the bot's folder) exists, each decision takes a second instead, so a test can keep a table
running until it has watched it. The sandbox shows a bot the copy of its folder taken when the
bot starts: the file holds the plays whose bots start while it is there, to their end.
"""

from __future__ import annotations

import os
import sys
import time

import sdk
from sdk.testing import RandomBot

SLEEP_S = int(os.environ.get("LOGBOT_SLEEP_MS", "0")) / 1000
HOLD = os.environ.get("LOGBOT_HOLD", "")
HOLD_S = 1.0


class LogBot(RandomBot):
    """Answers at random and says so on stderr."""

    def act(self, obs):  # type: ignore[no-untyped-def]
        action = super().act(obs)
        if HOLD and os.path.exists(HOLD):
            time.sleep(HOLD_S)
        elif SLEEP_S:
            time.sleep(SLEEP_S)
        print(f"logbot hand {obs.hand_no + 1} {obs.phase.name.lower()}: {action}", file=sys.stderr)
        return action


if __name__ == "__main__":
    raise SystemExit(sdk.run(LogBot()))
