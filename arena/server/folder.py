"""Bot folders read as hostile input: listed, hashed, copied and packed without surprises.

A bot's folder and its manifest are its author's, and the arena reads them in three places:
the manifest loader (every command that starts a bot), the league's store (``league
submit`` copies a version) and cluster bundles (a driver packs a folder, a worker unpacks
it). All three go through this module, so one set of rules holds everywhere:

* Nothing is read before it is ``lstat``-ed: a manifest must be a regular file (not a
  symbolic link, a FIFO or a device) of at most ``MAX_MANIFEST_BYTES``, opened without
  following links and without blocking, and read with that bound.
* ``list_folder`` walks a folder without following links and without recursion, and
  refuses, before anything is copied or packed, any entry that is not a regular file or a
  folder (a link, FIFO, socket or device), a name that is not UTF-8, and a folder past the
  caps (``Caps``: files, bytes, folders, depth). Caches (``SKIPPED``) are left out.
* ``folder_digest`` hashes what a listing holds: every folder's name, every file's name,
  exec bit, size and bytes, read in chunks from files opened without following links and
  checked to be the regular files that were listed (no more bytes than listed are read).
* ``copy_folder`` and ``pack_folder`` copy exactly the listed entries (files ``0644``, or
  ``0755`` with the exec bit; folders ``0755``) by streaming, and leave nothing when they
  fail or are interrupted. ``unpack_archive`` checks every archive member's kind, name and
  declared size against the caps before writing it, so a member that would unpack to more
  than the caps allow is refused from its header, without reading its data.

Every refusal is a ``FolderError`` whose message is one line naming the folder and the
entry (as a relative path, non-printable characters escaped).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import os
import shutil
import stat
import tarfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Self

from arena.rules.errors import ArenaError

__all__ = [
    "DEFAULT_CAPS",
    "MACHINE_MADE",
    "MAX_MANIFEST_BYTES",
    "SKIPPED",
    "Caps",
    "Entry",
    "FolderError",
    "Listing",
    "copy_folder",
    "folder_digest",
    "folder_hash",
    "list_folder",
    "pack_folder",
    "read_manifest_text",
    "remove_tree",
    "shown",
    "unpack_archive",
]

MAX_MANIFEST_BYTES = 64 * 1024
"""The largest manifest (``bot.toml``) the arena reads."""

SKIPPED = frozenset({"__pycache__", ".git", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
"""Entries neither listed, hashed, copied nor packed (caches and version-control data)."""
MACHINE_MADE = SKIPPED | {"node_modules", "generated"}
"""Also left out of the built-in bots' hash: what each machine makes itself (``npm ci`` in the
Node bot's folder installs ``node_modules/`` and writes ``generated/``), at any time."""
SKIPPED_SUFFIXES = (".pyc", ".pyo")
"""Files left out by their suffix (compiled Python, which the interpreter makes itself)."""

_CHUNK = 1 << 20
MAX_MEMBER_HEADER_BYTES = 64 * 1024
"""The largest extended header of an archive member (a GNU long name, a pax header): the
reader takes one whole into memory, so it is refused by its declared size first."""
MAX_HEADER_CHAIN = 4
"""The most extended headers one member may carry (pax, GNU long name and link, global)."""
_DIGEST_TAG = b"tichu-arena folder v2\0"


class FolderError(ArenaError):
    """A bot folder, manifest or archive that breaks the rules; the message is one line."""


@dataclass(frozen=True)
class Caps:
    """The most a bot folder may hold: files, bytes of files, folders, and folder depth."""

    files: int = 4096
    bytes: int = 64 * 1024 * 1024
    dirs: int = 1024
    depth: int = 32

    def text(self) -> str:
        """The caps in words, for refusals."""
        return (
            f"at most {self.files} files and {self.bytes >> 20} MiB, {self.dirs} folders and"
            f" {self.depth} levels of folders (caches left out)"
        )


DEFAULT_CAPS = Caps()
"""The caps of a submitted or bundled bot folder."""


@dataclass(frozen=True)
class Entry:
    """One listed entry: its relative POSIX path, kind, exec bit and size (files)."""

    path: str
    is_dir: bool
    executable: bool = False
    size: int = 0


