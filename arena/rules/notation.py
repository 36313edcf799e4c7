"""Actions as small JSON-ready dicts, for replays and logs, with the inverse parser.

One key names the decision answered: ``{"grand": false}``, ``{"tichu": true}``,
``{"exchange": ["2j", "Ph", "Ts"]}`` (to the next seat, the partner, the previous seat),
``{"play": "Ts Js Qs Ks Ph=9"}`` or ``{"play": "pass"}`` (a turn or a bomb window),
``{"wish": "8"}`` or ``{"wish": null}``, ``{"gift": 1}``.
"""

from __future__ import annotations

from typing import Any

from arena.rules.actions import CALL_TICHU, Action, CallTichu, Exchange, Gift, GrandTichu, Wish
from arena.rules.cards import card_name, parse_card
from arena.rules.combos import Play, parse_play, parse_rank, rank_name
from arena.rules.errors import InvalidActionError


def action_to_json(action: Action) -> dict[str, Any]:
    """Encodes one action."""
    if isinstance(action, Play):
        return {"play": str(action)}
    if isinstance(action, GrandTichu):
        return {"grand": action.call}
    if isinstance(action, CallTichu):
        return {"tichu": True}
    if isinstance(action, Exchange):
        return {"exchange": [card_name(c) for c in action]}
    if isinstance(action, Wish):
        return {"wish": rank_name(action.rank) if action.rank else None}
    return {"gift": action.to}


def action_from_json(obj: dict[str, Any], top: Play | None = None) -> Action:
    """Decodes one action; ``top`` is the play to beat (it fixes a lone Phoenix's rank)."""
    keys = [k for k in ("play", "grand", "tichu", "exchange", "wish", "gift") if k in obj]
    if len(keys) != 1:
        raise InvalidActionError(
            f"an action has exactly one of play/grand/tichu/exchange/wish/gift, not {sorted(obj)!r}"
        )
    key = keys[0]
    value = obj[key]
    if key == "play":
        if not isinstance(value, str):
            raise InvalidActionError(f"play must be a string, not {value!r}")
        return parse_play(value, top)
    if key == "grand":
        if not isinstance(value, bool):
            raise InvalidActionError(f"grand must be true or false, not {value!r}")
        return GrandTichu(value)
    if key == "tichu":
        if value is not True:
            raise InvalidActionError(f"tichu must be true, not {value!r}")
        return CALL_TICHU
    if key == "exchange":
        if not (
            isinstance(value, list) and len(value) == 3 and all(isinstance(v, str) for v in value)
        ):
            raise InvalidActionError(f"exchange must list three cards, not {value!r}")
        a, b, c = (parse_card(v) for v in value)
        return Exchange(a, b, c)
    if key == "wish":
        if value is None:
            return Wish(0)
        if not isinstance(value, str | int):
            raise InvalidActionError(f"wish must be a rank or null, not {value!r}")
        return Wish(parse_rank(str(value)))
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 4:
        raise InvalidActionError(f"gift must be a seat 0..3, not {value!r}")
    return Gift(value)
