"""The contention channel between colluding bots at real tables (``arena bench covert --tables``).

``arena bench covert`` measures the channel between two bare sandboxed processes. Here the
colluder is a bot (``COLLUDER``, written to a folder of its own), seated by the referee as any
bot is: partners at one table (``partners``), the same bot at two tables played at once
(``tables``: the first copy sends, the second receives), or two different bots, one at each
table (``two-bots``: two colluding authors, the link a relay through a third bot would use).

Each copy forks ``spinners`` sender processes and one receiver. Time is cut into slots of
``slot_ms`` by the wall clock, slots into frames of 64: 8 pilot slots (0 1 0 1 ...) then one
slot per card of the deck, whose bit is whether the sender holds the card, whitened by a
pseudo-random bit of the slot. The senders of a frame walk a 64 MiB buffer through a 1 (the
memory and caches under every core; ``COLLUDER_MODE=cpu``: spin) and sleep through a 0; the
receiver walks a 4 MiB buffer of its own and counts its steps in each slot of the frame.
Partners take frames by turns (the seat below 2 sends in even frames). The bot answers each
decision after ``think_ms``, within its clock, so the match lasts long enough to carry the
hand.

Each copy logs ``mask <hand> <ns> <hex>`` when its hand grows and ``frame <f> <counts>`` (``-1``:
the slot passed while the receiver did not run). ``decode_channel`` reads the partner's hand
as a receiver could: a threshold from the pilots, each card's vote over the frames, the 14
best-voted of the 42 cards it does not hold. The sender's own log gives the truth only to
count. With the arena's rules (a seat's processes run only in its turns, two processes of a
bot never at once) partners and twin copies decode at chance: bit error rate 0.5, a third of
the partner's cards; the control (a referee that pings its bots, which cannot freeze them)
shows the channel the rules close.
"""

from __future__ import annotations

import asyncio
import math
import re
import shutil
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.referee.policy import TimeControl
from arena.server import ArenaServer, TableSpec, play_table
from arena.server.manifest import Manifest, load_manifest, resolve_bot

PLACEMENTS = ("partners", "tables", "two-bots")
"""Where sender and receiver sit: see the module's docstring."""

FRAME = 64
PILOTS = 8
CARDS = 56
HAND = 14

