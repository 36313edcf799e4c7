"""A raw ``Referee.Play`` client for the server tests, on the generated messages only."""

from __future__ import annotations

import random
from typing import Any

import grpc

from arena.wire import PROTOCOL_VERSION, pb

PLAY = "/tichu.arena.v1.Referee/Play"


def hello(
    token: str = "",
    *,
    key: str = "",
    resume: bool = False,
    version: str = PROTOCOL_VERSION,
    quiet: bool = False,
) -> pb.BotMessage:
    """A ``Hello`` with a seat token (or a bot key)."""
    h = pb.Hello(protocol_version=version, bot_name="test", resume=resume, results_only=quiet)
    if key:
        h.bot_key = key
    elif token:
        h.seat_token = token
    return pb.BotMessage(hello=h)


def answer(d: pb.DecisionRequest, rng: random.Random | None = None) -> pb.BotMessage:
    """A legal answer to a request (index 0, or random with ``rng``)."""
    a = pb.Action(request_id=d.request_id, state_seq=d.state_seq)
    legal = d.legal
    if d.kind == pb.DECISION_KIND_EXCHANGE:
        values = list(legal.values)
        a.exchange_cards.extend(rng.sample(values, 3) if rng else values[:3])
    elif d.kind in (pb.DECISION_KIND_PLAY, pb.DECISION_KIND_BOMB_WINDOW):
        a.choice_index = rng.randrange(len(legal.cards)) if rng else 0
    elif d.kind == pb.DECISION_KIND_GRAND_TICHU:
        a.choice_index = 0
    else:
        a.choice_index = rng.randrange(len(legal.values)) if rng else 0
    return pb.BotMessage(action=a)


class Client:
    """One ``Play`` call on its own channel; messages in and out as protobuf objects."""

    def __init__(self, address: str) -> None:
        self.channel = grpc.aio.insecure_channel(address)
        play = self.channel.stream_stream(
            PLAY,
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )
        self.call: Any = play()
        self.received: list[pb.RefereeMessage] = []

    async def send(self, msg: pb.BotMessage) -> None:
        await self.call.write(msg)

    async def recv(self) -> pb.RefereeMessage | None:
        """The next message, or ``None`` at the end of the stream (status OK)."""
        msg = await self.call.read()
        if msg is grpc.aio.EOF:
            return None
        self.received.append(msg)
        return msg  # type: ignore[no-any-return]

    async def next(self, payload: str) -> pb.RefereeMessage:
        """Reads until a message with ``payload`` (``welcome``, ``decision``, ...)."""
        while True:
            msg = await self.recv()
            if msg is None:
                raise AssertionError(f"the stream ended before a {payload}")
            if msg.WhichOneof("payload") == payload:
                return msg

    async def status(self) -> grpc.StatusCode:
        """Reads to the end; the call's final status code."""
        try:
            while await self.recv() is not None:
                pass
        except grpc.aio.AioRpcError as e:
            return e.code()  # type: ignore[no-any-return]
        return grpc.StatusCode.OK

    async def play_out(self, rng: random.Random | None = None) -> grpc.StatusCode:
        """Answers every request until the stream ends; the final status code."""
        try:
            while True:
                msg = await self.recv()
                if msg is None:
                    return grpc.StatusCode.OK
                if msg.WhichOneof("payload") == "decision":
                    await self.send(answer(msg.decision, rng))
        except grpc.aio.AioRpcError as e:
            return e.code()  # type: ignore[no-any-return]

    async def close(self) -> None:
        self.call.cancel()
        await self.channel.close()

    async def status_after(self, first: pb.BotMessage) -> grpc.StatusCode:
        """Sends ``first``, reads to the end; the final status code (then closes)."""
        await self.send(first)
        try:
            return await self.status()
        finally:
            await self.close()
