"""The sealed runtime: what a ``full`` sandbox shows of the host, copied into memory.

Two bot processes that read the same host file share its pages in the kernel's page cache:
one evicts or loads a page, the other times a read of it, and a hand passes between them (or
between a bot and its twin playing the other rotation of the same board, minutes later).
So a sandbox binds no host file. It binds *images*: folders in a memory file system
(``/dev/shm``) holding copies of the runtime, whose pages are never evicted (tmpfs has no
backing store), so whether a page is in memory says nothing. Three kinds, each named by a
hash of what it holds and built once (later runs reuse it):

* ``base``: the interpreter and its standard library (less its tests and GUI), the installed
  distributions the arena's own requirements name (``grpcio``, ``protobuf``, ``numpy``, ...),
  the programs a manifest may name (``node``) and the launch tools, the shared libraries all
  of those load (as ``ldd`` resolves them), the C and C++ runtime libraries, and the loader's
  files of ``/etc``;
* ``project``: the arena's packages (``arena``, ``sdk``, ``example_bots``) where they are not
  installed in site-packages (an editable checkout);
* ``folder``: a bot's own folder (one per folder and content).

An image mirrors absolute paths (``<image>/usr/lib/...`` is shown at ``/usr/lib/...``); its
``roots`` are what the sandbox binds. Every runner holds a shared lock on each image it
uses; building an image removes the others of its kind that no runner holds.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from arena.rules.errors import ArenaError

ENV_IMAGES = "TICHU_ARENA_IMAGES"
"""Where the images live (default: ``/dev/shm/tichu-arena-<uid>``, else the temp folder)."""

PACKAGES = ("arena", "sdk", "example_bots")
DISTRIBUTION = "tichu-arena"
TOOLS = ("env", "prlimit", "setpriv")
"""The launch tools that run inside the sandbox before the bot (``Sandbox.launch``)."""
PROGRAMS = ("node", "nodejs")
"""Programs a manifest may name besides the interpreter (shown when the host has them)."""
C_LIBRARIES = (
    "libc.so.6",
    "libm.so.6",
    "libpthread.so.0",
    "libdl.so.2",
    "librt.so.1",
    "libstdc++.so.6",
    "libgcc_s.so.1",
    "libz.so.1",
)
"""Shared libraries a compiled bot may link against without bringing them."""
SYSTEM_TOPS = ("usr", "etc", "lib", "lib32", "lib64", "libx32", "bin", "sbin")
"""Top folders of the system: the image shows each one it holds whole."""
ROOTS_FILE = ".roots"
"""In an image's folder (outside every root, so no bot sees it): the roots, one a line."""
ETC = ("ld.so.cache", "ld.so.conf", "localtime")
_STDLIB_SKIPPED = frozenset(
    {
        "test",
        "idlelib",
        "tkinter",
        "turtledemo",
        "ensurepip",
        "site-packages",
        "dist-packages",
        "lib2to3",
        "venv",
    }
)
FORMAT = 2
"""Changes when images built by earlier code would no longer do (it is in every key)."""
UNUSED_S = 3600.0
"""An image no runner holds is removed once it has not been used for this long."""
FOLDER_MAX_BYTES = 1 << 30
"""A bot folder larger than this is refused (it is copied into memory)."""
FOLDER_MAX_ENTRIES = 100_000


class ImageError(ArenaError):
    """An image could not be built (a folder too large, no room): the message says why."""


@dataclass(frozen=True)
class Image:
    """A built image: its folder and the absolute paths it provides."""

    path: Path
    roots: tuple[Path, ...]

    def binds(self) -> list[tuple[Path, Path]]:
        """(source in the image, where the sandbox shows it) for each root that exists."""
        out = []
        for root in self.roots:
            source = self.path / root.relative_to("/")
            if source.exists() or source.is_symlink():
                out.append((source, root))
        return out


def images_folder() -> Path:
    """The folder of the images: a memory file system where there is one."""
    if env := os.environ.get(ENV_IMAGES):
        return Path(env)
    shm = Path("/dev/shm")
    usable = shm.is_dir() and os.access(shm, os.W_OK | os.X_OK)
    base = shm if usable else Path(tempfile.gettempdir())
    return base / f"tichu-arena-{os.geteuid()}"


