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

from arena.web.labels import (
    dog_note,
    fulfilled_note,
    gift_note,
    out_note,
    pass_note,
    play_note,
    play_text_label,
    rank_word,
    tichu_note,
    trick_note,
    wish_note,
)

__all__ = ["DELAYS", "PublicTable", "read_feed", "visible_count", "winner_text"]

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


def winner_text(names: list[str], winners: list[int], scores: list[int]) -> str:
    """Who won and the final score: ``team A (Ann and Cid) wins 1040 : 60``."""
    a, b = scores[0], scores[1]
    if not winners:
        return f"a draw at {a} : {b}" if a == b else f"{a} : {b}"
    team = winners[0] & 1
    who = " and ".join(names[s] for s in (team, team + 2) if s < len(names))
    mine, theirs = (a, b) if team == 0 else (b, a)
    return f"team {'AB'[team]} ({who}) wins {mine} : {theirs}"


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
        self.last_trick: dict[str, Any] | None = None  # the trick taken last, kept all hand
        self.hand_end: dict[str, Any] | None = None  # shown until the next hand's first play
        self.winners: list[int] = []
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

    def _name(self, seat: int) -> str:
        return self.names[seat] if 0 <= seat < len(self.names) else f"seat {seat}"

    def _dog_lead(self, seat: int) -> int:
        """Who leads after ``seat``'s Dog: the partner, or the next seat with cards after them."""
        for k in range(4):
            s = (seat + 2 + k) & 3
            if self.counts[s] > 0:
                return s
        return -1

    def apply(self, ev: dict[str, Any]) -> None:
        """Folds one event into the state."""
        t = ev["type"]
        seat = ev.get("seat", -1)
        name = self._name(seat)
        text = ""
        if t in ("hand_started", "played", "passed"):
            self.collected = None  # a trick taken stays on the board until the next turn
        self.played = None
        if t == "hand_started":
            self.hand = ev["hand"]
            self._new_hand()
            text = f"hand {self.hand} dealt"
        elif t == "grand_tichu_revealed":
            self.grand = [bool(c) for c in ev.get("called", [])] or [False] * 4
            called = [self._name(s) for s in range(4) if self.grand[s]]
            text = f"Grand Tichu: {', '.join(called)}" if called else "no Grand Tichu"
        elif t == "tichu_called":
            self.tichu[seat] = True
            text = tichu_note(name)
        elif t == "exchange_done":
            text = "the cards are exchanged"
        elif t == "played":
            play = ev["play"]
            self.counts[seat] -= len(play.split())
            self.hand_end = None
            label = play_text_label(play)
            turn = {"seat": seat, "play": play, "label": label, "bomb": label.startswith("bomb")}
            self.played = turn
            out_of_turn = bool(ev.get("out_of_turn"))
            if play != "Dg":
                self.trick.append({**turn, "combo": ev.get("combo", play)})
                self.entries.append({**turn, "out_of_turn": out_of_turn})
            text = play_note(name, label, out_of_turn)
        elif t == "passed":
            self.entries.append({"seat": seat, "play": "pass", "label": "pass", "bomb": False})
            text = pass_note(name)
        elif t == "wish_made":
            rank = ev.get("value", 0)
            self.wish = rank_word(rank) if rank else None
            text = wish_note(name, rank)
        elif t == "wish_fulfilled":
            self.wish = None
            text = fulfilled_note(name, ev.get("value", 0))
        elif t == "trick_won" and ev.get("cards") == "Dg":
            lead = self._dog_lead(seat)
            self.played = {"seat": seat, "play": "Dg", "label": "the Dog", "bomb": False}
            self.played["lead"] = self._name(lead) if lead >= 0 else ""
            text = dog_note(self.played["lead"])
        elif t in ("trick_won", "dragon_given"):
            to = ev.get("to", -1) if t == "dragon_given" else seat
            points = ev.get("points", 0)
            if 0 <= to < 4:
                self.won[to] += points
            self.collected = {"seat": seat, "to": to, "points": points, "entries": self.entries}
            self.last_trick = self.collected
            self.trick, self.entries = [], []
            self.tricks += 1
            if t == "trick_won":
                text = trick_note(name, points)
            else:
                text = gift_note(name, points, self._name(to))
        elif t == "player_out":
            self.out.append(seat)
            text = out_note(name, len(self.out))
        elif t == "hand_end":
            self.scores = list(ev.get("scores", self.scores))
            result = ev.get("result") or {}
            score = list(result.get("score", [0, 0]))
            self.hand_scores.append(score)
            self.hand_end = self._hand_end(result, ev.get("left") or {})
            text = f"hand {self.hand} over: A {score[0]:+d}, B {score[1]:+d}"
        elif t == "match_end":
            self.over = True
            self.termination = ev.get("termination")
            self.scores = list(ev.get("scores", self.scores))
            self.winners = [int(w) for w in ev.get("winners", [])]
            text = f"game over: {winner_text(self.names, self.winners, self.scores)}"
        elif t == "failure":
            text = f"{name}: {ev.get('kind', 'failure')} ({ev.get('outcome', '')})"
        self.step += 1
        self.last = {"seat": seat, "text": text} if text else self.last

    def _hand_end(self, result: dict[str, Any], left: dict[str, str]) -> dict[str, Any]:
        """The hand-end summary in the seat view's shape (out order, points, bets, calls, and
        the cards left in hand where the feed gives them: ``arena table``'s does)."""
        dv = result.get("double_victory", -1)
        return {
            "hand": self.hand,
            "out": [self._name(s) for s in result.get("out", [])],
            "double_victory": "AB"[dv] if dv in (0, 1) else None,
            "card_points": list(result.get("card_points", [0, 0])),
            "bets": list(result.get("bets", [0, 0])),
            "score": list(result.get("score", [0, 0])),
            "total": list(self.scores),
            "calls": [
                "Grand Tichu" if self.grand[s] else "Tichu" if self.tichu[s] else None
                for s in range(4)
            ],
            "left": {self._name(int(s)): cards.split() for s, cards in left.items()},
        }

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
            "last_trick": self.last_trick,
            "hand_end": self.hand_end,
            "winners": self.winners,
        }
