"""The daemon's job file reader (``monitord/daemon/jobfiles.py``): whole files, any size."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from monitord.daemon import jobfiles


@pytest.mark.parametrize("size", [0, 1, 3, 4, 5, 8, 9, 13])
def test_whole_file_read_whatever_its_size_against_the_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    monkeypatch.setattr(jobfiles, "_BLOCK", 4)  # sizes below, at, and over one or more blocks
    data = "".join(chr(ord("a") + i % 26) for i in range(size))
    path = tmp_path / "job.out"
    path.write_text(data, encoding="utf-8")
    assert jobfiles.read_text(str(path)) == data


def test_newlines_universal_bad_bytes_replaced_and_missing_file_none(tmp_path: Path) -> None:
    path = tmp_path / "job.err"
    path.write_bytes(b"a\r\nb\rc\n\xff")
    assert jobfiles.read_text(str(path)) == "a\nb\nc\n\ufffd"
    assert jobfiles.read_text(str(tmp_path / "missing")) is None


@pytest.mark.parametrize("size", [0, 3, 4, 9])
def test_with_its_stat_the_same_text_and_the_stat_of_the_file_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    """``read_text_stat`` (the --read-ahead worker's read) is ``read_text`` plus the stat."""
    monkeypatch.setattr(jobfiles, "_BLOCK", 4)
    path = tmp_path / "job.out"
    path.write_bytes(b"x\r\n" * size)
    found = jobfiles.read_text_stat(str(path))
    assert found is not None
    st, text = found
    assert text == jobfiles.read_text(str(path)) == "x\n" * size
    disk = path.stat()
    assert (st.st_size, st.st_mtime_ns, st.st_ino) == (disk.st_size, disk.st_mtime_ns, disk.st_ino)
    assert jobfiles.read_text_stat(str(tmp_path / "missing")) is None


def test_the_block_is_a_heap_allocation_not_an_mmap() -> None:
    """``os.read`` allocates the whole block: above glibc's mmap threshold (128 KiB until the
    allocator raises it) a job file's read is an mmap and a munmap (bench/README.md, worker30h)."""
    assert jobfiles._BLOCK < 128 * 1024


def test_a_read_leaves_the_files_access_time(tmp_path: Path) -> None:
    """``O_NOATIME``: a job file read keeps its atime (relatime would update an atime older
    than the mtime on the first read)."""
    path = tmp_path / "job.out"
    path.write_text("text\n", encoding="utf-8")
    mtime_ns = path.stat().st_mtime_ns
    os.utime(path, ns=(mtime_ns - 10**12, mtime_ns))
    assert jobfiles.read_text(str(path)) == "text\n"
    assert jobfiles.read_text_stat(str(path)) is not None
    assert path.stat().st_atime_ns == mtime_ns - 10**12


def test_not_the_owner_the_plain_open_then_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``O_NOATIME`` on a file of another user is EPERM: the file is read all the same, and
    the next ones without the flag; a file no one may read is still None."""
    noatime = getattr(os, "O_NOATIME", 0)
    if not noatime:
        pytest.skip("no O_NOATIME here")
    real_open, flags_seen = os.open, []

    def not_owner(path: str, flags: int, *args: int) -> int:
        flags_seen.append(flags)
        if flags & noatime:
            raise PermissionError(errno.EPERM, "Operation not permitted", path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(jobfiles, "_FLAGS", [os.O_RDONLY | noatime])
    monkeypatch.setattr(os, "open", not_owner)
    path = tmp_path / "job.err"
    path.write_text("err\n", encoding="utf-8")
    assert jobfiles.read_text(str(path)) == "err\n"
    assert jobfiles.read_text(str(path)) == "err\n"
    assert flags_seen == [os.O_RDONLY | noatime, os.O_RDONLY, os.O_RDONLY]
    assert jobfiles.read_text(str(tmp_path / "missing")) is None
