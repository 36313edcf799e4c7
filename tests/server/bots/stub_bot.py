"""A bot written on the generated stubs alone, for the server tests.

Well-behaved by default (random legal answers); ``--mode`` makes it fail on purpose after
``--after`` decisions: ``timeout`` (stops answering), ``garbage`` (answers with junk),
``buggy`` (answers ``--wrong`` of its requests wrongly, then rightly once told the error),
``disconnect`` (drops the stream, resumes after ``--away`` seconds), ``vanish`` (drops the
stream and never returns), ``crash`` (exits with code 3), ``impostor`` (once the match has
started, also presents the tokens in ``TEST_OTHER_TOKENS``, which must be refused), ``thief``
(once the match has started, resumes the seat of the first token in ``TEST_OTHER_TOKENS``
over its owner's stream and plays it too), ``hostile`` (answers every exchange with 2 MB of
card ids, three times, and every other request first with a value of its own choosing, as a
covert channel to its partner would). The seat
token and the address come from ``TICHU_ARENA_TOKEN`` and ``TICHU_ARENA_SERVER``; with
``TICHU_ARENA_BOT_KEY`` it joins an open table instead. Every message received is appended
to ``--dump`` (if given), one hex-encoded ``RefereeMessage`` per line, for the hidden-card
test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
from typing import Any

import grpc

from arena.wire import PROTOCOL_VERSION, pb

PLAY = "/tichu.arena.v1.Referee/Play"


def hello(token: str = "", key: str = "", resume: bool = False, quiet: bool = False) -> bytes:
    h = pb.Hello(protocol_version=PROTOCOL_VERSION, bot_name="stub", resume=resume)
    if key:
        h.bot_key = key
    else:
        h.seat_token = token
    h.results_only = quiet
    return pb.BotMessage(hello=h).SerializeToString()


def answer(d: pb.DecisionRequest, rng: random.Random) -> bytes:
    a = pb.Action(request_id=d.request_id, state_seq=d.state_seq)
    legal = d.legal
    if d.kind == pb.DECISION_KIND_EXCHANGE:
        a.exchange_cards.extend(rng.sample(list(legal.values), 3))
    elif d.kind in (pb.DECISION_KIND_PLAY, pb.DECISION_KIND_BOMB_WINDOW):
        i = rng.randrange(len(legal.cards))
        a.choice_index = i
        a.cards = legal.cards[i]
    elif d.kind == pb.DECISION_KIND_GRAND_TICHU:
        a.choice_index = 0
    else:
        a.choice_index = rng.randrange(len(legal.values))
    return pb.BotMessage(action=a).SerializeToString()


def open_call(channel: grpc.aio.Channel) -> Any:
    play = channel.stream_stream(
        PLAY, request_serializer=None, response_deserializer=pb.RefereeMessage.FromString
    )
    return play()


async def try_token(address: str, token: str) -> str:
    """Presents a token on a fresh call: the status it was refused with, or ``JOINED``."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = open_call(channel)
        await call.write(hello(token))
        try:
            async for msg in call:
                if msg.WhichOneof("payload") == "welcome":
                    call.cancel()
                    return "JOINED"
        except grpc.aio.AioRpcError as e:
            return str(e.code().name)
        return "OK"


async def impostor(address: str, tokens: list[str]) -> None:
    """Presents other seats' tokens, one after the other, and prints what happened."""
    for other in tokens:
        code = await try_token(address, other)
        print(f"impostor: presented a token: {code}", flush=True)


MARKER = 4_000_000_000
"""The hostile bot's own value: no other seat may ever see it."""


def oversized(d: pb.DecisionRequest) -> bytes:
    """An exchange answer of about 2 MB: 400,000 card ids, every one the marker."""
    a = pb.Action(request_id=d.request_id, state_seq=d.state_seq)
    a.exchange_cards.extend([MARKER] * 400_000)
    return pb.BotMessage(action=a).SerializeToString()


def echo(d: pb.DecisionRequest) -> bytes:
    """An answer whose index is the marker: rejected, with a text about it."""
    a = pb.Action(request_id=d.request_id, state_seq=d.state_seq, choice_index=MARKER)
    return pb.BotMessage(action=a).SerializeToString()


