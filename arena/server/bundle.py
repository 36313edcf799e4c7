"""Bot bundles: a bot's folder and manifest as one content-hashed value that travels.

A league or a cluster worker must play the bot that was submitted, not whatever lies at a
path on some machine. ``bundle_of(manifest)`` packs the manifest's folder into a gzipped tar;
its ``files_hash`` is the SHA-256 of its files (paths and bytes, in sorted order) and its
``hash`` covers that, the manifest's path and the command and environment the bot is started
with. ``unpack`` writes a bundle into a cache folder, checks both hashes against what it
wrote and what it was sent, checks the command and environment by the manifest's own rules,
and returns the manifest there. A worker therefore refuses a bot whose files, command or
environment do not match the hash it was sent.

Built-in bots (``example_bots``) are installed with the arena on every machine: their bundle
carries no files, only the hash of the installed package, and ``unpack`` resolves the worker's
own copy and refuses it if its hash differs (another arena version).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import tarfile
from dataclasses import dataclass
from pathlib import Path

from arena.rules.errors import ArenaError
from arena.server.manifest import BUILTIN_DIR, Manifest, check_env, load_manifest

__all__ = [
    "MAX_BUNDLE_BYTES",
    "BotBundle",
    "BundleError",
    "bundle_hash",
    "bundle_of",
    "folder_hash",
    "unpack",
]

MAX_BUNDLE_BYTES = 64 * 1024 * 1024
"""The largest bot folder a bundle carries (packed)."""

_SKIPPED = frozenset({"__pycache__", ".git", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
_MACHINE_MADE = _SKIPPED | {"node_modules", "generated"}
"""Left out of the built-in bots' hash: what each machine makes itself (``npm ci`` in the
Node bot's folder installs ``node_modules/`` and writes ``generated/``), at any time."""


class BundleError(ArenaError):
    """A bot that cannot be bundled, or a bundle whose files do not match its hash."""


@dataclass(frozen=True)
class BotBundle:
    """One bot as it travels: its name, content hash, manifest path and packed files.

    ``files`` is a gzipped tar of the bot's folder (``None`` for a built-in bot, which every
    arena installation has) and ``files_hash`` its files' hash; ``manifest`` is the
    manifest's path inside that folder. ``command`` and ``env`` are the bot's as the sender
    configured it (an event's per-bot ``env`` and ``args`` applied to its manifest's); the
    worker starts it with them. ``hash`` covers all of these (``bundle_hash``).
    """

    name: str
    hash: str
    manifest: str
    files: bytes | None
    builtin: bool = False
    command: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    files_hash: str = ""


def bundle_hash(
    files_hash: str, manifest: str, command: tuple[str, ...], env: tuple[tuple[str, str], ...]
) -> str:
    """The bundle's identity: its files' hash, its manifest's path, its command and env."""
    text = json.dumps([files_hash, manifest, list(command), [list(kv) for kv in env]])
    return hashlib.sha256(text.encode()).hexdigest()


def _walk(folder: Path, skipped: frozenset[str] = _SKIPPED) -> list[Path]:
    out: list[Path] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in skipped)
        for name in sorted(names):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = Path(root) / name
            if path.is_file() and not path.is_symlink():
                out.append(path)
    return sorted(out, key=lambda p: p.relative_to(folder).as_posix())


