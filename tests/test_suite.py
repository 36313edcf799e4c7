"""The test suite's own machinery: what `make test`'s speed and its module fixtures rely on."""

from __future__ import annotations

import os

import pytest

from tests.conftest import deal_order

GROUP = "suite-check"


@pytest.mark.xdist_group(GROUP)
def test_xdist_groups_are_honoured(request: pytest.FixtureRequest) -> None:
    """Under ``--dist loadgroup`` a marked test carries its group in its node id.

    That suffix is how pytest-xdist sends a group to one worker. Where it is missing, every
    ``xdist_group`` in the suite is ignored without a word: module fixtures (a played event,
    a Dask cluster, the failure scenarios) are set up again on every worker and the suite
    takes about twice as long.
    """
    if "PYTEST_XDIST_WORKER" not in os.environ:
        pytest.skip("not running under pytest-xdist")
    if not getattr(request.config.option, "loadgroup", False):  # set on xdist's workers
        pytest.skip("not running with --dist loadgroup")
    assert request.node.nodeid.endswith(f"@{GROUP}"), (
        f"pytest-xdist ignored the xdist_group mark ({request.node.nodeid}): this pytest and "
        "pytest-xdist do not work together; see the pytest pin in pyproject.toml"
    )


def test_the_slow_tests_are_dealt_out_first(request: pytest.FixtureRequest) -> None:
    """The session's tests run the ``slow`` ones first, the longest allowed first
    (tests/conftest.py), so pytest-xdist starts the long tests while every worker is free and
    ends on the short ones.

    Checked on this session's own list of tests, whatever part of the suite was asked for: no
    test without the mark comes before one with it, nor a slow module's test allowed less time
    before one allowed more.
    """
    items = request.session.items
    order = deal_order(items)
    assert order == sorted(order), "a test runs before one dealt out earlier (deal_order)"
    slow = [item.get_closest_marker("slow") is not None for item in items]
    if any(slow):
        assert slow[0], "the first test is not a slow one though the session holds slow tests"
