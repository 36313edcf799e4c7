"""The reference ladder: rungs read from fixed-partnership leaderboards, as Markdown and JSON.

A rung is one event of two fixed teams, such as two copies of ``search`` against two copies of
``heuristic`` on duplicate boards. Its leaderboard (``tichu-arena-leaderboard`` version 1, see
``arena.tournament.leaderboard.to_json``) already holds each team's points margin per hand with a
board-clustered 95% interval, so the ladder only reads those files, orders each rung stronger
team first and puts the rungs side by side. Nothing is recomputed from the hands: the ladder
always agrees with the leaderboards it cites.

The output is deterministic: the same input files give byte-identical files, and the only
timestamps are the events' own creation times. Ladder files are never edited by hand:
``arena ladder`` rewrites them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.tournament.leaderboard import (
    FORMAT as LEADERBOARD_FORMAT,
)
from arena.tournament.leaderboard import (
    VERSION as LEADERBOARD_VERSION,
)
from arena.tournament.leaderboard_render import seed_text as _seed_text
from arena.tournament.leaderboard_render import (
    write_files,
)

__all__ = [
    "FORMAT",
    "VERSION",
    "Rung",
    "read_ladder",
    "read_rung",
    "render_json",
    "render_markdown",
    "team_name",
    "to_json",
    "write_ladder",
]

FORMAT = "tichu-arena-ladder"
VERSION = 1

_NUMBERED = re.compile(r"^(?P<base>.+)-(?P<number>[0-9]+)$")


@dataclass(frozen=True)
class Rung:
    """One rung: the stronger team against the weaker one, as its leaderboard reports it.

    Attributes:
        stronger: The stronger team's name (see ``team_name``).
        weaker: The weaker team's name.
        stronger_players: The stronger team's bots as the leaderboard lists them.
        weaker_players: The weaker team's bots.
        margin: The stronger team's mean points margin per hand (never negative).
        margin_ci: Half-width of the margin's 95% interval (boards as the samples).
        hands: Hands the two teams played against each other.
        won: Hands the stronger team won.
        tied: Hands tied.
        lost: Hands the stronger team lost.
        event: The event's name.
        status: The event's status (``finished`` or how far it got).
        created: The event's creation time, as the leaderboard carries it.
        seed: The event's seed.
        boards_done: Boards played.
        boards_total: Boards planned.
        source: The leaderboard file the rung was read from, as given.
    """

    stronger: str
    weaker: str
    stronger_players: tuple[str, ...]
    weaker_players: tuple[str, ...]
    margin: float
    margin_ci: float
    hands: int
    won: int
    tied: int
    lost: int
    event: str
    status: str
    created: str
    seed: int | None
    boards_done: int
    boards_total: int
    source: str

    @property
    def low(self) -> float:
        """Lower end of the margin's 95% interval."""
        return _round(self.margin - self.margin_ci)

    @property
    def high(self) -> float:
        """Upper end of the margin's 95% interval."""
        return _round(self.margin + self.margin_ci)

    @property
    def excludes_zero(self) -> bool:
        """Whether the interval lies wholly above zero: the order is clear at 95%."""
        return self.low > 0.0

    @property
    def label(self) -> str:
        """``stronger vs weaker``."""
        return f"{self.stronger} vs {self.weaker}"


def team_name(players: Sequence[str]) -> str:
    """Names a team by its bots: ``search-1``, ``search-2`` -> ``search``.

    Copies of one bot are numbered ``<bot>-<n>`` in the ladder events, so a common base left
    after stripping a ``-<n>`` suffix names the team; otherwise the players are joined with
    `` & ``, in the order given.
    """
    bases = {m.group("base") if (m := _NUMBERED.match(p)) else None for p in players}
    if len(players) > 1 and len(bases) == 1 and None not in bases:
        return str(next(iter(bases)))
    return " & ".join(players)


