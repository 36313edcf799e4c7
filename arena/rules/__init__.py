"""The rules of Tichu as a pure, deterministic core (standard library only).

``Match(options, seed, deals)`` deals and runs a match; ``legal_actions()`` lists the answers
to the current decision; ``apply(action)`` plays one; ``observe(match, seat)`` is a seat's
redacted view. ``(options, seed or deals, actions)`` replays a match exactly.
"""

from arena.rules.actions import (
    CALL_TICHU,
    GRAND,
    NO_GRAND,
    NO_WISH,
    Action,
    CallTichu,
    Exchange,
    Gift,
    GrandTichu,
    Phase,
    Wish,
)
from arena.rules.cards import (
    DOG,
    DRAGON,
    MAHJONG,
    PHOENIX,
    Card,
    CardSet,
    Mask,
    card,
    card_name,
    cards_of,
    format_cards,
    mask_of,
    parse_card,
    parse_cards,
    points_of,
)
from arena.rules.combos import PASS, Combo, Play, beats, combinations, parse_play, readings
from arena.rules.errors import ArenaError, IllegalActionError, InvalidActionError
from arena.rules.events import Event, EventKind
from arena.rules.observe import Observation, observe
from arena.rules.state import (
    Deal,
    HandResult,
    Match,
    Options,
    deal_from_seed,
    team_of,
)

__all__ = [
    "CALL_TICHU",
    "DOG",
    "DRAGON",
    "GRAND",
    "MAHJONG",
    "NO_GRAND",
    "NO_WISH",
    "PASS",
    "PHOENIX",
    "Action",
    "ArenaError",
    "CallTichu",
    "Card",
    "CardSet",
    "Combo",
    "Deal",
    "Event",
    "EventKind",
    "Exchange",
    "Gift",
    "GrandTichu",
    "HandResult",
    "IllegalActionError",
    "InvalidActionError",
    "Mask",
    "Match",
    "Observation",
    "Options",
    "Phase",
    "Play",
    "Wish",
    "beats",
    "card",
    "card_name",
    "cards_of",
    "combinations",
    "deal_from_seed",
    "format_cards",
    "mask_of",
    "observe",
    "parse_card",
    "parse_cards",
    "parse_play",
    "points_of",
    "readings",
    "team_of",
]
