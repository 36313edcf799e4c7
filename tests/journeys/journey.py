"""What the journeys share: a scratch copy of the repository, a user's shell, the commands the
docs print (extracted from those files, so a doc change that breaks a journey fails it), and
a Chromium page.

A journey walks a path as a user does: from a copy of the repository in a scratch folder,
with relative paths, sometimes from another working folder, with output going to a pipe (as
in a CI log), and only with commands the README and the docs print.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.helpers import ROOT

VENV_BIN = Path(sys.executable).parent
"""The installed arena's ``.venv/bin`` (the tests run from it)."""

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]

PATIENCE_S = 600.0
"""How long a journey waits for a command or a condition: ten times a quiet machine's worst."""


def doc_commands(path: Path, lang: str = "sh") -> list[str]:
    """Every command of the file's ``lang`` blocks, continuations joined, comments dropped."""
    commands = []
    text = path.read_text(encoding="utf-8")
    for block in re.findall(rf"^```{lang}\n(.*?)^```", text, re.M | re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(" ".join(words))
    return commands


def doc_command(path: Path, start: str) -> str:
    """The one command of ``path`` that starts with ``start`` (the journey's next step)."""
    found = [c for c in doc_commands(path) if c.startswith(start)]
    assert len(found) == 1, f"{path.name}: expected one command starting {start!r}: {found}"
    return found[0]


def scratch_copy(tmp: Path) -> Path:
    """The repository's committed files copied to ``tmp/tichu-arena`` (a fresh clone's view);
    the arena itself runs from the installed ``.venv``."""
    target = tmp / "tichu-arena"
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def user_env(home: Path) -> dict[str, str]:
    """A user's shell after ``source .venv/bin/activate``, with its own home (so the arena's
    state folder is the journey's) and no gRPC settings inherited from the test process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRPC_", "XDG_"))}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env['PATH']}"
    env["VIRTUAL_ENV"] = str(VENV_BIN.parent)
    env["HOME"] = str(home)
    env.pop("PYTHONPATH", None)
    env.pop("COLUMNS", None)  # output to a pipe, as in a CI log
    home.mkdir(parents=True, exist_ok=True)
    return env


def sh(
    command: str | Sequence[str],
    cwd: Path,
    env: dict[str, str],
    *,
    ok: Sequence[int] = (0,),
    timeout: float = PATIENCE_S,
) -> str:
    """Runs a command as a shell would (a string is split like one); returns its output and
    fails the journey with that output if the exit code is not one of ``ok``."""
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    done = subprocess.run(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, timeout=timeout, check=False,
    )  # fmt: skip
    assert done.returncode in ok, f"{command!r} in {cwd} exited {done.returncode}:\n{done.stdout}"
    return done.stdout


def free_port() -> int:
    """A port the system chooses (bound and released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for(condition: object, what: str, proc: subprocess.Popen[str] | None = None) -> None:
    """Waits until ``condition()`` is true (a condition, not a sleep), or fails saying what."""
    assert callable(condition)
    deadline = time.monotonic() + PATIENCE_S
    while not condition():
        if proc is not None and proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            raise AssertionError(f"{what}: the process exited {proc.returncode}:\n{out}")
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.1)


def http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=30):
            return True
    except OSError:
        return False


@contextmanager
def serving(command: str, cwd: Path, env: dict[str, str]) -> Iterator[str]:
    """Runs ``arena web ...`` on a free port until the block ends (Ctrl-C); yields its URL."""
    port = free_port()
    argv = [*shlex.split(command), "--port", str(port)]
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: http_ok(url + "/"), f"{command!r} to serve", proc)
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
