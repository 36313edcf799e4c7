"""The league file: one TOML file naming the league and saying how its rounds are played.

``load_league(path)`` reads and validates it; ``parse_league(data)`` validates parsed data (the
store keeps the validated file as JSON and reloads it this way). The ``[round]`` table holds
event-file fields (schedule, boards per round, rotations, format, time control, policy, rules):
it is checked by building the event of a probe round with ``arena.tournament.model``, so a league
round accepts exactly what an event file accepts and reports mistakes the same way, as
``round.<field>``. ``docs/league.md`` shows the format with comments.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from arena.tournament.model import (
    BUILTIN_BOTS,
    BUILTINS_TEXT,
    EventFileError,
    EventSpec,
    is_builtin,
    parse_event,
)

__all__ = [
    "BOT_NAME",
    "DivisionsSpec",
    "GateSpec",
    "LeagueFileError",
    "LeagueSpec",
    "ScheduleSpec",
    "duration_s",
    "load_league",
    "parse_league",
]

_LEAGUE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")
BOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,31}")
"""A league bot's name: no spaces, so the entry name ``"<bot> v<N>"`` reads back unambiguously."""

#: Event-file fields a league sets itself, one round at a time.
_SET_BY_LEAGUE = ("name", "bots", "fillers", "candidate", "seed", "deal_book")
_ROUND_SCHEDULES = ("round_robin",)


class LeagueFileError(EventFileError):
    """A league file that cannot be used; ``problems`` lists ``(field, message)`` pairs."""


class DivisionsSpec(BaseModel):
    """Divisions: the field split by rating, ``promote`` bots up and down at each season end."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    count: StrictInt = Field(default=2, ge=1, le=16)
    promote: StrictInt = Field(default=1, ge=0, le=100)


class GateSpec(BaseModel):
    """The non-regression gate ``submit --gate`` runs: new version against the previous one.

    ``required``: every new version of a bot plays it, asked for or not (the league's rule,
    for ``arena league submit`` and the service alike). ``inconclusive``: what a gate that
    reaches ``max_boards`` undecided does to the version, ``refuse`` (the default) or
    ``admit``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    required: StrictBool = False
    elo0: StrictFloat | StrictInt = -10.0
    elo1: StrictFloat | StrictInt = 0.0
    alpha: StrictFloat = Field(default=0.05, gt=0.0, lt=0.5)
    beta: StrictFloat = Field(default=0.05, gt=0.0, lt=0.5)
    max_boards: StrictInt = Field(default=2000, ge=1, le=1_000_000)
    min_pairs: StrictInt = Field(default=1, ge=1, le=1_000_000)
    decision_ms: StrictInt = Field(default=1000, ge=1, le=3_600_000)
    jobs: StrictInt = Field(default=2, ge=1, le=1024)
    inconclusive: Literal["refuse", "admit"] = "refuse"

    @model_validator(mode="after")
    def _bounds(self) -> GateSpec:
        if not self.elo0 < self.elo1:
            raise ValueError(f"elo0 must be below elo1, got {self.elo0:g} and {self.elo1:g}")
        if self.max_boards < self.min_pairs:
            raise ValueError(
                f"max_boards ({self.max_boards}) is below min_pairs ({self.min_pairs})"
            )
        return self


_DURATION = re.compile(r"([1-9][0-9]{0,6})([smhd])")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration_s(text: str) -> int:
    """Seconds of a duration written ``30s``, ``30m``, ``2h`` or ``1d``.

    Raises:
        ValueError: Another shape.
    """
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not a duration: a whole number and s, m, h or d (30m)")
    return int(match[1]) * _UNIT_S[match[2]]


