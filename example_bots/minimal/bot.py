"""A random bot straight on the protocol, without the SDK: one stream, one message at a time.

It shows what the contract alone asks of a bot in any language (docs/protocol.md): send a
``Hello`` with the seat token, then answer each ``DecisionRequest`` with its ``request_id``
and ``state_seq`` and an index into the legal list (three cards for the exchange), and stop
at the end of the stream. It never calls Tichu and ignores events and errors, so it has
none of the SDK's conveniences (typed views, the clock guard, reconnection); that also
makes it the cheapest bot process there is, the load generator of
``arena bench grpc --bot minimal``, which measures the referee rather than a bot.

    TICHU_ARENA_SERVER=127.0.0.1:50051 TICHU_ARENA_TOKEN=... python example_bots/minimal/bot.py
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # for arena.wire when run as a file

from arena.wire import PROTOCOL_VERSION, pb

PLAY = "/tichu.arena.v1.Referee/Play"
_CHOOSE_PLAY = (pb.DECISION_KIND_PLAY, pb.DECISION_KIND_BOMB_WINDOW)


def answer(d: pb.DecisionRequest, rng: random.Random) -> pb.Action:
    """A uniformly random legal answer to ``d`` (no Grand Tichu: index 0 is "no")."""
    a = pb.Action(request_id=d.request_id, state_seq=d.state_seq)
    if d.kind == pb.DECISION_KIND_EXCHANGE:
        a.exchange_cards.extend(rng.sample(list(d.legal.values), 3))
    elif d.kind in _CHOOSE_PLAY:
        a.choice_index = rng.randrange(len(d.legal.cards))
    elif d.kind != pb.DECISION_KIND_GRAND_TICHU:
        a.choice_index = rng.randrange(len(d.legal.values))
    return a


async def play(server: str, token: str, seed: int | None = None) -> None:
    """Plays the seat of ``token`` until the referee ends the stream."""
    rng = random.Random(seed)
    async with grpc.aio.insecure_channel(server) as channel:
        call = channel.stream_stream(PLAY)()  # raw bytes both ways
        hello = pb.Hello(
            protocol_version=PROTOCOL_VERSION,
            seat_token=token,
            bot_name="minimal",
            results_only=True,
        )
        await call.write(pb.BotMessage(hello=hello).SerializeToString())
        while (data := await call.read()) is not grpc.aio.EOF:
            msg = pb.RefereeMessage.FromString(data)
            which = msg.WhichOneof("payload")
            if which == "welcome" and msg.welcome.HasField("seed"):
                rng = random.Random(msg.welcome.seed)  # the seat's seed for this match
            elif which == "decision":
                action = answer(msg.decision, rng)
                await call.write(pb.BotMessage(action=action).SerializeToString())


if __name__ == "__main__":
    seed = os.environ.get("TICHU_ARENA_SEED")
    server, token = os.environ["TICHU_ARENA_SERVER"], os.environ["TICHU_ARENA_TOKEN"]
    asyncio.run(play(server, token, None if seed is None else int(seed)))