def read_rung(path: Path | str) -> Rung:
    """Reads one rung from a fixed-partnership leaderboard JSON file.

    Raises:
        ValueError: The file is missing or unreadable, is not JSON, is not a version 1
            leaderboard, is not of a fixed-partnership event, does not hold exactly two
            teams, or has a field of the wrong type. The message names the file.
    """
    source = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise ValueError(f"cannot read rung leaderboard {source}: {e.strerror or e}") from None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{source} is not JSON: {e}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{source} is not a leaderboard file (not a JSON object)")
    if data.get("format") != LEADERBOARD_FORMAT:
        raise ValueError(
            f"{source} is not a leaderboard file "
            f"(format {data.get('format')!r}, expected {LEADERBOARD_FORMAT!r})"
        )
    if data.get("version") != LEADERBOARD_VERSION:
        raise ValueError(
            f"{source}: leaderboard version {data.get('version')!r} is not supported "
            f"(expected {LEADERBOARD_VERSION})"
        )
    fields = _Fields(source)
    event = fields.mapping(data, "event")
    name = fields.text(event, "event.name")
    schedule = event.get("schedule")
    if schedule != "fixed":
        raise ValueError(
            f"{source}: event {name!r} is not a fixed-partnership event (schedule "
            f"{schedule!r}); a rung needs two fixed teams"
        )
    teams = data.get("teams")
    if not isinstance(teams, list):
        raise ValueError(f"{source}: field 'teams' must be a list of teams")
    if len(teams) != 2:
        raise ValueError(f"{source}: a rung needs exactly two teams, found {len(teams)}")
    progress = fields.mapping(data, "progress")
    first, second = (fields.team(team, f"teams[{i}]") for i, team in enumerate(teams))
    # The stronger team comes first; a dead level keeps the file's order.
    strong, weak = (second, first) if second.margin > first.margin else (first, second)
    return Rung(
        stronger=team_name(strong.players),
        weaker=team_name(weak.players),
        stronger_players=strong.players,
        weaker_players=weak.players,
        margin=strong.margin,
        margin_ci=strong.margin_ci,
        hands=strong.hands,
        won=strong.won,
        tied=strong.tied,
        lost=strong.lost,
        event=name,
        status=fields.text(event, "event.status"),
        created=fields.text(event, "event.created"),
        seed=None if event.get("seed") is None else fields.integer(event, "event.seed"),
        boards_done=fields.integer(progress, "progress.boards_done"),
        boards_total=fields.integer(progress, "progress.boards_total"),
        source=source,
    )


@dataclass(frozen=True)
class _Team:
    players: tuple[str, ...]
    hands: int
    won: int
    tied: int
    lost: int
    margin: float
    margin_ci: float


class _Fields:
    """Typed access to a leaderboard's fields, with errors that name the file and field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def _get(self, data: Mapping[str, Any], where: str) -> Any:
        key = where.rsplit(".", 1)[-1]
        if key not in data:
            raise ValueError(f"{self.source}: field {where!r} is missing")
        return data[key]

    def _wrong(self, where: str, expected: str) -> ValueError:
        return ValueError(f"{self.source}: field {where!r} must be {expected}")

    def mapping(self, data: Mapping[str, Any], where: str) -> Mapping[str, Any]:
        value = self._get(data, where)
        if not isinstance(value, dict):
            raise self._wrong(where, "an object")
        return value

    def text(self, data: Mapping[str, Any], where: str) -> str:
        value = self._get(data, where)
        if not isinstance(value, str):
            raise self._wrong(where, "a string")
        return value

    def integer(self, data: Mapping[str, Any], where: str) -> int:
        value = self._get(data, where)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self._wrong(where, "a whole number ≥ 0")
        return value

    def number(self, data: Mapping[str, Any], where: str) -> float:
        value = self._get(data, where)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._wrong(where, "a number")
        if not math.isfinite(value):
            raise self._wrong(where, "a finite number")
        return float(value)

    def team(self, data: object, where: str) -> _Team:
        if not isinstance(data, dict):
            raise self._wrong(where, "an object")
        players = self._get(data, f"{where}.players")
        if (
            not isinstance(players, list)
            or not players
            or not all(isinstance(p, str) for p in players)
        ):
            raise self._wrong(f"{where}.players", "a non-empty list of bot names")
        return _Team(
            players=tuple(players),
            hands=self.integer(data, f"{where}.hands"),
            won=self.integer(data, f"{where}.won"),
            tied=self.integer(data, f"{where}.tied"),
            lost=self.integer(data, f"{where}.lost"),
            margin=self.number(data, f"{where}.margin_per_hand"),
            margin_ci=self.number(data, f"{where}.margin_ci95"),
        )


def _round(value: float) -> float:
    # Adding 0.0 turns -0.0 into 0.0, so a value rounding to zero prints one way.
    return round(value, 2) + 0.0


# ---------------------------------------------------------------------------------------------
# JSON


def to_json(rungs: Sequence[Rung], name: str = "reference") -> dict[str, Any]:
    """Returns the ladder as JSON-ready data (format ``tichu-arena-ladder`` v1)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": name,
        "unit": "points per hand",
        "confidence": 0.95,
        "rungs": [
            {
                "stronger": r.stronger,
                "weaker": r.weaker,
                "stronger_players": list(r.stronger_players),
                "weaker_players": list(r.weaker_players),
                "margin_per_hand": r.margin,
                "margin_ci95": r.margin_ci,
                "ci_low": r.low,
                "ci_high": r.high,
                "excludes_zero": r.excludes_zero,
                "hands": r.hands,
                "won": r.won,
                "tied": r.tied,
                "lost": r.lost,
                "event": {
                    "name": r.event,
                    "status": r.status,
                    "created": r.created,
                    "seed": r.seed,
                    "boards_done": r.boards_done,
                    "boards_total": r.boards_total,
                },
                "source": r.source,
            }
            for r in rungs
        ],
    }


