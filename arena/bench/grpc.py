"""``arena bench grpc``: the referee over real gRPC streams, with bot processes on loopback.

Two measurements, both with the server in this process (so its CPU is this process's CPU):

* **bare**: the floor. A grpc.aio server writes a 300-byte message on a bidi stream and
  waits for a client process to echo it, one message at a time, as a referee asks a bot.
* **tables**: ``n`` tables at once, four bot processes each (one per seat), each table
  playing ``hands`` hands. Decisions are the ones asked over the wire (forced passes are
  applied without a round trip and not counted); latency is per decision, from queuing the
  request to reading the accepted answer; CPU is the referee process's (every thread) and,
  apart, the bot processes': over their lives (start-up included) and, on Linux, while all
  ``n`` tables were playing (read from ``/proc``). Decisions per second are given for the
  whole run and for the time all ``n`` tables were playing (until the first finished).
* **logic**: the referee's own work per decision without any transport: a table whose four
  seats are ``GrpcSeat``s on in-memory streams that answer at once with a random legal
  entry. The time spent making those answers is measured and left out, so the figure is the
  referee's CPU on top of what the bare ping-pong costs (rules, conversion, events, clock).

Figures are printed, never asserted: the machine is shared and noisy (repeat runs).
"""

from __future__ import annotations

import asyncio
import os
import random
import resource
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import grpc

from arena.referee import TimeControl
from arena.rules import Options
from arena.server.app import SERVER_OPTIONS, ArenaServer
from arena.server.bots import play_table
from arena.server.manifest import Manifest
from arena.server.sandbox import Sandbox
from arena.server.seat import Stream
from arena.server.table import Table, TableSpec, TableState
from arena.wire import pb

_ECHO_CLIENT = """
import asyncio, sys, grpc
async def main(address):
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream("/bench.Echo/Echo")()
        await call.write(b"ready")
        while True:
            data = await call.read()
            if data is grpc.aio.EOF:
                return
            await call.write(data)
asyncio.run(main(sys.argv[1]))
"""


def _cpu(who: int = resource.RUSAGE_SELF) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def descendant_ticks() -> dict[int, int] | None:
    """CPU clock ticks so far of each running descendant of this process (Linux), or None.

    Descendants, not children: a sandboxed bot runs under its sandbox's processes.
    """
    if not os.path.isdir("/proc"):
        return None
    parent: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        # ppid, then utime and stime, are fields 4, 14 and 15 of stat
        parent[int(pid)] = int(fields[1])
        ticks[int(pid)] = int(fields[11]) + int(fields[12])
    mine = {os.getpid()}
    grew = True
    while grew:
        more = {pid for pid, ppid in parent.items() if ppid in mine} - mine
        mine |= more
        grew = bool(more)
    return {pid: ticks[pid] for pid in mine - {os.getpid()}}


def children_cpu() -> float | None:
    """CPU seconds used so far by this process's running descendants (Linux), or None.

    Unlike ``RUSAGE_CHILDREN``, it counts processes still running, so a window of a run can
    be measured without their start-up.
    """
    ticks = descendant_ticks()
    return None if ticks is None else sum(ticks.values()) / os.sysconf("SC_CLK_TCK")


