"""The event file: one TOML file that says who plays, how, on which boards and under which rules.

``load_event(path)`` reads and validates an event file and ``plan_event(spec)`` expands it into
the planned plays (board, rotation, seats, seeds, deal) that the runner plays and the store
records. Both raise ``EventFileError`` naming the file, the field and what is wrong, so every
mistake surfaces before the first hand is dealt. The format is shown, with comments, in
``docs/event-example.toml``.

Match format (``format``):

* ``"board"`` (default): a play is ``hands_per_board`` hands (default 1) from a 0:0 score, the
  board's deals, rotated. With one hand per board a play is exactly one hand of one deal, the
  duplicate unit (independent hands, neutral score context).
* ``"game"``: a play is a whole game to ``rules.target_score`` (or exactly ``rules.hands``
  hands). Every rotation of a board plays the same stream of deals, rotated, so the duplicate
  comparison still holds deal by deal although games may differ in length.

Deal books: a file of seeds (one integer per line; one seed per board, deal k of the board is
``deal_from_seed(seed, k)``) or explicit deals (a JSON list of deals in the replay notation;
each board takes the next ``deals_per_board`` of them). Without a book, board b's deals come
from ``board_seed(event seed, b, secret)``: keyed by the event's secret (drawn when the event
is created and kept in its database) unless the file sets ``seed``, whose deals anyone who
knows the seed can compute (for tests and reproductions only).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import ErrorDetails

from arena.rules import ArenaError, Options, card_name, parse_card
from arena.rules.state import Deal, check_deal, deal_from_seed
from arena.server.folder import FolderError, read_manifest_text
from arena.server.manifest import BUILTIN_DIR, Limits, check_env
from arena.tournament.boards import (
    board_seed,
    new_secret,
    rotation_hands,
    round_plays,
    schedule_seed,
    seat_seed,
)
from arena.tournament.schedule import (
    ALL_ROTATIONS,
    DEFAULT_ROTATIONS,
    Schedule,
    ScheduleKind,
    build_schedule,
    fillers_needed,
)

__all__ = [
    "BUILTINS_TEXT",
    "BUILTIN_BOTS",
    "BotEntry",
    "DealBook",
    "EventFileError",
    "EventPlan",
    "EventSpec",
    "PlannedPlay",
    "PolicySpec",
    "RulesSpec",
    "TimeControlSpec",
    "deal_from_json",
    "deal_to_json",
    "is_builtin",
    "load_deal_book",
    "load_event",
    "parse_event",
    "plan_event",
]

BUILTIN_BOTS: tuple[str, ...] = ("random", "greedy", "heuristic", "quick", "search", "strong")
"""The reference bots; any other ``example_bots`` folder with a ``bot.toml`` is built in too."""

BUILTINS_TEXT = f"{', '.join(BUILTIN_BOTS)} or any folder of example_bots"
"""How error messages name the built-in bots."""


def is_builtin(name: str) -> bool:
    """Whether ``name`` is a built-in bot: a reference bot or a folder of ``example_bots``."""
    if name in BUILTIN_BOTS:
        return True
    return bool(_SIMPLE_NAME.fullmatch(name)) and (BUILTIN_DIR / name / "bot.toml").is_file()


_SIMPLE_NAME = re.compile(r"[a-z][a-z0-9_-]*")
"""Bots the arena ships; any other ``bot`` value is a manifest path."""

_EVENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_BOT_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9 ._+-]{0,38}[A-Za-z0-9._+-])?")
_GENERIC_MANIFEST_STEMS = frozenset({"bot", "manifest"})
_MAX_SEED = 2**64


class EventFileError(ArenaError, ValueError):
    """An event file or deal book that cannot be used.

    ``problems`` lists ``(field, message)`` pairs; the message names the file and each field.
    """

    def __init__(self, source: str, problems: Sequence[tuple[str, str]]) -> None:
        self.source = source
        self.problems = tuple(problems)
        if len(self.problems) == 1:
            field, message = self.problems[0]
            text = f"{source}: {field}: {message}" if field else f"{source}: {message}"
        else:
            lines = [f"{source}: {len(self.problems)} problems:"]
            lines += [
                f"  {field}: {message}" if field else f"  {message}"
                for field, message in self.problems
            ]
            text = "\n".join(lines)
        super().__init__(text)


# ---------------------------------------------------------------------------------------------
# The model


class BotEntry(BaseModel):
    """One bot of the event: a built-in name or a manifest path, an optional display name,
    and what the event adds to how it starts: ``env`` over the manifest's environment and
    ``args`` after its command (``Manifest.configured``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bot: StrictStr
    name: StrictStr | None = None
    env: dict[StrictStr, StrictStr] = Field(default_factory=dict)
    args: tuple[StrictStr, ...] = ()
    #: Who entered the bot (a league's owner): the processes of one owner's bots take turns
    #: as one bot's do, so that they never run at the same moment (``arena.server.turns``).
    owner: StrictStr | None = None

    @field_validator("env")
    @classmethod
    def _valid_env(cls, value: dict[str, str]) -> dict[str, str]:
        return check_env(value)

    @field_validator("args")
    @classmethod
    def _valid_args(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not arg for arg in value):
            raise ValueError("every argument must be a non-empty string")
        return value

    def __hash__(self) -> int:  # frozen, and ``env`` a dict: hashed by its items
        return hash((self.bot, self.name, tuple(sorted(self.env.items())), self.args, self.owner))

    @model_serializer(mode="wrap")
    def _without_empty_extras(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # An entry without env or args is stored as it was before they existed, so events
        # stored then still match their event files.
        data: dict[str, Any] = handler(self)
        for key in ("env", "args", "owner"):
            if not data.get(key):
                data.pop(key, None)
        return data

    @field_validator("bot")
    @classmethod
    def _known_bot(cls, value: str, info: ValidationInfo) -> str:
        if is_builtin(value):
            return value
        if not value.strip():
            raise ValueError(f"empty; use a built-in bot ({BUILTINS_TEXT}) or a manifest")
        base = _base_dir(info)
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = base / path
        if not os.path.lexists(path):
            raise ValueError(
                f"{value!r} is neither a built-in bot ({BUILTINS_TEXT}) "
                f"nor a manifest file (looked for {path})"
            )
        try:  # a regular file, never a link to another bot's manifest, a FIFO or a device
            read_manifest_text(path)
        except FolderError as e:
            raise ValueError(str(e)) from None
        return str(path.parent.resolve() / path.name)

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str | None) -> str | None:
        if value is not None and not _BOT_NAME.fullmatch(value):
            raise ValueError(
                f"{value!r} is not a usable bot name: 1-40 letters, digits, spaces or ._+- "
                "starting with a letter or digit"
            )
        return value

    @model_validator(mode="after")
    def _manifest_name(self) -> BotEntry:
        # A manifest's bot is named by its ``name`` key, else by its file (or folder, for
        # bot.toml / manifest.toml). The name is stored, so the event keeps it if the
        # manifest changes later.
        if self.name is not None or self.builtin:
            return self
        path = Path(self.bot)
        try:
            declared = tomllib.loads(read_manifest_text(path)).get("name")
        except (FolderError, tomllib.TOMLDecodeError) as e:
            raise ValueError(f"cannot read the manifest {path}: {e}") from None
        if isinstance(declared, str):
            name = declared
        elif path.stem.lower() in _GENERIC_MANIFEST_STEMS:
            name = path.parent.name
        else:
            name = path.stem
        if not _BOT_NAME.fullmatch(name):
            raise ValueError(
                f"the manifest's bot name {name!r} is not usable here (1-40 letters, digits, "
                'spaces or ._+-); give the bot a name = "..."'
            )
        return self.model_copy(update={"name": name})

    @property
    def builtin(self) -> bool:
        """Whether this is one of the arena's own bots rather than a manifest."""
        return is_builtin(self.bot)

    @property
    def display_name(self) -> str:
        """The name in tables and leaderboards: ``name``, else the built-in bot's name."""
        return self.name if self.name is not None else self.bot


class TimeControlSpec(BaseModel):
    """Thinking time per decision, enforced by the referee."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    decision_ms: StrictInt = Field(default=1000, ge=1, le=3_600_000)


class PolicySpec(BaseModel):
    """What the referee does about a failing seat (``arena.referee.policy.FailurePolicy``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_strikes: StrictInt = Field(default=3, ge=0, le=1000)
    max_rejections: StrictInt = Field(default=3, ge=0, le=1000)
    reconnect_grace_ms: StrictInt = Field(default=5000, ge=0, le=600_000)
    give_up: Literal["default_actions", "fallback_bot", "forfeit"] = "default_actions"


class RulesSpec(BaseModel):
    """Rules options; ``target_score`` and ``hands`` apply to ``format = "game"`` only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    grand_tichu: StrictBool = True
    tournament: StrictBool = False
    target_score: StrictInt = Field(default=1000, ge=1, le=1_000_000)
    hands: StrictInt = Field(default=0, ge=0, le=1000)


ScheduleName = Literal["round_robin", "gauntlet", "fixed", "turnier"]
FormatName = Literal["board", "game"]
#: When bot processes are restarted: ``session`` keeps one set of processes for the boards a
#: table plays in one rotation of a round; ``play`` starts fresh processes for every play.
RestartName = Literal["session", "play"]


class EventSpec(BaseModel):
    """A validated event file. Paths (manifests, deal book) are stored resolved and absolute."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: StrictStr
    bots: tuple[BotEntry, ...]
    schedule: ScheduleName = "round_robin"
    cycles: StrictInt = Field(default=1, ge=1, le=1000)
    candidate: StrictStr | None = None
    fillers: tuple[BotEntry, ...] = ()
    format: FormatName = "board"
    hands_per_board: StrictInt = Field(default=1, ge=1, le=100)
    rotations: Literal[2, 4] = 2
    boards_per_round: StrictInt = Field(default=1, ge=1, le=10_000)
    seed: StrictInt | None = Field(default=None, ge=0, lt=_MAX_SEED)
    deal_book: StrictStr | None = None
    jobs: StrictInt = Field(default=1, ge=1, le=1024)
    restart: RestartName = "session"
    #: At most one bot process of the run runs at a time (docs/security.md §9), not only
    #: one of each bot: for leagues with stakes, at its cost in throughput.
    strict: StrictBool = False
    time_control: TimeControlSpec = TimeControlSpec()
    policy: PolicySpec = PolicySpec()
    rules: RulesSpec = RulesSpec()
    limits: Limits = Limits()

    @field_validator("name")
    @classmethod
    def _valid_event_name(cls, value: str) -> str:
        if not _EVENT_NAME.fullmatch(value):
            raise ValueError(
                f"{value!r} is not a usable event name: 1-64 letters, digits or ._- starting "
                "with a letter or digit (it names the leaderboard files)"
            )
        return value

    @field_validator("bots", "fillers", mode="before")
    @classmethod
    def _entries(cls, value: Any) -> Any:
        # A bare string is shorthand for {bot = "..."}.
        if isinstance(value, list | tuple):
            return [{"bot": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("deal_book")
    @classmethod
    def _book_exists(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = _base_dir(info) / path
        if not path.is_file():
            raise ValueError(f"no deal book at {path}")
        return str(path.resolve())

    @model_validator(mode="after")
    def _consistent(self) -> EventSpec:
        problems = _cross_field_problems(self)
        if problems:
            # One "field: message" per line; ``parse_event`` splits them back into fields.
            raise ValueError("\n".join(f"{field}: {message}" for field, message in problems))
        return self

    @property
    def names(self) -> tuple[str, ...]:
        """The bots' display names, in file order."""
        return tuple(bot.display_name for bot in self.bots)

    @property
    def filler_names(self) -> tuple[str, ...]:
        """The fillers' display names (rated, but hidden from standings)."""
        return tuple(bot.display_name for bot in self.fillers)

    @property
    def kind(self) -> ScheduleKind:
        """The schedule kind as the schedule module's enum."""
        return ScheduleKind(self.schedule)

    @property
    def rotation_list(self) -> tuple[int, ...]:
        """The rotations each board is played in: (0, 1) or (0, 1, 2, 3)."""
        return DEFAULT_ROTATIONS if self.rotations == 2 else ALL_ROTATIONS

    @property
    def deals_per_board(self) -> int | None:
        """Deals a play of one board uses; None for games to a target score (unbounded)."""
        if self.format == "board":
            return self.hands_per_board
        return self.rules.hands or None

    def match_options(self) -> Options:
        """The rules options of one play (a board of ``hands_per_board`` hands, or a game)."""
        if self.format == "board":
            return Options(
                hands=self.hands_per_board,
                grand_tichu=self.rules.grand_tichu,
                tournament=self.rules.tournament,
            )
        return Options(
            target_score=self.rules.target_score,
            hands=self.rules.hands,
            grand_tichu=self.rules.grand_tichu,
            tournament=self.rules.tournament,
        )

    def identity(self) -> dict[str, Any]:
        """The fields that define the event: everything except ``jobs`` (speed, not results).

        A default ``policy`` is left out, so events stored before the field existed still
        match their event files; so are default ``limits`` (caps on every bot's sandbox limits,
        ``arena.server.manifest.Limits``).
        """
        exclude = {"jobs"} | ({"policy"} if self.policy == PolicySpec() else set())
        if self.limits == Limits():
            exclude.add("limits")
        return self.model_dump(mode="json", exclude=exclude)

    def bot_configs(self) -> dict[str, dict[str, Any]]:
        """Maps display name to the bot's whole entry (source, env, args): what must stay
        unchanged for an event to go on."""
        return {
            bot.display_name: bot.model_dump(mode="json") for bot in (*self.bots, *self.fillers)
        }

    def bot_sources(self) -> dict[str, str]:
        """Maps display name to source: ``builtin:<name>`` or the manifest path."""
        return {
            bot.display_name: f"builtin:{bot.bot}" if bot.builtin else bot.bot
            for bot in (*self.bots, *self.fillers)
        }


def _base_dir(info: ValidationInfo) -> Path:
    context = info.context
    if isinstance(context, Mapping) and isinstance(context.get("base_dir"), Path):
        base: Path = context["base_dir"]
        return base
    return Path.cwd()


def _cross_field_problems(spec: EventSpec) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    for group, entries in (("bots", spec.bots), ("fillers", spec.fillers)):
        for i, entry in enumerate(entries):
            where = f"{group}[{i}]"
            name = entry.display_name
            if name in seen:
                problems.append(
                    (where, f'the name {name!r} is taken by {seen[name]}; give one a name = "..."')
                )
            else:
                seen[name] = where
    n = len(spec.bots)
    kind = spec.schedule
    if kind in ("fixed", "turnier"):
        if n != 4:
            problems.append(("bots", f"a {kind} event needs exactly 4 bots, got {n}"))
    elif n < 4:
        problems.append(("bots", f"a {kind} event needs at least 4 bots, got {n}"))
    if kind == "gauntlet":
        if spec.candidate is None:
            problems.append(("candidate", "a gauntlet needs a candidate: one of the bots' names"))
        elif spec.candidate not in spec.names:
            problems.append(
                ("candidate", f"{spec.candidate!r} is not one of the bots {list(spec.names)!r}")
            )
    elif spec.candidate is not None:
        problems.append(("candidate", f"only a gauntlet has a candidate, not schedule = {kind!r}"))
    if spec.fillers:
        needed = fillers_needed(n)
        if kind != "round_robin":
            problems.append(("fillers", f"only a round robin uses fillers, not {kind!r}"))
        elif needed == 0:
            problems.append(
                ("fillers", f"{n} bots need no fillers (fillers pad N >= 10 with N = 2, 3 mod 4)")
            )
        elif len(spec.fillers) != needed:
            problems.append(
                ("fillers", f"{n} bots need exactly {needed} filler(s), got {len(spec.fillers)}")
            )
    # Checked by value, not by presence, so a stored spec (every field written out) reloads.
    if spec.format == "game" and spec.hands_per_board != 1:
        problems.append(
            (
                "hands_per_board",
                'applies to format = "board"; a game lasts rules.target_score or rules.hands',
            )
        )
    if spec.format == "board":
        defaults = RulesSpec()
        for field in ("target_score", "hands"):
            if getattr(spec.rules, field) != getattr(defaults, field):
                problems.append(
                    (
                        f"rules.{field}",
                        'applies to format = "game" only; a board plays hands_per_board hands',
                    )
                )
    return problems


# ---------------------------------------------------------------------------------------------
# Loading


def load_event(path: Path | str) -> EventSpec:
    """Reads and validates an event file, including its manifests and deal book.

    Raises:
        EventFileError: Naming the file, each wrong field and what is wrong with it.
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as e:
        raise EventFileError(
            str(source), [("", f"cannot read the event file: {e.strerror}")]
        ) from e
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise EventFileError(str(source), [("", f"not valid TOML: {e}")]) from e
    spec = parse_event(data, source=str(source), base_dir=source.resolve().parent)
    if spec.deal_book is not None:
        _check_book(spec, load_deal_book(spec.deal_book), str(source))
    return spec


def parse_event(
    data: Mapping[str, Any], *, source: str = "event", base_dir: Path | None = None
) -> EventSpec:
    """Validates event data (a parsed TOML table); relative paths resolve against ``base_dir``.

    Raises:
        EventFileError: One entry per wrong field, named by its path (``bots[2].name``).
    """
    context = {"base_dir": base_dir if base_dir is not None else Path.cwd()}
    try:
        return EventSpec.model_validate(dict(data), context=context)
    except ValidationError as e:
        problems = [problem for error in e.errors() for problem in _describe(error)]
        raise EventFileError(source, problems) from None


def _describe(error: ErrorDetails) -> list[tuple[str, str]]:
    """Turns one pydantic error into ``(field path, plain message)`` pairs."""
    loc = error["loc"]
    field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
    field = field.removeprefix(".")
    kind = error["type"]
    message = error["msg"]
    if kind == "value_error":
        message = message.removeprefix("Value error, ")
        if not loc:
            # Cross-field checks report "field: message" lines.
            pairs = [line.split(": ", 1) for line in message.splitlines()]
            return [(pair[0], pair[1]) if len(pair) == 2 else ("", pair[0]) for pair in pairs]
    elif kind == "extra_forbidden":
        message = "unknown field" + _known_fields(loc[:-1])
    elif kind == "missing":
        message = "required, but missing"
    elif kind == "model_type" and len(loc) == 2 and loc[0] in ("bots", "fillers"):
        message = (
            "expected a bot (built-in name or manifest path) or a table"
            " {bot = ..., name = ..., env = {...}, args = [...]}"
        )
    elif kind == "model_type":
        message = "expected a table"
    elif kind == "tuple_type":
        message = "expected a list"
    elif kind == "dict_type":
        message = "expected a table"
    shown = kind not in ("value_error", "extra_forbidden", "missing")
    if shown and "input" in error and not isinstance(error["input"], dict | list):
        message = f"{message}, got {error['input']!r}"
    return [(field, message)]


def _known_fields(parent: tuple[int | str, ...]) -> str:
    nested: dict[str, type[BaseModel]] = {
        "bots": BotEntry,
        "fillers": BotEntry,
        "policy": PolicySpec,
        "rules": RulesSpec,
        "time_control": TimeControlSpec,
    }
    model: type[BaseModel] = EventSpec
    for part in parent:
        if isinstance(part, int):
            continue
        if str(part) not in nested:
            return ""
        model = nested[str(part)]
    return f" (known fields: {', '.join(model.model_fields)})"


# ---------------------------------------------------------------------------------------------
# Deal books


@dataclass(frozen=True)
class DealBook:
    """Seeds (one per board) or explicit deals (``deals_per_board`` per board), in file order."""

    source: str
    seeds: tuple[int, ...] = ()
    deals: tuple[Deal, ...] = ()

    @property
    def explicit(self) -> bool:
        """Whether the book lists deals rather than seeds."""
        return bool(self.deals)

    def __len__(self) -> int:
        return len(self.deals) if self.explicit else len(self.seeds)


def load_deal_book(path: Path | str) -> DealBook:
    """Reads a deal book: seeds, one integer per line (``#`` comments), or a JSON list of deals.

    A deal is four hands, seat 0 first, each 14 cards in dealt order, written as in replays
    (``"2s Qs Qt 9s Ap ..."`` or a list of card names). A JSON object with a ``deals`` list (a
    replay file, for example) is accepted too.

    Raises:
        EventFileError: Naming the book, the line or deal, and what is wrong.
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise EventFileError(source, [("", f"cannot read the deal book: {e.strerror}")]) from e
    if text.lstrip()[:1] in ("[", "{"):
        return DealBook(source, deals=_json_deals(text, source))
    return DealBook(source, seeds=_seed_lines(text, source))


def _seed_lines(text: str, source: str) -> tuple[int, ...]:
    seeds: list[int] = []
    problems: list[tuple[str, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        try:
            seed = int(entry)
        except ValueError:
            problems.append((f"line {number}", f"not an integer seed: {entry!r}"))
            continue
        if not 0 <= seed < _MAX_SEED:
            problems.append((f"line {number}", f"a seed must be in 0..2**64-1, got {seed}"))
        seeds.append(seed)
    if problems:
        raise EventFileError(source, problems[:20])
    if not seeds:
        raise EventFileError(source, [("", "the deal book holds no seeds")])
    return tuple(seeds)


def _json_deals(text: str, source: str) -> tuple[Deal, ...]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise EventFileError(source, [("", f"not valid JSON: {e}")]) from e
    if isinstance(data, dict):
        data = data.get("deals")
    if not isinstance(data, list) or not data:
        raise EventFileError(source, [("", "expected a non-empty JSON list of deals")])
    deals: list[Deal] = []
    problems: list[tuple[str, str]] = []
    for i, raw in enumerate(data):
        try:
            deals.append(deal_from_json(raw))
        except ValueError as e:
            problems.append((f"deal {i}", str(e)))
    if problems:
        raise EventFileError(source, problems[:20])
    return tuple(deals)


def deal_from_json(raw: Any) -> Deal:
    """Parses one deal in the replay notation: four hands, each a card string or list of names.

    Raises:
        ValueError: Naming the seat and the card or count that is wrong.
    """
    if not isinstance(raw, list) or len(raw) != 4:
        raise ValueError(f"a deal is a list of 4 hands (seat 0 first), got {raw!r:.80}")
    hands: list[list[int]] = []
    for seat, hand in enumerate(raw):
        if isinstance(hand, str):
            tokens = hand.split()
        elif isinstance(hand, list) and all(isinstance(t, str) for t in hand):
            tokens = list(hand)
        else:
            raise ValueError(f"seat {seat}: a hand is a card string or a list of card names")
        if len(tokens) != 14:
            raise ValueError(f"seat {seat} holds {len(tokens)} cards, not 14")
        try:
            hands.append([parse_card(t) for t in tokens])
        except ValueError as e:
            raise ValueError(f"seat {seat}: {e}") from None
    return check_deal(hands)


def deal_to_json(deal: Deal) -> list[str]:
    """Writes one deal in the replay notation: four card strings, seat 0 first."""
    return [" ".join(card_name(c) for c in hand) for hand in deal]


def _check_book(spec: EventSpec, book: DealBook, source: str) -> None:
    if book.explicit and spec.deals_per_board is None:
        raise EventFileError(
            source,
            [
                (
                    "deal_book",
                    "explicit deals need a fixed number of deals per board: use a seed book, "
                    'format = "board", or format = "game" with rules.hands',
                )
            ],
        )


# ---------------------------------------------------------------------------------------------
# Planning


@dataclass(frozen=True)
class PlannedPlay:
    """One play of one board at one table: who sits where, the seeds and the board's deals.

    Attributes:
        ordinal: Position in the event's running order (0-based).
        round: Schedule round; all tables of a round share its boards.
        table: Table index within the round.
        board: Board number, unique in the event.
        rotation: Seat p holds dealt hand ``(p + rotation) mod 4``.
        seats: Bot names at seats N, E, S, W; team A = seats 0 and 2.
        seed: The referee's seed for this play.
        seat_seeds: Each seat's bot seed for this play (§2.2).
        deal_seed: Seed of the board's deals (``deal_from_seed(deal_seed, k)``), or None when
            ``book_deals`` lists them.
        book_deals: The board's explicit deals from a deal book, unrotated.
    """

    ordinal: int
    round: int
    table: int
    board: int
    rotation: int
    seats: tuple[str, str, str, str]
    seed: int
    seat_seeds: tuple[int, int, int, int]
    deal_seed: int | None
    book_deals: tuple[Deal, ...] = ()

    def board_deal(self, hand: int) -> Deal:
        """Returns deal ``hand`` of the board as dealt to seats 0..3 in rotation 0."""
        if self.deal_seed is not None:
            return deal_from_seed(self.deal_seed, hand)
        if not 0 <= hand < len(self.book_deals):
            raise ValueError(
                f"board {self.board} has {len(self.book_deals)} deals in the deal book, "
                f"not a deal {hand}"
            )
        return self.book_deals[hand]

    def deal(self, hand: int) -> Deal:
        """Returns deal ``hand`` as this play's seats receive it (rotated)."""
        base = self.board_deal(hand)
        a, b, c, d = (base[h] for h in rotation_hands(self.rotation))
        return (a, b, c, d)

    def deals(self, count: int) -> tuple[Deal, ...]:
        """Returns the first ``count`` rotated deals, to hand to ``Match(options, seed, deals)``."""
        return tuple(self.deal(k) for k in range(count))

    def to_json(self) -> dict[str, Any]:
        """Returns the play as JSON-ready data (seeds as ints, deals in the replay notation)."""
        return {
            "ordinal": self.ordinal,
            "round": self.round,
            "table": self.table,
            "board": self.board,
            "rotation": self.rotation,
            "seats": list(self.seats),
            "seed": self.seed,
            "seat_seeds": list(self.seat_seeds),
            "deal_seed": self.deal_seed,
            "book_deals": [deal_to_json(deal) for deal in self.book_deals],
        }


@dataclass(frozen=True)
class EventPlan:
    """An event's schedule and every planned play in running order."""

    schedule: Schedule
    plays: tuple[PlannedPlay, ...]
    boards: int
    secret: bytes | None = None

    def digest(self) -> str:
        """Returns a SHA-256 over the plays: equal digests mean the same plan."""
        text = json.dumps([play.to_json() for play in self.plays], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def schedule_json(self) -> dict[str, Any]:
        """Returns the schedule as stored with the event (rounds, relabelling maps, method)."""
        s = self.schedule
        return {
            "kind": s.kind.value,
            "method": s.method.value,
            "participants": list(s.participants),
            "fillers": list(s.fillers),
            "candidate": s.candidate,
            "cycles": s.cycles,
            "seed": s.seed,
            "partner_lambda": s.partner_lambda,
            "directed": s.directed,
            "labelings": [list(m) for m in s.labelings],
            "rounds": [
                {
                    "cycle": r.cycle,
                    "tables": [list(t.seats) for t in r.tables],
                    "byes": list(r.byes),
                }
                for r in s.rounds
            ],
        }


def plan_event(
    spec: EventSpec,
    book: DealBook | None = None,
    *,
    first_round: int = 0,
    first_ordinal: int = 0,
    secret: bytes | None = None,
) -> EventPlan:
    """Builds the schedule and expands it into plays: boards × tables × rotations, in order.

    ``book`` defaults to the spec's deal book (read again from disk when not given).
    ``first_round`` and ``first_ordinal`` number the plays after those of an event being
    extended (its rounds, and so its boards and seeds, continue where it stopped).
    ``secret`` keys every seed of an event without a ``seed``: the event's stored secret
    (``EventStore.plan`` passes it); without one a fresh secret is drawn.

    Raises:
        EventFileError: The schedule cannot be built, or the deal book is too short.
        ValueError: The spec has a seed and a secret was given too.
    """
    source = f"event {spec.name!r}"
    if spec.seed is not None and secret is not None:
        raise ValueError(f"{source}: an event is keyed by its secret or by its seed, not both")
    if spec.seed is None and secret is None:
        secret = new_secret()
    seed = spec.seed or 0
    if book is None and spec.deal_book is not None:
        book = load_deal_book(spec.deal_book)
    if book is not None:
        _check_book(spec, book, source)
    try:
        schedule = build_schedule(
            spec.names,
            spec.kind,
            cycles=spec.cycles,
            seed=schedule_seed(seed, secret),
            candidate=spec.candidate,
            fillers=spec.filler_names,
        )
    except ValueError as e:
        raise EventFileError(source, [("schedule", str(e))]) from None
    boards = len(schedule.rounds) * spec.boards_per_round
    per_board = spec.deals_per_board or 1
    if book is not None:
        last = boards + first_round * spec.boards_per_round
        needed = last * per_board if book.explicit else last
        if len(book) < needed:
            what = "deals" if book.explicit else "seeds"
            raise EventFileError(
                source,
                [
                    (
                        "deal_book",
                        f"{book.source} holds {len(book)} {what}; the event needs {needed} "
                        f"({last} boards" + (f" × {per_board} deals)" if book.explicit else ")"),
                    )
                ],
            )
    plays: list[PlannedPlay] = []
    for number, round_ in enumerate(schedule.rounds, first_round):
        tables = {table: index for index, table in enumerate(round_.tables)}
        for play in round_plays(
            round_,
            number,
            boards_per_round=spec.boards_per_round,
            event_seed=seed,
            rotations=spec.rotation_list,
            secret=secret,
        ):
            deal_seed: int | None = board_seed(seed, play.board, secret)
            book_deals: tuple[Deal, ...] = ()
            if book is not None and book.explicit:
                deal_seed = None
                book_deals = book.deals[play.board * per_board : (play.board + 1) * per_board]
            elif book is not None:
                deal_seed = book.seeds[play.board]
            s0, s1, s2, s3 = (
                seat_seed(seed, play.board, play.rotation, seat, secret) for seat in range(4)
            )
            plays.append(
                PlannedPlay(
                    ordinal=first_ordinal + len(plays),
                    round=number,
                    table=tables[play.table],
                    board=play.board,
                    rotation=play.rotation,
                    seats=play.table.seats,
                    seed=play.seed,
                    seat_seeds=(s0, s1, s2, s3),
                    deal_seed=deal_seed,
                    book_deals=book_deals,
                )
            )
    return EventPlan(schedule=schedule, plays=tuple(plays), boards=boards, secret=secret)
