"""The runner's live feed: public events only, one file per play, ending with match_end,
removed once its play is recorded; and what the local pool keeps of finished tables."""

from __future__ import annotations

import asyncio
import gc
import json
import random
import stat
from pathlib import Path

from arena.referee import MatchConfig, Referee
from arena.referee.seat import InProcessSeat
from arena.rules import Exchange, Observation, Options, Phase, card_name, cards_of
from arena.server import Table
from arena.tournament.live import LiveFeed, live_dir, live_path
from arena.tournament.model import PlannedPlay, parse_event, plan_event
from arena.tournament.runner import EventRunner
from arena.tournament.store import EventStore
from sdk.bot import Bot

PUBLIC_KEYS = {
    *("seq", "hand", "type", "seat", "play", "combo", "out_of_turn", "value", "points"),
    *("cards", "to", "called", "result", "scores", "termination", "winners", "kind", "outcome"),
}


class RandomBot(Bot):
    """Uniform over the legal answers (seeded)."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.rng = random.Random(seed)

    def act(self, obs: Observation):  # type: ignore[no-untyped-def]
        if obs.phase is Phase.EXCHANGE:
            return Exchange(*self.rng.sample(list(cards_of(obs.hand)), 3))
        return self.rng.choice(obs.legal)


def test_the_feed_holds_the_public_events_of_each_play(tmp_path: Path) -> None:
    db = tmp_path / "e.sqlite"
    plays = [
        PlannedPlay(
            ordinal=k,
            round=0,
            table=0,
            board=k,
            rotation=0,
            seats=("a", "b", "c", "d"),
            seed=k,
            seat_seeds=(1, 2, 3, 4),
            deal_seed=k,
        )
        for k in (0, 1)
    ]
    feed = LiveFeed(db, "ev", plays)
    records = []
    for k in (0, 1):
        seats = [InProcessSeat(RandomBot(10 * k + s)) for s in range(4)]
        referee = Referee(seats, MatchConfig(options=Options(hands=1), seed=k), watch=feed)
        records.append(asyncio.run(referee.run()))
    feed.close()
    for k, record in enumerate(records):
        path = live_path(db, "ev", k)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600  # its owner's alone
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        assert lines[0]["type"] == "header" and lines[0]["board"] == k
        assert lines[-1]["type"] == "match_end" and lines[-1]["scores"] == list(record.scores)
        assert [x["seq"] for x in lines[1:]] == sorted(x["seq"] for x in lines[1:])
        # Every card the feed names was played in the open: no hand, no passed card.
        played = {
            card_name(c)
            for _, a in record.replay.actions
            if hasattr(a, "cards")
            for c in cards_of(a.cards)
        }
        named = set()
        for x in lines[1:]:
            for key in ("play", "cards"):
                named |= {t.split("=")[0] for t in x.get(key, "").split()}
            assert set(x) <= PUBLIC_KEYS and isinstance(x["hand"], int)  # a number, not cards
        assert named <= played


def test_a_plays_feed_is_removed_once_the_play_is_recorded(tmp_path: Path) -> None:
    """The feeds served while their plays ran; the replays hold all of them after (issue 50:
    the folder kept 15.9 MB after an event, more than its database)."""
    data = {
        "name": "feeds",
        "schedule": "fixed",
        "bots": ["random", *({"bot": "random", "name": f"r{k}"} for k in (2, 3, 4))],
        "boards_per_round": 2,
        "rotations": 2,
        "seed": 4,
        "jobs": 1,
    }
    spec = parse_event(data, source="test", base_dir=tmp_path)
    db = tmp_path / "feeds.sqlite"
    seen: list[tuple[bool, bool]] = []

    def on_play(_progress: object, play: PlannedPlay) -> None:
        # The event's feed folder is there (the play had its feed), its own feed is gone.
        seen.append((live_path(db, "feeds", play.ordinal).parent.is_dir(),
                     live_path(db, "feeds", play.ordinal).exists()))  # fmt: skip

    with EventStore(db) as store:
        store.create_event(spec, plan_event(spec))
        EventRunner(store, "feeds", spec, on_play=on_play).run()
    assert seen == [(True, False)] * 4
    assert list(live_dir(db).rglob("*.jsonl")) == []


def test_the_local_pool_keeps_no_finished_table(tmp_path: Path) -> None:
    """A finished table holds its match records: the local pool lets go of each as its session
    ends (issue 50: the runner grew 30-43 KiB a play, holding every table of the event)."""
    data = {
        "name": "tables",
        "schedule": "fixed",
        "bots": ["random", *({"bot": "random", "name": f"r{k}"} for k in (2, 3, 4))],
        "boards_per_round": 2,
        "rotations": 2,
        "seed": 6,
        "jobs": 2,
    }
    spec = parse_event(data, source="test", base_dir=tmp_path)
    with EventStore(tmp_path / "tables.sqlite") as store:
        store.create_event(spec, plan_event(spec))
        runner = EventRunner(store, "tables", spec)
        assert runner.run().plays_done == 4
        gc.collect()
        kept = [o for o in gc.get_objects() if isinstance(o, Table)]
        assert kept == [], f"{len(kept)} finished tables kept by {runner.executor!r}"