# ---- what goes in -------------------------------------------------------------------------


def _walk(top: Path, skipped: frozenset[str] = frozenset()) -> Iterator[Path]:
    """Every file, link and folder under ``top`` (links not followed), ``skipped`` names at
    its first level left out."""
    if not top.is_dir() or top.is_symlink():
        if top.exists() or top.is_symlink():
            yield top
        return
    yield top
    for dirpath, dirnames, filenames in os.walk(top):
        here = Path(dirpath)
        if here == top:
            dirnames[:] = [d for d in dirnames if d not in skipped]
            filenames = [f for f in filenames if f not in skipped]
        dirnames.sort()
        for name in dirnames:
            yield here / name  # a link to a folder is listed here and not walked
        for name in sorted(filenames):
            yield here / name


def _requirement_names(dist: importlib.metadata.Distribution) -> list[str]:
    """The names of a distribution's requirements outside its extras."""
    names = []
    for req in dist.requires or []:
        if "extra ==" in req.replace('"', "'").replace("extra=='", "extra == '"):
            continue
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
        if match:
            names.append(match.group(1))
    return names


def distribution_files() -> list[Path]:
    """The files of the arena's distribution and of everything its requirements pull in."""
    paths = sysconfig.get_paths()
    site = {Path(paths[k]).resolve() for k in ("purelib", "platlib") if k in paths}
    where = [str(s) for s in sorted(site)]
    seen: set[str] = set()
    todo = [DISTRIBUTION]
    files: list[Path] = []
    while todo:
        name = re.sub(r"[-_.]+", "-", todo.pop()).lower()
        if name in seen:
            continue
        seen.add(name)
        # Looked up in site-packages alone: a checkout's own metadata (in the working
        # folder) would list the whole checkout.
        dist = next(iter(importlib.metadata.distributions(name=name, path=where)), None)
        if dist is None:
            continue
        for f in dist.files or []:
            p = Path(os.path.abspath(str(dist.locate_file(f))))
            if any(s in p.parents for s in site):
                files.append(p)
        todo.extend(_requirement_names(dist))
    return files


def _stdlib_paths() -> list[Path]:
    out = []
    for key in ("stdlib", "platstdlib"):
        base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_prefix})
        value = base.get(key)
        if value:
            out.append(Path(value))
    return out


def _interpreter_paths() -> list[Path]:
    """The interpreter, its library, its links in a virtual environment, ``pyvenv.cfg``."""
    out = [Path(sys.executable), Path(os.path.realpath(sys.executable))]
    if sys.prefix != sys.base_prefix:
        out.append(Path(sys.prefix) / "pyvenv.cfg")
        out.extend(sorted((Path(sys.prefix) / "bin").glob("python*")))
    libdir = sysconfig.get_config_var("LIBDIR")
    ldlib = sysconfig.get_config_var("LDLIBRARY")
    if libdir and ldlib and ".so" in str(ldlib):  # a shared build: libpython3.X.so*
        out.extend(sorted(Path(libdir).glob(f"{ldlib}*")))
    return out


def _programs() -> list[Path]:
    from arena.server.sandbox import bot_path

    out = []
    for name in (*PROGRAMS, *TOOLS):
        found = shutil.which(name, path=bot_path())
        if found is not None:
            out.append(Path(found))
    return out


@functools.cache
def runtime_programs() -> frozenset[Path]:
    """The programs the base image holds (the interpreter and its links, ``node``, the
    launch tools): all a ``full`` sandbox can run by a bare name, besides the bot's own."""
    return frozenset(_with_links([*_interpreter_paths(), *_programs()]))


def _is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


_LDD_LINE = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x")


def shared_libraries(elves: Iterable[Path]) -> set[Path]:
    """The shared libraries the given (trusted) ELF files load, as ``ldd`` resolves them."""
    ldd = shutil.which("ldd")
    out: set[Path] = set()
    if ldd is None:
        return out
    batch = [str(p) for p in elves]
    for i in range(0, len(batch), 64):
        done = subprocess.run(
            [ldd, *batch[i : i + 64]], capture_output=True, text=True, check=False, timeout=120
        )
        for line in done.stdout.splitlines():
            match = _LDD_LINE.search(line)
            if match:
                out.add(Path(match.group(1)))
    return out