@dataclass(frozen=True)
class Listing:
    """A folder as ``list_folder`` found it: its root and its entries in path order."""

    root: Path
    entries: tuple[Entry, ...]

    @property
    def files(self) -> tuple[Entry, ...]:
        """The regular files."""
        return tuple(e for e in self.entries if not e.is_dir)

    def holds_file(self, relative: str) -> bool:
        """Whether ``relative`` (a POSIX path) is one of the listed regular files."""
        return any(e.path == relative and not e.is_dir for e in self.entries)


def shown(name: str | bytes) -> str:
    """A path as one printable line: undecodable bytes and control characters escaped."""
    raw = name if isinstance(name, bytes) else os.fsencode(name)
    text = raw.decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def _skipped(name: str, is_dir: bool, skipped: frozenset[str]) -> bool:
    return name in skipped or (not is_dir and name.endswith(SKIPPED_SUFFIXES))


def _check_name(root: Path, relative: str) -> None:
    try:
        relative.encode("utf-8")
    except UnicodeEncodeError:
        raise FolderError(
            f"{root}: the name '{shown(relative)}' is not valid UTF-8; rename it"
        ) from None


# ------------------------------------------------------------------------------- manifest


def _open_regular(path: Path, what: str, limit: int) -> tuple[int, os.stat_result]:
    """Opens ``path`` for reading if it is a regular file of at most ``limit`` bytes.

    ``lstat`` first, then an open that neither follows a link nor blocks on a FIFO, then
    ``fstat`` on what was opened: a file swapped in between is refused too.
    """
    try:
        before = os.lstat(path)
    except OSError as e:
        raise FolderError(f"{path}: cannot read {what}: {e.strerror or e}") from None
    if not stat.S_ISREG(before.st_mode):
        raise FolderError(
            f"{shown(str(path))}: {what} is {_kind(before.st_mode)}; it must be a regular file"
        )
    if before.st_size > limit:
        raise FolderError(f"{path}: {what} holds {before.st_size} bytes, over the {limit} allowed")
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise FolderError(f"{path}: cannot read {what}: {e.strerror or e}") from None
    after = os.fstat(fd)
    if not stat.S_ISREG(after.st_mode) or (after.st_dev, after.st_ino) != (
        before.st_dev,
        before.st_ino,
    ):
        os.close(fd)
        raise FolderError(f"{path}: {what} changed while it was opened; refused")
    return fd, after


def read_manifest_text(path: Path) -> str:
    """A manifest's text, read only if it is a regular file of at most ``MAX_MANIFEST_BYTES``.

    Raises:
        FolderError: A link, FIFO, device or folder, a larger file, unreadable, or not UTF-8.
    """
    fd, _ = _open_regular(path, "the manifest", MAX_MANIFEST_BYTES)
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise FolderError(f"{path}: the manifest grew past {MAX_MANIFEST_BYTES} bytes; refused")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FolderError(f"{path}: the manifest is not UTF-8 text ({e.reason})") from None


# ------------------------------------------------------------------------------- listing


