"""Golden playthroughs: three seeded matches must show exactly the pinned deals, actions,
public events and hand scores (``data/playthroughs/*.txt``, made by ``playthroughs.py``)."""

from __future__ import annotations

import difflib

import pytest

from arena.rules import EventKind
from tests.rules.playthroughs import PLAYTHROUGHS, Playthrough, render

REGEN = ".venv/bin/python scripts/regen_playthroughs.py"


@pytest.mark.parametrize("playthrough", PLAYTHROUGHS, ids=lambda p: p.name)
def test_playthrough_matches_its_data_file(playthrough: Playthrough) -> None:
    assert playthrough.path.exists(), f"{playthrough.path} is missing: run {REGEN}"
    pinned = playthrough.path.read_text(encoding="utf-8")
    now = render(playthrough)
    if now != pinned:
        diff = difflib.unified_diff(
            pinned.splitlines(),
            now.splitlines(),
            fromfile=f"{playthrough.path.name} (pinned)",
            tofile=f"{playthrough.path.name} (played now)",
            lineterm="",
            n=4,
        )
        shown = list(diff)
        more = f"\n... {len(shown) - 80} more diff lines" if len(shown) > 80 else ""
        pytest.fail(
            f"the {playthrough.name} playthrough changed; if that is intended, run {REGEN}"
            " and commit the files.\n" + "\n".join(shown[:80]) + more,
            pytrace=False,
        )


def test_playthroughs_cover_every_event_and_decision() -> None:
    """Together the matches show every kind of public event, every kind of answer (Grand
    Tichu and Tichu called, a wish, a Dragon gift), a bomb out of turn and a double victory,
    so the pinned lines check all of them."""
    text = "".join(p.path.read_text(encoding="utf-8") for p in PLAYTHROUGHS).splitlines()
    events = {line.split()[1] for line in text if line.startswith("event ")}
    assert {kind.name for kind in EventKind} <= events
    actions = [line.split(": ", 1)[1] for line in text if line.startswith("action ")]
    assert {"grand tichu", "no grand tichu", "tichu", "pass"} <= set(actions)
    for start in ("wish ", "give dragon trick to seat "):
        assert any(a.startswith(start) for a in actions), start
    assert any(" to partner, " in a for a in actions)
    assert any(line.startswith("event PLAY") and " value=1 " in line for line in text)
    assert any(" double_victory=0 " in line or " double_victory=1 " in line for line in text)
