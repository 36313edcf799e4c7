"""The versioned JSON replay format: write, read, verify and render a match.

A replay holds the rules options, the seed, every hand's explicit deal, the seat names and
every action with the seat that took it, plus the result as recorded. ``verify`` replays it
through the rules core; the format is documented in ``docs/replay-format.md``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.rules import (
    Action,
    ArenaError,
    Event,
    EventKind,
    Exchange,
    IllegalActionError,
    InvalidActionError,
    Match,
    Options,
    card_name,
    parse_card,
)
from arena.rules.cards import DOG_BIT, format_cards, mask_of
from arena.rules.combos import rank_name
from arena.rules.notation import action_from_json, action_to_json
from arena.rules.state import Deal, HandResult, check_deal, deal_from_seed

FORMAT = "tichu-arena-replay"
VERSION = 1


class ReplayError(ArenaError):
    """A replay that cannot be read, or whose actions break the rules."""


class ReplayFormatError(ReplayError):
    """A file that is no well-formed replay: unreadable, not JSON, a field missing or of the
    wrong type (``arena replay`` exits 2, against 1 for a replay the rules refuse)."""


@dataclass
class Replay:
    """One match as recorded: enough to re-play it exactly."""

    options: Options
    seed: int
    deals: list[Deal]
    actions: list[tuple[int, Action]]
    seats: list[str] = field(default_factory=lambda: ["seat 0", "seat 1", "seat 2", "seat 3"])
    result: dict[str, Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    #: The actions as read from a file, decoded only when re-played (they need the state).
    recorded: list[Any] | None = None


def from_match(match: Match, seats: Sequence[str] | None = None, **meta: Any) -> Replay:
    """Captures a match (finished or not) as a replay."""
    hands = match.hand_no + 1
    deals = list(match.deals[:hands])
    deals += [_deal_of(match, k) for k in range(len(deals), hands)]
    return Replay(
        options=match.options,
        seed=match.seed,
        deals=deals,
        actions=list(match.actions),
        seats=list(seats) if seats else ["seat 0", "seat 1", "seat 2", "seat 3"],
        result=result_of(match),
        meta=dict(meta),
    )


def _deal_of(match: Match, hand: int) -> Deal:
    return match.dealt if hand == match.hand_no else deal_from_seed(match.seed, hand)


def result_of(match: Match) -> dict[str, Any]:
    """The recorded result: per-hand scores and the match totals."""
    return {
        "finished": match.over,
        "scores": list(match.scores),
        "hands": [_hand_json(r) for r in match.hand_results],
    }


def _hand_json(r: HandResult) -> dict[str, Any]:
    return {
        "score": list(r.score),
        "card_points": list(r.card_points),
        "bets": list(r.bets),
        "out": list(r.out),
        "double_victory": r.double_victory,
    }


def to_json(replay: Replay) -> dict[str, Any]:
    """Encodes a replay as a JSON-ready dict."""
    o = replay.options
    return {
        "format": FORMAT,
        "version": VERSION,
        "options": {
            "target_score": o.target_score,
            "hands": o.hands,
            "grand_tichu": o.grand_tichu,
            "tournament": o.tournament,
        },
        "seed": replay.seed,
        "seats": replay.seats,
        "deals": [[" ".join(card_name(c) for c in hand) for hand in deal] for deal in replay.deals],
        "actions": [{"seat": s, **action_to_json(a)} for s, a in replay.actions],
        "result": replay.result,
        "meta": replay.meta,
    }


def save(replay: Replay, path: Path) -> None:
    """Writes a replay file atomically (a temporary file renamed into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(to_json(replay), indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)


def load(path: Path, source: str | None = None) -> Replay:
    """Reads a replay file; raises ``ReplayFormatError`` naming what is wrong.

    ``source`` names the file in the messages (default: its path), say an upload's own name
    rather than the folder it was received in.
    """
    name = str(path) if source is None else source
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ReplayFormatError(f"{name}: cannot read replay: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise ReplayFormatError(f"{name}: not a text file: {e.reason} at byte {e.start}") from e
    except json.JSONDecodeError as e:
        raise ReplayFormatError(f"{name}: not valid JSON: {e}") from e
    except RecursionError as e:
        raise ReplayFormatError(f"{name}: not a replay: JSON nested too deeply") from e
    except ValueError as e:  # an integer of thousands of digits, past Python's conversion cap
        raise ReplayFormatError(f"{name}: not a replay: {e}") from e
    return from_json(data, name)


def from_json(data: Any, source: str = "replay") -> Replay:
    """Decodes a replay dict; the actions are decoded when verified (they need the state).

    Raises:
        ReplayFormatError: Naming the field and what is wrong with it.
    """
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ReplayFormatError(f"{source}: not a {FORMAT} file")
    if data.get("version") != VERSION:
        raise ReplayFormatError(
            f"{source}: replay version {data.get('version')!r}; this reads {VERSION}"
        )
    try:
        o = _field(data, "options", dict)
        options = Options(
            target_score=_field(o, "target_score", int, 1000, "options."),
            hands=_field(o, "hands", int, 0, "options."),
            grand_tichu=_field(o, "grand_tichu", bool, True, "options."),
            tournament=_field(o, "tournament", bool, False, "options."),
        )
        seed = _field(data, "seed", int, 0)
        if seed < 0:
            raise _Bad("seed", f"must be 0 or more, got {seed}")
        seats = _seats(data.get("seats"))
        deals = _deals(_field(data, "deals", list))
        raw = _field(data, "actions", list)
        for i, entry in enumerate(raw, 1):
            seat = entry.get("seat") if isinstance(entry, dict) else None
            if type(seat) is not int or not 0 <= seat < 4:
                raise _Bad(
                    f"actions[{i - 1}]",
                    f"an action is an object with a seat 0-3, got {entry!r:.60}",
                )
        result = data.get("result")
        if result is not None and not isinstance(result, dict):
            raise _Bad("result", f"expected an object or null, got {result!r:.60}")
        meta = data.get("meta")
        if meta is not None and not isinstance(meta, dict):
            raise _Bad("meta", f"expected an object or null, got {meta!r:.60}")
    except _Bad as e:
        raise ReplayFormatError(f"{source}: {e.where}: {e.message}") from None
    except ValueError as e:  # Options out of range
        raise ReplayFormatError(f"{source}: options: {e}") from None
    return Replay(options, seed, deals, [], seats, result, meta or {}, raw)


class _Bad(Exception):
    """One malformed field of a replay file (``where``: its path)."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


_TYPE_NAMES = {dict: "an object", list: "a list", int: "an integer", bool: "true or false"}


def _field(data: dict[str, Any], key: str, kind: type, default: Any = ..., prefix: str = "") -> Any:
    """``data[key]`` of type ``kind`` (a bool is no integer), or ``default`` when absent."""
    if key not in data:
        if default is ...:
            raise _Bad(prefix + key, "missing")
        return default
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _Bad(prefix + key, f"expected {_TYPE_NAMES[kind]}, got {value!r:.60}")
    return value


def _seats(value: Any) -> list[str]:
    """The four seat names (``seat 0`` ... when the file has none)."""
    if value is None:
        return [f"seat {i}" for i in range(4)]
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise _Bad("seats", f"expected a list of 4 bot names, got {value!r:.60}")
    if len(value) != 4:
        raise _Bad(
            "seats",
            f"a replay has 4 seats (team A = seats 0 and 2, team B = 1 and 3), got {len(value)}",
        )
    return list(value)


def _deals(value: list[Any]) -> list[Deal]:
    """Each hand's deal: four strings of 14 cards, seat 0 first."""
    if not value:
        raise _Bad("deals", "empty: a replay holds the deal of every hand")
    deals: list[Deal] = []
    for k, deal in enumerate(value):
        where = f"deals[{k}]"
        if not isinstance(deal, list) or len(deal) != 4:
            raise _Bad(where, f"a deal is a list of 4 hands (seat 0 first), got {deal!r:.60}")
        for seat, hand in enumerate(deal):
            if not isinstance(hand, str) or len(hand.split()) != 14:
                raise _Bad(f"{where}[{seat}]", f"expected a string of 14 cards, got {hand!r:.60}")
        try:
            hands = [[parse_card(t) for t in hand.split()] for hand in deal]
        except (ValueError, ArenaError) as e:
            raise _Bad(where, str(e)) from None
        cards = [c for hand in hands for c in hand]
        twice = sorted({c for c in cards if cards.count(c) > 1})
        if twice:
            raise _Bad(where, f"dealt twice: {' '.join(card_name(c) for c in twice)}")
        deals.append(check_deal(hands))
    return deals


@dataclass
class Verified:
    """What re-playing a replay gave: the match reached and any mismatch with the record."""

    match: Match
    mismatches: list[str]


def verify(replay: Replay) -> Verified:
    """Re-plays every action; raises ``ReplayError`` at the first illegal or malformed one."""
    match = Match(replay.options, replay.seed, replay.deals)
    raw: list[Any] = replay.recorded or [
        {"seat": s, **action_to_json(a)} for s, a in replay.actions
    ]
    for i, entry in enumerate(raw):  # numbered from 0, as meta.think and actions[i] are
        where = match.where()
        if not isinstance(entry, dict) or not isinstance(entry.get("seat"), int):
            raise ReplayError(f"actions[{i}]: malformed entry {entry!r} ({where})")
        seat = entry["seat"]
        if match.over:
            raise ReplayError(f"actions[{i}]: the match is already over")
        if seat != match.seat:
            raise ReplayError(
                f"actions[{i}]: seat {seat} acted but seat {match.seat} was to act ({where})"
            )
        body = {k: v for k, v in entry.items() if k != "seat"}
        try:
            action = action_from_json(body, match.top)
            match.apply(action)
        except InvalidActionError as e:
            raise ReplayError(f"actions[{i}]: {where}: malformed action {body!r}: {e}") from e
        except IllegalActionError as e:
            raise ReplayError(f"actions[{i}]: {where}: illegal {body!r}: {e.rule}") from e
    mismatches: list[str] = []
    if replay.result is not None:
        got = result_of(match)
        for key in ("scores", "hands", "finished"):
            if key in replay.result and replay.result[key] != got[key]:
                mismatches.append(
                    f"recorded {key} {replay.result[key]!r} but re-play gives {got[key]!r}"
                )
    return Verified(match, mismatches)


_WINDS = ("N", "E", "S", "W")  # seats 0-3


def render(replay: Replay) -> str:
    """Renders the match in readable form: the seats and teams, then hand by hand the deals
    (sorted, with the first eight the Grand Tichu call saw), calls, exchange, tricks and the
    hand's score with the running score."""
    m = verify(replay).match
    names = replay.seats
    exchanges: dict[int, list[str]] = {}
    walk = Match(replay.options, replay.seed, replay.deals)
    for seat, action in m.actions:
        if isinstance(action, Exchange):
            exchanges.setdefault(walk.hand_no, []).append(f"  {names[seat]:>12} passes {action}")
        walk.apply(action)
    lines = [
        "seats: " + ", ".join(f"{_WINDS[s]} {names[s]}" for s in range(4)),
        f"team A: {names[0]} + {names[2]} (seats 0 and 2); "
        f"team B: {names[1]} + {names[3]} (seats 1 and 3)",
    ]
    hands = [*m.log, tuple(m.events)] if not m.over else list(m.log)
    running = [0, 0]
    unit = "victory points" if replay.options.tournament else "score"
    for k, events in enumerate(hands):
        lines.append(f"== hand {k + 1} ==")
        for s, h in enumerate(_deal(replay, k)):
            lines.append(
                f"  {names[s]:>12} dealt {format_cards(mask_of(h))}"
                f"  (first 8: {format_cards(mask_of(h[:8]))})"
            )
        for e in events:
            if e.kind == EventKind.EXCHANGE:
                lines.extend(exchanges.get(k, []))
            else:
                lines.extend(_narrate(e, names))
        if k < len(m.hand_results):
            r = m.hand_results[k]
            gained = r.victory_points if replay.options.tournament else r.score
            running = [running[0] + gained[0], running[1] + gained[1]]
            out = ", ".join(names[s] for s in r.out)
            dv = " (double victory)" if r.double_victory >= 0 else ""
            lines.append(
                f"  hand {k + 1} over{dv}: out {out}; team A {r.score[0]:+d}, team B"
                f" {r.score[1]:+d} (cards {r.card_points[0]} : {r.card_points[1]}, calls"
                f" {r.bets[0]:+d} : {r.bets[1]:+d}); running {unit} {running[0]} : {running[1]}"
            )
    state = "final" if m.over else "unfinished at"
    lines.append(f"{state} score: team A {m.scores[0]}, team B {m.scores[1]}")
    return "\n".join(lines)


def _deal(replay: Replay, hand: int) -> Deal:
    """The deal of ``hand``: the file's, else the seed's (as the match deals it)."""
    if hand < len(replay.deals):
        return replay.deals[hand]
    return deal_from_seed(replay.seed, hand)


def _narrate(e: Event, names: Sequence[str]) -> list[str]:
    kind = e.kind
    who = names[e.seat] if 0 <= e.seat < 4 else ""
    if kind == EventKind.GRAND_TICHU:
        return [f"  {names[s]} calls GRAND TICHU" for s in range(4) if e.called[s]]
    if kind == EventKind.TICHU:
        return [f"  {who} calls TICHU"]
    if kind == EventKind.PLAY and e.play is not None:
        tag = " (bomb out of turn)" if e.value else ""
        return [f"  {who:>12}: {e.play.describe()}{tag}"]
    if kind == EventKind.PASS:
        return [f"  {who:>12}: pass"]
    if kind == EventKind.WISH:
        return [f"  {who:>12} wishes {rank_name(e.value) if e.value else 'nothing'}"]
    if kind == EventKind.WISH_FULFILLED:
        return [f"  wish for {rank_name(e.value)} fulfilled by {who}"]
    if kind == EventKind.TRICK_WON:
        if e.cards == DOG_BIT:
            return []  # the Dog's lead: told by its play
        return [f"  -> {who} takes the trick ({e.points} points)"]
    if kind == EventKind.DRAGON_GIFT:
        return [
            f"  {who} gives the Dragon trick to {names[e.value]}",
            f"  -> {names[e.value]} takes the trick ({e.points} points)",
        ]
    if kind == EventKind.OUT:
        return [f"  {who} is out ({_place(e.value)})"]
    return []


def _place(n: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(n, str(n))
