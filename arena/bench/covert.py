"""``arena bench covert``: the timing channel two colluding bot processes keep, in bits/s.

The sandbox closes what two processes could share (docs/security.md, sections 2 and 6) but
not the CPUs and caches they run on: partners at one table always run at once. This starts a
sender and a receiver exactly as bots are started (the host's sandbox, ``Sandbox.launch``, a
folder of their own, default ``Limits``). They share nothing but a wall-clock start time and a
seed, both on their command line. From the start, time is cut into slots of ``T``; for a 1 the
sender keeps its ``spinners`` processes busy through the slot (spinning, or walking a buffer
larger than the shared cache), for a 0 it sleeps. The receiver spins a counting loop (or walks
a cache-sized buffer of its own) and records its progress in each slot.

Each slot length sends a known 32-bit preamble (0101...) and then ``bits`` pseudo-random bits
drawn from the seed (in an attack the message would be a hand; here the bench knows it, to
count errors). The receiver's progress is decoded as a receiver could: a threshold halfway
between the medians of the preamble's 0s and 1s, its sign taken from the preamble too. From
the bit error rate ``p`` follow the raw rate ``1/T`` and the capacity of a binary symmetric
channel, ``(1 - H(p)) / T`` bits/s: what a code could carry without errors. Figures are
printed, never asserted.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.server.manifest import Limits
from arena.server.sandbox import SOCKET_NAME, Launch, Sandbox

HAND_BITS = math.log2(math.comb(42, 14))
"""Bits of another seat's 14-card hand, given your own 14 of the 56 cards."""

