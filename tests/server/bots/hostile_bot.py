"""A hostile bot for the sandbox tests: it attacks its host first, then plays like the stub.

``--attack`` picks the attack; what it got is printed to stdout (its log), so the tests can
check that nothing secret came out:

* ``proc``: reads every ``/proc/<pid>/environ`` and ``cmdline`` it can see, and the
  referee's (``TEST_TARGET_PID``), and prints what it read.
* ``files``: prints the first bytes of each file in ``TEST_PATHS`` (``:``-separated: the
  results database, another bot's folder, the home folder) and lists the folders.
* ``network``: connects to the referee's TCP port on loopback (``TEST_TCP_PORT``) and, only
  when it sees no network interface but ``lo`` (so no packet can leave), to a documentation
  address; prints each outcome and how long it took.
* ``kill``: ``kill -9 -1``, then SIGKILL to the referee (``TEST_TARGET_PID``).
* ``fork``: leaves a grandchild in a new session, immune to SIGTERM and SIGHUP, sleeping
  with ``TEST_MARKER`` in its command line, and plays on.
* ``memory``: allocates 16 MiB blocks until refused, prints how far it got, exits with 4.
* ``flood``: writes to stdout without end and never plays.
* ``connections``: children open connections to the referee's socket by the hundred and
  hold them; prints how many the other end kept open, closed at once, or never answered;
  never plays.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import errno
import fcntl
import mmap
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable

import stub_bot  # beside this file: the bot's own folder

DOC_ADDRESS = ("192.0.2.1", 80)  # TEST-NET-1: reserved for documentation, never routed


def attack_proc() -> None:
    target = os.environ.get("TEST_TARGET_PID", "")
    pids = sorted({p for p in os.listdir("/proc") if p.isdigit()} | {target}, key=int)
    print(f"proc: visible pids {[p for p in pids if os.path.isdir(f'/proc/{p}')]}")
    for pid in pids:
        for what in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{what}", "rb") as f:
                    data = f.read().replace(b"\0", b" ")
                print(f"proc: {pid}/{what}: {data.decode(errors='replace')}")
            except OSError as e:
                print(f"proc: {pid}/{what}: refused ({e.strerror})")


def attack_files() -> None:
    for path in filter(None, os.environ.get("TEST_PATHS", "").split(":")):
        try:
            if os.path.isdir(path):
                print(f"files: {path}: lists {sorted(os.listdir(path))}")
            else:
                with open(path, "rb") as f:
                    print(f"files: {path}: reads {f.read(200)!r}")
        except OSError as e:
            print(f"files: {path}: refused ({e.strerror})")
    print(f"files: / holds {sorted(os.listdir('/'))}")


def connect(address: tuple[str, int]) -> str:
    t = time.perf_counter()
    try:
        with socket.create_connection(address, timeout=5):
            outcome = "CONNECTED"
    except OSError as e:
        outcome = f"failed ({errno.errorcode.get(e.errno or 0, e)})"
    return f"{outcome} in {time.perf_counter() - t:.3f} s"


def attack_network() -> None:
    port = int(os.environ["TEST_TCP_PORT"])
    print(f"network: referee tcp port: {connect(('127.0.0.1', port))}")
    interfaces = sorted(name for _, name in socket.if_nameindex())
    print(f"network: interfaces {interfaces}")
    if interfaces == ["lo"]:
        print(f"network: outside address: {connect(DOC_ADDRESS)}")
    else:
        print("network: outside address: not tried (the sandbox shows interfaces)")


def attack_kill() -> None:
    if os.getpid() > 2:  # no pid namespace of its own: a real kill -1 would hit the host
        print(f"kill: not tried: pid {os.getpid()}, so no pid namespace")
        return
    for target in (-1, int(os.environ["TEST_TARGET_PID"])):
        try:
            os.kill(target, signal.SIGKILL)
            print(f"kill: {target}: sent")
        except OSError as e:
            print(f"kill: {target}: refused ({e.strerror})")


def attack_fork() -> None:
    marker = os.environ["TEST_MARKER"]
    code = (
        "import os, signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    time.sleep(600)\n"
    )
    subprocess.Popen([sys.executable, "-c", code, marker], start_new_session=True)
    print("fork: left a sleeping grandchild")


def attack_memory() -> None:
    blocks = []
    try:
        while len(blocks) < 1024:
            blocks.append(bytearray(16 << 20))
    except MemoryError:
        pass
    print(f"memory: got {16 * len(blocks)} MiB", flush=True)
    sys.exit(4)


def attack_flood() -> None:
    line = b"flood " * 1000 + b"\n"
    out = sys.stdout.buffer
    while True:
        out.write(line)


FLOOD_CHILDREN = 8
FLOOD_EACH = 200  # below each process's descriptor limit
HELD: list[socket.socket] = []
"""The connections a flooding child holds until it is stopped."""


def _hold_connections(path: str, count: int) -> tuple[int, int, int]:
    """Opens ``count`` connections to ``path`` (for 10 s at most); returns how many the other
    end keeps open (it sent something), closed at once, or left silent or never took."""
    socks = HELD
    deadline = time.monotonic() + 10.0
    while len(socks) < count and time.monotonic() < deadline:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(path)
        except BlockingIOError:  # the listener's backlog is full: again, once it accepted
            s.close()
            time.sleep(0.001)
            continue
        except OSError:
            s.close()
            break
        socks.append(s)
    held = closed = 0
    poll = select.poll()
    pending = {s.fileno(): s for s in socks}
    for fd in pending:
        poll.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    deadline = time.monotonic() + 10.0
    while pending and time.monotonic() < deadline:
        for fd, _ in poll.poll(1000):
            s = pending.pop(fd)
            poll.unregister(fd)
            try:
                data = s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
            except OSError:
                data = b""
            if data:
                held += 1
            else:
                closed += 1
    return held, closed, count - held - closed


def attack_connections() -> None:
    path = os.environ["TICHU_ARENA_SERVER"].removeprefix("unix:")
    read, write = os.pipe()
    for _ in range(FLOOD_CHILDREN):
        if os.fork() == 0:
            counts = _hold_connections(path, FLOOD_EACH)
            os.write(write, (" ".join(map(str, counts)) + "\n").encode())
            while True:  # holding them until the sandbox is stopped
                time.sleep(60)
    totals = [0, 0, 0]
    with os.fdopen(read) as f:
        for _ in range(FLOOD_CHILDREN):
            for i, v in enumerate(f.readline().split()):
                totals[i] += int(v)
    print(f"connections: held {totals[0]}, closed {totals[1]}, silent {totals[2]}", flush=True)
    while True:
        time.sleep(60)


def _outcome(call: Callable[[], object]) -> str:
    try:
        call()
    except OSError as e:
        return f"refused ({errno.errorcode.get(e.errno or 0, e.errno)})"
    return "worked"


def _syscall(nr: int, *args: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    result = int(libc.syscall(nr, *(ctypes.c_long(a) for a in args)))
    if result < 0:
        raise OSError(ctypes.get_errno(), "")
    return result


def _mincore(fd: int) -> None:
    page = mmap.mmap(fd, 4096, access=mmap.ACCESS_COPY)
    vec = ctypes.create_string_buffer(1)
    _syscall(27, ctypes.addressof(ctypes.c_char.from_buffer(page)), 4096, ctypes.addressof(vec))


COUNTERS = ("meminfo", "vmstat", "stat", "loadavg", "sys/fs/file-nr", "pressure/memory")
"""Files of /proc that count for the whole machine: a bot's memory and open files move
them, and they stay moved while it is frozen (a storage channel to the next seat)."""


def _machine_counters() -> str:
    """Whether the machine's counters move when this process takes 256 MiB and 100 files."""
    before = {n: _read(f"/proc/{n}") for n in COUNTERS}
    hog = bytearray(256 << 20)
    hog[::4096] = bytes(len(range(0, len(hog), 4096)))  # its pages made
    files = [open(os.__file__, "rb") for _ in range(100)]  # noqa: SIM115
    time.sleep(0.3)
    moved = [n for n in COUNTERS if _read(f"/proc/{n}") != before[n]]
    for f in files:
        f.close()
    del hog
    return f"moved ({', '.join(moved)})" if moved else "still"


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        return f"unreadable ({errno.errorcode.get(e.errno or 0, e.errno)})"


