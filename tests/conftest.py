"""Applies the process settings before any test imports gRPC, so the tests' servers and bot
processes run with the I/O that ``arena.runtime.grpc_io`` chooses, as ``arena`` commands do;
and puts the slow tests first, so that under xdist (``make test``) no long test starts last."""

import pytest

from arena.runtime import configure

configure()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow tests first (a stable sort: the order within each part is kept)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
