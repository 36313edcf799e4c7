"""Who may see what of the league service: decided here, for every answer (issue 46).

Everything the service answers is public (standings, rounds and their games, each bot's
versions with their hashes, the submissions' log), but for these parts:

* ``report``: a submission's check and gate results, with the bot's own log lines; its owner's.
* ``logs``: a bot's seat logs of finished rounds (the list and the files); the bot's owner's.
* ``audit``: the audit log, every account's actions and addresses; the organiser's.

A route builds its whole answer and passes it through ``shown`` with the owner of what it
describes: a private part its asker may not see is blanked (``None``). A route that serves a
private file or list asks ``require`` first, which refuses (403) with the reason. So a new
route cannot show a private part by forgetting a check; ``tests/security/test_service_privacy``
keeps these rules true.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from fastapi import HTTPException

from arena.service.accounts import Owner

__all__ = ["Part", "may", "require", "shown"]


class Part(StrEnum):
    """A private part of an answer (the key it stands under in the answer's JSON)."""

    REPORT = "report"
    LOGS = "logs"
    AUDIT = "audit"


_PARTS = frozenset(part.value for part in Part)

_ORGANISER = frozenset({Part.AUDIT})
"""Parts the organiser sees; every other private part is its owner's alone."""

_REFUSED = {
    Part.REPORT: "a submission's report is its owner's",
    Part.LOGS: "a bot's logs are its owner's",
    Part.AUDIT: "the audit log is the organiser's",
}


def may(part: Part, asker: Owner | None, owner: str | None = None) -> bool:
    """Whether ``asker`` (None: a stranger) may see ``part`` of what ``owner`` owns."""
    if asker is None:
        return False
    if part in _ORGANISER:
        return asker.organiser
    return owner is not None and asker.name == owner


def require(part: Part, asker: Owner | None, owner: str | None = None) -> None:
    """Refuses (403, with the reason) an asker who may not see ``part``.

    Raises:
        HTTPException: 403.
    """
    if not may(part, asker, owner):
        raise HTTPException(403, _REFUSED[part])


def shown(answer: dict[str, Any], asker: Owner | None, owner: str | None) -> dict[str, Any]:
    """``answer`` as ``asker`` may see it: each private part it may not see blanked."""
    return {
        key: None if key in _PARTS and not may(Part(key), asker, owner) else v
        for key, v in answer.items()
    }