def folder_hash(folder: Path, skipped: frozenset[str] = _SKIPPED) -> str:
    """SHA-256 over every file's relative path and bytes (caches and symlinks left out)."""
    digest = hashlib.sha256()
    for path in _walk(folder, skipped):
        rel = path.relative_to(folder).as_posix().encode()
        data = path.read_bytes()
        digest.update(len(rel).to_bytes(4, "big") + rel + len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


@functools.cache
def _builtin_hash() -> str:
    """The installed built-in bots' hash, over their sources alone (see ``_MACHINE_MADE``)."""
    return folder_hash(BUILTIN_DIR, _MACHINE_MADE)


def _is_builtin(manifest: Manifest) -> bool:
    if manifest.path is None:
        return False
    try:
        manifest.path.resolve().relative_to(BUILTIN_DIR)
    except ValueError:
        return False
    return True


def bundle_of(manifest: Manifest) -> BotBundle:
    """Packs a manifest bot's folder (or names a built-in bot) as a ``BotBundle``.

    Raises:
        BundleError: A manifest without a file, a bot whose working directory lies outside
            its folder (its code could not travel with it), or a folder over the size limit.
    """
    if manifest.path is None:
        raise BundleError(f"bot {manifest.name!r} has no manifest file to bundle")
    command, env = tuple(manifest.command), tuple(sorted(manifest.env.items()))
    builtin = _is_builtin(manifest)
    folder = BUILTIN_DIR if builtin else manifest.folder.resolve()
    packed = None if builtin else _pack(manifest, folder)
    rel = manifest.path.resolve().relative_to(folder).as_posix()
    files_hash = _builtin_hash() if builtin else folder_hash(folder)
    return BotBundle(
        manifest.name,
        bundle_hash(files_hash, rel, command, env),
        rel,
        packed,
        builtin=builtin,
        command=command,
        env=env,
        files_hash=files_hash,
    )


def _pack(manifest: Manifest, folder: Path) -> bytes:
    """The bot's folder as a gzipped tar, refused when its code lies outside or it is too big."""
    try:
        manifest.cwd.resolve().relative_to(folder)
    except ValueError:
        raise BundleError(
            f"{manifest.path}: the working directory {manifest.cwd} lies outside the bot's"
            " folder, so the bot's code cannot travel with it; keep the bot's files in its folder"
        ) from None
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=6) as tar:
        for path in _walk(folder):
            info = tarfile.TarInfo(path.relative_to(folder).as_posix())
            data = path.read_bytes()
            info.size = len(data)
            info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
            tar.addfile(info, io.BytesIO(data))
    packed = buffer.getvalue()
    if len(packed) > MAX_BUNDLE_BYTES:
        raise BundleError(
            f"{folder}: the bot's folder packs to {len(packed) // 2**20} MiB, over the"
            f" {MAX_BUNDLE_BYTES // 2**20} MiB a bundle may carry"
        )
    return packed


def unpack(bundle: BotBundle, cache: Path) -> Manifest:
    """Returns the bundle's manifest on this machine, unpacked under ``cache/<hash>/``.

    Raises:
        BundleError: The files (or this machine's built-in bots) do not match the hash, the
            hash does not cover the manifest, command and environment sent, or those break
            the manifest's rules.
    """
    if bundle_hash(bundle.files_hash, bundle.manifest, bundle.command, bundle.env) != bundle.hash:
        raise BundleError(
            f"bot {bundle.name!r}: its manifest, command or environment differ from what its"
            " hash covers; refused"
        )
    if bundle.builtin:
        actual = _builtin_hash()
        if actual != bundle.files_hash:
            raise BundleError(
                f"built-in bot {bundle.name!r}: this machine's example_bots hash {actual[:12]}"
                f" differs from the driver's {bundle.files_hash[:12]} (another arena version)"
            )
        return _as_sent(load_manifest(BUILTIN_DIR / bundle.manifest), bundle)
    if bundle.files is None:
        raise BundleError(f"bot {bundle.name!r}: the bundle carries no files")
    folder = cache / bundle.files_hash
    if not folder.is_dir() or folder_hash(folder) != bundle.files_hash:
        staging = cache / f".{bundle.files_hash}.{os.getpid()}"
        staging.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(bundle.files), mode="r:gz") as tar:
            tar.extractall(staging, filter="data")
        actual = folder_hash(staging)
        if actual != bundle.files_hash:
            _remove(staging)
            raise BundleError(
                f"bot {bundle.name!r}: its files hash to {actual[:12]}, not"
                f" {bundle.files_hash[:12]}; refused"
            )
        if folder.exists():
            _remove(folder)
        staging.rename(folder)
    return _as_sent(load_manifest(folder / bundle.manifest), bundle)


def _as_sent(manifest: Manifest, bundle: BotBundle) -> Manifest:
    """The unpacked manifest under the sender's name, command and environment, checked by
    the manifest's own rules (a plain environment, a program in the bot's view)."""
    update: dict[str, object] = {"name": bundle.name}
    if bundle.command:
        update["command"] = list(bundle.command)
        update["env"] = dict(bundle.env)
    sent = manifest.model_copy(update=update)
    try:
        check_env(sent.env)
        sent.launch_argv()
    except ValueError as e:
        raise BundleError(f"bot {bundle.name!r}: {e}; refused") from None
    return sent


def _remove(folder: Path) -> None:
    for root, dirs, names in os.walk(folder, topdown=False):
        for name in names:
            (Path(root) / name).unlink()
        for name in dirs:
            (Path(root) / name).rmdir()
    folder.rmdir()
