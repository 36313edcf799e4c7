"""Process settings for the referee, the runners and SDK bots: the event loop and gRPC's I/O.

Standard library only, with no gRPC import: entry points call ``configure()`` before anything
imports gRPC (``arena.cli``, ``sdk``, the test suite), then run coroutines with
``arena.runtime.aio.run``.
"""

from arena.runtime.grpc_io import configure

__all__ = ["configure"]
