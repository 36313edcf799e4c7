"""The test suite's own machinery: what `make test`'s speed and its module fixtures rely on."""

from __future__ import annotations

import os

import pytest

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
