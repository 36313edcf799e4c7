"""Applies the process settings before any test imports gRPC, so the tests' servers and bot
processes run with the I/O that ``arena.runtime.grpc_io`` chooses, as ``arena`` commands do;
and runs the slow tests first, so ``make test``'s workers end together."""

import pytest

from arena.runtime import configure

configure()

pytest_plugins = ["tests.dask_cluster"]  # the own_cluster fixture, one definition for all


def deal_order(items: list[pytest.Item]) -> list[tuple[int, float]]:
    """Each test's place in the deal: the ``slow`` ones first, those of the modules allowed the
    longest ``timeout`` first among them (a journey's 1800 s, a service's 900 s: the long ones);
    then the rest, in their places."""
    longest: dict[object, float] = {}
    for item in items:
        if item.get_closest_marker("slow") is not None:
            mark = item.get_closest_marker("timeout")
            allowed = float(mark.args[0]) if mark is not None and mark.args else 0.0
            module = getattr(item, "module", None)
            longest[module] = max(longest.get(module, 0.0), allowed)
    return [
        (0, -longest[getattr(item, "module", None)])
        if item.get_closest_marker("slow") is not None
        else (1, 0.0)
        for item in items
    ]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Deals the ``slow`` tests (processes, servers, journeys) out before the rest, the longest
    first (``deal_order``), each module's kept together and in order.

    pytest-xdist deals the tests out in this order (after the ``xdist_group`` groups, largest
    first), one or two at a time to whichever worker is free: with the long tests dealt first
    and the thousand short ones last, the workers finish within seconds of each other instead
    of one running a minute-long journey or browser test while the others stand idle. The
    order is the only change: the same tests run. Every module-scoped fixture (a played
    event, a started service, a browser) belongs to a module whose tests are all slow, so it
    is still set up once.
    """
    order = dict(zip(map(id, items), deal_order(items), strict=True))
    items.sort(key=lambda item: order[id(item)])
