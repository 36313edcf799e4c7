"""Applies the process settings before any test imports gRPC, so the tests' servers and bot
processes run with the I/O that ``arena.runtime.grpc_io`` chooses, as ``arena`` commands do."""

from arena.runtime import configure

configure()

pytest_plugins = ["tests.dask_cluster"]  # the own_cluster fixture, one definition for all
