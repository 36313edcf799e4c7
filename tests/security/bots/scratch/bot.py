"""An honest bot that keeps scratch files: in ``tempfile``'s folder and in ``HOME``.

It writes a file, reads it back, then fills its private ``/tmp`` until the sandbox says no,
and prints each outcome (``scratch:`` lines in its log) before it plays at random.
"""

from __future__ import annotations

import errno
import os
import sys
import tempfile
from pathlib import Path

import sdk
from sdk.testing import RandomBot


def scratch() -> None:
    with tempfile.NamedTemporaryFile("w+", delete=False) as f:
        f.write("kept for later")
    print(f"scratch: tempfile in {Path(f.name).parent}: {Path(f.name).read_text()!r}")
    home = Path(os.environ["HOME"]) / "notes.txt"
    home.write_text("home is writable")
    print(f"scratch: home {home.parent}: {home.read_text()!r}")
    written = 0
    try:
        with open(Path(tempfile.gettempdir()) / "fill", "wb") as big:
            while written < 64:
                big.write(b"\0" * (1 << 20))
                big.flush()
                written += 1
    except OSError as e:
        print(f"scratch: full after {written} MiB ({errno.errorcode[e.errno]})")
    else:
        print(f"scratch: wrote {written} MiB without a limit")
    os.remove(Path(tempfile.gettempdir()) / "fill")


if __name__ == "__main__":
    scratch()
    sys.stdout.flush()
    raise SystemExit(sdk.run(RandomBot()))
