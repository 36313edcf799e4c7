"""What a person's page is sent: the seat's view of the table and the decision asked.

The public part is the table's public events folded by ``PublicTable`` (what a spectator
gets, without the delay); the private part comes from ``observe(match, seat)`` (the rules
core's view of one seat: its own hand, its exchange), so no other seat's card is ever in it.
A bomb window offered to another seat is shown as the ordinary turn, as the replay viewer
does.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from arena.rules import (
    Gift,
    GrandTichu,
    Observation,
    Phase,
    Play,
    Wish,
    card_name,
    cards_of,
)
from arena.web.labels import play_label, rank_word
from arena.web.seat import Ask

__all__ = ["ask_json", "view_json"]


def view_json(obs: Observation, public: dict[str, Any]) -> dict[str, Any]:
    """A seat's view in the table component's shape: the public table (``PublicTable.view``,
    the same events a spectator gets, without the delay) and the seat's private part from its
    observation (its hand, its exchange, its own calls, whose move it is)."""
    me = obs.seat
    phase, to_act = obs.phase, obs.to_act
    if phase is Phase.BOMB_WINDOW and to_act != me:
        phase, to_act = Phase.PLAY, obs.turn  # whom a window is offered to is a secret
    seats = [dict(s) for s in public["seats"]]
    seats[me]["cards"] = [card_name(c) for c in cards_of(obs.hand)]
    seats[me]["count"] = obs.card_counts[me]
    seats[me]["grand"] = bool(obs.grand[me])
    return {
        **public,
        "perspective": str(me),
        "hand": obs.hand_no + 1,
        "phase": phase.name.lower(),
        "to_act": to_act,
        "seats": seats,
        "exchange": {str(me): [card_name(c) for c in obs.given]} if obs.given else None,
        "received": {str(me): [card_name(c) for c in obs.received]} if obs.received else None,
    }


def ask_json(ask: Ask, names: Sequence[str]) -> dict[str, Any]:
    """A pending decision for the page: its phase, legal answers, time left."""
    obs = ask.obs
    legal: list[dict[str, Any]] = []
    for i, a in enumerate(obs.legal):
        item: dict[str, Any] = {"index": i}
        if isinstance(a, Play):
            item["cards"] = [card_name(c) for c in cards_of(a.cards)]
            item["play"] = str(a)
            item["label"] = play_label(a)
            item["bomb"] = a.is_bomb
        elif isinstance(a, GrandTichu):
            item["label"] = "call Grand Tichu" if a.call else "no Grand Tichu"
        elif isinstance(a, Wish):
            item["label"] = f"wish for {rank_word(a.rank)}" if a.rank else "no wish"
            item["rank"] = rank_word(a.rank) if a.rank else ""
        elif isinstance(a, Gift):
            item["label"] = f"give the trick to {names[a.to]}"
        else:
            item["label"] = str(a)
        legal.append(item)
    return {
        "number": ask.number,
        "phase": obs.phase.name.lower(),
        "legal": legal,
        "may_call_tichu": obs.may_call_tichu,
        "left_ms": max(0, int((ask.deadline - time.monotonic()) * 1000)),
    }
