"""Privacy decided in one place (issue 46): ``arena.web.service_privacy`` says who may see
each private part of the league service's answers, and no route decides it by itself.

What the real service answers strangers, owners and the organiser is attacked over HTTP in
``test_service_attacks.py``; here the rules themselves, and the routes' sources, which may
not compare an asker with an owner or look at a role but through those rules.
"""

from __future__ import annotations

import re

import pytest

from arena.service.accounts import Owner
from arena.web.service_privacy import Part, may, require, shown
from tests.helpers import ROOT

ALICE = Owner("alice", "owner", "2026-12-01", None)
BOB = Owner("bob", "owner", "2026-12-01", None)
ORG = Owner("org", "organiser", "2026-12-01", None)


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        # (stranger, the owner, another owner, the organiser) of something alice owns
        (Part.REPORT, (False, True, False, False)),
        (Part.LOGS, (False, True, False, False)),
        (Part.AUDIT, (False, False, False, True)),
    ],
)
def test_who_may_see_each_private_part(part: Part, expected: tuple[bool, ...]) -> None:
    seen = tuple(may(part, asker, "alice") for asker in (None, ALICE, BOB, ORG))
    assert seen == expected


def test_an_answer_shows_its_private_parts_to_whom_they_belong_alone() -> None:
    answer = {"id": 7, "owner": "alice", "status": "accepted", "report": {"check": []}}
    assert shown(answer, ALICE, "alice") == answer
    for asker in (None, BOB, ORG):
        assert shown(answer, asker, "alice") == {**answer, "report": None}
    with pytest.raises(Exception, match="its owner's"):
        require(Part.LOGS, BOB, "alice")
    require(Part.AUDIT, ORG)


def test_no_route_decides_privacy_by_itself() -> None:
    """The routes ask ``may``, ``require`` or ``shown``; none compares an asker's name with
    an owner, reads a role or blanks a part on its own (``service_state`` authenticates)."""
    decided = re.compile(
        "|".join(
            (
                r"\.organiser\b",  # a role read
                r"\.name\s*[!=]=|[!=]=\s*\w+\.name\b",  # an asker compared
                r"\.owner\s*[!=]=|[!=]=\s*\w+\.owner\b",  # an owner compared
                r"\"(report|logs)\": None|\[\"(report|logs)\"\] = None",  # a part blanked
            )
        )
    )
    routes = sorted((ROOT / "arena" / "web").glob("service*.py"))
    assert len(routes) >= 6
    found = [
        f"{path.name}:{n}: {line.strip()}"
        for path in routes
        if path.name not in ("service_privacy.py", "service_state.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if decided.search(line)
    ]
    assert found == []
