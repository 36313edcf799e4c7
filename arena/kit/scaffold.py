"""``arena new-bot NAME``: a bot folder that plays out of the box.

``new_bot(parent, name)`` writes ``NAME/bot.toml`` (the manifest), ``NAME/bot.py`` (a
readable starter bot), ``NAME/test_bot.py`` (a pytest test) and ``NAME/README.md``, and
returns the folder. It refuses an existing folder and a name that is not a slug
(``ScaffoldError``).
"""

from __future__ import annotations

import re
from pathlib import Path

from arena.rules.errors import ArenaError

__all__ = ["NAME_PATTERN", "ScaffoldError", "class_name", "new_bot", "validate_name"]

NAME_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,39}")
"""A bot name: a lowercase letter, then up to 39 lowercase letters, digits, ``_`` or ``-``."""

_RESERVED = frozenset({"arena", "sdk", "bot", "test", "tests", "example_bots"})


class ScaffoldError(ArenaError):
    """The bot folder cannot be made (bad name, existing folder); the message says why."""


def validate_name(name: str) -> str:
    """Returns ``name`` if it is a usable bot name; raises ``ScaffoldError`` otherwise."""
    if not NAME_PATTERN.fullmatch(name):
        raise ScaffoldError(
            f"bad bot name {name!r}: use a lowercase letter, then lowercase letters, digits,"
            " '_' or '-' (at most 40 characters), e.g. 'my_bot'"
        )
    if name.replace("-", "_") in _RESERVED:
        raise ScaffoldError(f"bad bot name {name!r}: it would shadow a module; pick another")
    return name


def class_name(name: str) -> str:
    """The bot's class name: ``my_bot`` -> ``MyBot``, ``low`` -> ``LowBot``."""
    camel = "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_]+", name) if part)
    if not camel.endswith("Bot"):
        camel += "Bot"
    return camel


def new_bot(parent: Path, name: str) -> Path:
    """Writes the bot folder ``parent/name`` (making ``parent`` and its parents when they do
    not exist); returns it. Raises ``ScaffoldError``."""
    validate_name(name)
    folder = parent / name
    if parent.exists() and not parent.is_dir():
        raise ScaffoldError(f"{parent} exists and is not a folder: give --into a folder")
    if folder.exists():
        raise ScaffoldError(f"{folder} exists already: pick another name or remove it")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ScaffoldError(f"cannot create the folder {parent}: {e.strerror or e}") from None
    cls = class_name(name)
    files = {
        "bot.toml": _MANIFEST,
        "bot.py": _BOT,
        "test_bot.py": _TEST,
        "README.md": _README,
    }
    folder.mkdir()
    for file, template in files.items():
        text = template.replace("__NAME__", name).replace("__CLASS__", cls)
        (folder / file).write_text(text, encoding="utf-8")
    return folder


_MANIFEST = """\
# How the arena starts this bot (docs/bot-kit.md, arena/server/manifest.py).
# {python} becomes the arena's interpreter; the command runs in this folder ("."),
# so `bot:__CLASS__` is bot.py's class __CLASS__.
name = "__NAME__"
command = ["{python}", "-m", "sdk", "bot:__CLASS__"]
workdir = "."
startup_timeout_s = 30
"""

_BOT = '''\
"""__CLASS__: a starter Tichu bot made by `arena new-bot`. Make it yours.

It plays the lowest play that beats the table and passes when it cannot (it keeps its bombs);
when it leads, it plays its lowest play. The other decisions use the defaults of `sdk.Bot`.
"""

from __future__ import annotations

from arena.rules import PASS, Observation, Play
from sdk import Bot


class __CLASS__(Bot):
    """Lowest play that beats the table; pass otherwise."""

    name = "__NAME__"

    def play(self, obs: Observation) -> Play:
        """Your turn: answer with an entry of ``obs.legal`` (PASS is first when you may pass).

        Useful fields: ``obs.hand`` (your cards as an int mask; ``arena.rules.cards_of``
        lists the card ids), ``obs.top`` (the play to beat, None when you lead),
        ``obs.wish`` (an active Mah Jong wish; ``obs.legal`` already enforces it),
        ``obs.card_counts``, ``obs.trick``, ``obs.scores``. A ``Play`` has ``kind``,
        ``length``, ``rank`` and ``cards``.
        """
        plays = [p for p in obs.legal if isinstance(p, Play) and p != PASS]
        keep_bombs = [p for p in plays if not p.is_bomb]
        if keep_bombs:
            return min(keep_bombs, key=_lowest)
        if PASS in obs.legal:
            return PASS
        return min(plays, key=_lowest)  # leading with nothing but bombs left

    # The other decisions have defaults in sdk.Bot; override any of them:
    #   bomb(obs) -> Play          a bomb window, out of turn: PASS or a bomb from obs.legal
    #   grand_tichu(obs) -> bool   after eight cards (obs.hand holds those eight)
    #   call_tichu(obs) -> bool    asked before a decision while a Tichu call is allowed
    #   exchange(obs) -> Exchange  three different cards: next seat, partner, previous seat
    #   wish(obs) -> int           after your Mah Jong: a rank 2..14, or 0 for no wish
    #   gift(obs) -> int           your Dragon won the trick: the opponent seat that gets it
    #   on_match_start(seat), on_match_end(scores)   hooks for bots that keep state
    # Or override act(obs) to answer every decision yourself (obs.phase says which).


def _lowest(play: Play) -> tuple[int, int]:
    """Lowest rank first; among equal ranks, fewer cards first."""
    return (play.rank, play.length)


if __name__ == "__main__":
    import sdk

    raise SystemExit(sdk.run(__CLASS__()))
'''

_TEST = '''\
"""Tests for __CLASS__: run with `pytest __NAME__` (no referee, no network needed)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bot import __CLASS__

from arena.rules import Options
from sdk.testing import RandomBot, check_bot_local, play_local


def test_answers_every_decision_legally_in_every_seat() -> None:
    # Two-hand matches with Grand Tichu, through the wire encoding; raises on a bad answer.
    matches = check_bot_local(__CLASS__(), matches=1, seed=1)
    assert len(matches) == 4 and all(m.over for m in matches)


def test_plays_a_whole_match() -> None:
    bots = [__CLASS__(), RandomBot(1), __CLASS__(), RandomBot(3)]
    match = play_local(bots, options=Options(hands=3), seed=7, wire=True)
    assert match.over and len(match.hand_results) == 3
'''

_README = """\
# __NAME__

A Tichu Arena bot (`__CLASS__` in `bot.py`), made by `arena new-bot __NAME__`.
Run these from the folder that holds `__NAME__/`, with the arena's environment active:

```sh
arena play ./__NAME__ random random random   # one match over gRPC against the random bot
arena check-bot ./__NAME__/bot.toml          # the compliance check: PASS before you submit
pytest __NAME__                              # the bot's own tests (in-process, fast)
```

- `bot.py`: the bot. `play` is the only decision a bot must write; see the comments for
  the others and `docs/sdk.md` for the `Observation` and the SDK.
- `bot.toml`: how the arena starts it (`{python} -m sdk bot:__CLASS__`, run in this
  folder). Keep `name` unique among your bots.
- `test_bot.py`: local tests with `sdk.testing` (`check_bot_local`, `play_local`).

`arena check-bot` starts the bot in real processes against a real referee and checks that
it starts in time, answers every kind of decision legally and within the deadline, handles
tricky positions (a wish, a bomb window, a Dragon gift, Phoenix readings) and resumes its
seat after a dropped connection. See `docs/bot-kit.md`.
"""
