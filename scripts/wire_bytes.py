"""Writes every byte the referee sends in seeded matches, to compare two trees of the project.

Plays ``--matches`` seeded matches through the real ``Referee`` with seats that keep the
hand's history and write each request as the gRPC seat does (``arena.server.codec`` and
``arena.server.seat.EventCodec``), answering from a seeded random choice (sometimes a Tichu
call, sometimes no answer so that a failure event is sent). Prints one SHA-256 per match of
its requests and of its event messages, and the totals; run it with each tree's interpreter
from that tree's directory and compare the output (``diff``). Only the API both trees share
is used.

    .venv/bin/python scripts/wire_bytes.py --matches 200 > /tmp/mine.txt
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import random
from typing import Any

from arena.referee import MatchConfig, Referee
from arena.referee.policy import FailureKind, FailurePolicy
from arena.referee.seat import Answer, Decision, MatchInfo
from arena.rules import Exchange, Match, Options, Phase, cards_of
from arena.rules.position import position
from arena.server.codec import request_bytes
from arena.server.seat import EventCodec

OPTIONS = (Options(hands=3), Options.turnier(), Options(hands=2, grand_tichu=False))
POSITIONS = (  # matches started from a position, as ``arena check-bot`` plays them
    {"hands": ["Dg 9j 3s", "6j 6s 6p 6t 2s", "3j Kp", "4j 5p"], "to_act": 0, "grand": [1]},
    {"hands": ["9j 2s", "3s Ph", "Kj Ks", "Tp Jp Dr"], "trick": [(2, "5j")], "to_act": 3},
    {"hands": ["Mj 9j 8p", "8j 8s", "2j Aj", "3j"], "to_act": 0, "tichu": [2]},
    {"hands": ["9j", "8j 8s 4t", "2j", "3j Qs"], "trick": [(0, "Mj")], "to_act": 1, "wish": 8},
)


FAILURE_RATE = 0.02
"""How often a seat gives no answer (``--failure-rate``), so that failure events are sent."""


class Recorder:
    """A seat that records the bytes a gRPC seat would send, answering at random."""

    def __init__(self, codec: EventCodec, seed: int, seat: int, log: dict[str, Any]) -> None:
        self.codec = codec
        self.seat = seat
        self.seed = seed
        self.log = log
        self.rid = 0

    async def start(self, info: MatchInfo) -> None:
        """Fresh request ids."""
        self.rid = 0

    def notify(self, event: Any) -> None:
        """Records the event's message once (the four seats share the codec)."""
        if event is not self.codec.last:
            self.log["events"].update(self.codec.encode(event).message)
            self.log["event_count"] += 1

    async def decide(self, d: Decision) -> Answer:
        """Records the request's bytes and answers at random (a timeout now and then)."""
        self.rid += 1
        body = request_bytes(d, self.rid, self.codec.history)
        self.log["requests"].update(body)
        self.log["request_count"] += 1
        obs = d.obs
        rng = random.Random(f"{self.seed}/{self.seat}/{self.log['request_count']}")
        if obs.phase is not Phase.BOMB_WINDOW and rng.random() < FAILURE_RATE:
            failure = FailureKind.TIMEOUT
            return Answer(None, failure=failure, detail="no answer", request_id=self.rid)
        call = obs.may_call_tichu and rng.random() < 0.05
        if obs.phase is Phase.EXCHANGE:
            a, b, c = rng.sample(sorted(cards_of(obs.hand)), 3)
            return Answer(Exchange(a, b, c), call)
        return Answer(rng.choice(obs.legal), call)


async def play(seed: int, start: Match | None = None) -> dict[str, Any]:
    options = OPTIONS[seed % len(OPTIONS)] if start is None else start.options
    codec = EventCodec(options.tournament)
    log: dict[str, Any] = {
        "requests": hashlib.sha256(),
        "events": hashlib.sha256(),
        "request_count": 0,
        "event_count": 0,
    }
    seats = [Recorder(codec, seed, s, log) for s in range(4)]
    policy = FailurePolicy(max_strikes=1000)
    config = MatchConfig(options=options, seed=seed, policy=policy, start=start)
    await Referee(seats, config).run()
    return log


def main() -> None:
    global FAILURE_RATE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--failure-rate", type=float, default=FAILURE_RATE)
    args = parser.parse_args()
    FAILURE_RATE = args.failure_rate
    requests = events = 0
    for seed in range(args.first_seed, args.first_seed + args.matches):
        log = asyncio.run(play(seed))
        requests += log["request_count"]
        events += log["event_count"]
        print(
            seed,
            log["request_count"],
            log["requests"].hexdigest(),
            log["event_count"],
            log["events"].hexdigest(),
        )
    for i, spec in enumerate(POSITIONS):
        start = position(**spec, options=Options(hands=1))  # type: ignore[arg-type]
        log = asyncio.run(play(i, start))
        requests += log["request_count"]
        events += log["event_count"]
        print("position", i, log["request_count"], log["requests"].hexdigest())
    print(f"total: {args.matches} matches and {len(POSITIONS)} positions,", end=" ")
    print(f"{requests} requests, {events} events")


if __name__ == "__main__":
    main()