def render_json(rungs: Sequence[Rung], name: str = "reference") -> str:
    """Returns the JSON file's text."""
    return json.dumps(to_json(rungs, name), indent=1, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------------------------
# Markdown

FOOTER = "Regenerated by `arena ladder` from the rung leaderboards; do not edit."


def _md(text: str) -> str:
    for char in "\\`*_|[]<>":
        text = text.replace(char, "\\" + char)
    return text


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text and "|" not in text else _md(text)


def render_markdown(rungs: Sequence[Rung], name: str = "reference") -> str:
    """Returns the Markdown file's text: what a rung is, how it is measured, one table."""
    lines = [
        f"# Ladder: {_md(name)}",
        "",
        "Each rung is one fixed-partnership event: two copies of one bot as a team against two "
        "copies of another on duplicate boards. Every board is dealt once and played in two "
        "rotations with the teams' cards swapped, so both teams hold the same cards and only "
        "the team margin counts; the rung puts the team with the higher margin first.",
        "",
        "The margin is the stronger team's points per hand. With fixed partnerships and one "
        "hand per rotation it equals the mean duplicate-board margin (per board, the mean of "
        "its two rotations). The ± is a 95% interval with the boards as the independent "
        "samples; *excludes zero* means the interval lies wholly above zero, so the order of "
        "the two bots is clear at that level.",
        "",
        "| rung | pts/hand ± 95% | interval excludes zero | hands | won / tied / lost "
        "| leaderboard |",
        "|:--|--:|:-:|--:|--:|:--|",
    ]
    for r in rungs:
        lines.append(
            f"| {_md(r.label)} | {r.margin:+.2f} ± {r.margin_ci:.2f} "
            f"| {'yes' if r.excludes_zero else 'no'} | {r.hands} "
            f"| {r.won} / {r.tied} / {r.lost} | {_code(r.source)} |"
        )
    lines += ["", "Events:", ""]
    for r in rungs:
        lines.append(
            f"* {_code(r.event)}: {_md(' & '.join(r.stronger_players))} against "
            f"{_md(' & '.join(r.weaker_players))}; {r.boards_done}/{r.boards_total} boards, "
            f"{_seed_text(r.seed)}; created {_md(r.created)}; {_md(r.status)}."
        )
    lines += ["", "---", "", FOOTER]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Files


def read_ladder(paths: Iterable[Path | str]) -> tuple[Rung, ...]:
    """Reads the rungs in the order given (weakest rung first, by convention).

    Raises:
        ValueError: No files, or one of them is not a rung (see ``read_rung``).
    """
    rungs = tuple(read_rung(path) for path in paths)
    if not rungs:
        raise ValueError("no rung leaderboards given")
    return rungs


def write_ladder(
    rungs: Sequence[Rung], out_dir: Path | str, name: str = "reference"
) -> tuple[Path, Path]:
    """Writes ``<name>.md`` and ``<name>.json`` into ``out_dir``; returns the two paths.

    Each file is written to a temporary name and renamed into place, so a reader never sees
    half a file.

    Raises:
        ValueError: ``name`` cannot be used as a file name.
    """
    if not name or Path(name).name != name or name.startswith("."):
        raise ValueError(f"ladder name {name!r} cannot name a file")
    md, js = write_files(
        out_dir, name, ((".md", render_markdown(rungs, name)), (".json", render_json(rungs, name)))
    )
    return md, js
