"""Fixtures for the server tests: manifests for the stub bot (``bots/stub_bot.py``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from arena.server.manifest import Manifest
from tests.helpers import ROOT, STUB_BOT


@pytest.fixture(scope="session")
def stub() -> Callable[..., Manifest]:
    """A manifest for the stub bot with extra arguments (``--mode``, ``--after``, ...)."""

    def make(*args: str, name: str = "stub") -> Manifest:
        return Manifest(name=name, command=["{python}", str(STUB_BOT), *args], workdir=ROOT)

    return make
