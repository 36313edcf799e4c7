"""Bot manifests: a small TOML file per bot saying how to start it.

```toml
name = "greedy"                                   # display name, 1..64 characters
command = ["{python}", "-m", "sdk", "example_bots.greedy.bot:GreedyBot"]
workdir = "../.."          # optional; relative to this file's folder (default: that folder)
env = { GREEDY_DEPTH = "2" }                      # optional extra environment
startup_timeout_s = 10                            # optional; how long the bot may take to join

[limits]                  # optional; what the bot's sandbox allows it (defaults shown)
memory_mb = 4096          # address space of each process (RLIMIT_AS)
cpu_s = 3600              # CPU seconds of each process over its life (RLIMIT_CPU)
processes = 64            # processes and threads (RLIMIT_NPROC)
open_files = 256          # open file descriptors (RLIMIT_NOFILE)
file_size_mb = 64         # largest file it may write (RLIMIT_FSIZE)
tmp_mb = 256              # its private writable /tmp (full sandbox)
log_kb = 1024             # stdout and stderr kept in its log; the rest is dropped
```

``{python}`` in ``command`` is replaced by the running interpreter, so a manifest works in
any virtual environment. The manifest is its author's, so it is checked as hostile input:
its program is ``{python}``, a program on the sandbox's ``PATH`` or a file in the bot's own
folder (``resolve_program``), and its ``env`` an allow-list of plain variables
(``check_env``). The bot runs in a sandbox (``arena.server.sandbox``, docs/security.md)
whose environment holds only ``env``, ``TICHU_ARENA_SERVER`` (the referee's address, a
``unix:`` socket), ``TICHU_ARENA_TOKEN`` (the seat token), ``TICHU_ARENA_NAME`` and the few
variables a process needs to run (``PATH``, ``HOME``, ``TMPDIR``, ``LANG``). It sees its own
folder (the manifest's) read-only, the runtime, and nothing else; an event's ``[limits]`` caps
the manifest's. ``load_manifest`` raises
``ManifestError`` naming the file, the field and what is wrong; ``resolve_bot`` also accepts
a built-in name (``random``, ``greedy``, ``heuristic``, ``quick``, ``search``), which means
``example_bots/<name>/bot.toml``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from arena.rules.errors import ArenaError
from arena.server.folder import FolderError, read_manifest_text


def _builtin_dir() -> Path:
    """The folder of the installed ``example_bots`` package (found without importing it)."""
    spec = importlib.util.find_spec("example_bots")
    if spec is None or spec.origin is None:  # pragma: no cover - installed with arena
        raise ImportError("the example_bots package is not installed")
    return Path(spec.origin).resolve().parent


BUILTIN_DIR = _builtin_dir()
BUILTINS = ("random", "greedy", "heuristic", "quick", "search", "strong")
"""Built-in bot names; each is ``example_bots/<name>/bot.toml``."""

SDK_RUNNER = ("-m", "sdk")


def is_reference_bot(manifest: Manifest) -> bool:
    """Whether ``manifest`` is one of the arena's own bots (in ``example_bots``), not a
    stranger's."""
    path = manifest.path
    return path is not None and path.resolve().is_relative_to(BUILTIN_DIR)


class ManifestError(ArenaError):
    """A manifest that cannot be read or is not valid; the message names file and field."""


_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
_RESERVED_ENV = ("TICHU_ARENA_", "PATH", "HOME", "TMPDIR", "LANG")
_HOOK_PREFIXES = (
    "LD_", "DYLD_", "GCONV", "GLIBC_", "MALLOC_", "LC_",  # the loader and the C library
    "BASH", "ZSH", "KSH",  # shells
    "PYTHON", "NODE_", "NPM_", "PERL", "RUBY", "JAVA", "_JAVA", "JDK_", "LUA_",  # interpreters
    "GRPC_", "OPENSSL_", "SSL_", "GIT_",  # libraries the runtime loads
)  # fmt: skip
_HOOK_NAMES = frozenset(
    {"ENV", "IFS", "SHELLOPTS", "PS4", "PROMPT_COMMAND", "CDPATH", "LOCPATH", "NLSPATH",
     "HOSTALIASES", "RES_OPTIONS", "LOCALDOMAIN", "TZDIR", "TERMINFO", "TERMCAP", "LANGUAGE"}
)  # fmt: skip
MAX_ENV = 64
MAX_ENV_VALUE = 4096


