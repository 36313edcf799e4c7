"""Golden playthroughs: a few seeded full matches written out line by line, as OpenSpiel does.

Each playthrough is played in-process by the SDK's local harness (``sdk.testing.play_local``)
and then replayed action by action on the rules core, which writes one line per deal, per
action, per public event (``Match.events``) and per hand score. The files in
``data/playthroughs/`` pin every line; ``test_playthroughs.py`` diffs against them and
``scripts/regen_playthroughs.py`` writes them anew after an intended change.

Events and hand results are printed from their own fields (a named tuple's or a dataclass's),
never from a table of kinds, so a reshaped event prints without a change here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from arena.rules import Match, Options, card_name, format_cards
from example_bots.greedy.bot import GreedyBot
from example_bots.heuristic.bot import HeuristicBot
from sdk import Bot
from sdk.testing import RandomBot, play_local

DATA = Path(__file__).resolve().parent / "data" / "playthroughs"


@dataclass(frozen=True)
class Playthrough:
    """One pinned match: its file name, what it shows, its options, seed and four bots."""

    name: str
    about: str
    options: Options
    seed: int
    bots: Callable[[], list[Bot]]

    @property
    def path(self) -> Path:
        return DATA / f"{self.name}.txt"


PLAYTHROUGHS = (
    Playthrough(
        "random-to-1000",
        "four random bots (sdk.testing.RandomBot, seeds 0-3) play a match to 1000",
        Options(),
        1,
        lambda: [RandomBot(s) for s in range(4)],
    ),
    Playthrough(
        "turnier-heuristic-greedy",
        "tournament (turnier) mode: HeuristicBot in seats 0 and 2 against GreedyBot",
        Options.turnier(),
        2,
        lambda: [HeuristicBot(), GreedyBot(), HeuristicBot(), GreedyBot()],
    ),
    Playthrough(
        "heuristic-to-1000",
        "four HeuristicBots (no search: bets, bombs, wishes and gifts) play a match to 1000",
        Options(),
        11,
        lambda: [HeuristicBot() for _ in range(4)],
    ),
)


def _fields(value: object) -> dict[str, object] | None:
    """A named tuple's or a dataclass's fields by name; None for any other value."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return dict(zip(value._fields, value, strict=True))
    return None


def _value(name: str, value: object) -> str:
    """One field's value: enums by name, values with their own text (plays, actions, card
    sets) by it, card masks (an int field named for cards) as cards, the rest by repr."""
    if isinstance(value, Enum):
        return value.name.lower()
    if isinstance(value, int) and not isinstance(value, bool) and "card" in name:
        return f"[{format_cards(value)}]"
    own_str = type(value).__str__ not in (object.__str__, tuple.__str__, int.__str__)
    if own_str and not isinstance(value, (str, bool, int, float)):
        return str(value)
    fields = _fields(value)
    if fields is not None:
        return "(" + _describe(fields) + ")"
    return repr(value)


def _describe(fields: dict[str, object]) -> str:
    return " ".join(f"{k}={_value(k, v)}" for k, v in fields.items() if v is not None)


def event_line(event: object) -> str:
    """An event as ``KIND field=value ...``: its ``kind`` field's name, else its class name."""
    fields = _fields(event)
    if fields is None:
        return repr(event)
    kind = fields.pop("kind", None)
    tag = kind.name if isinstance(kind, Enum) else type(event).__name__
    return f"event {tag} {_describe(fields)}".rstrip()


def lines(playthrough: Playthrough) -> Iterator[str]:
    """Plays the match, then replays its actions on a fresh ``Match``, yielding every line."""
    played = play_local(playthrough.bots(), options=playthrough.options, seed=playthrough.seed)
    yield f"# {playthrough.about}."
    yield "# Written by scripts/regen_playthroughs.py; checked by tests/rules/test_playthroughs.py."
    yield f"options {_describe(_fields(playthrough.options) or {})}"
    yield f"seed {playthrough.seed}"
    m = Match(playthrough.options, playthrough.seed)
    hands_done = 0
    shown = 0  # events of the current hand already written

    def new_events() -> Iterator[str]:
        nonlocal hands_done, shown
        while hands_done < len(m.log):  # a hand ended: the rest of its events, its score
            yield from map(event_line, m.log[hands_done][shown:])
            result = m.hand_results[hands_done]
            totals = f"total={result.score} match={tuple(m.scores)}"
            yield f"score {_describe(_fields(result) or {})} {totals}"
            hands_done += 1
            shown = 0
            if not m.over:
                yield from deal()
        if not m.over:
            yield from map(event_line, m.events[shown:])
            shown = len(m.events)

    def deal() -> Iterator[str]:
        yield f"hand {m.hand_no}"
        for seat, cards in enumerate(m.dealt):
            yield f"deal seat {seat}: {' '.join(map(card_name, cards))}"

    yield from deal()
    yield from new_events()
    for seat, action in played.actions:
        m.apply(action)
        yield f"action seat {seat}: {action}"
        yield from new_events()
    assert m.scores == played.scores, "the replay ended with other scores than the match"
    yield f"match over: scores={tuple(m.scores)} victory_points={tuple(m.vp)}"


def render(playthrough: Playthrough) -> str:
    """The playthrough's whole text, as its data file holds it."""
    return "\n".join(lines(playthrough)) + "\n"
