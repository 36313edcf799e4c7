"""Cluster bundles a hostile author (or a forged driver) makes: capped by what they unpack
to, never holding a folder's content in memory, refusing links, devices and escaping names,
and leaving nothing in a worker's cache when refused."""

from __future__ import annotations

import dataclasses
import gzip
import io
import os
import tarfile
import tracemalloc
from pathlib import Path

import pytest

from arena.server.bundle import BotBundle, BundleError, bundle_hash, bundle_of, unpack
from arena.server.folder import DEFAULT_CAPS
from arena.server.manifest import load_manifest

pytestmark = [pytest.mark.timeout(300)]

TWO_GIB = 2 << 30


def a_bot(root: Path) -> Path:
    bot = root / "mine"
    bot.mkdir()
    (bot / "bot.py").write_text("print('hello')\n", encoding="utf-8")
    (bot / "bot.toml").write_text('name = "mine"\ncommand = ["{python}", "bot.py"]\n')
    return bot


def forged(base: BotBundle, files: bytes) -> BotBundle:
    """``base`` carrying other files under its own hashes: what a forged driver sends to
    smuggle content past a hash that does not cover it."""
    return dataclasses.replace(
        base,
        files=files,
        hash=bundle_hash(base.files_hash, base.manifest, base.command, base.env),
    )


def cache_is_empty(cache: Path) -> None:
    left = list(cache.rglob("*")) if cache.exists() else []
    assert not left, left[:5]


def test_a_sparse_file_is_refused_by_the_driver_without_reading_it(tmp_path: Path) -> None:
    """2 GiB of holes pack to a few MB; the cap is on what a folder holds, checked from the
    sizes before a byte is read."""
    bot = a_bot(tmp_path)
    with (bot / "weights.bin").open("wb") as f:
        f.truncate(TWO_GIB)
    tracemalloc.start()
    try:
        with pytest.raises(BundleError, match="at most 4096 files and 64 MiB"):
            bundle_of(load_manifest(bot / "bot.toml"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, peak


def huge_member_archive(size: int) -> bytes:
    """A gzipped tar whose one member declares ``size`` bytes (its data cut after 1 MiB:
    a worker must refuse it from the header alone)."""
    info = tarfile.TarInfo("weights.bin")
    info.size = size
    header = info.tobuf(format=tarfile.PAX_FORMAT)
    return gzip.compress(header + bytes(1 << 20), compresslevel=1)


def test_a_bundle_that_unpacks_past_the_caps_is_refused_from_its_headers(tmp_path: Path) -> None:
    base = bundle_of(load_manifest(a_bot(tmp_path) / "bot.toml"))
    cache = tmp_path / "cache"
    tracemalloc.start()
    try:
        with pytest.raises(BundleError, match="would unpack past the caps"):
            unpack(forged(base, huge_member_archive(TWO_GIB)), cache)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, peak
    cache_is_empty(cache)


def archive(*members: tuple[tarfile.TarInfo, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return buffer.getvalue()


def member(
    name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"x", link: str = ""
) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    info.linkname = link
    if kind == tarfile.CHRTYPE:
        info.devmajor, info.devminor = 1, 5
    return info, data


TOML = b'name = "mine"\ncommand = ["{python}", "bot.py"]\n'
CLEAN = (member("bot.py", data=b"print('hello')\n"), member("bot.toml", data=TOML))
"""The members of ``a_bot``'s folder: a forged archive adds one to them."""
BAD_MEMBERS = {
    "symlink": member("extra", tarfile.SYMTYPE, link="/etc/passwd"),
    "hard link": member("extra", tarfile.LNKTYPE, link="bot.toml"),
    "device": member("zero", tarfile.CHRTYPE),
    "fifo": member("pipe", tarfile.FIFOTYPE),
    "absolute": member("/tmp/evil.py"),
    "dot-dot": member("../evil.py"),
    "inner dot-dot": member("sub/../../evil.py"),
    "cache": member("__pycache__/bot.cpython-311.pyc"),  # left out of the hash, run by Python
}


@pytest.mark.parametrize("attack", sorted(BAD_MEMBERS))
def test_archive_members_that_are_not_plain_files_or_folders_are_refused(
    tmp_path: Path, attack: str
) -> None:
    base = bundle_of(load_manifest(a_bot(tmp_path) / "bot.toml"))
    files = archive(*CLEAN, BAD_MEMBERS[attack])
    cache = tmp_path / "cache"
    with pytest.raises(BundleError, match="refused"):
        unpack(forged(base, files), cache)
    cache_is_empty(cache)
    assert not (tmp_path / "evil.py").exists() and not Path("/tmp/evil.py").exists()


def test_too_many_folders_in_an_archive_are_refused(tmp_path: Path) -> None:
    base = bundle_of(load_manifest(a_bot(tmp_path) / "bot.toml"))
    dirs = [member(f"d{k}", tarfile.DIRTYPE) for k in range(DEFAULT_CAPS.dirs + 1)]
    cache = tmp_path / "cache"
    with pytest.raises(BundleError, match="would unpack past the caps"):
        unpack(forged(base, archive(*CLEAN, *dirs)), cache)
    cache_is_empty(cache)


@pytest.mark.parametrize("attack", ["symlink", "fifo"])
def test_a_folder_with_a_link_or_fifo_is_not_bundled(tmp_path: Path, attack: str) -> None:
    """Once left out silently (the bot ran without it); now refused, naming the entry."""
    bot = a_bot(tmp_path)
    if attack == "symlink":
        (bot / "secrets").symlink_to("/etc")
    else:
        os.mkfifo(bot / "secrets")
    with pytest.raises(BundleError, match="secrets is a"):
        bundle_of(load_manifest(bot / "bot.toml"))


def test_a_bundle_carries_folders_and_exec_bits(tmp_path: Path) -> None:
    bot = a_bot(tmp_path)
    (bot / "data").mkdir()
    (bot / "run").write_text("#!/bin/sh\n")
    (bot / "run").chmod(0o755)
    bundle = bundle_of(load_manifest(bot / "bot.toml"))
    manifest = unpack(bundle, tmp_path / "cache")
    assert (manifest.cwd / "data").is_dir()
    assert os.access(manifest.cwd / "run", os.X_OK)
    assert not os.access(manifest.cwd / "bot.py", os.X_OK)
    (bot / "run").chmod(0o644)
    assert bundle_of(load_manifest(bot / "bot.toml")).files_hash != bundle.files_hash
