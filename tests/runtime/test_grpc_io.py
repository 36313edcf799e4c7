"""gRPC's settings: the entry points set them (``import sdk``, ``import arena.cli``) and gRPC
takes them (``tests/test_layers.py`` checks that the core sets nothing)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from arena.runtime.grpc_io import POLLING_EXPERIMENTS, POLLING_RELEASES, choose, grpcio_version

_PROBE = """
import os, sdk
value = os.environ.get("GRPC_EXPERIMENTS")
import grpc
grpc.insecure_channel("127.0.0.1:9").close()
print(repr(value))
print(repr(os.environ.get("GRPC_ENABLE_FORK_SUPPORT")))
"""


def _probe(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=60
    )


def test_choose_sets_the_experiments_for_measured_releases() -> None:
    first, last = POLLING_RELEASES
    assert choose({}, first) == POLLING_EXPERIMENTS
    assert choose({}, last) == POLLING_EXPERIMENTS
    assert choose({}, (1, 82)) == POLLING_EXPERIMENTS


@pytest.mark.parametrize("version", [(1, 79), (1, 86), (2, 0), None])
def test_choose_leaves_other_releases_alone(version: tuple[int, int] | None) -> None:
    assert choose({}, version) is None


@pytest.mark.parametrize("value", ["", "event_engine_client"])
def test_choose_never_overrides_the_user(value: str) -> None:
    assert choose({"GRPC_EXPERIMENTS": value}, POLLING_RELEASES[0]) is None


def test_grpcio_version_matches_the_imported_module() -> None:
    import grpc

    major, minor = (int(x) for x in grpc.__version__.split(".")[:2])
    assert grpcio_version() == (major, minor)


def test_import_sdk_sets_them_and_grpc_accepts_them() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRPC_")}
    done = _probe(env)
    assert done.returncode == 0, done.stderr
    expected = choose({}, grpcio_version())
    assert done.stdout.split() == [repr(expected), "'0'"]
    # gRPC logs "Unknown experiment: ..." for a name it does not know.
    assert "experiment" not in done.stderr.lower(), done.stderr


def test_settings_made_by_the_user_stay() -> None:
    done = _probe({**os.environ, "GRPC_EXPERIMENTS": "", "GRPC_ENABLE_FORK_SUPPORT": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["''", "'1'"]