def attack_kernel() -> None:
    """The kernel's shared state: locks and page-cache probes on a runtime file every bot
    reads, watches, nested namespaces, memfd, foreign socket families, /dev/shm."""
    shared = os.open(os.__file__, os.O_RDONLY)  # the standard library: in every sandbox
    lock = struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0)
    probes: dict[str, Callable[[], object]] = {
        "flock": lambda: fcntl.flock(shared, fcntl.LOCK_SH | fcntl.LOCK_NB),
        "fcntl lock": lambda: fcntl.fcntl(shared, fcntl.F_GETLK, lock),
        "ofd lock": lambda: fcntl.fcntl(shared, 36, lock),  # F_OFD_GETLK
        "fcntl lock, high bits": lambda: _syscall(72, shared, (1 << 32) | fcntl.F_GETLK, 0),
        "lease": lambda: fcntl.fcntl(shared, 1025),  # F_GETLEASE
        "cache probe": lambda: os.preadv(shared, [bytearray(1)], 0, os.RWF_NOWAIT),
        "mincore": lambda: _mincore(shared),
        "inotify": lambda: _syscall(294, 0),  # inotify_init1
        "io_uring": lambda: _syscall(425, 1, 0),
        "memfd": lambda: os.memfd_create("x"),
        "user namespace": lambda: _syscall(272, 0x10000000),  # unshare(CLONE_NEWUSER)
        "mount namespace": lambda: _syscall(272, 0x00020000),
        "vsock": lambda: socket.socket(40, socket.SOCK_STREAM),
        "vsock, high bits": lambda: _syscall(41, (1 << 32) | 40, 1, 0),
        "keyring": lambda: _syscall(250, 0, -3, 0),  # keyctl(GET_KEYRING_ID, session)
        "dev shm": lambda: open("/dev/shm/x", "w").close(),
        "sysinfo": lambda: _syscall(99, ctypes.addressof(ctypes.create_string_buffer(128))),
        "sched_setaffinity": lambda: os.sched_setaffinity(0, {0}),
    }
    for name, call in probes.items():
        print(f"kernel: {name}: {_outcome(call)}")
    print(f"kernel: machine counters: {_machine_counters()}")
    with open("/proc/self/mounts") as f:
        kinds = {line.split()[1]: line.split()[2] for line in f}
    where = max((m for m in kinds if os.__file__.startswith(m)), key=len)
    print(f"kernel: runtime file system: {kinds[where]}")
    with open("/proc/1/cmdline", "rb") as f:
        print(f"kernel: pid 1: {f.read().replace(bytes(1), b' ').decode(errors='replace')}")


ATTACKS = {
    "kernel": attack_kernel,
    "proc": attack_proc,
    "files": attack_files,
    "network": attack_network,
    "kill": attack_kill,
    "fork": attack_fork,
    "memory": attack_memory,
    "flood": attack_flood,
    "connections": attack_connections,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--attack", choices=sorted(ATTACKS), required=True)
    args = parser.parse_args()
    ATTACKS[args.attack]()
    sys.stdout.flush()
    honest = argparse.Namespace(mode="play", after=0, away=0.2, seed=7, quiet=True, dump="")
    sys.exit(asyncio.run(stub_bot.play(honest)))


if __name__ == "__main__":
    main()