class ScheduleSpec(BaseModel):
    """When ``arena league serve`` plays a round by itself: every ``every`` after the last
    round ended, and/or as soon as ``after_versions`` new versions arrived since the last
    round began; at most ``max_rounds`` rounds a season (default: the season's length)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    every: StrictStr | None = None
    after_versions: StrictInt | None = Field(default=None, ge=1, le=10_000)
    max_rounds: StrictInt | None = Field(default=None, ge=1, le=1000)

    @field_validator("every")
    @classmethod
    def _valid_every(cls, value: str | None) -> str | None:
        if value is not None:
            duration_s(value)
        return value

    @model_validator(mode="after")
    def _some_trigger(self) -> ScheduleSpec:
        if self.every is None and self.after_versions is None:
            raise ValueError("a schedule needs every, after_versions or both")
        return self


class LeagueSpec(BaseModel):
    """A validated league file.

    Attributes:
        name: The league's name; it prefixes every round's event name and the output files.
        season_rounds: Rounds in a season (the season's length).
        seed: A public seed for every round's and gate's boards (tests, reproductions):
            anyone who knows it can compute every deal. None (the default): the deals
            derive from the league's secret, drawn by ``arena league init``.
        filler: The bot that pads a field needing fillers (built-in name or manifest path).
        carry_sd: Elo s.d. added to a rating carried into the next season (docs/league.md).
        round: The event-file fields of one round, as given (validated with the event model).
        divisions: Divisions, if the league has them.
        gate: Settings of ``submit --gate``.
        schedule: When ``arena league serve`` plays rounds by itself (None: never).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: StrictStr
    season_rounds: StrictInt = Field(default=10, ge=1, le=1000)
    seed: StrictInt | None = Field(default=None, ge=0, lt=2**63)
    filler: StrictStr = "random"
    carry_sd: StrictFloat | StrictInt = Field(default=50.0, ge=0.0, le=1000.0)
    round: dict[str, Any] = Field(default_factory=dict)
    divisions: DivisionsSpec | None = None
    gate: GateSpec = GateSpec()
    schedule: ScheduleSpec | None = None

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        if not _LEAGUE_NAME.fullmatch(value):
            raise ValueError(
                f"{value!r} is not a usable league name: 1-40 letters, digits or ._- starting "
                "with a letter or digit"
            )
        return value

    @field_validator("filler")
    @classmethod
    def _known_filler(cls, value: str) -> str:
        if is_builtin(value):
            return value
        path = Path(value).expanduser()
        if not path.is_file():
            raise ValueError(
                f"{value!r} is neither a built-in bot ({BUILTINS_TEXT}) nor a manifest"
            )
        return str(path.resolve())

    def round_event(
        self,
        name: str,
        bots: list[dict[str, str]],
        seed: int | None,
        fillers: list[dict[str, str]],
    ) -> EventSpec:
        """Returns the event of one round: this league's round format with the given field.

        Raises:
            EventFileError: The field does not fit the format (fewer than 4 bots, say).
        """
        data = {**self.round, "name": name, "bots": bots, "seed": seed, "fillers": fillers}
        return parse_event(data, source=f"league {self.name!r}, {name}")


def load_league(path: Path | str) -> LeagueSpec:
    """Reads and validates a league file.

    Raises:
        LeagueFileError: Naming the file, each wrong field and what is wrong with it.
    """
    source = Path(path)
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except OSError as e:
        raise LeagueFileError(str(source), [("", f"cannot read the league file: {e}")]) from e
    except tomllib.TOMLDecodeError as e:
        raise LeagueFileError(str(source), [("", f"not valid TOML: {e}")]) from e
    filler = data.get("filler")
    if isinstance(filler, str) and not is_builtin(filler) and not Path(filler).is_absolute():
        data["filler"] = str(source.resolve().parent / filler)
    return parse_league(data, source=str(source))


def parse_league(data: Mapping[str, Any], *, source: str = "league") -> LeagueSpec:
    """Validates league data (a parsed TOML table).

    Raises:
        LeagueFileError: One entry per wrong field, named by its path (``round.rotations``).
    """
    try:
        spec = LeagueSpec.model_validate(dict(data))
    except ValidationError as e:
        raise LeagueFileError(source, [_problem(error) for error in e.errors()]) from None
    problems = _round_problems(spec)
    if problems:
        raise LeagueFileError(source, problems)
    return spec


def _problem(error: Any) -> tuple[str, str]:
    field = ".".join(str(part) for part in error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        model: type[BaseModel] = LeagueSpec
        if error["loc"][:1] == ("divisions",):
            model = DivisionsSpec
        elif error["loc"][:1] == ("gate",):
            model = GateSpec
        elif error["loc"][:1] == ("schedule",):
            model = ScheduleSpec
        return field, f"unknown field (known fields: {', '.join(model.model_fields)})"
    if kind == "missing":
        return field, "required, but missing"
    message = str(error["msg"]).removeprefix("Value error, ")
    if kind != "value_error" and not isinstance(error.get("input"), dict | list):
        message = f"{message}, got {error.get('input')!r}"
    return field, message


def _round_problems(spec: LeagueSpec) -> list[tuple[str, str]]:
    """Checks ``[round]`` by validating the event of a probe round of four built-in bots."""
    problems = [
        (f"round.{key}", "set by the league for each round; remove it here")
        for key in _SET_BY_LEAGUE
        if key in spec.round
    ]
    schedule = spec.round.get("schedule", "round_robin")
    if schedule not in _ROUND_SCHEDULES:
        problems.append(("round.schedule", f"a league round is a round robin, not {schedule!r}"))
    if problems:
        return problems
    probe = [{"bot": bot, "name": f"probe-{k}"} for k, bot in enumerate(BUILTIN_BOTS)]
    try:
        spec.round_event("probe", probe, 0, [])
    except EventFileError as e:
        return [(f"round.{field}" if field else "round", message) for field, message in e.problems]
    return []
