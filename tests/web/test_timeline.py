"""Replay timelines: what each perspective may see, on matches of the rules core."""

from __future__ import annotations

import json
import random

from arena.referee.replay import from_match
from arena.rules import PASS, Match, Options, Phase
from arena.web.timeline import Timeline


def match_with_a_secret_window() -> tuple[Match, int]:
    """A random one-hand match in which a seat declined to bomb and nothing public followed."""
    for seed in range(500):
        rng = random.Random(seed)
        m = Match(Options(hands=1), seed)
        secret = None
        while not m.over:
            before, seat, phase = len(m.events), m.seat, m.phase
            legal = m.legal_actions()
            action = PASS if phase is Phase.BOMB_WINDOW else rng.choice(legal)
            m.apply(action)
            if phase is Phase.BOMB_WINDOW and len(m.events) == before and secret is None:
                secret = seat
        if secret is not None:
            return m, secret
    raise AssertionError("no bomb window in 500 matches")


def test_a_declined_bomb_window_is_no_step_for_anyone_else() -> None:
    m, seat = match_with_a_secret_window()
    tl = Timeline(from_match(m, ["a", "b", "c", "d"]))
    assert tl.silent
    everything = tl.outline("all")["steps"]
    assert everything == len(m.actions)
    spectator = tl.outline("spectator")
    assert spectator["steps"] == everything - len(tl.silent)
    own = tl.outline(str(seat))["steps"]
    assert spectator["steps"] < own <= everything
    for k in range(spectator["steps"] + 1):
        view = tl.view(k, "spectator")
        assert view["step"] == k and view["phase"] != "bomb_window"
        assert all(s["cards"] is None for s in view["seats"])
        assert "bomb_window" not in json.dumps(view.get("decision"))
    assert tl.view(0, "all")["seats"][0]["cards"] is not None
