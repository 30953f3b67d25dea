"""The daemon's job file reader (``monitord/daemon/jobfiles.py``): whole files, any size."""

from __future__ import annotations

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
