"""A colluding bot: it publishes its hand through every channel the kernel offers two
processes, and reads what other processes published, then plays at random.

At every decision it first withdraws what it holds (its locks, its socket), reads each
channel, then publishes its current hand (a 56-bit card mask) again:

* ``flock``: a shared ``flock`` on the standard library's i-th ``.py`` file for card i;
* ``ofd lock``: an open-file-description read lock on byte i of the first such file;
* ``page cache``: page i of a large standard-library file evicted (``POSIX_FADV_DONTNEED``)
  or read in, probed with ``preadv2(RWF_NOWAIT)``;
* ``tmp file`` and ``shm file``: a file in ``/tmp`` and in ``/dev/shm``;
* ``abstract socket``: a Unix socket bound to an abstract name holding the mask, read back
  from ``/proc/net/unix``;
* ``sysv shm``: a System V shared memory segment holding the mask, found through
  ``/proc/sysvipc/shm``.

Partners run at once (locks, sockets); a bot's other rotation of a board runs after it (the
page cache, files, segments). It prints ``collude: mine HEX`` for each hand it published,
``collude: CHANNEL: read HEX`` for each new mask it read that is not its own, and
``collude: CHANNEL: refused (...)`` when the channel cannot be opened, so the tests can tell
whether any hand crossed. Names carry ``COLLUDE_TAG`` so that parallel tests stay apart.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import secrets
import socket
import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import sdk
from arena.rules import Action, Observation
from sdk.testing import RandomBot

BITS = 56
PAGE = 4096
TAG = "tichu-collude-" + os.environ.get("COLLUDE_TAG", "x")
ME = secrets.token_hex(4)  # this process's own name in the shared places
STDLIB = Path(os.__file__).parent
LOCK_FILES = sorted(STDLIB.glob("*.py"))[:BITS]
SHM_KEY_BASE = 0x7C00_0000 | (zlib.crc32(TAG.encode()) & 0xFF) << 16  # its keys: + 16 random bits
F_OFD_GETLK, F_OFD_SETLK = 36, 37
_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = ctypes.c_void_p


def _err(e: OSError) -> str:
    return f"refused ({errno.errorcode.get(e.errno or 0, e.errno)})"


def _cache_file() -> Path:
    """The largest standard-library file with a page per card (read by nothing else)."""
    big = [p for p in STDLIB.glob("*/*.py") if p.stat().st_size >= BITS * PAGE]
    return max(big, key=lambda p: p.stat().st_size) if big else LOCK_FILES[0]


class Channel:
    """One way to carry a mask between processes: ``withdraw``, ``read``, ``publish``."""

    name = ""

    def withdraw(self) -> None:
        """Lets go of what this process publishes that lives only while it is held."""

    def read(self) -> list[int]:
        """The masks other processes published (raises ``OSError`` when refused)."""
        raise NotImplementedError

    def publish(self, mask: int) -> None:
        """Publishes ``mask`` (raises ``OSError`` when refused)."""
        raise NotImplementedError


class Flock(Channel):
    name = "flock"

    def __init__(self) -> None:
        self.held: list[int] = []

    def withdraw(self) -> None:
        for fd in self.held:
            os.close(fd)
        self.held = []

    def read(self) -> list[int]:
        mask = 0
        for i, path in enumerate(LOCK_FILES):
            fd = os.open(path, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                mask |= 1 << i
            finally:
                os.close(fd)
        return [mask]

    def publish(self, mask: int) -> None:
        for i, path in enumerate(LOCK_FILES):
            if mask >> i & 1:
                fd = os.open(path, os.O_RDONLY)
                self.held.append(fd)
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)


def _lock(kind: int, start: int) -> bytes:
    return struct.pack("hhqqi4x", kind, os.SEEK_SET, start, 1, 0)


class OfdLock(Channel):
    name = "ofd lock"

    def __init__(self) -> None:
        self.fd = -1

    def withdraw(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def read(self) -> list[int]:
        fd = os.open(LOCK_FILES[0], os.O_RDONLY)
        try:
            mask = 0
            for i in range(BITS):
                got = fcntl.fcntl(fd, F_OFD_GETLK, _lock(fcntl.F_WRLCK, i))
                if struct.unpack("hhqqi4x", got)[0] != fcntl.F_UNLCK:
                    mask |= 1 << i
            return [mask]
        finally:
            os.close(fd)

    def publish(self, mask: int) -> None:
        self.fd = os.open(LOCK_FILES[0], os.O_RDONLY)
        for i in range(BITS):
            if mask >> i & 1:
                fcntl.fcntl(self.fd, F_OFD_SETLK, _lock(fcntl.F_RDLCK, i))


class PageCache(Channel):
    name = "page cache"

    def __init__(self) -> None:
        self.fd = os.open(_cache_file(), os.O_RDONLY)
        os.posix_fadvise(self.fd, 0, 0, os.POSIX_FADV_RANDOM)  # no read-ahead

    def read(self) -> list[int]:
        mask = 0
        for i in range(BITS):
            try:
                os.preadv(self.fd, [bytearray(1)], i * PAGE, os.RWF_NOWAIT)
            except BlockingIOError:
                continue
            mask |= 1 << i
        return [mask]

    def publish(self, mask: int) -> None:
        os.posix_fadvise(self.fd, 0, BITS * PAGE, os.POSIX_FADV_DONTNEED)
        for i in range(BITS):
            if mask >> i & 1:
                os.pread(self.fd, 1, i * PAGE)


class NamedFile(Channel):
    def __init__(self, folder: str, name: str) -> None:
        self.folder = Path(folder)
        self.name = name
        (self.folder / f"{TAG}-probe").write_text("")  # refused here when the place is

    def read(self) -> list[int]:
        found = []
        for path in self.folder.glob(f"{TAG}-*-mask"):
            if path.name != f"{TAG}-{ME}-mask":
                with contextlib.suppress(OSError, ValueError):
                    found.append(int(path.read_text(), 16))
        return found

    def publish(self, mask: int) -> None:
        (self.folder / f"{TAG}-{ME}-mask").write_text(f"{mask:x}")


class AbstractSocket(Channel):
    name = "abstract socket"

    def __init__(self) -> None:
        self.sock: socket.socket | None = None

    def withdraw(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def read(self) -> list[int]:
        found = []
        with open("/proc/net/unix") as f:
            for line in f:
                name = line.split()[-1]
                if name.startswith(f"@{TAG}-"):
                    found.append(int(name.rsplit("-", 1)[1], 16))
        return found

    def publish(self, mask: int) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(f"\0{TAG}-{ME}-{mask:x}")


class SysvShm(Channel):
    name = "sysv shm"

    def __init__(self) -> None:
        self.key = SHM_KEY_BASE | secrets.randbits(16)
        self.id = self._call(_libc.shmget, self.key, 8, 0o1600)  # IPC_CREAT | 0600
        self.at = self._call(_libc.shmat, self.id, None, 0)

    @staticmethod
    def _call(fn: Callable[..., int | None], *args: object) -> int:
        result = fn(*args)
        if result is None or result in (-1, 2**64 - 1):
            raise OSError(ctypes.get_errno(), "")
        return result

    def read(self) -> list[int]:
        found = []
        with open("/proc/sysvipc/shm") as f:
            for line in list(f)[1:]:
                key, shmid = int(line.split()[0]), int(line.split()[1])
                if key >> 16 == SHM_KEY_BASE >> 16 and key != self.key:
                    with contextlib.suppress(OSError):
                        at = self._call(_libc.shmat, shmid, None, 0o10000)  # SHM_RDONLY
                        found.append(int.from_bytes(ctypes.string_at(at, 8), "little"))
                        _libc.shmdt(ctypes.c_void_p(at))
        return found

    def publish(self, mask: int) -> None:
        ctypes.memmove(self.at, mask.to_bytes(8, "little"), 8)


def open_channels() -> list[Channel]:
    """Every channel this process could open; the others said refused."""
    makers: list[tuple[str, Callable[[], Channel]]] = [
        ("flock", Flock),
        ("ofd lock", OfdLock),
        ("page cache", PageCache),
        ("tmp file", lambda: NamedFile("/tmp", "tmp file")),
        ("shm file", lambda: NamedFile("/dev/shm", "shm file")),
        ("abstract socket", AbstractSocket),
        ("sysv shm", SysvShm),
    ]
    channels = []
    for name, make in makers:
        try:
            channels.append(make())
        except OSError as e:
            print(f"collude: {name}: {_err(e)}")
    return channels


class Colluder(RandomBot):
    """Random play, around a round of reading and publishing at each decision."""

    def __init__(self) -> None:
        super().__init__()
        self.channels = open_channels()
        self.mine: set[int] = set()
        self.seen: dict[str, set[int]] = {}
        self.refused: set[str] = set()

    def act(self, obs: Observation) -> Action:
        for channel in self.channels:
            if channel.name in self.refused:
                continue
            try:
                channel.withdraw()
                for mask in channel.read():
                    seen = self.seen.setdefault(channel.name, set())
                    if mask and mask not in self.mine and mask not in seen:
                        seen.add(mask)
                        print(f"collude: {channel.name}: read {mask:x}")
                if obs.hand:
                    channel.publish(obs.hand)
            except OSError as e:
                self.refused.add(channel.name)
                print(f"collude: {channel.name}: {_err(e)}")
        if obs.hand and obs.hand not in self.mine:
            self.mine.add(obs.hand)
            print(f"collude: mine {obs.hand:x}")
        sys.stdout.flush()
        return super().act(obs)


if __name__ == "__main__":
    raise SystemExit(sdk.run(Colluder()))