def _library_dirs() -> list[Path]:
    dirs = []
    for d in (
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/lib64",
        "/usr/lib64",
        "/lib",
        "/usr/lib",
        f"/usr/lib/{sysconfig.get_config_var('MULTIARCH') or ''}",
    ):
        p = Path(d)
        if p.is_dir() and p not in dirs:
            dirs.append(p)
    return dirs


def _with_links(paths: Iterable[Path]) -> set[Path]:
    """The paths, with every link met on the way to what they name and its target."""
    out: set[Path] = set()
    todo = list(paths)
    while todo:
        p = Path(os.path.abspath(todo.pop()))
        if p in out:
            continue
        # Each parent that is a link (``/lib`` -> ``usr/lib``) is a path the sandbox makes
        # itself; the file is taken at its real folder.
        real_parent = Path(os.path.realpath(p.parent))
        q = real_parent / p.name
        if q in out:
            continue
        if q.is_symlink():
            out.add(q)
            todo.append(q.parent / os.readlink(q))
        elif q.exists():
            out.add(q)
    return out


def base_selection() -> set[Path]:
    """Every path of the ``base`` image (files, links, folders)."""
    chosen: set[Path] = set()
    for lib in _stdlib_paths():
        # Less its tests, GUI and the build's static library (``config-3.X-...``).
        build = frozenset(p.name for p in lib.glob("config-*"))
        chosen.update(_walk(lib, _STDLIB_SKIPPED | build))
    dist_files = [p for p in distribution_files() if p.exists() or p.is_symlink()]
    chosen.update(dist_files)
    chosen.update(_with_links(_interpreter_paths()))
    programs = _with_links(_programs())
    chosen.update(programs)
    elves = sorted(
        p
        for p in chosen
        if p.is_file()
        and not p.is_symlink()
        and (p.suffix == ".so" or ".so." in p.name or os.access(p, os.X_OK))
        and _is_elf(p)
    )
    libs = shared_libraries(elves)
    for name in C_LIBRARIES:
        for d in _library_dirs():
            if (d / name).exists():
                libs.add(d / name)
                break
    chosen.update(_with_links(libs))
    etc = [Path("/etc") / n for n in ETC]
    chosen.update(_with_links(p for p in etc if p.exists() or p.is_symlink()))
    conf = Path("/etc/ld.so.conf.d")
    if conf.is_dir():
        chosen.update(_walk(conf))
    return chosen


def project_roots() -> list[Path]:
    """The arena's package folders that lie outside site-packages (an editable checkout)."""
    site = {Path(p) for p in sysconfig.get_paths().values()}
    out = []
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        for loc in spec.submodule_search_locations:
            p = Path(loc).resolve()
            if not any(s == p or s in p.parents for s in site):
                out.append(p)
    return sorted(set(out))


# ---- building -----------------------------------------------------------------------------


def _key(paths: Iterable[Path], stats: Mapping[Path, os.stat_result] | None = None) -> str:
    """A hash of what the paths hold as ``lstat`` sees it (a change makes a new image);
    ``stats`` are their ``lstat`` results where the caller has them already."""
    h = hashlib.sha256(f"image format {FORMAT}\n".encode())
    for p in sorted(paths, key=str):
        try:
            st = stats[p] if stats is not None else p.lstat()
        except OSError:
            continue
        line = f"{p}\0{st.st_mode}\0{st.st_size}\0{st.st_mtime_ns}\n"
        h.update(line.encode("utf-8", "surrogateescape"))
        if stat.S_ISLNK(st.st_mode):
            h.update(os.readlink(p).encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:24]


def _roots(paths: Iterable[Path]) -> tuple[Path, ...]:
    """The fewest top folders that hold every path (what the sandbox binds)."""
    tops: set[Path] = set()
    for p in paths:
        parts = p.parts
        if len(parts) < 2:
            continue
        if parts[1] in SYSTEM_TOPS:
            top = Path(*parts[:2])
        else:
            top = p if p.is_dir() and not p.is_symlink() else p.parent
        tops.add(top)
    out: list[Path] = []
    for t in sorted(tops, key=lambda t: len(t.parts)):
        if not any(o == t or o in t.parents for o in out):
            out.append(t)
    return tuple(out)