DEAL_BITS = math.log2(math.factorial(42) // math.factorial(14) ** 3)
"""Bits of the whole deal given your own hand: which of the 42 cards each other seat holds."""

PREAMBLE = tuple(i % 2 for i in range(32))
"""Known to both: the receiver's calibration (its threshold and which side is a 1)."""

PLACEMENTS = ("arena", "same-core", "cross-core")
"""``arena``: no pinning, as the arena runs bots; else both on one core, or one on each."""

MODES = ("cpu", "cache")
"""``cpu``: the sender spins for a 1; ``cache``: it walks a buffer larger than the cache."""

GAP_S = 0.2
"""Idle time between two slot lengths' messages."""

LATE = 3
"""A peer's exit code when it was ready only after the start time (the bench retries)."""

COMMON = '''
import gc, json, os, random, sys, time

CFG = json.loads(sys.argv[1])
PREAMBLE = [i % 2 for i in range(CFG["preamble"])]


def message(seed, segment, n):
    """The pseudo-random bits sent at one slot length (the bench draws the same)."""
    rng = random.Random(f"covert:{seed}:{segment}")
    return [rng.getrandbits(1) for _ in range(n)]


def schedule():
    """(segment, start of its first slot, slot length in s, slots) for each slot length."""
    t = CFG["start"]
    n = CFG["preamble"] + CFG["bits"]
    for k, ms in enumerate(CFG["slots_ms"]):
        yield k, t, ms / 1000.0, n
        t += n * ms / 1000.0 + CFG["gap_s"]


def pin():
    """Pins this process (and the children it forks) to CFG["cpu"]; says how that went."""
    if CFG["cpu"] < 0:
        return "no"
    try:
        os.sched_setaffinity(0, {CFG["cpu"]})
    except OSError as e:
        return "refused: " + (e.strerror or str(e))
    return "yes"


def wait_for_start(pinned):
    if time.time() > CFG["start"] - 0.001:
        print(json.dumps({"late": time.time() - CFG["start"], "pinned": pinned}), flush=True)
        sys.exit(3)
    gc.disable()
'''

SENDER = (
    COMMON
    + """

def busy(end, buf, chunk):
    if buf is None:
        while time.time() < end:
            pass
        return
    view = memoryview(buf)
    while True:
        for off in range(0, len(buf), chunk):
            if time.time() >= end:
                return
            view[off : off + chunk : 64].tobytes()


def send(buf):
    for k, t0, slot, n in schedule():
        bits = PREAMBLE + message(CFG["seed"], k, CFG["bits"])
        time.sleep(max(0.0, t0 - time.time()))
        for i, bit in enumerate(bits):
            end = t0 + (i + 1) * slot
            if bit:
                busy(end, buf, 1 << 20)
            else:
                time.sleep(max(0.0, end - time.time()))


pinned = pin()
buf = None
if CFG["mode"] == "cache":
    buf = bytearray(CFG["buffer_mb"] << 20)
    buf[::4096] = bytes(len(range(0, len(buf), 4096)))  # its pages made, before the start
wait_for_start(pinned)
children = []
for _ in range(CFG["spinners"] - 1):
    pid = os.fork()
    if pid == 0:
        send(buf)
        os._exit(0)
    children.append(pid)
send(buf)
for pid in children:
    os.waitpid(pid, 0)
print(json.dumps({"pinned": pinned}), flush=True)
"""
)

RECEIVER = (
    COMMON
    + """

def receive(probe, chunk):
    out = []
    view = memoryview(probe) if probe is not None else None
    for _, t0, slot, n in schedule():
        counts = [0] * n
        guard = slot / 10  # the slot's first tenth is left out: the sender's wake-up
        time.sleep(max(0.0, t0 - time.time() - 0.002))
        off = 0
        for i in range(n):
            begin = t0 + i * slot + guard
            end = t0 + (i + 1) * slot
            t = time.time()
            while t < begin:
                t = time.time()
            c = 0
            if view is None:
                while t < end:
                    c += 1
                    t = time.time()
            else:
                while t < end:
                    view[off : off + chunk : 64].tobytes()
                    off = (off + chunk) % len(probe)
                    c += 1
                    t = time.time()
            counts[i] = c
        out.append(counts)
    return out


pinned = pin()
probe = None
if CFG["mode"] == "cache":
    probe = bytearray(CFG["probe_kb"] << 10)
    probe[::4096] = bytes(len(range(0, len(probe), 4096)))
wait_for_start(pinned)
counts = receive(probe, 64 << 10)
print(json.dumps({"pinned": pinned, "counts": counts}), flush=True)
"""
)


class CovertError(Exception):
    """A peer failed or did not finish: the message says which and why."""


def entropy(p: float) -> float:
    """The binary entropy H(p) in bits (0 at p = 0 and p = 1, 1 at p = 0.5)."""
    if p <= 0.0 or p >= 1.0:
        return 0.0
    return -p * math.log2(p) - (1.0 - p) * math.log2(1.0 - p)


def capacity_bps(p: float, slot_s: float) -> float:
    """Capacity of a binary symmetric channel with error rate ``p``, one use per ``slot_s``."""
    return (1.0 - entropy(p)) / slot_s


def message(seed: int, segment: int, n: int) -> list[int]:
    """The bits the sender sends at the ``segment``-th slot length (as ``COMMON`` draws them)."""
    rng = random.Random(f"covert:{seed}:{segment}")
    return [rng.getrandbits(1) for _ in range(n)]


def decode(counts: Sequence[int], preamble: Sequence[int] = PREAMBLE) -> list[int]:
    """The receiver's bits after the preamble, from its progress per slot and the preamble alone.

    The threshold lies halfway between the medians of the preamble's 0 and 1 slots; a 1 is the
    side the preamble's 1s fall on (less progress, when the sender's load slows the receiver).
    """
    zeros = [c for c, b in zip(counts, preamble, strict=False) if b == 0]
    ones = [c for c, b in zip(counts, preamble, strict=False) if b == 1]
    m0, m1 = statistics.median(zeros), statistics.median(ones)
    threshold = (m0 + m1) / 2
    low_is_one = m1 <= m0
    rest = counts[len(preamble) :]
    return [int(c < threshold) if low_is_one else int(c > threshold) for c in rest]


@dataclass(frozen=True)
class SlotFigures:
    """One slot length's message: its errors and the receiver's progress on 0s and 1s."""

    slot_ms: float
    bits: int
    errors: int
    zero_median: float
    one_median: float

    @property
    def p(self) -> float:
        """The bit error rate."""
        return self.errors / self.bits if self.bits else 0.5

    @property
    def raw_bps(self) -> float:
        """Slots per second: the rate before errors."""
        return 1000.0 / self.slot_ms

    @property
    def capacity_bps(self) -> float:
        """What a code could carry error-free through this channel, in bits/s."""
        return capacity_bps(self.p, self.slot_ms / 1000.0)


@dataclass(frozen=True)
class RunFigures:
    """One pair of processes: where they ran, how the sender loaded, each slot length."""

    placement: str
    mode: str
    spinners: int
    sender_pinned: str
    receiver_pinned: str
    slots: list[SlotFigures]

    @property
    def best(self) -> SlotFigures:
        """The slot length of the highest capacity."""
        return max(self.slots, key=lambda s: s.capacity_bps)


@dataclass(frozen=True)
class CovertFigures:
    """Every run of ``bench_covert``, and the sandbox they ran in."""

    sandbox: Sandbox
    cpus: list[int]
    runs: list[RunFigures]
    skipped: list[str]

    @property
    def best(self) -> tuple[RunFigures, SlotFigures] | None:
        """The run and slot length of the highest capacity (None without runs)."""
        pairs = [(r, r.best) for r in self.runs if r.slots]
        return max(pairs, key=lambda rs: rs[1].capacity_bps) if pairs else None


def placement_cpus(placement: str, cpus: Sequence[int]) -> tuple[int, int] | None:
    """(sender's CPU, receiver's CPU) for ``placement`` (-1: not pinned); None if impossible."""
    if placement == "arena":
        return -1, -1
    if placement == "same-core":
        return cpus[0], cpus[0]
    if placement == "cross-core":
        return (cpus[1], cpus[0]) if len(cpus) >= 2 else None
    raise ValueError(f"unknown placement {placement!r}: one of {', '.join(PLACEMENTS)}")


def _start(launch: Launch) -> subprocess.Popen[str]:
    """Starts a launched peer as the arena starts a bot (a session of its own)."""
    try:
        return subprocess.Popen(
            launch.argv,
            env=launch.env,
            cwd=launch.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            pass_fds=launch.fds,
        )
    finally:
        launch.close()


def _kill(proc: subprocess.Popen[str]) -> None:
    """Kills the peer's whole sandbox (its pid namespace dies with its first process)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired, ValueError, OSError):
        proc.communicate(timeout=10)


def _outcome(name: str, code: int | None, out: str, err: str) -> dict[str, object]:
    """The peer's last JSON line, or a CovertError saying why there is none."""
    lines = out.strip().splitlines()
    if code not in (0, LATE) or not lines:
        why = (err.strip().splitlines() or ["no output"])[-1]
        raise CovertError(f"the {name} exited with {code}: {why}")
    result = json.loads(lines[-1])
    if not isinstance(result, dict):
        raise CovertError(f"the {name} printed {lines[-1][:80]!r}")
    return result


def _run_pair(
    box: Sandbox,
    folder: Path,
    config: dict[str, object],
    cpus: tuple[int, int],
    lead_s: float,
    duration_s: float,
) -> tuple[dict[str, object], dict[str, object]] | None:
    """Runs one sender and one receiver; their results, or None if one was ready too late."""
    start = time.time() + lead_s
    procs: list[subprocess.Popen[str]] = []
    launches: list[Launch] = []
    try:
        for script, cpu in zip(("sender.py", "receiver.py"), cpus, strict=True):
            cfg = json.dumps({**config, "start": start, "cpu": cpu})
            launch = box.launch(
                [sys.executable, str(folder / script), cfg],
                cwd=folder,
                folder=folder,
                env={},
                socket=folder / SOCKET_NAME,
                limits=Limits(),
            )
            launches.append(launch)
            procs.append(_start(launch))
        sender, receiver = procs
        deadline = start + duration_s + 60.0
        while True:  # the sender's output is one short line: only the receiver's can fill a pipe
            try:
                r_out, r_err = receiver.communicate(timeout=0.25)
                break
            except subprocess.TimeoutExpired:
                code = sender.poll()
                if code == LATE:
                    return None
                if code not in (None, 0):
                    _, s_err = sender.communicate()
                    _outcome("sender", code, "", s_err)
                if time.time() > deadline:
                    raise CovertError("the receiver did not finish in time") from None
        try:
            s_out, s_err = sender.communicate(timeout=30.0)
        except subprocess.TimeoutExpired:
            raise CovertError("the sender did not finish in time") from None
    finally:
        for proc in procs:
            _kill(proc)
        for launch in launches:
            launch.release()
    sent = _outcome("sender", sender.returncode, s_out, s_err)
    got = _outcome("receiver", receiver.returncode, r_out, r_err)
    if LATE in (sender.returncode, receiver.returncode):
        return None
    return sent, got


def _figures(seed: int, bits: int, slots_ms: Sequence[float], counts: object) -> list[SlotFigures]:
    """Each slot length's errors, decoded from the receiver's counts as it could decode them."""
    if not (
        isinstance(counts, list)
        and len(counts) == len(slots_ms)
        and all(isinstance(cs, list) and len(cs) == len(PREAMBLE) + bits for cs in counts)
    ):
        raise CovertError("the receiver's counts do not match the schedule")
    out = []
    for k, (ms, cs) in enumerate(zip(slots_ms, counts, strict=True)):
        sent = message(seed, k, bits)
        errors = sum(a != b for a, b in zip(sent, decode(cs), strict=True))
        body = cs[len(PREAMBLE) :]
        zeros = [c for c, b in zip(body, sent, strict=True) if b == 0] or [0]
        ones = [c for c, b in zip(body, sent, strict=True) if b == 1] or [0]
        out.append(
            SlotFigures(float(ms), bits, errors, statistics.median(zeros), statistics.median(ones))
        )
    return out


def bench_covert(
    box: Sandbox,
    *,
    bits: int = 200,
    slots_ms: Sequence[float] = (2, 5, 10, 20, 50),
    spinners: Sequence[int] = (1, 2),
    placements: Sequence[str] = PLACEMENTS,
    modes: Sequence[str] = ("cpu",),
    seed: int = 1,
    lead_s: float = 2.0,
    buffer_mb: int = 64,
    probe_kb: int = 4096,
    progress: Callable[[str], None] = lambda _: None,
) -> CovertFigures:
    """A sender and receiver pair for each placement, mode and number of spinners.

    ``lead_s`` is how far ahead of now the start time is set; a pair in which a peer was
    ready only after it runs again with twice the lead (three tries). ``buffer_mb`` is what
    each of the sender's processes walks in ``cache`` mode, ``probe_kb`` the receiver's own.
    """
    for m in modes:
        if m not in MODES:
            raise ValueError(f"unknown mode {m!r}: one of {', '.join(MODES)}")
    cpus = sorted(os.sched_getaffinity(0))
    wheres = {p: placement_cpus(p, cpus) for p in placements}  # unknown names fail first
    figures = CovertFigures(box, cpus, [], [])
    duration = sum((len(PREAMBLE) + bits) * ms / 1000.0 + GAP_S for ms in slots_ms)
    with tempfile.TemporaryDirectory(prefix="tichu-covert-") as tmp:
        folder = Path(tmp)
        (folder / "sender.py").write_text(SENDER)
        (folder / "receiver.py").write_text(RECEIVER)
        (folder / SOCKET_NAME).touch()
        os.chmod(folder, 0o755)  # a uid of its own reads it
        # A launch made ahead builds the folder's image, so a pair's start needs no build.
        ahead = box.launch(
            [sys.executable],
            cwd=folder,
            folder=folder,
            env={},
            socket=folder / SOCKET_NAME,
            limits=Limits(),
        )
        ahead.close()
        ahead.release()
        for placement, where in wheres.items():
            if where is None:
                figures.skipped.append(f"{placement}: one CPU only ({cpus})")
                continue
            for mode in modes:
                for n in spinners:
                    config: dict[str, object] = {
                        "preamble": len(PREAMBLE),
                        "bits": bits,
                        "slots_ms": list(slots_ms),
                        "gap_s": GAP_S,
                        "seed": seed,
                        "mode": mode,
                        "spinners": n,
                        "buffer_mb": buffer_mb,
                        "probe_kb": probe_kb,
                    }
                    label = f"{placement}, {mode}, {n} spinner{'s' if n > 1 else ''}"
                    lead, result = lead_s, None
                    for _ in range(3):
                        progress(f"covert: {label}: about {lead + duration:.0f} s")
                        result = _run_pair(box, folder, config, where, lead, duration)
                        if result is not None:
                            break
                        lead *= 2
                        progress(f"covert: {label}: a peer was ready late; lead {lead:.1f} s")
                    if result is None:
                        raise CovertError(f"{label}: a peer was ready late three times")
                    sent, got = result
                    slots = _figures(seed, bits, slots_ms, got.get("counts"))
                    figures.runs.append(
                        RunFigures(
                            placement, mode, n, str(sent["pinned"]), str(got["pinned"]), slots
                        )
                    )
    return figures
