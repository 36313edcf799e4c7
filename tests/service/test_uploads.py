"""An upload's first steps: streamed to disk under its cap, and the author's packing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from arena.kit.scaffold import new_bot
from arena.service.client import RemoteError, pack
from arena.service.uploads import UploadRefused, receive
from tests.helpers import ROOT


async def _chunks(*blocks: bytes) -> AsyncIterator[bytes]:
    for block in blocks:
        yield block


def test_an_upload_is_streamed_to_disk_and_stopped_at_its_cap(tmp_path: Path) -> None:
    target = tmp_path / "area" / "1.tar.gz"
    assert asyncio.run(receive(_chunks(b"a" * 10, b"b" * 10), target, 20)) == 20
    assert target.read_bytes() == b"a" * 10 + b"b" * 10
    over = tmp_path / "area" / "2.tar.gz"
    with pytest.raises(UploadRefused, match="over the 0 KiB") as refused:
        asyncio.run(receive(_chunks(b"a" * 10, b"b" * 11), over, 20))
    assert refused.value.status == 413 and not over.exists()
    with pytest.raises(UploadRefused, match="empty"):
        asyncio.run(receive(_chunks(), tmp_path / "area" / "3.tar.gz", 20))
    with pytest.raises(FileExistsError):  # never over an existing file (or through a link)
        asyncio.run(receive(_chunks(b"x"), target, 20))


def test_the_author_packs_a_bot_folder_by_the_bot_folder_rules(tmp_path: Path) -> None:
    folder = new_bot(tmp_path, "alpha")
    name, packed = pack(folder)
    assert name == "alpha" and packed[:2] == b"\x1f\x8b"  # gzip
    (folder / "link").symlink_to("/etc/passwd")
    with pytest.raises(RemoteError, match="link"):
        pack(folder)
    with pytest.raises(RemoteError, match="built-in bot"):
        pack(ROOT / "example_bots" / "random")
    with pytest.raises(RemoteError, match="give the bot's folder"):
        pack(folder / "bot.py")