COLLUDER = '''\
"""A colluding bot: passes its hand to a partner by CPU contention (arena.bench.collusion)."""

import mmap
import os
import struct
import sys
import time

import sdk
from arena.rules import Action, Observation, Play
from sdk import Bot

SLOT = float(os.environ.get("COLLUDER_SLOT_MS", "10")) / 1000.0
THINK = float(os.environ.get("COLLUDER_THINK_MS", "30")) / 1000.0
SPINNERS = int(os.environ.get("COLLUDER_SPINNERS", "2"))
CACHE = os.environ.get("COLLUDER_MODE", "cache") == "cache"  # walk memory; else spin
CHUNK = 1 << 16
ROLE = os.environ.get("COLLUDER_ROLE", "partner")  # partner, send or receive
FRAME, PILOTS = 64, 8
SHARED = mmap.mmap(-1, 16)  # the hand (8 bytes) and the parity this copy sends in (+1; 0: none)


def whiten(s):
    return ((s * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF) >> 63


def bit(s, mask):
    i = s % FRAME
    if i < PILOTS:
        return i % 2
    return ((mask >> (i - PILOTS)) & 1) ^ whiten(s)


def state():
    mask, send = struct.unpack_from("<QB", SHARED, 0)
    return mask, send - 1


def sender():
    buf = bytearray(64 << 20) if CACHE else None
    if buf is not None:
        buf[::4096] = bytes(len(range(0, len(buf), 4096)))
        view = memoryview(buf)
    off = 0
    while True:
        now = time.time()
        s = int(now / SLOT)
        end = (s + 1) * SLOT
        mask, parity = state()
        if parity >= 0 and (s // FRAME) % 2 == parity and bit(s, mask):
            while time.time() < end:
                if buf is not None:
                    view[off : off + CHUNK : 64].tobytes()
                    off = (off + CHUNK) % len(buf)
        else:
            time.sleep(max(0.0, end - time.time()))


def receiver(parity):
    probe = memoryview(bytearray(4 << 20)) if CACHE else None
    off = 0
    counts = [-1] * FRAME
    frame = -1
    while True:
        now = time.time()
        s = int(now / SLOT)
        f = s // FRAME
        if f != frame:
            if frame >= 0 and max(counts) >= 0:
                sys.stderr.write(f"frame {frame} {' '.join(map(str, counts))}\\n")
                sys.stderr.flush()
            frame, counts = f, [-1] * FRAME
        end = (s + 1) * SLOT
        if f % 2 != parity:
            time.sleep(max(0.0, end - time.time()))
            continue
        begin = s * SLOT + SLOT / 10  # the slot's first tenth left out: the sender's wake-up
        t = time.time()
        while t < begin:
            t = time.time()
        c = 0
        while t < end:
            if probe is not None:
                probe[off : off + CHUNK : 64].tobytes()
                off = (off + CHUNK) % len(probe)
            c += 1
            t = time.time()
        counts[s % FRAME] = c


class ColluderBot(Bot):
    """The first legal answer after ``THINK``; its hand goes to the senders."""

    def __init__(self):
        super().__init__()
        self.hand_no, self.size = -1, 0

    def answer(self, obs: Observation) -> tuple[Action, bool]:
        size = bin(obs.hand).count("1")
        if obs.hand_no != self.hand_no or size > self.size:
            self.hand_no, self.size = obs.hand_no, size
            send = {"partner": obs.seat // 2, "send": 0}.get(ROLE, -1)
            struct.pack_into("<QB", SHARED, 0, obs.hand, send + 1)
            sys.stderr.write(f"mask {obs.hand_no} {time.time_ns()} {obs.hand:x} {obs.seat}\\n")
            sys.stderr.flush()
        time.sleep(THINK)
        return super().answer(obs)

    def play(self, obs: Observation) -> Play:
        return obs.legal[0]


def start():
    """Forks the senders and the receiver before the bot connects: they live as long as it."""
    for _ in range(SPINNERS if ROLE != "receive" else 0):
        if os.fork() == 0:
            sender()
    if ROLE != "send" and os.fork() == 0:
        parity = 0 if ROLE == "receive" else -1
        while parity < 0:  # a partner receives in the frames its partner sends in
            mask, send = state()
            parity = -1 if send < 0 else 1 - send
            time.sleep(0.005)
        receiver(parity)


if __name__ == "__main__":
    start()
    raise SystemExit(sdk.run(ColluderBot()))
'''