def _copy_into(
    image: Path,
    paths: Iterable[Path],
    *,
    source_root: Path | None = None,
    target_root: Path | None = None,
) -> None:
    """Copies each path (files by content, links as links, folders as folders) into
    ``image`` at its absolute path (or, for a bot folder, ``source_root`` shown at
    ``target_root``). Modes: folders 0755, files 0644, or 0755 with an exec bit; times kept."""
    for p in sorted(paths, key=lambda p: (len(p.parts), str(p))):
        if source_root is None:
            rel = p
        else:
            rel = (target_root or source_root) / p.relative_to(source_root)
        dest = image / rel.relative_to("/")
        st = p.lstat()
        _parents(image, dest)
        if stat.S_ISLNK(st.st_mode):
            if not dest.is_symlink():
                os.symlink(os.readlink(p), dest)
        elif stat.S_ISDIR(st.st_mode):
            dest.mkdir(mode=0o755, exist_ok=True)
            os.chmod(dest, 0o755)
        elif stat.S_ISREG(st.st_mode):
            shutil.copyfile(p, dest, follow_symlinks=False)
            os.chmod(dest, 0o755 if st.st_mode & 0o111 else 0o644)
            # The times too: Python takes a cached .pyc whose recorded source time differs
            # from its source's for stale, and would compile every module at every start.
            os.utime(dest, ns=(st.st_atime_ns, st.st_mtime_ns))


def _parents(image: Path, dest: Path) -> None:
    missing = []
    d = dest.parent
    while d != image and not d.exists():
        missing.append(d)
        d = d.parent
    for m in reversed(missing):
        m.mkdir(mode=0o755)
        os.chmod(m, 0o755)


_held: dict[Path, int] = {}
"""Shared locks this process holds on the images it uses (kept until it exits)."""


def _hold(image: Path) -> None:
    lock = image.with_name(image.name + ".lock")
    if image in _held:
        return
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_SH)
    os.utime(fd)  # when it was last used: ``_collect`` keeps what was used lately
    _held[image] = fd


def _collect(kind: str, keep: Path) -> None:
    """Removes the images of ``kind`` that no runner holds and none used for ``UNUSED_S``,
    but ``keep``, and what builders that died left (the caller holds the build lock)."""
    for other in keep.parent.glob(f"{kind}-*"):
        if other.suffix == ".partial":  # the build lock is held: a builder that died
            shutil.rmtree(other, ignore_errors=True)
            continue
        if other == keep or other.suffix == ".lock" or other in _held:
            continue
        lock = other.with_name(other.name + ".lock")
        with contextlib.suppress(OSError):
            if time.time() - lock.stat().st_mtime < UNUSED_S:
                continue  # used lately: another checkout's, or the next run's
        _remove_unheld(other)


def _remove_unheld(image: Path) -> bool:
    """Removes ``image`` and its lock file unless a runner holds it (its shared lock)."""
    lock = image.with_name(image.name + ".lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    try:
        shutil.rmtree(image, ignore_errors=True)
        lock.unlink(missing_ok=True)
    finally:
        os.close(fd)
    return True


def build(
    kind: str,
    paths: set[Path],
    roots: tuple[Path, ...],
    *,
    source_root: Path | None = None,
    target_root: Path | None = None,
    key: str | None = None,
) -> Image:
    """The image of ``kind`` holding ``paths`` (named by ``key``, else by a hash of what the
    paths hold), built unless it exists."""
    top = images_folder()
    top.mkdir(mode=0o755, parents=True, exist_ok=True)
    os.chmod(top, 0o755)
    key = key or _key(paths)
    if target_root is not None:  # the same files shown elsewhere are another image
        key += hashlib.sha256(str(target_root).encode()).hexdigest()[:8]
    image = top / f"{kind}-{key}"
    if image.is_dir():  # built already (an image appears whole, by a rename)
        _hold(image)
        if image.is_dir():  # not collected before the hold
            return Image(image, roots)
        os.close(_held.pop(image))  # a lock on a removed file: take a new one below
    with open(top / "build.lock", "a+") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)  # one builder at a time; the others then reuse
        if not image.is_dir():
            partial = top / f"{kind}-{key}.partial"
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir(mode=0o755)
            try:
                _copy_into(partial, paths, source_root=source_root, target_root=target_root)
                (partial / ROOTS_FILE).write_text("".join(f"{r}\n" for r in roots))
                os.chmod(partial, 0o755)
                os.rename(partial, image)
            except OSError as e:
                shutil.rmtree(partial, ignore_errors=True)
                raise ImageError(f"cannot build the sandbox's {kind} image in {top}: {e}") from e
            except BaseException:
                shutil.rmtree(partial, ignore_errors=True)
                raise
        _hold(image)
        _collect(kind, image)
    return Image(image, roots)


