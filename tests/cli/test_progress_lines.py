"""The plain progress line an event prints where the output is not a terminal (CI logs)."""

from __future__ import annotations

from arena.cli.event import _plain_line
from arena.tournament.runner import Progress


def test_the_eta_runs_at_the_pace_since_the_first_play() -> None:
    """The first play ended at t = 100 s after 30 s of start-up; 40 more took 40 s, so the
    100 left take 100 s (1:40), not the 2:51 the pace since the start (70 s, 41 plays) gives."""
    progress = Progress(plays_total=141, plays_done=41, hands=41, started=70.0)
    line = _plain_line(progress, (100.0, 1), 140.0, "greedy +210  random -200")
    assert line.startswith("plays 41/141, ")
    assert line.endswith(", ETA 1:40, leader: greedy +210")


def test_no_eta_before_a_second_play_and_resumed_plays_do_not_count() -> None:
    """A resumed run: 50 plays were done before it; its first play is the 51st."""
    progress = Progress(plays_total=100, plays_done=51, hands=51)
    assert "ETA ?" in _plain_line(progress, (5.0, 51), 5.0, "")
    progress.plays_done = 61
    assert _plain_line(progress, (5.0, 51), 25.0, "").endswith("ETA 1:18")
