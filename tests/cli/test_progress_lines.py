"""The plain progress line an event prints where the output is not a terminal (CI logs)."""

from __future__ import annotations

import io

from rich.console import Console

from arena.cli.common import PlainProgress, make_console
from arena.cli.common import plain_line as _plain_line
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


def test_lines_come_at_the_first_play_every_ten_seconds_and_at_the_last() -> None:
    """Issue 23, finding 6: the same lines, with an ETA, for events and league rounds."""
    out = io.StringIO()
    lines = PlainProgress(Console(file=out, width=80, soft_wrap=True), every=10.0)
    progress = Progress(plays_total=5, plays_done=0, hands=0, started=0.0)
    for now in (1.0, 4.0, 11.5, 12.0, 13.0):
        progress.plays_done += 1
        lines(progress, lambda: "greedy +210  random -200", now)
    printed = out.getvalue().splitlines()
    assert [line.split(",")[0] for line in printed] == ["plays 1/5", "plays 3/5", "plays 5/5"]
    assert printed[1].endswith("ETA 0:10, leader: greedy +210") and "ETA 0:00" in printed[2]


def test_output_that_is_not_a_terminal_is_never_wrapped() -> None:
    """Issue 23, finding 6: a CI log split the resume hint over two lines at 80 columns."""
    out = io.StringIO()
    console = make_console()
    console.file = out
    hint = "continue with: arena event resume " + "/very/long/path" * 10 + "/e.sqlite --jobs 4"
    console.print(hint)
    assert out.getvalue() == hint + "\n"
    assert console.width >= 200
