"""A random bot that first writes its arguments and ``ENVBOT_*`` variables to its log."""

from __future__ import annotations

import json
import os
import sys

import sdk
from sdk.testing import RandomBot

if __name__ == "__main__":
    seen = {k: v for k, v in os.environ.items() if k.startswith("ENVBOT_")}
    print("envbot started: " + json.dumps({"argv": sys.argv[1:], "env": seen}), file=sys.stderr)
    raise SystemExit(sdk.run(RandomBot()))
