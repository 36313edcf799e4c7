"""Applies the process settings before any test imports gRPC, so the tests' servers and bot
processes run with the I/O that ``arena.runtime.grpc_io`` chooses, as ``arena`` commands do;
and runs the slow tests first, so ``make test``'s workers end together."""

import pytest

from arena.runtime import configure

configure()

pytest_plugins = ["tests.dask_cluster"]  # the own_cluster fixture, one definition for all


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Puts the ``slow`` tests (processes, servers, journeys) before the rest, each kept in
    its place among them.

    pytest-xdist deals the tests out in this order (after the ``xdist_group`` groups, largest
    first), one or two at a time to whichever worker is free: with the long tests dealt first
    and the thousand short ones last, the workers finish within seconds of each other instead
    of one running a minute-long journey or browser test while the others stand idle. The
    order is the only change: the same tests run. Every module-scoped fixture (a played
    event, a started service, a browser) belongs to a module whose tests are all slow, so it
    is still set up once.
    """
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