def check_env(env: Mapping[str, str]) -> dict[str, str]:
    """A bot's extra environment, checked against an allow-list of plain variables.

    A name is plain when it is upper case (``A-Z``, digits, ``_``) and belongs to no family
    that a loader, shell, interpreter or library reads to run other code or files
    (``LD_PRELOAD``, ``BASH_ENV``, ``PYTHONPATH``, ``NODE_OPTIONS``, ...), nor to the
    variables the arena sets itself. Values are text without NUL, of bounded length.

    Raises:
        ValueError: Naming the first variable that may not be set, and why.
    """
    if len(env) > MAX_ENV:
        raise ValueError(f"at most {MAX_ENV} variables, got {len(env)}")
    for name, value in env.items():
        if not _ENV_NAME.fullmatch(name):
            raise ValueError(
                f"{name!r} is not a plain variable name (upper-case letters, digits and _, "
                "starting with a letter, at most 64)"
            )
        if name.startswith(_RESERVED_ENV[0]) or name in _RESERVED_ENV[1:]:
            raise ValueError(f"{name!r} is set by the arena, not by the bot's configuration")
        if name in _HOOK_NAMES or name.startswith(_HOOK_PREFIXES):
            raise ValueError(
                f"{name!r} is read by the loader, a shell or an interpreter to run other code "
                "or files; a bot's env may set plain variables only (docs/security.md)"
            )
        if not isinstance(value, str) or "\0" in value or len(value) > MAX_ENV_VALUE:
            raise ValueError(
                f"{name!r}: a value is text of at most {MAX_ENV_VALUE} characters without NUL"
            )
    return dict(env)


LAUNCHERS = frozenset(
    {
        "env",
        "prlimit",
        "setpriv",
        "nice",
        "nohup",
        "setsid",
        "stdbuf",
        "timeout",
        "xargs",
        "chroot",
        "unshare",
        "busybox",
        "sh",
        "bash",
        "dash",
    }
)
"""Bare program names refused: each runs another program, with an environment or settings
the manifest's checks would not see (``env LD_PRELOAD=... bash``)."""


class CommandError(ValueError):
    """A manifest command that would run a program from outside the bot's folder."""


def resolve_program(program: str, cwd: Path, folder: Path) -> str:
    """Returns the absolute path of a command's program, checked to stay in the bot's view.

    ``{python}`` is the running interpreter. A bare name (``node``) is looked up later on
    the sandbox's ``PATH`` (the runtime's interpreters and the system's programs) and is
    returned as it is. Any other name is a file relative to the bot's working directory
    (or absolute) whose real path, symbolic links followed, must lie in the bot's folder.

    Raises:
        CommandError: The program lies outside the folder, or is not a usable name.
    """
    if program == "{python}":
        return sys.executable
    if "{" in program or "\0" in program:
        raise CommandError(f"{program!r} is not a program name ({{python}} is the only token)")
    if "/" not in program:
        if program in LAUNCHERS:
            raise CommandError(
                f"{program!r} runs another program with settings of its own (a loader hook, "
                "a shell): a command runs {python}, an interpreter on the PATH (node), or a "
                "file in the folder"
            )
        return program
    real = Path(os.path.realpath(cwd / program))
    root = Path(os.path.realpath(folder))
    if not real.is_relative_to(root):
        raise CommandError(
            f"the program {program!r} resolves to {real}, outside the bot's folder {root}; a "
            "command runs {python}, an interpreter on the PATH (node), or a file in the folder"
        )
    return str(real)


class Limits(BaseModel):
    """What a bot's sandbox allows each of its processes (rlimits, /tmp and the log)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory_mb: int = Field(default=4096, ge=64, le=1 << 20)
    cpu_s: int = Field(default=3600, ge=1, le=7 * 86400)
    processes: int = Field(default=64, ge=1, le=4096)
    open_files: int = Field(default=256, ge=16, le=65536)
    file_size_mb: int = Field(default=64, ge=1, le=1 << 20)
    tmp_mb: int = Field(default=256, ge=1, le=1 << 20)
    log_kb: int = Field(default=1024, ge=1, le=1 << 30)
    cpus: float = Field(default=1.0, gt=0, le=1024)

    def capped(self, cap: Limits) -> Limits:
        """These limits, none above ``cap``'s (an event's limits cap each manifest's)."""
        return Limits(**{k: min(v, getattr(cap, k)) for k, v in self.model_dump().items()})