def list_folder(
    folder: Path, *, skipped: frozenset[str] = SKIPPED, caps: Caps | None = DEFAULT_CAPS
) -> Listing:
    """Lists a bot folder, refusing what a bot folder may not hold (see the module docstring).

    Nothing is followed or opened but folders (by ``scandir``, which never follows a link
    here); ``caps=None`` lists the arena's own trusted folders without caps.

    Raises:
        FolderError: The first entry that breaks a rule, or the first cap passed.
    """
    try:
        top = os.lstat(folder)
    except OSError as e:
        raise FolderError(f"{folder}: cannot read the bot's folder: {e.strerror or e}") from None
    if not stat.S_ISDIR(top.st_mode):
        raise FolderError(f"{folder}: the bot's folder is {_kind(top.st_mode)}, not a folder")
    entries: list[Entry] = []
    files = dirs = total = 0
    pending: list[tuple[str, int]] = [("", 0)]  # (relative path, depth): no recursion

    def over() -> FolderError:
        assert caps is not None
        return FolderError(f"{folder}: a bot folder may hold {caps.text()}; this one holds more")

    while pending:
        relative, depth = pending.pop()
        try:
            with os.scandir(folder / relative if relative else folder) as scan:
                found = list(_bounded(scan, caps, files + dirs, over))
        except OSError as e:
            where = shown(relative) or "."
            raise FolderError(f"{folder}: cannot list {where}: {e.strerror or e}") from None
        for item in found:
            rel = f"{relative}/{item.name}" if relative else item.name
            try:
                st = item.stat(follow_symlinks=False)
            except OSError as e:
                raise FolderError(f"{folder}: {shown(rel)}: {e.strerror or e}") from None
            is_dir = stat.S_ISDIR(st.st_mode)
            if _skipped(item.name, is_dir, skipped):
                continue
            _check_name(folder, rel)
            if is_dir:
                dirs += 1
                if caps is not None and (dirs > caps.dirs or depth + 1 > caps.depth):
                    raise over()
                entries.append(Entry(rel, True))
                pending.append((rel, depth + 1))
            elif stat.S_ISREG(st.st_mode):
                files += 1
                total += st.st_size
                if caps is not None and (files > caps.files or total > caps.bytes):
                    raise over()
                entries.append(Entry(rel, False, bool(st.st_mode & stat.S_IXUSR), st.st_size))
            else:
                raise FolderError(
                    f"{folder}: {shown(rel)} is {_kind(st.st_mode)}; a bot folder may hold"
                    " regular files and folders only"
                )
    entries.sort(key=lambda e: e.path.encode("utf-8"))
    return Listing(folder, tuple(entries))


def _bounded(
    scan: Iterator[os.DirEntry[str]],
    caps: Caps | None,
    seen: int,
    over: Callable[[], FolderError],
) -> Iterator[os.DirEntry[str]]:
    """A folder's entries, refused once they alone pass the caps (a huge flat folder)."""
    limit = None if caps is None else caps.files + caps.dirs + 2 * len(SKIPPED) - seen
    for n, item in enumerate(scan):
        if limit is not None and n > limit:
            raise over()
        yield item


# ------------------------------------------------------------------------------- hashing


def _header(entry: Entry) -> bytes:
    name = entry.path.encode("utf-8")
    if entry.is_dir:
        return b"d\0" + name + b"\0"
    mode = b"x" if entry.executable else b"-"
    return b"f\0" + mode + b"\0" + name + b"\0" + str(entry.size).encode() + b"\0"


def _chunks(root: Path, entry: Entry) -> Iterator[bytes]:
    """A listed file's bytes in chunks, refused if it is no longer the file listed."""
    fd, st = _open_regular(root / entry.path, shown(entry.path), entry.size)
    with os.fdopen(fd, "rb") as f:
        left = entry.size
        while left > 0:
            chunk = f.read(min(_CHUNK, left))
            if not chunk:
                break
            left -= len(chunk)
            yield chunk
    if left or st.st_size != entry.size:
        raise FolderError(f"{root}: {shown(entry.path)} changed while it was read; try again")


def folder_digest(listing: Listing, prefix: bytes = b"") -> str:
    """SHA-256 over ``prefix`` and every listed folder's name and file's name, exec bit,
    size and bytes, in path order (read by streaming, never more bytes than listed).

    Raises:
        FolderError: A file changed kind or size since it was listed.
    """
    digest = hashlib.sha256(_DIGEST_TAG + prefix)
    for entry in listing.entries:
        digest.update(_header(entry))
        if not entry.is_dir:
            for chunk in _chunks(listing.root, entry):
                digest.update(chunk)
    return digest.hexdigest()


def folder_hash(
    folder: Path, skipped: frozenset[str] = SKIPPED, caps: Caps | None = DEFAULT_CAPS
) -> str:
    """``folder_digest`` of ``list_folder(folder)``: a folder's content hash."""
    return folder_digest(list_folder(folder, skipped=skipped, caps=caps))


# ------------------------------------------------------------------------------- copies


def remove_tree(path: Path) -> None:
    """Removes a folder the arena made (links are removed, never followed); no error."""
    shutil.rmtree(path, ignore_errors=True)


def _write_file(target: Path, chunks: Iterator[bytes], executable: bool) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(target, flags, 0o755 if executable else 0o644)
    with os.fdopen(fd, "wb") as f:
        for chunk in chunks:
            f.write(chunk)
    os.chmod(target, 0o755 if executable else 0o644)  # whatever the umask


