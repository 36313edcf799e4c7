"""Replay timelines: what each perspective may see, on matches of the rules core."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from arena.referee.replay import Replay, from_match, save
from arena.rules import PASS, Match, Options, Phase
from arena.web.files import FILES_EVENT, ReplayFiles
from arena.web.timeline import Timeline, load_timeline, replay_logs


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


HOSTILE: list[Any] = ["../../secret.txt", "/etc/passwd", 7, "ok.log"]
"""The logs a crafted replay names, one a seat: two paths out of its logs folder, a non-string
(a file ``7`` lies in the folder) and the one plain name."""


def crafted(path: Path, names: list[Any], table: str) -> None:
    """A one-hand replay naming ``names`` as its bots' logs, every decision timed over the
    first 1000 bytes of its seat's log."""
    m = Match(Options(hands=1), 3)
    rng = random.Random(3)
    while not m.over:
        m.apply(rng.choice(m.legal_actions()))
    replay: Replay = from_match(m, ["a", "b", "c", "d"])
    think = [[i, seat, 1.0, 0, 1000] for i, (seat, _) in enumerate(Timeline(replay).actions)]
    replay.meta |= {"log_files": names, "table_id": table, "think": think}
    save(replay, path)


def logs_shown(timeline: Timeline) -> dict[int, set[str]]:
    """The log lines the viewer shows, by seat, over every step of the all-cards view."""
    shown: dict[int, set[str]] = {}
    for step in range(1, timeline.outline("all")["steps"] + 1):
        decision = timeline.view(step, "all").get("decision") or {}
        if decision.get("log") is not None:
            shown.setdefault(decision["seat"], set()).update(decision["log"])
    return shown


def own_folder(folder: Path) -> None:
    """A replay's logs folder: the one named log, and a file named like the non-string."""
    folder.mkdir(parents=True)
    (folder / "ok.log").write_text("its own log line\n", encoding="utf-8")
    (folder / "7").write_text("not a name the replay gave\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("table", "names"),
    [("t1", HOSTILE), ("..", ["secret.txt"] * 4)],  # the table's id is a folder name too
)
def test_a_replay_in_an_event_database_reads_no_log_outside_its_folder(
    tmp_path: Path, table: str, names: list[Any]
) -> None:
    (tmp_path / "secret.txt").write_text("the organiser's secret\n", encoding="utf-8")
    log_dir = tmp_path / "event.sqlite.logs"  # as EventData reads a play's logs
    own_folder(log_dir / "t1")
    crafted(tmp_path / "event.sqlite.replays" / "p0.json", names, table)
    shown = logs_shown(load_timeline(tmp_path / "event.sqlite.replays" / "p0.json", log_dir))
    assert shown == ({3: {"its own log line"}} if table == "t1" else {}), shown


@pytest.mark.parametrize("names", [HOSTILE, ["a\0b", "..", "", "ok.log"]])  # NUL: no open()
def test_a_replay_file_reads_no_log_outside_its_folder(tmp_path: Path, names: list[Any]) -> None:
    (tmp_path / "secret.txt").write_text("the organiser's secret\n", encoding="utf-8")
    own_folder(tmp_path / "play" / "match-logs")  # as arena play keeps them
    crafted(tmp_path / "play" / "match.json", names, "play")
    files = ReplayFiles([tmp_path / "play" / "match.json"])
    assert logs_shown(files.timeline(FILES_EVENT, 0)) == {3: {"its own log line"}}


def test_only_plain_file_names_are_logs_of_the_folder() -> None:
    folder = Path("/srv/logs/t1")
    names = ["../../etc/passwd", "/etc/passwd", 7, None, "", ".", "..", "a/b", "a\\b", "a\0b"]
    assert replay_logs(folder, [*names, "seat0-x.log", "a..b"]) == [None] * len(names) + [
        folder / "seat0-x.log",
        folder / "a..b",
    ]
    assert replay_logs(folder, "/etc/passwd") == [] and replay_logs(folder, None) == []
