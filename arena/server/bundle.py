"""Bot bundles: a bot's folder and manifest as one content-hashed value that travels.

A league or a cluster worker must play the bot that was submitted, not whatever lies at a
path on some machine. ``bundle_of(manifest)`` packs the manifest's folder into a gzipped tar;
its ``files_hash`` is the folder's content hash (``arena.server.folder``: folder names, file
names, exec bits, sizes and bytes, in path order) and its ``hash`` covers that, the
manifest's path and the command and environment the bot is started with. The folder is
listed, hashed and packed by the bot-folder rules (no links, devices or FIFOs, capped in
files, bytes, folders and depth), reading each file once by streaming. ``unpack`` writes a
bundle into a cache folder member by member, refusing links, devices, absolute or ``..``
names and anything past the caps of what it unpacks to (from the members' headers, before
their data), checks both hashes against what it wrote and what it was sent, checks the
command and environment by the manifest's own rules, and returns the manifest there. A
worker therefore refuses a bot whose files, command or environment do not match the hash it
was sent, and a bundle that would unpack to more than a bot folder may hold.

Built-in bots (``example_bots``) are installed with the arena on every machine: their bundle
carries no files, only the hash of the installed package, and ``unpack`` resolves the worker's
own copy and refuses it if its hash differs (another arena version).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from arena.rules.errors import ArenaError
from arena.server.folder import (
    DEFAULT_CAPS,
    MACHINE_MADE,
    SKIPPED,
    FolderError,
    folder_hash,
    list_folder,
    pack_folder,
    remove_tree,
    unpack_archive,
)
from arena.server.manifest import BUILTIN_DIR, Manifest, ManifestError, check_env, load_manifest

__all__ = [
    "MAX_BUNDLE_BYTES",
    "BotBundle",
    "BundleError",
    "bundle_hash",
    "bundle_of",
    "folder_hash",
    "unpack",
]

MAX_BUNDLE_BYTES = DEFAULT_CAPS.bytes + 16 * 1024 * 1024
"""The most packed bytes a worker takes (what they unpack to is capped by the folder caps)."""


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


@functools.cache
def _builtin_hash() -> str:
    """The installed built-in bots' hash, over their sources alone (see ``MACHINE_MADE``)."""
    return folder_hash(BUILTIN_DIR, MACHINE_MADE, caps=None)


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
            its folder (its code could not travel with it), or a folder that breaks the
            bot-folder rules (an entry that is not a file or folder, past the caps).
    """
    if manifest.path is None:
        raise BundleError(f"bot {manifest.name!r} has no manifest file to bundle")
    command, env = tuple(manifest.command), tuple(sorted(manifest.env.items()))
    builtin = _is_builtin(manifest)
    folder = BUILTIN_DIR if builtin else manifest.folder.resolve()
    rel = manifest.path.resolve().relative_to(folder).as_posix()
    packed: bytes | None = None
    if builtin:
        files_hash = _builtin_hash()
    else:
        packed, files_hash = _pack(manifest, folder)
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


def _pack(manifest: Manifest, folder: Path) -> tuple[bytes, str]:
    """The bot's folder as a gzipped tar and its hash, refused when its code lies outside or
    the folder breaks the bot-folder rules."""
    try:
        manifest.cwd.resolve().relative_to(folder)
    except ValueError:
        raise BundleError(
            f"{manifest.path}: the working directory {manifest.cwd} lies outside the bot's"
            " folder, so the bot's code cannot travel with it; keep the bot's files in its folder"
        ) from None
    try:
        return pack_folder(list_folder(folder))
    except FolderError as e:
        raise BundleError(str(e)) from None


def unpack(bundle: BotBundle, cache: Path) -> Manifest:
    """Returns the bundle's manifest on this machine, unpacked under ``cache/<hash>/``.

    Raises:
        BundleError: The files (or this machine's built-in bots) do not match the hash, the
            hash does not cover the manifest, command and environment sent, those break
            the manifest's rules, or the files break the bot-folder rules.
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
        return _as_sent(_load(BUILTIN_DIR, bundle, MACHINE_MADE), bundle)
    if bundle.files is None:
        raise BundleError(f"bot {bundle.name!r}: the bundle carries no files")
    if len(bundle.files) > MAX_BUNDLE_BYTES:
        raise BundleError(
            f"bot {bundle.name!r}: the bundle packs {len(bundle.files) >> 20} MiB, over the"
            f" {MAX_BUNDLE_BYTES >> 20} MiB a worker takes; refused"
        )
    if not _HEX64.fullmatch(bundle.files_hash):
        raise BundleError(f"bot {bundle.name!r}: {bundle.files_hash!r} is not a content hash")
    folder = cache / bundle.files_hash
    if not _cached(folder, bundle.files_hash):
        cache.mkdir(parents=True, exist_ok=True)
        staging = cache / f".{bundle.files_hash}.{os.getpid()}"
        remove_tree(staging)
        try:
            unpack_archive(bundle.files, staging)
            actual = folder_hash(staging)
        except FolderError as e:
            remove_tree(staging)
            raise BundleError(f"bot {bundle.name!r}: {e}; refused") from None
        if actual != bundle.files_hash:
            remove_tree(staging)
            raise BundleError(
                f"bot {bundle.name!r}: its files hash to {actual[:12]}, not"
                f" {bundle.files_hash[:12]}; refused"
            )
        if folder.exists():
            remove_tree(folder)
        staging.rename(folder)
    return _as_sent(_load(folder, bundle), bundle)


_HEX64 = re.compile(r"[0-9a-f]{64}")


def _cached(folder: Path, files_hash: str) -> bool:
    """Whether ``folder`` holds exactly the files of ``files_hash`` (a worker's cache)."""
    try:
        return folder.is_dir() and folder_hash(folder) == files_hash
    except FolderError:
        return False


def _load(folder: Path, bundle: BotBundle, skipped: frozenset[str] = SKIPPED) -> Manifest:
    """The bundle's manifest: a regular file the folder's listing holds, loaded there."""
    try:
        holds = list_folder(folder, skipped=skipped, caps=None).holds_file(bundle.manifest)
    except FolderError as e:
        raise BundleError(f"bot {bundle.name!r}: {e}") from None
    if not holds:
        raise BundleError(
            f"bot {bundle.name!r}: its manifest {bundle.manifest!r} is not a file of the bundle;"
            " refused"
        )
    try:
        return load_manifest(folder / bundle.manifest)
    except ManifestError as e:
        raise BundleError(f"bot {bundle.name!r}: {e}") from None


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
