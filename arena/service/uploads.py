"""Submissions over HTTP: a hostile upload streamed to disk, unpacked, checked and submitted.

The server side takes an upload in two steps. ``receive`` (in the web process) streams the
request body into ``<db>.uploads/<id>.tar.gz`` and stops at ``max_bytes``, so an upload
never reaches memory or disk beyond its cap. ``process`` (in a worker process, see
``arena.service.worker``) then:

1. unpacks the archive into ``<db>.uploads/<id>/`` with ``arena.server.folder.unpack_archive``,
   which refuses, from each member's header before its data, absolute paths, ``..``, links,
   devices, FIFOs, sparse files and anything past the bot-folder caps (files, bytes,
   folders, depth: an archive bomb declares its size and is refused by it);
2. loads ``bot.toml`` at the archive's root (a regular file of at most 64 KiB);
3. refuses a bot that belongs to another owner (or to the organiser);
4. runs the smoke check, ``check-bot``'s tables (``arena.kit.check``), sandboxed;
5. submits the folder with ``arena.tournament.league.season.submit``: the very function
   ``arena league submit`` calls, so the manifest, sandbox and hash rules are the same, and
   the gate runs against the previous version when asked.

The upload area is emptied of the submission's files once its verdict is recorded; a
submission stopped before its verdict (the service stopped, restarted or was killed) keeps
its archive and is checked again, from the start, when the service starts: it is never
admitted without its verdict. The verdict, the
check report and the gate's report are stored with the submission (``ServiceDb``), and the
author's client polls for them.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.kit.check import CheckSettings, run_check
from arena.rules import ArenaError
from arena.server.bundle import MAX_BUNDLE_BYTES
from arena.server.folder import FolderError, remove_tree, unpack_archive
from arena.server.image import release_folder_image
from arena.server.manifest import ManifestError, load_manifest
from arena.server.sandbox import SandboxError, require_sandbox
from arena.service.accounts import ServiceDb
from arena.tournament.league.season import GateInterrupted, GateRefused, submit
from arena.tournament.league.spec import BOT_NAME
from arena.tournament.league.store import LeagueStore
from arena.tournament.store import StoreError

__all__ = [
    "EXIT_PENDING",
    "MAX_UPLOAD_BYTES",
    "PACKING",
    "UploadRefused",
    "process",
    "public_reason",
    "receive",
    "resumable",
    "upload_area",
]

MAX_UPLOAD_BYTES = MAX_BUNDLE_BYTES
"""The default cap of one upload (packed bytes), as for a cluster worker's bundle."""

EXIT_ACCEPTED, EXIT_REFUSED, EXIT_BAD = 0, 1, 2
"""The author's exit codes, as the local ``league submit``: accepted, refused, bad input."""
EXIT_PENDING = 3
"""A worker's exit when its submission was stopped before its verdict (still queued)."""


