"""The author's side of a submission over HTTP: pack the folder, upload it, wait for the
verdict (``arena league submit FOLDER --server URL``).

The folder is packed with ``arena.server.bundle.bundle_of`` (the bot-folder rules: no links,
devices or FIFOs, capped; each file read once by streaming), sent as one gzipped tar with
the token in an ``Authorization: Bearer`` header, and the client polls the submission until
it has its verdict, handing each new progress line to the caller (through a restart of the
service, which checks the submission again). Plain ``urllib``: the
arena needs no HTTP client library for this.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.rules import ArenaError
from arena.server.bundle import BundleError, bundle_of
from arena.server.manifest import ManifestError, load_manifest

__all__ = ["RemoteError", "Unreachable", "pack", "submit_remote"]


class RemoteError(ArenaError):
    """A submission the server did not take; ``code`` is the exit code to use (1 or 2)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


class Unreachable(RemoteError):
    """The server did not answer (down, restarting, or a wrong address)."""


def pack(folder: Path) -> tuple[str, bytes]:
    """The bot's name and its folder as a gzipped tar.

    Raises:
        RemoteError: No manifest, a bad one, or a folder that breaks the bot-folder rules.
    """
    path = folder / "bot.toml" if folder.is_dir() else folder
    if path.name != "bot.toml":
        raise RemoteError(f"{folder}: give the bot's folder (it holds bot.toml)")
    try:
        bundle = bundle_of(load_manifest(path))
    except (ManifestError, BundleError) as e:
        raise RemoteError(str(e)) from None
    if bundle.builtin or bundle.files is None:
        raise RemoteError(f"{folder}: a built-in bot is submitted by the organiser, by name")
    return bundle.name, bundle.files


def _request(
    url: str, token: str, data: bytes | None = None, timeout: float = 120.0
) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if data is not None:
        headers["Content-Type"] = "application/gzip"
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            answer: dict[str, Any] = json.load(reply)
            return answer
    except urllib.error.HTTPError as e:
        try:
            detail = json.load(e).get("detail", e.reason)
        except (ValueError, AttributeError):
            detail = e.reason
        raise RemoteError(f"the server refused it ({e.code}): {detail}") from None
    except (urllib.error.URLError, OSError) as e:
        raise Unreachable(f"cannot reach {url}: {getattr(e, 'reason', e)}") from None


def submit_remote(
    folder: Path,
    server: str,
    token: str,
    *,
    gate: bool = False,
    on_line: Callable[[str], None] | None = None,
    on_received: Callable[[int], None] | None = None,
    poll_s: float = 1.0,
    patience_s: float = 24 * 3600.0,
) -> dict[str, Any]:
    """Uploads the bot of ``folder`` and returns its verdict (the submission's JSON).

    ``on_received`` hears the submission's number once the server holds the upload (from
    then on the server checks it whether or not this call waits for the verdict).

    Raises:
        RemoteError: A folder that cannot be packed, the server unreachable or refusing
            the upload (a wrong token, a quota, a size), or no verdict in ``patience_s``.
    """
    name, packed = pack(folder)
    base = server.rstrip("/")
    say = on_line or (lambda _line: None)
    say(f"uploading {name} ({len(packed) >> 10} KiB packed) to {base}")
    answer = _request(
        f"{base}/api/service/submissions?gate={'true' if gate else 'false'}", token, packed
    )
    submission = int(answer["id"])
    if on_received is not None:
        on_received(submission)
    say(f"submission {submission} received; checking")
    shown = ""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            data = _request(f"{base}/api/service/submissions/{submission}", token)
        except Unreachable:
            # A restart of the service checks the submission again: wait for it.
            if shown != "unreachable":
                shown = "unreachable"
                say(f"{base} does not answer (restarting?); waiting for the verdict")
            if time.monotonic() > deadline:
                raise
            time.sleep(poll_s)
            continue
        if data["progress"] and data["progress"] != shown and data["progress"] != "done":
            shown = data["progress"]
            say(shown)
        if data["status"] in ("accepted", "refused", "interrupted"):
            return data
        if time.monotonic() > deadline:
            raise RemoteError(f"no verdict for submission {submission} yet; see {base}/service")
        time.sleep(poll_s)