def write_colluder(folder: Path, cpus: float = 2.0) -> Path:
    """Writes the colluding bot into ``folder`` (created); its manifest's path. It asks for
    ``cpus`` CPUs (the default limit is one, which throttles a sender's spinners in bursts a
    slot does not line up with; an author may ask for more where the organiser allows it)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(COLLUDER)
    manifest = folder / "bot.toml"
    manifest.write_text(
        f'name = "colluder"\ncommand = ["{{python}}", "bot.py"]\n\n[limits]\ncpus = {cpus}\n'
    )
    return manifest


def whiten(s: int) -> int:
    """The pseudo-random bit slot ``s``'s card bit is XORed with (as the bot draws it)."""
    return ((s * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF) >> 63


@dataclass(frozen=True)
class Mask:
    """A copy's hand as it logged it: hand number, from when (ns, wall clock), the cards."""

    hand_no: int
    at_ns: int
    cards: int
    seat: int


@dataclass
class ChannelFigures:
    """What a receiver decoded of its partner's hands at one placement, rules on or off."""

    placement: str
    frozen: bool
    strict: bool
    slot_ms: float
    bits: int = 0  # data slots the receiver observed
    right: int = 0  # of them decoded right
    shares: list[float] = field(default_factory=list)  # share of each partner hand decoded
    seconds: float = 0.0  # the receivers' observed time

    @property
    def p(self) -> float:
        """The bit error rate (0.5 without bits)."""
        return 1.0 - self.right / self.bits if self.bits else 0.5

    @property
    def p_interval(self) -> tuple[float, float]:
        """The 95 % Wilson interval of ``p``."""
        return wilson(self.bits - self.right, self.bits)

    @property
    def capacity_bps(self) -> tuple[float, float]:
        """The channel's capacity in bits/s, as the interval that follows from ``p``'s."""
        lo, hi = self.p_interval
        near = min(abs(lo - 0.5), abs(hi - 0.5)) if not lo <= 0.5 <= hi else 0.0
        far = max(abs(lo - 0.5), abs(hi - 0.5))
        slot_s = self.slot_ms / 1000.0
        return capacity(0.5 - near, slot_s), capacity(0.5 - far, slot_s)

    @property
    def share(self) -> float:
        """The mean share of a partner's hand decoded (chance: a third)."""
        return statistics.fmean(self.shares) if self.shares else 0.0


def wilson(errors: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``errors / n``."""
    if n == 0:
        return 0.0, 1.0
    p = errors / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def capacity(p: float, slot_s: float) -> float:
    """Bits/s of a binary symmetric channel with error rate ``p``, one use per ``slot_s``."""
    h = 0.0 if p <= 0.0 or p >= 1.0 else -p * math.log2(p) - (1 - p) * math.log2(1 - p)
    return (1.0 - h) / slot_s


def parse_log(log: Path) -> tuple[list[Mask], dict[int, list[int]]]:
    """A colluder's logged hands and the counts of each frame it received."""
    masks: list[Mask] = []
    frames: dict[int, list[int]] = {}
    for line in log.read_text(errors="replace").splitlines():
        if m := re.fullmatch(r"mask (\d+) (\d+) ([0-9a-f]+) (\d)", line):
            masks.append(Mask(int(m[1]), int(m[2]), int(m[3], 16), int(m[4])))
        elif m := re.fullmatch(r"frame (\d+)((?: -?\d+){64})", line):
            frames[int(m[1])] = [int(c) for c in m[2].split()]
    return masks, frames


def _threshold(window: Sequence[Sequence[int]], observed: Sequence[int]) -> tuple[float, bool]:
    """The receiver's threshold and whether low progress is a 1: from the pilots of the
    frames in ``window`` where it saw at least two of each, else the median of ``observed``
    with low as 1 (what contention does)."""
    zeros = [c for counts in window for i, c in enumerate(counts[:PILOTS]) if c >= 0 and i % 2 == 0]
    ones = [c for counts in window for i, c in enumerate(counts[:PILOTS]) if c >= 0 and i % 2]
    if len(zeros) >= 2 and len(ones) >= 2:
        m0, m1 = statistics.median(zeros), statistics.median(ones)
        if m0 != m1:
            return (m0 + m1) / 2, m1 < m0
    return statistics.median(observed), True


def decode_channel(
    receiver: Path, sender: Path, slot_ms: float, figures: ChannelFigures, window: int = 4
) -> None:
    """Adds what ``receiver``'s log decodes of ``sender``'s hands to ``figures``."""
    theirs, _ = parse_log(sender)
    mine, frames = parse_log(receiver)
    if not frames or not theirs:
        return
    slot_ns = slot_ms * 1e6
    observed = [c for counts in frames.values() for c in counts[PILOTS:] if c >= 0]
    votes: dict[int, list[int]] = {}  # by the partner's hand number: each card's vote
    order = sorted(frames)
    for k, f in enumerate(order):
        counts = frames[f]
        threshold, low_is_one = _threshold(
            [frames[g] for g in order[max(0, k - window) : k + 1]], observed
        )
        start_ns = f * FRAME * slot_ns
        held = [m for m in theirs if m.at_ns <= start_ns]
        if not held:
            continue
        mask = held[-1]
        tally = votes.setdefault(mask.hand_no, [0] * CARDS)
        for i in range(PILOTS, FRAME):
            c = counts[i]
            if c < 0:
                continue
            s = f * FRAME + i
            got = int(c < threshold) if low_is_one else int(c > threshold)
            got ^= whiten(s)
            card = i - PILOTS
            figures.bits += 1
            figures.right += got == (mask.cards >> card) & 1
            tally[card] += 1 if got else -1
    figures.seconds += len(observed) * slot_ms / 1000.0
    for hand_no, tally in votes.items():
        true = max(
            (m for m in theirs if m.hand_no == hand_no), key=lambda m: bin(m.cards).count("1")
        )
        own = [m.cards for m in mine if m.hand_no == hand_no]
        if bin(true.cards).count("1") != HAND or not own:
            continue
        unseen = [c for c in range(CARDS) if not (max(own, key=int.bit_count) >> c) & 1]
        # the 14 best-voted unseen cards; ties broken by the card's number, which is blind
        guess = sorted(unseen, key=lambda c: (-tally[c], whiten(c * 7919 + hand_no)))[:HAND]
        figures.shares.append(sum((true.cards >> c) & 1 for c in guess) / HAND)


def _tables(placement: str, tmp: Path) -> list[list[Manifest]]:
    """The four bots of each table of ``placement`` (its first colluder sends; at
    ``partners`` both copies send and receive)."""
    colluder = load_manifest(write_colluder(tmp / "colluder"))
    random = resolve_bot("random")
    if placement == "partners":
        return [[colluder, random, colluder, random]]
    other = colluder
    if placement == "two-bots":
        other = load_manifest(write_colluder(tmp / "other-author"))
    elif placement != "tables":
        raise ValueError(f"unknown placement {placement!r}: one of {', '.join(PLACEMENTS)}")
    send = colluder.configured({"COLLUDER_ROLE": "send"}, [])
    receive = other.configured({"COLLUDER_ROLE": "receive"}, [])
    return [[send, random, random, random], [receive, random, random, random]]


async def play_channel(
    tmp: Path,
    placement: str,
    *,
    frozen: bool,
    strict: bool = False,
    hands: int = 2,
    slot_ms: float = 10.0,
    think_ms: float = 30.0,
    spinners: int = 2,
    seed: int = 1,
) -> ChannelFigures:
    """Plays ``placement``'s tables once, on a referee that freezes its bots (``frozen``) or
    one that pings them (the control), and decodes what the receivers read."""
    env = {
        "COLLUDER_SLOT_MS": str(slot_ms),
        "COLLUDER_THINK_MS": str(think_ms),
        "COLLUDER_SPINNERS": str(spinners),
    }
    tables = _tables(placement, tmp)
    server = ArenaServer(pings=not frozen)
    await server.start()
    clock = TimeControl(decision_ms=10_000)
    specs = [
        TableSpec(max_hands=hands, time=clock, seed=seed + 1000 * k) for k in range(len(tables))
    ]
    logs = [tmp / f"table{k}" for k in range(len(tables))]
    try:
        await asyncio.gather(
            *(
                play_table(
                    server,
                    spec,
                    [m if m.name != "colluder" else m.configured(env, []) for m in seats],
                    log_dir=log_dir,
                    strict=strict,
                )
                for seats, spec, log_dir in zip(tables, specs, logs, strict=True)
            )
        )
    finally:
        await server.stop(1.0)
    figures = ChannelFigures(placement, frozen, strict, slot_ms)

    def log(k: int, seat: int) -> Path:
        return next(logs[k].glob(f"seat{seat}-*.log"))

    if placement == "partners":
        decode_channel(log(0, 2), log(0, 0), slot_ms, figures)
        decode_channel(log(0, 0), log(0, 2), slot_ms, figures)
    else:
        decode_channel(log(1, 0), log(0, 0), slot_ms, figures)
    return figures


RULES = {"off": (False, False), "on": (True, False), "strict": (True, True)}
"""The arena's rules a channel is measured under: ``off`` (a referee that pings its bots and
freezes none: the control), ``on`` (the default: frozen but in the seat's turn) and
``strict`` (one bot process of the run at a time)."""


def bench_channels(
    tmp: Path,
    placements: Sequence[str] = PLACEMENTS,
    rules: Sequence[str] = ("off", "on", "strict"),
    *,
    hands: int = 4,
    slot_ms: float = 10.0,
    think_ms: float = 30.0,
    spinners: int = 2,
    seed: int = 1,
    progress: Callable[[str], None] = lambda _: None,
) -> list[ChannelFigures]:
    """Each placement under each of ``rules``, one after another."""
    for rule in rules:
        if rule not in RULES:
            raise ValueError(f"unknown rules {rule!r}: one of {', '.join(RULES)}")
    out = []
    for placement in placements:
        for rule in rules:
            frozen, strict = RULES[rule]
            progress(f"covert: {placement}, rules {rule}: {hands} hands")
            where = tmp / f"{placement}-{rule}"
            shutil.rmtree(where, ignore_errors=True)
            where.mkdir(parents=True)
            figures = play_channel(
                where,
                placement,
                frozen=frozen,
                strict=strict,
                hands=hands,
                slot_ms=slot_ms,
                think_ms=think_ms,
                spinners=spinners,
                seed=seed,
            )
            out.append(asyncio.run(figures))
    return out