def copy_folder(listing: Listing, target: Path) -> None:
    """Copies the listed entries into ``target`` (made here; it must not exist).

    Files get mode ``0644`` (``0755`` with the exec bit), folders ``0755``. On any failure
    or interruption (Ctrl-C included) ``target`` is removed before the error goes on.

    Raises:
        FolderError: A listed file changed kind or size while it was copied.
        OSError: The target cannot be written.
    """
    target.mkdir(mode=0o755)
    try:
        for entry in listing.entries:
            dest = target / entry.path
            if entry.is_dir:
                dest.mkdir(mode=0o755)
                os.chmod(dest, 0o755)
            else:
                _write_file(dest, _chunks(listing.root, entry), entry.executable)
    except BaseException:
        remove_tree(target)
        raise


def pack_folder(listing: Listing) -> tuple[bytes, str]:
    """The listed entries as a gzipped tar, and their ``folder_digest``, in one streaming pass.

    Each file is read once, in chunks, into both the archive and the digest, so the hash
    is that of exactly the bytes packed.

    Raises:
        FolderError: A listed file changed kind or size while it was packed.
    """
    digest = hashlib.sha256(_DIGEST_TAG)
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=6, mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w|", format=tarfile.PAX_FORMAT) as tar,
    ):
        for entry in listing.entries:
            digest.update(_header(entry))
            info = tarfile.TarInfo(entry.path)
            if entry.is_dir:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
                continue
            info.size, info.mode = entry.size, 0o755 if entry.executable else 0o644
            tar.addfile(info, _Hashing(_chunks(listing.root, entry), digest))
    return buffer.getvalue(), digest.hexdigest()


class _Hashing(io.RawIOBase):
    """A file object over chunks that feeds every byte read into a digest."""

    def __init__(self, chunks: Iterator[bytes], digest: hashlib._Hash) -> None:
        self._chunks = chunks
        self._digest = digest
        self._left = b""

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        out = bytearray()
        while size < 0 or len(out) < size:
            if not self._left:
                self._left = next(self._chunks, b"")
                if not self._left:
                    break
            take = self._left if size < 0 else self._left[: size - len(out)]
            self._left = self._left[len(take) :]
            out += take
        self._digest.update(out)
        return bytes(out)


def unpack_archive(
    data: bytes, target: Path, *, skipped: frozenset[str] = SKIPPED, caps: Caps = DEFAULT_CAPS
) -> None:
    """Writes a gzipped tar of a bot folder into ``target`` (made here; it must not exist).

    Members are read as a stream, and each is checked before anything of it is written: a
    regular file or a folder only (no link, device, FIFO or sparse file), a relative name of
    UTF-8 parts without ``..``, nothing the walker leaves out, and within the caps, counted
    from the declared sizes. On any failure ``target`` is removed.

    Raises:
        FolderError: The first member that breaks a rule, or a damaged archive.
    """
    target.mkdir(mode=0o755)
    try:
        _unpack(data, target, skipped, caps)
    except FolderError as e:
        remove_tree(target)
        text = str(e)
        raise FolderError(text if text.startswith(f"{target}") else f"{target}: {text}") from None
    except (tarfile.TarError, EOFError, gzip.BadGzipFile, zlib.error, TypeError) as e:
        # TypeError: tarfile's reader of a gzip header cut short
        remove_tree(target)
        raise FolderError(f"{target}: a damaged bot archive ({e})") from None
    except OSError as e:
        remove_tree(target)
        raise FolderError(f"{target}: the archive could not be unpacked: {e.strerror}") from None
    except BaseException:
        remove_tree(target)
        raise


_EXTENDED = frozenset(
    {tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE,
     tarfile.SOLARIS_XHDTYPE}
)  # fmt: skip


