"""A cgroup per bot process, where the host lets the runner make one.

rlimits bound each process of a bot alone: a bot of many processes, or one that fills memory
the kernel does not count against an address space (its tmpfs, page cache), took as much as it
liked. A cgroup bounds the bot as a whole: every process it starts is in it, and the kernel
charges it what they use, tmpfs pages and page cache included.

The runner makes a cgroup for each bot process under its own, in a folder ``tichu-arena``:

* cgroup v1 (one hierarchy per controller; the runner needs to be able to write its own
  cgroup's folders, as root usually can): ``memory``, ``pids`` and, where mounted, ``cpu``
  and ``freezer``;
* cgroup v2 (one hierarchy): the runner's own cgroup must offer ``memory`` and ``pids`` to
  its children (``cgroup.subtree_control``), as a delegated subtree or the root does.

Limits (``BotCgroup.make``): memory ``memory_mb + tmp_mb`` MiB for all the bot's processes
together (swap too, where the kernel accounts it); ``processes`` plus a few for the sandbox's
own; ``cpus`` cores of CPU time. The bot's first process joins its cgroup before it runs
anything (``join_argv``: a shell on the host writes its own pid, then ``exec``s the sandbox),
so nothing it starts is ever outside. ``host_cgroups()`` says what the host allows (probed
once per process), and why not where it does not.

**Freezing** (``BotCgroup.freeze``/``frozen``/``thaw``, where the host has the freezer: v1's
``freezer`` controller, v2's ``cgroup.freeze``) stops every process and thread of the bot at
once; ``frozen`` says when the kernel reports them all stopped, so a referee that waits for it
before it thaws the next bot knows that the two never run at the same moment
(docs/security.md §9). The files stay open: a write costs a microsecond, an open a hundred.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from arena.server.manifest import Limits

__all__ = ["BotCgroup", "CgroupHost", "host_cgroups"]

FOLDER = "tichu-arena"
"""The folder, in the runner's own cgroup, that holds its bots' cgroups."""
EXTRA_PIDS = 4
"""Processes a bot's cgroup allows beyond ``processes``: the sandbox's own (bwrap)."""
_PERIOD_US = 100_000
_MIB = 1 << 20
_JOIN = (
    'for p; do [ "$p" = -- ] && break; echo $$ > "$p" || exit 125; shift; done; shift; exec "$@"'
)


@dataclass(frozen=True)
class CgroupHost:
    """Where this runner makes its bots' cgroups: the ``tichu-arena`` folders it may write.

    ``folders`` maps a v1 controller (``memory``, ``pids``, ``cpu``) to its folder; for v2
    the one folder is under the key ``""``.
    """

    version: int
    folders: dict[str, Path]

    @property
    def freezer(self) -> bool:
        """Whether a bot's processes can be frozen (v2 always can; v1 with ``freezer``)."""
        return self.version == 2 or "freezer" in self.folders

    def summary(self) -> str:
        """What the replay's ``meta`` and the console record of it."""
        if self.version == 2:
            return "v2"
        return "v1 (" + ", ".join(sorted(self.folders)) + ")"


@dataclass(frozen=True)
class BotCgroup:
    """One bot process's cgroup (a folder per v1 controller, one for v2)."""

    version: int
    paths: tuple[Path, ...]
    freezes: Path | None = None  # the folder whose file freezes it, where the host has one
    _files: dict[int, int] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def make(cls, host: CgroupHost, limits: Limits) -> BotCgroup:
        """A new cgroup for one bot process, its limits set.

        Raises:
            OSError: The host refused a folder or a limit.
        """
        name = f"{os.getpid()}-{secrets.token_hex(6)}"
        made: list[Path] = []
        freezes: Path | None = None
        try:
            for controller, parent in sorted(host.folders.items()):
                path = parent / name
                path.mkdir(mode=0o700)
                made.append(path)
                if controller in ("", "freezer"):
                    freezes = path
                for key, value in _settings(host.version, controller, limits):
                    if (path / key).exists():
                        (path / key).write_text(value)
        except OSError:
            for path in made:
                with contextlib.suppress(OSError):
                    path.rmdir()
            raise
        return cls(host.version, tuple(made), freezes)

    def join_argv(self, argv: list[str]) -> list[str]:
        """``argv`` run by a host shell that first moves itself into this cgroup."""
        procs = [str(p / "cgroup.procs") for p in self.paths]
        return ["/bin/sh", "-c", _JOIN, "arena-cgroup", *procs, "--", *argv]

    def can_freeze(self) -> bool:
        """Whether this cgroup has a freezer."""
        return self.freezes is not None

    def _fd(self, mode: int) -> int | None:
        """The freezer file, kept open (an open costs a hundred times a write)."""
        fd = self._files.get(mode)
        if fd is None and self.freezes is not None:
            name = "cgroup.freeze" if self.version == 2 else "freezer.state"
            if mode == os.O_RDONLY and self.version == 2:
                name = "cgroup.events"
            try:
                fd = self._files[mode] = os.open(self.freezes / name, mode | os.O_CLOEXEC)
            except OSError:
                return None
        return fd

    def freeze(self) -> None:
        """Asks the kernel to stop every process and thread in it (``frozen`` says when)."""
        fd = self._fd(os.O_WRONLY)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.write(fd, b"1" if self.version == 2 else b"FROZEN")

    def frozen(self) -> bool:
        """Whether the kernel reports every process in it stopped (True without a freezer:
        nothing to wait for)."""
        fd = self._fd(os.O_RDONLY)
        if fd is None:
            return True
        try:
            text = os.pread(fd, 4096, 0)
        except OSError:
            return True
        return b"frozen 1" in text if self.version == 2 else text.strip() == b"FROZEN"

    def thaw(self) -> None:
        """Lets its processes run again."""
        fd = self._fd(os.O_WRONLY)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.write(fd, b"0" if self.version == 2 else b"THAWED")

    def pids(self) -> list[int]:
        """The processes in it now."""
        found: set[int] = set()
        for path in self.paths:
            with contextlib.suppress(OSError, ValueError):
                found.update(int(x) for x in (path / "cgroup.procs").read_text().split())
        return sorted(found)

    def oom_kills(self) -> int:
        """How many of its processes the kernel killed for passing its memory limit."""
        name = "memory.oom_control" if self.version == 1 else "memory.events"
        for path in self.paths:
            with contextlib.suppress(OSError, ValueError):
                for line in (path / name).read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        return 0

    def release(self, wait_s: float = 2.0) -> bool:
        """Kills what is left in it and removes it; False if it could not be removed yet."""
        self.thaw()  # a frozen process (v1) dies of SIGKILL only once thawed
        for fd in self._files.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._files.clear()
        deadline = time.monotonic() + wait_s
        while True:
            for pid in self.pids():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            left = [p for p in self.paths if p.exists()]
            for path in left:
                with contextlib.suppress(OSError):
                    path.rmdir()
            if not any(p.exists() for p in self.paths):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)