async def thief(address: str, token: str, rng: random.Random) -> None:
    """Resumes another seat with its token and plays it to the end; prints what happened."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = open_call(channel)
        await call.write(hello(token, resume=True))
        try:
            async for msg in call:
                which = msg.WhichOneof("payload")
                if which == "welcome":
                    print(f"thief: JOINED seat {msg.welcome.seat}", flush=True)
                elif which == "decision":
                    await call.write(answer(msg.decision, rng))
        except grpc.aio.AioRpcError as e:
            print(f"thief: refused {e.code().name}", flush=True)


async def play(args: argparse.Namespace) -> int:
    address = os.environ["TICHU_ARENA_SERVER"]
    token = os.environ.get("TICHU_ARENA_TOKEN", "")
    key = os.environ.get("TICHU_ARENA_BOT_KEY", "")
    rng = random.Random(args.seed)
    dump = open(args.dump, "a") if args.dump else None  # noqa: SIM115
    decisions = 0
    wrong: pb.DecisionRequest | None = None  # the request answered wrongly, to answer again
    sent = 0  # wrong answers sent to it
    resume = False
    tasks: list[asyncio.Future[None]] = []
    while True:
        async with grpc.aio.insecure_channel(address) as channel:
            call = open_call(channel)
            await call.write(hello(token, key, resume, args.quiet))
            dropped = False
            async for msg in call:
                if dump is not None:  # flushed at once: what it was sent, however it ends
                    dump.write(msg.SerializeToString().hex() + "\n")
                    dump.flush()
                which = msg.WhichOneof("payload")
                if which == "welcome":
                    token = msg.welcome.seat_token
                    key = ""
                    print(f"welcome seat {msg.welcome.seat} resumed={msg.welcome.resumed}")
                elif which == "event" and msg.event.WhichOneof("kind") == "hand_started":
                    # The match has started, so every seat has its bot: now try theirs.
                    if args.mode == "impostor" and not tasks:
                        others = os.environ.get("TEST_OTHER_TOKENS", "").split(",")
                        tasks.append(asyncio.ensure_future(impostor(address, others)))
                    if args.mode == "thief" and not tasks:
                        victim = os.environ["TEST_OTHER_TOKENS"].split(",")[0]
                        tasks.append(asyncio.ensure_future(thief(address, victim, rng)))
                elif which == "waiting":
                    print(f"waiting {msg.waiting.bots_waiting}", flush=True)
                elif which == "error":
                    print(f"error {msg.error.code} {msg.error.message}", flush=True)
                    if wrong is not None and msg.error.request_id == wrong.request_id:
                        big = wrong.kind == pb.DECISION_KIND_EXCHANGE and args.mode == "hostile"
                        sent += 1
                        if big and sent < 3:
                            await call.write(oversized(wrong))
                        else:
                            await call.write(answer(wrong, rng))
                            wrong = None
                    if args.mode == "garbage" and decisions > args.after and not msg.error.fatal:
                        await call.write(os.urandom(rng.randrange(1, 40)))
                elif which == "decision":
                    decisions += 1
                    d = msg.decision
                    late = decisions > args.after
                    if args.mode == "timeout" and late:
                        continue
                    if args.mode == "garbage" and late:
                        bad = pb.Action(request_id=d.request_id, state_seq=d.state_seq)
                        bad.choice_index = 10_000
                        await call.write(pb.BotMessage(action=bad).SerializeToString())
                        continue
                    if args.mode == "crash" and late:
                        os._exit(3)
                    if args.mode == "hostile":
                        wrong, sent = d, 0
                        exchange = d.kind == pb.DECISION_KIND_EXCHANGE
                        await call.write(oversized(d) if exchange else echo(d))
                        continue
                    if args.mode == "buggy" and rng.random() < args.wrong:
                        wrong = d
                        junk = os.urandom(rng.randrange(1, 40)) + b"\xff"
                        await call.write(junk if rng.random() < 0.5 else echo(d))
                        continue
                    if args.mode in ("disconnect", "vanish") and late and not resume:
                        dropped = True
                        call.cancel()
                        break
                    await call.write(answer(d, rng))
            if not dropped:
                break
        if args.mode == "vanish":
            await asyncio.sleep(3600)
        await asyncio.sleep(args.away)
        resume = True
    if dump is not None:
        dump.close()
    await asyncio.gather(*tasks)
    return 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="play")
    parser.add_argument("--after", type=int, default=0)
    parser.add_argument("--away", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--dump", default="")
    parser.add_argument("--wrong", type=float, default=0.04)
    sys.exit(asyncio.run(play(parser.parse_args())))


if __name__ == "__main__":
    main()
