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
from arena.rules.cards import DOG_BIT
from arena.rules.combos import rank_name
from arena.rules.notation import action_from_json, action_to_json
from arena.rules.state import Deal, HandResult, check_deal, deal_from_seed

FORMAT = "tichu-arena-replay"
VERSION = 1


class ReplayError(ArenaError):
    """A replay that cannot be read, or whose actions break the rules."""


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


def load(path: Path) -> Replay:
    """Reads a replay file; raises ``ReplayError`` naming what is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ReplayError(f"{path}: cannot read replay: {e}") from e
    return from_json(data, str(path))


def from_json(data: Any, source: str = "replay") -> Replay:
    """Decodes a replay dict; the actions are decoded when verified (they need the state)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ReplayError(f"{source}: not a {FORMAT} file")
    if data.get("version") != VERSION:
        raise ReplayError(f"{source}: replay version {data.get('version')!r}; this reads {VERSION}")
    try:
        o = data["options"]
        options = Options(
            target_score=int(o.get("target_score", 1000)),
            hands=int(o.get("hands", 0)),
            grand_tichu=bool(o.get("grand_tichu", True)),
            tournament=bool(o.get("tournament", False)),
        )
        deals = [
            check_deal([[parse_card(t) for t in hand.split()] for hand in deal])
            for deal in data["deals"]
        ]
        raw = data["actions"]
        seats = [str(s) for s in data.get("seats", [])] or [f"seat {i}" for i in range(4)]
        seed = int(data.get("seed", 0))
    except (KeyError, TypeError, ValueError, ArenaError) as e:
        raise ReplayError(f"{source}: malformed replay: {e}") from e
    return Replay(options, seed, deals, [], seats, data.get("result"), data.get("meta") or {}, raw)


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
    for i, entry in enumerate(raw, 1):
        where = match.where()
        if not isinstance(entry, dict) or not isinstance(entry.get("seat"), int):
            raise ReplayError(f"action {i}: malformed entry {entry!r} ({where})")
        seat = entry["seat"]
        if match.over:
            raise ReplayError(f"action {i}: the match is already over")
        if seat != match.seat:
            raise ReplayError(
                f"action {i}: seat {seat} acted but seat {match.seat} was to act ({where})"
            )
        body = {k: v for k, v in entry.items() if k != "seat"}
        try:
            action = action_from_json(body, match.top)
            match.apply(action)
        except InvalidActionError as e:
            raise ReplayError(f"action {i}: {where}: malformed action {body!r}: {e}") from e
        except IllegalActionError as e:
            raise ReplayError(f"action {i}: {where}: illegal {body!r}: {e.rule}") from e
    mismatches: list[str] = []
    if replay.result is not None:
        got = result_of(match)
        for key in ("scores", "hands", "finished"):
            if key in replay.result and replay.result[key] != got[key]:
                mismatches.append(
                    f"recorded {key} {replay.result[key]!r} but re-play gives {got[key]!r}"
                )
    return Verified(match, mismatches)


def render(replay: Replay) -> str:
    """Renders the match in readable form: deals, calls, exchange, tricks, scores."""
    m = verify(replay).match
    names = replay.seats
    exchanges: dict[int, list[str]] = {}
    walk = Match(replay.options, replay.seed, replay.deals)
    for seat, action in m.actions:
        if isinstance(action, Exchange):
            exchanges.setdefault(walk.hand_no, []).append(f"  {names[seat]:>12} passes {action}")
        walk.apply(action)
    lines: list[str] = []
    hands = [*m.log, tuple(m.events)] if not m.over else list(m.log)
    for k, events in enumerate(hands):
        lines.append(f"== hand {k + 1} ==")
        for s, h in enumerate(replay.deals[k]):
            lines.append(f"  {names[s]:>12} dealt {' '.join(card_name(c) for c in h)}")
        for e in events:
            if e.kind == EventKind.EXCHANGE:
                lines.extend(exchanges.get(k, []))
            else:
                lines.extend(_narrate(e, names))
        if k < len(m.hand_results):
            r = m.hand_results[k]
            out = ", ".join(names[s] for s in r.out)
            dv = " (double victory)" if r.double_victory >= 0 else ""
            lines.append(
                f"  hand {k + 1} over{dv}: out {out}; team A {r.score[0]:+d}, team B"
                f" {r.score[1]:+d}; totals {sum(x.score[0] for x in m.hand_results[: k + 1])}"
                f" : {sum(x.score[1] for x in m.hand_results[: k + 1])}"
            )
    state = "final" if m.over else "unfinished at"
    lines.append(f"{state} score: team A {m.scores[0]}, team B {m.scores[1]}")
    return "\n".join(lines)


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
