"""What the table says of the public events: the same words on a person's page, ``/live`` and
the replay viewer, in the right grammar for any name (``You play``, ``Ann plays``)."""

from __future__ import annotations

from arena.rules import Event, EventKind, parse_play
from arena.web.labels import out_note, play_note, wish_note
from arena.web.live import PublicTable
from arena.web.timeline import event_note

NAMES = ["You", "Bob", "Cid", "Dee"]


def fold(*events: dict[str, object]) -> PublicTable:
    table = PublicTable({"seats": NAMES})
    for ev in ({"type": "hand_started", "hand": 1}, *events):
        table.apply(ev)
    return table


def test_a_name_of_you_reads_in_the_second_person() -> None:
    assert play_note("You", "pair of Eights") == "You play pair of Eights"
    assert play_note("Ann", "pair of Eights") == "Ann plays pair of Eights"
    assert play_note("Bob", "bomb: four Twos", True) == "Bob bombs out of turn: four Twos"
    assert out_note("You", 3) == "You are out (third)"
    assert out_note("Ann", 1) == "Ann is out (first)"
    assert wish_note("Ann", 8) == "Ann wishes for an 8"
    assert wish_note("You", 7) == "You wish for a 7"
    assert wish_note("Ann", 14) == "Ann wishes for an A"
    assert wish_note("Ann", 0) == "Ann makes no wish"
    assert fold({"type": "tichu_called", "seat": 0}).last == {"seat": 0, "text": "You call Tichu"}


def test_a_dog_lead_passes_the_lead_and_takes_no_trick() -> None:
    """The Dog's "trick" is no trick taken for 0 points: it passes the lead to the partner
    (or the next seat with cards), on the board and in the words."""
    table = fold(
        {"type": "played", "seat": 1, "play": "Dg", "combo": "dog"},
        {"type": "trick_won", "seat": 1, "points": 0, "cards": "Dg"},
    )
    view = table.view()
    assert view["last"]["text"] == "the Dog passes the lead to Dee"
    assert view["collected"] is None and view["trick_no"] == 1
    assert view["played"]["lead"] == "Dee"
    dog = Event(EventKind.TRICK_WON, 1, None, 0, 0, parse_play("Dg", None).cards)
    assert "takes the trick" not in event_note(NAMES, dog)
    bomb = Event(EventKind.PLAY, 2, parse_play("2j 2s 2p 2t", None), 1)
    assert event_note(NAMES, bomb) == "Cid bombs out of turn: four Twos"


def test_plays_passes_and_the_trick_taken_stay_readable() -> None:
    """Every turn is said (plays and passes), and a trick taken stays on the board until the
    next turn, and as the last trick until the next one is taken."""
    table = fold(
        {"type": "played", "seat": 0, "play": "7j", "combo": "single"},
        {"type": "passed", "seat": 1},
        {"type": "trick_won", "seat": 0, "points": 0, "cards": "7j"},
        {"type": "player_out", "seat": 2},
    )
    view = table.view()
    assert view["collected"] is not None and view["last_trick"] == view["collected"]
    assert [t["play"] for t in view["last_trick"]["entries"]] == ["7j", "pass"]
    assert view["last"]["text"] == "Cid is out (first)"
    table.apply({"type": "played", "seat": 0, "play": "9j", "combo": "single"})
    assert table.view()["collected"] is None and table.view()["last_trick"] is not None
    assert table.last == {"seat": 0, "text": "You play single 9"}


def test_the_game_end_names_the_winner_and_the_hand() -> None:
    result = {"score": [60, 40], "card_points": [60, 40], "bets": [0, 0], "out": [3, 0, 1, 2]}
    table = fold(
        {
            "type": "hand_end",
            "scores": [60, 40],
            "result": {**result, "double_victory": -1},
            "left": {"2": "7j 8s"},
        },
        {"type": "match_end", "termination": "finished", "scores": [60, 40], "winners": [0, 2]},
    )
    view = table.view()
    assert view["over"] and view["winners"] == [0, 2] and view["hand_scores"] == [[60, 40]]
    assert view["hand_end"]["out"] == ["Dee", "You", "Bob", "Cid"]
    assert view["hand_end"]["total"] == [60, 40]
    assert view["hand_end"]["left"] == {"Cid": ["7j", "8s"]}
    assert table.last is not None
    assert table.last["text"] == "game over: team A (You and Cid) wins 60 : 40"