class _LifetimeCpu:
    """The bots' CPU over their lives, sampled from ``/proc`` every ``every_s``.

    ``RUSAGE_CHILDREN`` misses it: the CPU of a process in a pid namespace does not reach
    the namespace's creator. What a process uses after its last sample is missed.
    """

    def __init__(self, every_s: float = 0.05) -> None:
        self.every_s = every_s
        self.seen: dict[int, int] = {}

    async def run(self) -> None:
        """Samples until cancelled."""
        while True:
            self.sample()
            await asyncio.sleep(self.every_s)

    def sample(self) -> None:
        """Keeps the latest tick count of every descendant."""
        for pid, ticks in (descendant_ticks() or {}).items():
            self.seen[pid] = max(ticks, self.seen.get(pid, 0))

    @property
    def seconds(self) -> float:
        """CPU seconds seen so far, over every descendant."""
        return sum(self.seen.values()) / os.sysconf("SC_CLK_TCK")


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by nearest rank; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Figures:
    """What one run measured. Latencies are in milliseconds."""

    label: str
    messages: int
    seconds: float
    cpu_seconds: float
    latencies_ms: list[float] = field(default_factory=list)
    hands: int = 0
    forced: int = 0
    bot_cpu_seconds: float = 0.0  # the bot processes' CPU (tables only)
    full_rate: float = 0.0  # decisions/s while every table was playing (tables only)
    bot_cpu_playing: float | None = None  # bots' CPU s per decision meanwhile (Linux only)

    @property
    def per_second(self) -> float:
        """Round trips (decisions) per second."""
        return self.messages / self.seconds if self.seconds else 0.0

    @property
    def hands_per_second(self) -> float:
        """Hands per second (tables only)."""
        return self.hands / self.seconds if self.seconds else 0.0

    @property
    def p50_us(self) -> float:
        """Median latency per round trip, microseconds."""
        return 1000.0 * percentile(self.latencies_ms, 0.5)

    @property
    def p99_us(self) -> float:
        """99th-percentile latency per round trip, microseconds."""
        return 1000.0 * percentile(self.latencies_ms, 0.99)

    @property
    def cpu_us(self) -> float:
        """Server (referee) CPU per round trip, microseconds."""
        return 1e6 * self.cpu_seconds / self.messages if self.messages else 0.0

    @property
    def bot_cpu_us(self) -> float:
        """The bot processes' CPU per decision asked, microseconds (tables only)."""
        return 1e6 * self.bot_cpu_seconds / self.messages if self.messages else 0.0


