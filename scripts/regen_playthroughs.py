"""Writes the golden playthroughs (``tests/rules/data/playthroughs/*.txt``) anew.

Usage (from the repository root), after a change that is meant to alter what a match shows:

    .venv/bin/python scripts/regen_playthroughs.py

then read the diff (``git diff tests/rules/data/playthroughs``) before committing it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.rules.playthroughs import DATA, PLAYTHROUGHS, render


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    for playthrough in PLAYTHROUGHS:
        text = render(playthrough)
        playthrough.path.write_text(text, encoding="utf-8")
        print(f"{playthrough.path.relative_to(DATA.parents[3])}: {text.count(chr(10))} lines")


if __name__ == "__main__":
    main()