def _fingerprint() -> str:
    """A cheap hash that changes when the runtime's makeup may have: the folders' and the
    programs' times (a package installed or removed changes its folder's), the loader's
    cache, and this module."""
    paths = sysconfig.get_paths()
    watched = [Path(paths[k]) for k in ("purelib", "platlib", "stdlib", "platstdlib") if k in paths]
    watched += [Path(sys.executable), Path(os.path.realpath(sys.executable)), Path(__file__)]
    watched += [*_programs(), Path("/etc/ld.so.cache")]
    h = hashlib.sha256()
    for p in watched:
        with contextlib.suppress(OSError):
            st = p.stat()
            h.update(f"{p}\0{st.st_mtime_ns}\0{st.st_size}\n".encode())
    return h.hexdigest()[:24]


@functools.cache
def base_image() -> Image:
    """The ``base`` image (found once per process, built once per runtime).

    It is named by ``_fingerprint()``: finding what it holds takes ``ldd`` seconds, and every
    run starts here. A file changed in place in site-packages leaves the fingerprint as it
    was: remove the images folder to rebuild (docs/security.md).
    """
    image = images_folder() / f"base-{_fingerprint()}"
    with contextlib.suppress(OSError):
        roots = (image / ROOTS_FILE).read_text().splitlines()
        _hold(image)
        if image.is_dir():
            return Image(image, tuple(Path(r) for r in roots))
    paths = base_selection()
    return build("base", paths, _roots(paths), key=image.name.removeprefix("base-"))


@functools.cache
def project_image() -> Image | None:
    """The ``project`` image, or None when the packages live in site-packages."""
    roots = project_roots()
    if not roots:
        return None
    paths: set[Path] = set()
    for r in roots:
        paths.update(_walk(r))
    return build("project", paths, tuple(roots))


def runtime_images() -> list[Image]:
    """The images every sandbox binds."""
    project = project_image()
    return [base_image(), *([project] if project is not None else [])]


def folder_image(folder: Path) -> Image:
    """An image of a bot's folder, shown at its real path (regular files, folders, links).

    Raises:
        ImageError: The folder is larger than ``FOLDER_MAX_BYTES`` or holds more than
            ``FOLDER_MAX_ENTRIES`` entries.
    """
    folder = folder.resolve()
    stats: dict[Path, os.stat_result] = {}
    total = 0
    for p in _walk(folder):
        st = p.lstat()
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            continue
        stats[p] = st
        total += st.st_size if stat.S_ISREG(st.st_mode) else 0
        if total > FOLDER_MAX_BYTES or len(stats) > FOLDER_MAX_ENTRIES:
            raise ImageError(
                f"{folder}: a bot folder may hold at most {FOLDER_MAX_BYTES >> 20} MiB in "
                f"{FOLDER_MAX_ENTRIES} entries (it is copied into memory for the sandbox)"
            )
    paths = set(stats)
    key = _key(paths, stats)
    return build("folder", paths, (folder,), source_root=folder, target_root=folder, key=key)


def release_folder_image(folder: Path) -> int:
    """Removes the images of ``folder`` (a checked upload's: nothing will run it again) that
    no other runner holds, this process's hold dropped first; returns how many."""
    tag = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:8]
    removed = 0
    top = images_folder()
    for image in top.glob(f"folder-*{tag}"):
        fd = _held.pop(image, None)
        if fd is not None:
            os.close(fd)
        removed += _remove_unheld(image)
    return removed
