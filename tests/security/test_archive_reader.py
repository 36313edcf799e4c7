"""The archive reader of uploads and bundles (``arena.server.folder.unpack_archive``) against
archives built to cost memory: a member header the reader would take whole (a GNU long name,
a pax header, a chain of them, a GNU sparse member's extension blocks), each small once
gzipped. Each is refused in one line, in a process whose peak memory is measured, far below
what the header declares; and the two usual ways to pack a folder are read."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from arena.server.folder import FolderError, unpack_archive

pytestmark = [pytest.mark.timeout(300)]

HUGE = 128 << 20
"""What the worst headers declare: the old reader took this (and more) into memory."""


def _header(kind: bytes, size: int, name: str = "././@LongLink") -> bytes:
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, size
    return info.tobuf(format=tarfile.GNU_FORMAT)


def _gzip_stream(*parts: bytes, filler: int = 0) -> bytes:
    """The parts, then ``filler`` bytes of ``a``, gzipped as a stream (the filler never held
    in memory at once)."""
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9, mtime=0) as gz:
        for part in parts:
            gz.write(part)
        block = b"a" * (1 << 20)
        left = filler
        while left > 0:
            gz.write(block[: min(left, len(block))])
            left -= len(block)
        gz.write(b"\0" * 1024)
    return out.getvalue()


def worst_archive(attack: str) -> bytes:
    """An archive whose one member header declares ``HUGE`` bytes, or that chains many."""
    if attack == "a chain of pax headers":
        record = b"9 a=bcde\n".ljust(512, b"\n")
        return _gzip_stream(*(_header(tarfile.XHDTYPE, 512, "pax") + record for _ in range(2000)))
    if attack == "GNU sparse member":
        return _gzip_stream(_header(tarfile.GNUTYPE_SPARSE, 0, "s.bin"))
    kind, name = ATTACKS[attack]
    return _gzip_stream(_header(kind, HUGE, name), filler=HUGE)


ATTACKS = {
    "GNU long name": (tarfile.GNUTYPE_LONGNAME, "././@LongLink"),
    "GNU long link": (tarfile.GNUTYPE_LONGLINK, "././@LongLink"),
    "pax header": (tarfile.XHDTYPE, "pax"),
    "pax global header": (tarfile.XGLTYPE, "g"),
}


@pytest.mark.parametrize("attack", [*ATTACKS, "a chain of pax headers", "GNU sparse member"])
def test_a_member_header_past_its_cap_is_refused_before_it_is_read(
    tmp_path: Path, attack: str
) -> None:
    """In a child process (its peak memory its own): refused in one line, under 100 MiB of
    peak memory where the header declares 128 MiB."""
    archive = tmp_path / "upload.tar.gz"
    archive.write_bytes(worst_archive(attack))
    assert archive.stat().st_size < 2 << 20  # a small upload
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from arena.server.folder import FolderError, unpack_archive\n"
        "try:\n"
        f"    unpack_archive(Path({str(archive)!r}).read_bytes(), Path({str(tmp_path / 'o')!r}))\n"
        "except FolderError as e:\n"
        "    print(e)\n"
        "else:\n"
        "    print('accepted')\n"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0]\n"
        "print(hwm.split()[1], file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    out = done.stdout.strip()
    assert done.returncode == 0 and len(out.splitlines()) == 1, done.stdout + done.stderr
    peak_mib = int(done.stderr.split()[-1]) >> 10
    assert peak_mib < 100, (attack, peak_mib, "MiB")
    assert "extended header" in out or "sparse" in out, out
    assert not (tmp_path / "o").exists()


def test_the_two_usual_ways_to_pack_a_folder_are_read(tmp_path: Path) -> None:
    """``tar czf bot.tar.gz -C bot .`` (members ``./bot.toml``) unpacks to the folder;
    ``tar czf bot.tar.gz bot`` (members ``bot/bot.toml``) keeps its one folder."""
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "b"\ncommand = ["{python}", "bot.py"]\n')
    (bot / "lib").mkdir()
    (bot / "lib" / "x.py").write_text("x = 1\n")
    for flags, where in ((["-C", "bot", "."], ""), (["bot"], "bot/")):
        packed = tmp_path / "bot.tar.gz"
        subprocess.run(["tar", "czf", str(packed), *flags], cwd=tmp_path, check=True)
        out = tmp_path / f"out{len(where)}"
        unpack_archive(packed.read_bytes(), out)
        assert (out / where / "bot.toml").is_file() and (out / where / "lib" / "x.py").is_file()
        packed.unlink()


def test_a_name_too_long_for_the_disk_is_refused_without_the_servers_path(
    tmp_path: Path,
) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("a" * 300)
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    target = tmp_path / "out"
    with pytest.raises(FolderError) as refused:
        unpack_archive(buffer.getvalue(), target)
    text = str(refused.value).removeprefix(f"{target}: ")
    assert str(tmp_path) not in text and "[Errno" not in text, text


# ---------------------------------------------------------------------- fuzzed


KINDS = [tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE,
         tarfile.CHRTYPE, tarfile.FIFOTYPE, tarfile.CONTTYPE, tarfile.GNUTYPE_SPARSE,
         tarfile.GNUTYPE_LONGNAME, tarfile.XHDTYPE, tarfile.XGLTYPE, b"Z"]  # fmt: skip
NAMES = ["bot.toml", "./bot.toml", "bot/bot.toml", "a/b/c.py", "..", "../x", "/etc/x", ".",
         "./", "a//b", "__pycache__/x.pyc", "x\x00y", "\udcff.bin", "a" * 300]  # fmt: skip


def _archive(draw: Any) -> bytes:
    """A tar drawn member by member (kinds, names, declared and real sizes, pax records),
    then gzipped, perhaps cut short or with bytes flipped."""
    from hypothesis import strategies as st

    out = io.BytesIO()
    for _ in range(draw(st.integers(0, 6))):
        info = tarfile.TarInfo(draw(st.sampled_from(NAMES) | st.text(max_size=40)))
        info.type = draw(st.sampled_from(KINDS))
        data = draw(st.binary(max_size=600))
        info.size = draw(st.sampled_from([len(data), 0, 1 << 20, 1 << 40, len(data) + 1]))
        info.mode = draw(st.integers(0, 0o7777))
        info.linkname = draw(st.sampled_from(["", "/etc/passwd", "../x", "bot.toml"]))
        keys = st.sampled_from(["path", "size", "linkpath", "GNU.sparse.map", "GNU.sparse.size",
                                "GNU.sparse.major", "comment", "mtime", "uid"])  # fmt: skip
        info.pax_headers = draw(st.dictionaries(keys, st.text(max_size=20), max_size=3))
        form = draw(st.sampled_from([tarfile.PAX_FORMAT, tarfile.GNU_FORMAT, tarfile.USTAR_FORMAT]))
        try:
            out.write(info.tobuf(format=form, encoding="utf-8", errors="surrogateescape"))
        except (ValueError, UnicodeError):
            continue  # a header tarfile itself cannot write
        out.write(data + b"\0" * (-len(data) % 512))
    out.write(b"\0" * 1024)
    packed = gzip.compress(out.getvalue(), mtime=0)
    cut = draw(st.integers(0, len(packed)))
    if draw(st.booleans()):
        packed = packed[:cut]
    elif draw(st.booleans()) and packed:
        flip = bytearray(packed)
        flip[cut % len(flip)] ^= draw(st.integers(1, 255))
        packed = bytes(flip)
    return packed


def test_the_archive_reader_fuzzed_refuses_in_one_line_within_bounds(tmp_path: Path) -> None:
    """Any archive: unpacked, or refused with a one-line ``FolderError`` (never another
    exception), in bounded time and memory: the Python heap's peak under 4 MiB plus 64 times
    the upload's size."""
    import tracemalloc

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    counter = iter(range(1_000_000))

    examples = int(os.environ.get("FUZZ_EXAMPLES", "300"))  # more, by hand: FUZZ_EXAMPLES=5000

    @settings(max_examples=examples, deadline=10_000, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(st.composite(_archive)())
    def fuzz(packed: bytes) -> None:
        target = tmp_path / str(next(counter))
        tracemalloc.start()
        tracemalloc.reset_peak()
        try:
            unpack_archive(packed, target)
        except FolderError as e:
            assert "\n" not in str(e) and str(e), repr(e)
            assert not target.exists()
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        assert peak < (4 << 20) + 64 * len(packed), (peak, len(packed))

    fuzz()