async def bench_bare(messages: int = 5000, size: int = 300, warmup: int = 500) -> Figures:
    """The floor: server-driven ping-pong with one client process, measured at the server."""
    payload = bytes(range(256)) * (size // 256 + 1)
    payload = payload[:size]
    result: dict[str, Figures] = {}
    done = asyncio.Event()

    async def echo(
        request_iterator: object, context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> None:
        await context.read()  # the client's "ready"
        for _ in range(warmup):
            await context.write(payload)
            await context.read()
        lat: list[float] = []
        clock = time.perf_counter
        t0 = clock()
        c0 = _cpu()
        for _ in range(messages):
            t = clock()
            await context.write(payload)
            await context.read()
            lat.append((clock() - t) * 1000.0)
        result["bare"] = Figures("bare", messages, clock() - t0, _cpu() - c0, lat)
        done.set()

    server = grpc.aio.server(options=SERVER_OPTIONS)
    handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.stream_stream_rpc_method_handler(echo)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("bench.Echo", {"Echo": handler}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _ECHO_CLIENT, f"127.0.0.1:{port}"
    )
    try:
        await asyncio.wait_for(done.wait(), 120)
    finally:
        await server.stop(0.5)
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except TimeoutError:
            proc.kill()
            await proc.wait()
    return result["bare"]


async def bench_tables(
    manifest: Manifest,
    tables: int,
    hands: int,
    seed: int = 1,
    decision_ms: int = 5000,
    sandbox: Sandbox | None = None,
) -> Figures:
    """``tables`` tables at once, four ``manifest`` bot processes each, ``hands`` hands each.

    The bots run in ``sandbox`` (default: the host's full one; ``unsandboxed()`` for none).
    """
    server = ArenaServer()
    await server.start()
    made: list[Table] = []
    specs = [
        TableSpec(
            options=Options(hands=hands),
            seed=seed + k,
            time=TimeControl(decision_ms),
            names=(manifest.name,) * 4,
            startup_timeout_s=300.0,
            pace_forced=False,
        )
        for k in range(tables)
    ]
    first_done = asyncio.Event()  # a table's match is over (before its bots are stopped)
    lifetime = _LifetimeCpu(0.1)
    sampler = asyncio.ensure_future(lifetime.run())
    b0 = _cpu(resource.RUSAGE_CHILDREN)
    runs = [
        asyncio.ensure_future(
            play_table(
                server,
                spec,
                [manifest] * 4,
                on_table=made.append,
                on_record=lambda k, record: first_done.set(),
                sandbox=sandbox,
            )
        )
        for spec in specs
    ]
    try:
        while len(made) < tables or any(t.state is TableState.WAITING for t in made):
            if any(r.done() for r in runs):
                break
            await asyncio.sleep(0.005)
        t0 = time.perf_counter()
        c0 = _cpu()
        sampler.cancel()  # not while measuring: the referee's CPU would include it
        lifetime.sample()
        k0 = children_cpu()
        # The whole-machine rate counts while all the tables play: the last ones to finish
        # would otherwise play on alone and dilute it.
        done = asyncio.ensure_future(first_done.wait())
        await asyncio.wait([done, *runs], return_when=asyncio.FIRST_COMPLETED)
        done.cancel()
        answered = sum(len(seat.latencies) for table in made for seat in table.seats)
        full_rate = answered / (time.perf_counter() - t0)
        k1 = children_cpu()
        lifetime.sample()
        sampler = asyncio.ensure_future(lifetime.run())
        playing = None if k0 is None or k1 is None or not answered else (k1 - k0) / answered
        results = await asyncio.gather(*runs)
        seconds = time.perf_counter() - t0
        cpu = _cpu() - c0
        # The waited-for bot processes, start-up included; sampled where a pid namespace
        # keeps their CPU from this process's children's usage.
        bots = max(_cpu(resource.RUSAGE_CHILDREN) - b0, lifetime.seconds)
    finally:
        sampler.cancel()
        await server.stop(1.0)
    lat: list[float] = []
    decisions = played = forced = 0
    for table, records in results:
        for seat in table.seats:
            lat.extend(seat.latencies)
        for rec in records:
            decisions += rec.decisions
            forced += rec.forced
            played += rec.outcome.hands_played
    label = f"{tables} table{'s' if tables > 1 else ''}"
    return Figures(label, decisions, seconds, cpu, lat, played, forced, bots, full_rate, playing)


class _InstantBot(Stream):
    """An in-memory stream whose bot answers every request at once (the ``logic`` figure)."""

    def __init__(self, seed: int) -> None:
        super().__init__(None, pb.Hello(results_only=True))
        self.rng = random.Random(seed)
        self.bot_seconds = 0.0

    def send(self, data: bytes) -> None:
        """Reads a message as a bot would and queues its answer to the seat."""
        t = time.thread_time()
        msg = pb.RefereeMessage.FromString(data)
        if msg.WhichOneof("payload") == "decision":
            d = msg.decision
            a = pb.Action(request_id=d.request_id, state_seq=d.state_seq)
            legal = d.legal
            if d.kind == pb.DECISION_KIND_EXCHANGE:
                a.exchange_cards.extend(self.rng.sample(list(legal.values), 3))
            elif d.kind in (pb.DECISION_KIND_PLAY, pb.DECISION_KIND_BOMB_WINDOW):
                a.choice_index = self.rng.randrange(len(legal.cards))
            elif d.kind != pb.DECISION_KIND_GRAND_TICHU:
                a.choice_index = self.rng.randrange(len(legal.values))
            answer = pb.BotMessage(action=a).SerializeToString()
            owner = self.owner
            assert owner is not None
            asyncio.get_running_loop().call_soon(owner.on_message, self, answer)
        self.bot_seconds += time.thread_time() - t


LOGIC_MATCHES = 16
"""Matches to 1000 the ``logic`` figure plays (about 200 hands)."""


async def bench_logic(matches: int = LOGIC_MATCHES, seed: int = 1) -> Figures:
    """The referee's own CPU per decision, with no transport (see the module docstring).

    The table plays ``matches`` matches to 1000 one after another, as a league does (about
    12 hands each): a long single match would grow scores, state numbers and the match's
    history beyond any real game's.
    """
    spec = TableSpec(
        options=Options(), seed=seed, time=TimeControl(), matches=matches, pace_forced=False
    )  # 1 s
    table = Table("logic", spec, ["a", "b", "c", "d"], None, lambda t: None)
    bots = [_InstantBot(seed * 10 + s) for s in range(4)]
    for s, bot in enumerate(bots):
        table.seats[s].attach(bot, resume=False)
    t0 = time.perf_counter()
    c0 = time.thread_time()
    records = await table.wait()
    cpu = time.thread_time() - c0 - sum(b.bot_seconds for b in bots)
    return Figures(
        "logic",
        sum(r.decisions for r in records),
        time.perf_counter() - t0,
        cpu,
        hands=sum(r.outcome.hands_played for r in records),
        forced=sum(r.forced for r in records),
    )
