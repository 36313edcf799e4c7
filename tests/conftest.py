"""Imports ``arena`` before any test imports gRPC, so the tests' servers and bot processes run
with the I/O that ``arena.grpc_io`` chooses, as ``arena`` commands do."""

import arena  # noqa: F401
