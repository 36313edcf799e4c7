"""What many tests share: the repository's root folder."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The checkout's root folder (holding ``arena/``, ``sdk/``, ``example_bots/``, ``docs/``)."""