class UploadRefused(ArenaError):
    """An upload refused before it was unpacked; ``status`` is the HTTP status to answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def upload_area(db: Path) -> Path:
    """The folder beside the database where uploads are received and unpacked."""
    return db.parent / f"{db.name}.uploads"


async def receive(chunks: AsyncIterator[bytes], target: Path, max_bytes: int) -> int:
    """Streams an upload into ``target`` (a new file), at most ``max_bytes``; returns its size.

    Raises:
        UploadRefused: Past the cap (413) or empty (400); ``target`` is removed.
    """
    size = 0
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() or target.is_symlink():
        raise FileExistsError(target)
    # Received under another name and renamed once whole: an archive in the upload area is
    # complete, so a submission the service was stopped in can be checked again.
    partial = target.with_name(target.name + ".part")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            async for chunk in chunks:
                size += len(chunk)
                if size > max_bytes:
                    raise UploadRefused(
                        f"the upload is over the {max_bytes >> 10} KiB a submission may send",
                        413,
                    )
                out.write(chunk)
        if size == 0:
            raise UploadRefused("the upload is empty: send the bot's folder packed", 400)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return size


@dataclass(frozen=True)
class Verdict:
    """What became of a submission: status, one-line reason, exit code and reports."""

    status: str
    reason: str
    exit: int
    report: dict[str, Any]


def process(
    db: Path,
    submission_id: int,
    archive: Path,
    *,
    gate: bool,
    allow_unsandboxed: bool = False,
    check: CheckSettings | None = None,
) -> Verdict:
    """Unpacks, checks and submits one upload, recording progress and the verdict.

    Stopped before its verdict (a signal: the service stops or restarts), the submission
    stays queued with its archive, registers nothing, and is checked again from the start
    when the service starts (``resumable``); its verdict's status is then ``queued`` and its
    exit ``EXIT_PENDING``.
    """
    service = ServiceDb(db)
    folder = archive.with_suffix("").with_suffix("")
    report: dict[str, Any] = {"exit": EXIT_BAD}

    def say(line: str) -> None:
        service.update_submission(submission_id, progress=line)

    try:
        with _stops() as stops:
            remove_tree(folder)  # what a worker killed before left unpacked
            service.update_submission(submission_id, status="running", progress="unpacking")
            verdict = _process(db, service, submission_id, archive, folder, gate, say, report,
                               allow_unsandboxed, check, lambda: bool(stops))  # fmt: skip
    except (GateInterrupted, KeyboardInterrupt):
        reason = "stopped before its verdict; checked again when the service starts"
        service.update_submission(submission_id, status="queued", progress=reason)
        service.close()
        return Verdict("queued", reason, EXIT_PENDING, report)
    except ArenaError as e:
        verdict = Verdict("refused", _line(str(e)), report.get("exit", EXIT_BAD), report)
    except OSError as e:  # the upload area full, say: said without the server's paths
        verdict = Verdict("refused", f"the server could not unpack it: {e.strerror}", 2, report)
    finally:
        remove_tree(folder)
    reason = public_reason(verdict.reason, db)
    service.finish_submission(
        submission_id, verdict.status, reason, report=verdict.report, progress="done"
    )
    archive.unlink(missing_ok=True)  # only once the verdict is recorded
    service.close()
    return verdict


@contextmanager
def _stops() -> Iterator[list[int]]:
    """Ctrl-C and SIGTERM raise ``KeyboardInterrupt`` in the block and are listed, so a
    smoke check cut short by them (which reads as failed checks) is known to be stopped, not
    failed. The gate's runner takes both signals over while it plays."""
    stops: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield stops
        return

    def stop(signum: int, _frame: object) -> None:
        stops.append(signum)
        raise KeyboardInterrupt

    before = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stops
    finally:
        for signum, handler in before.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def resumable(db: Path, submission_id: int) -> Path | None:
    """The archive of an unfinished submission, if it was received whole (it is checked
    again), else None."""
    archive = upload_area(db) / f"{submission_id}.tar.gz"
    return archive if archive.is_file() and not archive.is_symlink() else None


def _line(text: str) -> str:
    return " ".join(text.split())