class _BoundedTarInfo(tarfile.TarInfo):
    """A member header read with bounds: an extended header (GNU long name, pax) of at most
    ``MAX_MEMBER_HEADER_BYTES`` and ``MAX_HEADER_CHAIN`` of them before a member, no GNU
    sparse member (whose extension blocks the reader collects without bound). The bounds are
    checked on the declared size, before the reader takes the header's bytes."""

    def _proc_member(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        chain = getattr(tarfile_, "_arena_chain", 0)
        if self.type in _EXTENDED:
            if self.size > MAX_MEMBER_HEADER_BYTES or chain >= MAX_HEADER_CHAIN:
                raise FolderError(
                    f"an extended header of {self.size} bytes (a long name or pax header;"
                    f" at most {MAX_MEMBER_HEADER_BYTES} bytes, {MAX_HEADER_CHAIN} a member)"
                )
            tarfile_._arena_chain = chain + 1  # type: ignore[attr-defined]
        else:
            tarfile_._arena_chain = 0  # type: ignore[attr-defined]
            if self.type == tarfile.GNUTYPE_SPARSE:
                raise FolderError(f"'{shown(self.name)}' is a sparse file (refused)")
        try:
            member: tarfile.TarInfo = super()._proc_member(tarfile_)  # type: ignore[misc]
        except _MISREAD as e:  # a pax record tarfile misreads
            raise FolderError(f"a damaged bot archive (a member header: {e})") from None
        return member

    @classmethod
    def fromtarfile(cls, tarfile_: tarfile.TarFile) -> Self:
        """A header block read, or a one-line refusal of one tarfile cannot read."""
        try:
            return super().fromtarfile(tarfile_)
        except _MISREAD as e:
            raise FolderError(f"a damaged bot archive (a member header: {e})") from None


_MISREAD = (ValueError, TypeError, OverflowError, LookupError)
"""What tarfile raises, besides its own errors, on a header it cannot read."""


def _plain(name: str) -> str:
    """A member's name without the ``./`` that ``tar -C bot .`` puts before each."""
    while name.startswith("./"):
        name = name[2:]
    return name


def _unpack(data: bytes, target: Path, skipped: frozenset[str], caps: Caps) -> None:
    files = dirs = total = 0

    def over(name: str) -> FolderError:
        return FolderError(
            f"{target}: the archive's '{shown(name)}' would unpack past the caps: a bot"
            f" folder may hold {caps.text()}"
        )

    stream = io.BytesIO(data)
    with tarfile.open(fileobj=stream, mode="r|gz", tarinfo=_BoundedTarInfo) as tar:
        for member in tar:
            name = _plain(member.name)
            if name in ("", ".") and member.type == tarfile.DIRTYPE:
                continue  # the folder itself (``./``)
            parts = PurePosixPath(name).parts
            if (
                not parts
                or name.startswith("/")
                or any(p in ("", ".", "..") for p in name.split("/"))
            ):
                raise FolderError(
                    f"{target}: the archive's member '{shown(name)}' is not a plain relative path"
                )
            _check_name(target, name)
            is_dir = member.type == tarfile.DIRTYPE
            if not is_dir and (
                member.type not in (tarfile.REGTYPE, tarfile.AREGTYPE) or member.sparse
            ):
                raise FolderError(
                    f"{target}: the archive's member '{shown(name)}' is not a regular file or"
                    " a folder (links, devices, FIFOs and sparse files are refused)"
                )
            if any(_skipped(p, True, skipped) for p in parts) or _skipped(
                parts[-1], is_dir, skipped
            ):
                raise FolderError(
                    f"{target}: the archive's member '{shown(name)}' is a cache no bundle carries"
                )
            if len(parts) - (0 if is_dir else 1) > caps.depth:
                raise over(name)
            dest = target.joinpath(*parts)
            if not dest.parent.is_dir():  # the packer lists every folder before its entries
                raise FolderError(
                    f"{target}: the archive's member '{shown(name)}' comes before its folder"
                )
            if is_dir:
                dirs += 1
                if dirs > caps.dirs:
                    raise over(name)
                dest.mkdir(mode=0o755, exist_ok=True)
                continue
            files += 1
            total += member.size
            if files > caps.files or total > caps.bytes:
                raise over(name)
            source = tar.extractfile(member)
            assert source is not None  # a regular member always has data
            executable = bool(member.mode & stat.S_IXUSR)
            _write_file(dest, iter(functools.partial(source.read, _CHUNK), b""), executable)
            if dest.stat().st_size != member.size:
                raise FolderError(f"{target}: the archive's '{shown(name)}' is cut short")
