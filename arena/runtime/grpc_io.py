"""gRPC's settings for the referee and its bots, made before gRPC starts: polling I/O.

Since grpcio 1.80, gRPC Core reads and writes sockets on its EventEngine threads; under
Python's asyncio every message then crosses one more thread. The polling I/O those threads
replaced is still there behind two of gRPC's "experiments", and on the 2-core benchmark
machine it costs about 15 % less CPU per message at both ends of a stream: with eight tables
of random bots, 10 to 35 % more decisions per second (docs/referee.md, section 9).

gRPC reads its settings once, when it is first imported, so the entry points (``arena.cli``,
``sdk``, the test suite) call ``configure()`` before anything imports gRPC, and so does
``arena.server`` before it loads gRPC: a process the arena did not start, such as a Dask
worker started by hand, gets them as soon as it unpickles a task. It sets them for
this process and for the bot processes the referee starts (they inherit the environment):

* ``GRPC_EXPERIMENTS``, for the polling I/O, when the installed grpcio is a release known
  to have these experiments (``POLLING_RELEASES``): a later release may drop them, and
  gRPC logs an error for each name it does not know;
* ``GRPC_ENABLE_FORK_SUPPORT=0``: the referee starts its bots with fork and exec (uvloop's
  spawn, ``arena.runtime.aio``), and gRPC's fork handlers, meant for processes that go on using
  gRPC after a fork, log "skipping fork() handlers" at every start while gRPC's threads run,
  and the forked child, which must only exec, sometimes died with SIGSEGV before it did.

A variable that is set already is left alone (``GRPC_EXPERIMENTS=``, empty, keeps gRPC's
default I/O); if gRPC is imported already, the settings reach only the processes started
from now on.

Standard library only, and no gRPC import: ``arena.rules`` stays pure.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping

__all__ = [
    "POLLING_EXPERIMENTS",
    "POLLING_RELEASES",
    "choose",
    "configure",
    "grpcio_version",
]

POLLING_EXPERIMENTS = "-event_engine_client,-event_engine_listener"
"""Turns off the EventEngine client and listener: client channels and servers poll."""

POLLING_RELEASES = ((1, 80), (1, 85))
"""First and last grpcio minor release with these experiments, as measured (inclusive)."""


def grpcio_version() -> tuple[int, int] | None:
    """The installed grpcio's (major, minor), read from its metadata without importing it."""
    try:
        spec = importlib.util.find_spec("grpc")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    site = os.path.dirname(os.path.dirname(spec.origin))
    try:
        names = os.listdir(site)
    except OSError:
        return None
    for name in names:
        if name.startswith("grpcio-") and name.endswith(".dist-info"):
            parts = name[len("grpcio-") : -len(".dist-info")].split(".")
            if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
                return int(parts[0]), int(parts[1])
    return None


def choose(env: Mapping[str, str], version: tuple[int, int] | None) -> str | None:
    """The ``GRPC_EXPERIMENTS`` value to set, or ``None`` to leave gRPC's default alone."""
    if "GRPC_EXPERIMENTS" in env or version is None:
        return None
    first, last = POLLING_RELEASES
    return POLLING_EXPERIMENTS if first <= version <= last else None


def configure() -> None:
    """Sets gRPC's settings for the referee and its bots (see the module docstring)."""
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")
    if "GRPC_EXPERIMENTS" in os.environ:
        return
    value = choose(os.environ, grpcio_version())
    if value is not None:
        os.environ["GRPC_EXPERIMENTS"] = value