def _settings(version: int, controller: str, limits: Limits) -> list[tuple[str, str]]:
    """The files and values that set ``limits`` on one controller's folder, in order."""
    memory = str((limits.memory_mb + limits.tmp_mb) * _MIB)
    pids = str(limits.processes + EXTRA_PIDS)
    quota = str(max(1000, round(limits.cpus * _PERIOD_US)))
    if version == 2:
        return [
            ("memory.max", memory),
            ("memory.swap.max", "0"),
            ("pids.max", pids),
            ("cpu.max", f"{quota} {_PERIOD_US}"),
        ]
    return {
        "memory": [
            ("memory.limit_in_bytes", memory),
            ("memory.memsw.limit_in_bytes", memory),  # memory and swap together
        ],
        "pids": [("pids.max", pids)],
        "cpu": [("cpu.cfs_period_us", str(_PERIOD_US)), ("cpu.cfs_quota_us", quota)],
        "freezer": [],
    }[controller]


def _own_paths() -> dict[str, str]:
    """The runner's cgroup per v1 controller, and under ``""`` its v2 cgroup."""
    own: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            own[controller] = path
    return own


def _mounts() -> dict[str, tuple[Path, str]]:
    """Each v1 controller's mount point and root; the v2 mount's under ``""``."""
    found: dict[str, tuple[Path, str]] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, kinds = left.split(), right.split()
        if len(fields) < 5 or len(kinds) < 3:
            continue
        root, point = fields[3], Path(fields[4])
        if kinds[0] == "cgroup2":
            found.setdefault("", (point, root))
        elif kinds[0] == "cgroup":
            for option in kinds[2].split(","):
                if option in ("memory", "pids", "cpu", "freezer"):
                    found.setdefault(option, (point, root))
    return found


def _folder(mount: tuple[Path, str], own: str) -> Path:
    point, root = mount
    rel = os.path.relpath(own, root) if own.startswith(root) else own
    return (point / rel.lstrip("/")).resolve() if rel != "." else point


def _sweep(folder: Path) -> None:
    """Removes the cgroups that runners no longer alive left in ``folder``."""
    for child in folder.iterdir():
        pid = child.name.partition("-")[0]
        if not child.is_dir() or not pid.isdigit() or Path(f"/proc/{pid}").exists():
            continue
        with contextlib.suppress(OSError):  # a frozen process dies only once thawed
            (child / "freezer.state").write_text("THAWED")
        with contextlib.suppress(OSError):
            (child / "cgroup.freeze").write_text("0")
        with contextlib.suppress(OSError):
            for task in (child / "cgroup.procs").read_text().split():
                os.kill(int(task), signal.SIGKILL)
        with contextlib.suppress(OSError):
            child.rmdir()


def _enable(folder: Path) -> None:
    """Offers memory and pids (and cpu, where it can) to ``folder``'s children (v2)."""
    (folder / "cgroup.subtree_control").write_text("+memory +pids")
    with contextlib.suppress(OSError):
        (folder / "cgroup.subtree_control").write_text("+cpu")


@functools.cache
def host_cgroups() -> CgroupHost | str:
    """Where bots' cgroups go on this host, or why it allows none (probed once)."""
    try:
        own, mounts = _own_paths(), _mounts()
    except (OSError, ValueError) as e:
        return f"cannot read this process's cgroups: {e}"
    if "memory" in mounts and "pids" in mounts:
        folders = {c: _folder(mounts[c], own.get(c, "/")) / FOLDER for c in mounts if c}
        version = 1
    elif "" in mounts:
        base = _folder(mounts[""], own.get("", "/"))
        try:
            offered = (base / "cgroup.subtree_control").read_text().split()
            if not {"memory", "pids"} <= set(offered):
                _enable(base)
        except OSError as e:
            return f"cgroup v2 at {base} does not offer memory and pids to its children ({e})"
        folders, version = {"": base / FOLDER}, 2
    else:
        return "no memory and pids cgroup controllers are mounted"
    try:
        for folder in folders.values():
            folder.mkdir(exist_ok=True)
            if version == 2:
                _enable(folder)
            _sweep(folder)
        probe = BotCgroup.make(CgroupHost(version, folders), Limits())
        probe.release()
    except OSError as e:
        return f"cannot make a cgroup for a bot: {e.strerror or e}"
    return CgroupHost(version, folders)
