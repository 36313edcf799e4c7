"""Fixtures for the server tests: manifests for the stub bot (``bots/stub_bot.py``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from arena.server.manifest import Manifest
from tests.helpers import ROOT, STUB_BOT


@pytest.fixture(scope="session")
def stub() -> Callable[..., Manifest]:
    """A manifest for the stub bot with extra arguments (``--mode``, ``--after``, ...).

    Its folder (what its sandbox shows of it) is ``bots/``, as if its bot.toml were there.
    """

    def make(*args: str, name: str = "stub") -> Manifest:
        command = ["{python}", str(STUB_BOT), *args]
        path = STUB_BOT.parent / "bot.toml"
        return Manifest(name=name, command=command, workdir=ROOT, path=path)

    return make
