"""The system-call filter every ``full`` sandbox loads: the kernel's shared state stays shut.

Namespaces hide paths, processes and the network, but two bot processes on one kernel still
share its state: locks on the same read-only files, the page cache of the runtime, inotify
watches, nested namespaces in which a process regains every capability, socket families that
no namespace covers. This filter (libseccomp through ``pyseccomp``, exported as the BPF
program that bubblewrap's ``--seccomp`` loads before the bot's first instruction) answers each
of those calls with an error, so a bot learns nothing from them and every process of the bot
runs under it (a filter is inherited and cannot be removed).

``RULES`` is the whole policy, one line per call with the answer and why; docs/security.md
lists it. The default is to allow: a filter that refuses what it does not know breaks the
interpreters of other languages on every kernel update, and the calls it lets through are
confined by the namespaces, the uid, the rlimits and the cgroup.
"""

from __future__ import annotations

import errno
import functools
import os
import tempfile
from dataclasses import dataclass

from arena.rules.errors import ArenaError

FAKE_SUCCESS = 0
"""An errno of 0: the call returns 0 without doing anything (for hints such as fadvise)."""

_CLONE_NAMESPACES = (
    0x00000080,  # CLONE_NEWTIME
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
_FCNTL_LOCKS = (5, 6, 7, 36, 37, 38)  # F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK/SETLK/SETLKW
_FCNTL_WATCHES = (1024, 1025, 1026)  # F_SETLEASE, F_GETLEASE, F_NOTIFY
_SOCKET_FAMILIES = (1, 2, 10, 16)
"""AF_UNIX (the referee's), AF_INET and AF_INET6 (loopback: no route leaves the namespace),
AF_NETLINK (the C library asks it for the namespace's own interfaces)."""
_AF_MAX = 45  # the highest family number the kernel knows of; anything above is refused
_MADV_EVICT = (20, 21)  # MADV_COLD, MADV_PAGEOUT: push pages out of memory
_RWF_NOWAIT = 0x8  # preadv2: read only what is cached (a page-cache residency probe)


@dataclass(frozen=True)
class Rule:
    """One refused call: the errno it answers with, and on which argument values."""

    syscall: str | int
    answer: int
    why: str
    arg: int | None = None  # the argument compared (None: every call)
    op: str = "eq"  # "eq", "gt" or "mask" (``arg & value == value``)
    values: tuple[int, ...] = ()


def _rules() -> tuple[Rule, ...]:
    eperm, enolck = errno.EPERM, errno.ENOLCK
    out: list[Rule] = [
        Rule("flock", enolck, "locks on shared files signal between processes"),
        Rule(
            "fcntl",
            errno.EINVAL,
            "a command with high bits set (the kernel drops them)",
            1,
            "gt",
            (0xFFFFFFFF,),
        ),
        Rule("fcntl", enolck, "record and open-file locks", 1, "eq", _FCNTL_LOCKS),
        Rule("fcntl", eperm, "leases and directory notifications", 1, "eq", _FCNTL_WATCHES),
        Rule("fadvise64", FAKE_SUCCESS, "a hint; DONTNEED would evict shared pages"),
        Rule("readahead", FAKE_SUCCESS, "a hint; it would load shared pages"),
        Rule("madvise", errno.EINVAL, "advice with high bits set", 2, "gt", (0xFFFFFFFF,)),
        Rule(
            "madvise",
            FAKE_SUCCESS,
            "a hint; COLD and PAGEOUT evict shared pages",
            2,
            "eq",
            _MADV_EVICT,
        ),
        Rule(
            "preadv2",
            errno.EOPNOTSUPP,
            "RWF_NOWAIT probes the page cache",
            5,
            "mask",
            (_RWF_NOWAIT,),
        ),
        Rule("pwritev2", errno.EOPNOTSUPP, "RWF_NOWAIT", 5, "mask", (_RWF_NOWAIT,)),
        Rule("mincore", eperm, "tells which pages of a file are cached"),
        Rule(451, eperm, "cachestat: tells which pages of a file are cached"),
        Rule("process_madvise", eperm, "advice on memory (evicts pages)"),
        Rule("inotify_init", eperm, "watches see other processes open and read shared files"),
        Rule("inotify_init1", eperm, "watches"),
        Rule("inotify_add_watch", eperm, "watches"),
        Rule("fanotify_init", eperm, "watches"),
        Rule("fanotify_mark", eperm, "watches"),
        Rule("io_uring_setup", eperm, "io_uring runs calls this filter does not see"),
        Rule("io_uring_enter", eperm, "io_uring"),
        Rule("io_uring_register", eperm, "io_uring"),
        Rule("memfd_create", eperm, "memory outside the tmpfs cap and the address-space limit"),
        Rule("memfd_secret", eperm, "memory outside the limits"),
        Rule("unshare", eperm, "a nested namespace gives back every capability"),
        Rule("setns", eperm, "namespaces"),
        Rule(
            "clone3",
            errno.ENOSYS,
            "its flags cannot be inspected; the C library falls back to clone",
        ),
        Rule("keyctl", eperm, "kernel keyrings are shared by a uid's processes"),
        Rule("add_key", eperm, "keyrings"),
        Rule("request_key", eperm, "keyrings"),
        Rule("bpf", eperm, "kernel programs"),
        Rule("perf_event_open", eperm, "hardware counters measure the other processes"),
        Rule(
            "sched_setaffinity",
            eperm,
            "pinned to its partner's core, a timing channel carries more",
        ),
        Rule("userfaultfd", eperm, "stalls the kernel at will (a timing amplifier)"),
        Rule(
            "sysinfo",
            errno.ENOSYS,
            "the machine's load, free memory and process count: what the other bots do"
            " (/proc's are masked copies)",
        ),
        Rule("syslog", eperm, "the kernel's log"),
        Rule(
            "socket",
            errno.EAFNOSUPPORT,
            "families no namespace covers (AF_VSOCK, ...)",
            0,
            "gt",
            (_AF_MAX,),
        ),
        Rule(
            "socket",
            errno.EAFNOSUPPORT,
            "families other than Unix, IP and netlink",
            0,
            "eq",
            tuple(f for f in range(_AF_MAX + 1) if f not in _SOCKET_FAMILIES),
        ),
        Rule(
            "socketpair",
            errno.EAFNOSUPPORT,
            "families other than Unix",
            0,
            "eq",
            tuple(f for f in range(_AF_MAX + 1) if f != 1),
        ),
        Rule("socketpair", errno.EAFNOSUPPORT, "unknown families", 0, "gt", (_AF_MAX,)),
        Rule("clone", eperm, "new namespaces", 0, "mask", _CLONE_NAMESPACES),
    ]
    out += [
        Rule(name, eperm, "mounts")
        for name in (
            "mount",
            "umount2",
            "pivot_root",
            "open_tree",
            "move_mount",
            "fsopen",
            "fsmount",
            "fsconfig",
            "fspick",
            "mount_setattr",
        )
    ]
    return tuple(out)


RULES = _rules()


class SeccompError(ArenaError):
    """The filter cannot be built here (libseccomp missing): no ``full`` sandbox."""


@functools.cache
def filter_program() -> bytes:
    """The filter as the BPF program bubblewrap loads (built once per process).

    Raises:
        SeccompError: libseccomp (the ``libseccomp2`` system package) is not installed.
    """
    try:
        import pyseccomp as sc  # type: ignore[import-untyped,unused-ignore]

        filt = sc.SyscallFilter(sc.ALLOW)
    except (ImportError, OSError, RuntimeError) as e:
        raise SeccompError(f"no libseccomp for the system-call filter ({e})") from None
    ops = {"eq": sc.EQ, "gt": sc.GT}
    for rule in RULES:
        action = sc.ERRNO(rule.answer)
        if rule.arg is None:
            filt.add_rule(action, rule.syscall)
            continue
        for value in rule.values:
            if rule.op == "mask":
                cmp = sc.Arg(rule.arg, sc.MASKED_EQ, value, value)
            else:
                cmp = sc.Arg(rule.arg, ops[rule.op], value)
            filt.add_rule(action, rule.syscall, cmp)
    with tempfile.TemporaryFile() as f:
        filt.export_bpf(f)
        f.seek(0)
        return f.read()


def program_fd(data: bytes) -> int:
    """A file descriptor holding ``data`` from its start (for bwrap's ``--seccomp`` and
    ``--args``): an anonymous memory file in the runner, which is not sandboxed."""
    fd = os.memfd_create("tichu-arena", 0)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