def _process(
    db: Path,
    service: ServiceDb,
    submission_id: int,
    archive: Path,
    folder: Path,
    gate: bool,
    say: Callable[[str], None],
    report: dict[str, Any],
    allow_unsandboxed: bool,
    check: CheckSettings | None,
    stopped: Callable[[], bool],
) -> Verdict:
    data = archive.read_bytes()
    kind = _not_a_gzipped_tar(data)
    if kind:
        raise UploadRefused(f"the upload is {kind}: {PACKING}")
    try:
        unpack_archive(data, folder)
    except FolderError as e:
        # name the archive's member, not the server's folder
        raise UploadRefused(str(e).replace(f"{folder}: ", "")) from None
    del data
    root = _bot_root(folder)
    path = root / "bot.toml"
    try:
        manifest = load_manifest(path)
    except ManifestError as e:
        raise UploadRefused(str(e).replace(f"{root}/", "")) from None
    if not BOT_NAME.fullmatch(manifest.name):  # before the sandbox's seconds are spent
        raise UploadRefused(
            f"the bot name {manifest.name[:40]!r} is not usable in a league: 1-32 letters,"
            " digits or ._+- starting with a letter or digit, no spaces (bot.toml's name)"
        )
    owner = service.submission(submission_id)
    assert owner is not None
    service.update_submission(submission_id, bot=manifest.name)
    with closing(LeagueStore(db, create=False)) as store:
        known = {b.name: b for b in store.bots()}
        if manifest.name in known and known[manifest.name].owner != owner.owner:
            raise UploadRefused(
                f"the bot {manifest.name!r} belongs to another owner; rename yours in bot.toml"
            )
        previous = store.latest(manifest.name)
        gate = gate or store.league().gate.required  # as ``submit`` decides
    try:
        sandbox = require_sandbox(allow_unsandboxed)
    except SandboxError as e:
        raise UploadRefused(f"this server cannot check bots: {e}") from None
    say("smoke check: check-bot's tables, sandboxed")
    logs = db.parent / f"{db.name}.logs" / "checks" / str(submission_id)
    settings = check or CheckSettings()
    settings = CheckSettings(
        decision_ms=settings.decision_ms,
        hands=settings.hands,
        seed=settings.seed,
        grace_ms=settings.grace_ms,
        table_timeout_s=settings.table_timeout_s,
        sandbox=sandbox,
    )
    try:
        checked = run_check(
            manifest, settings, logs, lambda r: say(f"check: {r.name} {_pf(r.passed)}")
        )
    finally:
        release_folder_image(root)  # a copy in memory: not kept for the next hour
    if stopped():
        raise KeyboardInterrupt  # its checks were cut short: no verdict
    report["check"] = [
        {"name": r.name, "passed": r.passed, "detail": r.detail, "seconds": round(r.seconds, 2)}
        for r in checked.results
    ]
    if not checked.passed:
        report["exit"] = EXIT_REFUSED
        return Verdict(
            "refused", f"the smoke check failed: {', '.join(checked.failed)}", EXIT_REFUSED, report
        )
    if gate and previous is not None:
        say(f"gate against v{previous.number}: starting")
    with closing(LeagueStore(db, create=False)) as store:
        try:
            result = submit(
                store,
                path,
                owner=owner.owner,
                gate=gate,
                on_gate=lambda line: say(f"gate: {line}"),
            )
        except GateRefused as e:
            report["exit"] = EXIT_REFUSED
            return Verdict("refused", _line(str(e)), EXIT_REFUSED, report)
        except StoreError as e:
            raise UploadRefused(str(e)) from None
    version = result.version
    if result.gate is not None:
        report["gate"] = result.gate.to_json()
    report["exit"] = EXIT_ACCEPTED
    service.update_submission(submission_id, hash=version.hash, version=version.number)
    if not result.new:
        reason = f"{version.bot}: unchanged, still version {version.number}"
    else:
        reason = f"{version.bot}: version {version.number}, plays from the next round"
        if result.gate is not None:
            reason += f"; gate: {result.gate_line()}"
    with contextlib.suppress(OSError):
        remove_tree(folder)
    return Verdict("accepted", _line(reason), EXIT_ACCEPTED, report)


PACKING = "send the bot's folder as a gzipped tar: tar czf bot.tar.gz -C bot ."
"""How to pack a folder, said wherever an upload is not packed so."""


def _not_a_gzipped_tar(data: bytes) -> str:
    """What the upload is when it is plainly not a gzipped tar (``''`` otherwise)."""
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "a .zip archive"
    if data[257:262] == b"ustar" or data[257:263] == b"ustar\x00":
        return "a tar that is not gzipped"
    if data[:2] != b"\x1f\x8b":
        return "not a gzipped tar"
    return ""


def _bot_root(folder: Path) -> Path:
    """Where the unpacked upload's ``bot.toml`` is: at its root (``tar czf bot.tar.gz -C bot
    .``), or in its one folder (``tar czf bot.tar.gz bot``).

    Raises:
        UploadRefused: Neither.
    """
    if (folder / "bot.toml").is_file():
        return folder
    entries = list(folder.iterdir())
    if len(entries) == 1 and entries[0].is_dir() and (entries[0] / "bot.toml").is_file():
        return entries[0]
    raise UploadRefused(f"the upload has no bot.toml at its root or in its one folder: {PACKING}")


def public_reason(text: str, db: Path) -> str:
    """A verdict's reason as the public submission log may show it: one line, without the
    server's paths or raw ``[Errno N]`` codes."""
    for root in sorted({str(db.resolve().parent), str(db.parent)}, key=len, reverse=True):
        if root not in ("", "."):
            text = text.replace(root + "/", "").replace(root, "")
    text = re.sub(r"\[Errno -?\d+\] ", "", text)
    text = re.sub(r"(?<![\w.])/(?:[^\s/'\"]+/)+", "", text)  # any other absolute folder
    return _line(text)


def _pf(passed: bool) -> str:
    return "PASS" if passed else "FAIL"