class Manifest(BaseModel):
    """A validated bot manifest (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=64)
    command: list[str] = Field(min_length=1)
    workdir: Path | None = None
    env: dict[str, str] = Field(default_factory=dict)
    startup_timeout_s: float = Field(default=10.0, gt=0, le=600)
    limits: Limits = Limits()
    path: Path | None = Field(default=None, exclude=True)

    @field_validator("command")
    @classmethod
    def _command(cls, value: list[str]) -> list[str]:
        if any(not part for part in value):
            raise ValueError("command parts must be non-empty strings")
        return value

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str]) -> dict[str, str]:
        return check_env(value)

    @property
    def folder(self) -> Path:
        """The manifest's folder (the current directory for a manifest made in code)."""
        return self.path.parent if self.path is not None else Path.cwd()

    @property
    def cwd(self) -> Path:
        """The directory the bot runs in: ``workdir`` relative to the manifest's folder."""
        if self.workdir is None:
            return self.folder
        return (self.folder / self.workdir).resolve()

    def configured(self, env: Mapping[str, str], args: Sequence[str]) -> Manifest:
        """This bot with ``env`` added to its environment (over the manifest's) and ``args``
        after its command: an event's per-bot ``env`` and ``args``."""
        if not env and not args:
            return self
        return self.model_copy(
            update={"env": {**self.env, **env}, "command": [*self.command, *args]}
        )

    def argv(self, python: str | None = None) -> list[str]:
        """The command to run, with ``{python}`` replaced by the interpreter."""
        exe = python or sys.executable
        return [part.replace("{python}", exe) for part in self.command]

    def launch_argv(self) -> list[str]:
        """The command as it is started: its program checked and resolved
        (``resolve_program``), ``{python}`` replaced.

        Raises:
            CommandError: The program lies outside the bot's folder.
        """
        return [resolve_program(self.command[0], self.cwd, self.folder), *self.argv()[1:]]

    @property
    def entry(self) -> str | None:
        """``module:Class`` when the bot is run by ``sdk.run`` (what ``--in-process`` loads)."""
        cmd = self.command
        for i in range(len(cmd) - 2):
            if (cmd[i], cmd[i + 1]) == SDK_RUNNER and ":" in cmd[i + 2]:
                return cmd[i + 2]
        return None


def load_manifest(path: Path) -> Manifest:
    """Reads and validates a manifest file; raises ``ManifestError``.

    The file is read only if it is a regular file (not a link, FIFO or device) of at most
    ``MAX_MANIFEST_BYTES`` (``read_manifest_text``); its folder is the bot's.
    """
    try:
        data = tomllib.loads(read_manifest_text(path))
    except FolderError as e:
        raise ManifestError(str(e)) from None
    except tomllib.TOMLDecodeError as e:
        raise ManifestError(f"{path}: not valid TOML: {e}") from e
    if "path" in data:
        raise ManifestError(f"{path}: field 'path': unknown field")
    try:
        manifest = Manifest.model_validate({**data, "path": path.parent.resolve() / path.name})
    except ValidationError as e:
        problems = []
        for err in e.errors():
            loc = ".".join(str(x) for x in err["loc"]) or "(file)"
            msg = "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
            problems.append(f"field {loc!r}: {msg}")
        raise ManifestError(f"{path}: " + "; ".join(problems)) from None
    try:
        manifest.launch_argv()
    except CommandError as e:
        raise ManifestError(f"{path}: field 'command': {e}") from None
    return manifest


def no_manifest_in(folder: str) -> str:
    """How every command says a bot's folder holds no manifest (``resolve_bot``, the gate)."""
    return f"{folder}: a folder without a bot.toml manifest"


def resolve_bot(spec: str) -> Manifest:
    """A manifest from a path (a ``.toml`` file or a folder holding ``bot.toml``) or a name."""
    path = Path(spec)
    if path.is_dir():
        path = path / "bot.toml"
    if os.path.lexists(path):  # whatever it is: load_manifest says why it is refused
        return load_manifest(path)
    if spec in BUILTINS or (BUILTIN_DIR / spec / "bot.toml").is_file():
        builtin = BUILTIN_DIR / spec / "bot.toml"
        if not builtin.is_file():
            raise ManifestError(f"built-in bot {spec!r}: {builtin} is missing")
        return load_manifest(builtin)
    if Path(spec).is_dir():
        raise ManifestError(no_manifest_in(spec))
    raise ManifestError(
        f"{spec!r} is neither a manifest file nor a built-in bot ({', '.join(BUILTINS)}"
        " or any folder of example_bots)"
    )
