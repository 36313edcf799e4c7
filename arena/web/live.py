"""Live tables: the runner's public event feed of a play, folded into what a spectator sees.

The feed (``arena.tournament.live``) holds public events only; ``PublicTable`` folds them into
the same table view the replay viewer draws for a spectator (card counts, the trick, won
points, calls, wish, scores), so the browser draws both with one renderer. The organiser's
spectator delay holds events back: ``trick`` (the default) shows a trick once it is collected,
``hand`` once the hand is over, ``none`` at once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, BinaryIO

from arena.rules.combos import rank_name
from arena.web.labels import play_text_label

__all__ = ["DELAYS", "PublicTable", "read_feed", "visible_count"]

DELAYS = ("trick", "hand", "none")
_TRICK_ENDS = frozenset({"trick_won", "dragon_given", "hand_end", "match_end"})
_HAND_ENDS = frozenset({"hand_end", "match_end"})


def read_feed(feed: Path | BinaryIO) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The header and the complete event lines of a feed written so far: a file's path, or
    the file held open (the runner removes a feed once its play is recorded; an open file
    stays readable)."""
    try:
        if isinstance(feed, Path):
            text = feed.read_text(encoding="utf-8")
        else:
            feed.seek(0)
            text = feed.read().decode("utf-8", errors="replace")
    except OSError:
        return None, []
    lines = text.split("\n")
    if lines and lines[-1]:
        lines = lines[:-1]  # a line still being written
    records = []
    for line in lines:
        if line:
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                break
    if not records or records[0].get("type") != "header":
        return None, []
    return records[0], records[1:]


def visible_count(events: list[dict[str, Any]], delay: str) -> int:
    """How many of the feed's events a spectator may see under ``delay``."""
    if delay == "none":
        return len(events)
    ends = _TRICK_ENDS if delay == "trick" else _HAND_ENDS
    for i in range(len(events) - 1, -1, -1):
        if events[i]["type"] in ends:
            return i + 1
    return 0


class PublicTable:
    """The public state of a table, built from its events one at a time."""

    def __init__(self, header: dict[str, Any]) -> None:
        self.names: list[str] = list(header.get("seats", []))
        self.hand = 0
        self.scores = [0, 0]
        self.hand_scores: list[list[int]] = []
        self.over = False
        self.termination: str | None = None
        self._new_hand()
        self.last: dict[str, Any] | None = None
        self.collected: dict[str, Any] | None = None
        self.played: dict[str, Any] | None = None
        self.step = 0

    def _new_hand(self) -> None:
        self.counts = [14, 14, 14, 14]
        self.grand = [False] * 4
        self.tichu = [False] * 4
        self.out: list[int] = []
        self.won = [0, 0, 0, 0]
        self.trick: list[dict[str, Any]] = []
        self.entries: list[dict[str, Any]] = []  # the running trick turn by turn
        self.wish: str | None = None
        self.tricks = 0

    def apply(self, ev: dict[str, Any]) -> None:
        """Folds one event into the state."""
        t = ev["type"]
        seat = ev.get("seat", -1)
        name = self.names[seat] if 0 <= seat < len(self.names) else ""
        text = ""
        self.collected = None
        self.played = None
        if t == "hand_started":
            self.hand = ev["hand"]
            self._new_hand()
            text = f"hand {self.hand} dealt"
        elif t == "grand_tichu_revealed":
            self.grand = [bool(c) for c in ev.get("called", [])] or [False] * 4
            text = "Grand Tichu calls revealed"
        elif t == "tichu_called":
            self.tichu[seat] = True
            text = f"{name} calls Tichu"
        elif t == "exchange_done":
            text = "the exchange is done"
        elif t == "played":
            play = ev["play"]
            self.counts[seat] -= len(play.split())
            label = play_text_label(play)
            turn = {"seat": seat, "play": play, "label": label, "bomb": label.startswith("bomb")}
            self.played = turn
            if play == "Dg":
                text = f"{name}: the Dog"
            else:
                self.trick.append({**turn, "combo": ev.get("combo", play)})
                self.entries.append({**turn, "out_of_turn": bool(ev.get("out_of_turn"))})
                text = f"{name}: {label}"
        elif t == "passed":
            self.entries.append({"seat": seat, "play": "pass", "label": "pass", "bomb": False})
            text = f"{name}: pass"
        elif t == "wish_made":
            rank = ev.get("value", 0)
            self.wish = rank_name(rank) if rank else None
            text = f"{name} wishes {self.wish or 'nothing'}"
        elif t == "wish_fulfilled":
            self.wish = None
            text = f"{name} fulfils the wish"
        elif t == "trick_won":
            self.won[seat] += ev.get("points", 0)
            self.collected = {"seat": seat, "to": seat, "points": ev.get("points", 0)}
            self.collected["entries"] = self.entries
            self.trick, self.entries = [], []
            self.tricks += 1
            text = f"{name} takes the trick ({ev.get('points', 0)} points)"
        elif t == "dragon_given":
            to = ev.get("to", -1)
            if 0 <= to < 4:
                self.won[to] += ev.get("points", 0)
            self.collected = {"seat": seat, "to": to, "points": ev.get("points", 0)}
            self.collected["entries"] = self.entries
            self.trick, self.entries = [], []
            self.tricks += 1
            text = f"{name} gives the Dragon trick to {self.names[to] if 0 <= to < 4 else to}"
        elif t == "player_out":
            self.out.append(seat)
            text = f"{name} is out"
        elif t == "hand_end":
            self.scores = list(ev.get("scores", self.scores))
            result = ev.get("result") or {}
            self.hand_scores.append(list(result.get("score", [0, 0])))
            text = f"hand {self.hand} over"
        elif t == "match_end":
            self.over = True
            self.termination = ev.get("termination")
            self.scores = list(ev.get("scores", self.scores))
            text = f"match over ({self.termination})"
        elif t == "failure":
            text = f"{name}: {ev.get('kind', 'failure')} ({ev.get('outcome', '')})"
        self.step += 1
        self.last = {"seat": seat, "text": text} if text else self.last

    def view(self) -> dict[str, Any]:
        """The table in the replay viewer's spectator shape."""
        return {
            "step": self.step,
            "steps": None,
            "perspective": "spectator",
            "hand": self.hand,
            "trick_no": self.tricks + 1,
            "phase": "match_over" if self.over else "live",
            "to_act": -1,
            "seats": [
                {
                    "name": self.names[s] if s < len(self.names) else f"seat {s}",
                    "team": "AB"[s & 1],
                    "count": self.counts[s],
                    "cards": None,
                    "grand": self.grand[s],
                    "tichu": self.tichu[s],
                    "out": self.out.index(s) + 1 if s in self.out else 0,
                    "won_points": self.won[s],
                    "won_cards": None,
                }
                for s in range(4)
            ],
            "trick": self.trick,
            "entries": self.entries,
            "collected": self.collected,
            "played": self.played,
            "wish": self.wish,
            "scores": self.scores,
            "hand_scores": self.hand_scores,
            "exchange": None,
            "last": self.last,
            "decision": None,
            "over": self.over,
            "termination": self.termination,
        }
