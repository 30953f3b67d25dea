"""How the daemon reads a job's files for the core (the workflow context's ``read_text``)."""

from __future__ import annotations

import errno
import os

_read = [0]  # job files opened by read_text, for -v (monitord/daemon/debuglog.py)


def files_read() -> int:
    """Job files read so far by this process (approximate while several threads read)."""
    return _read[0]


#: A job file is one read of this size; a longer one takes more.  ``os.read`` allocates the
#: whole block, then shrinks the bytes to what was read: a block above glibc's mmap threshold
#: (128 KiB until the allocator raises it) is an mmap, 3 page faults and a munmap per file
#: (~11 of a 5 KB file's ~16 µs in a fresh process).  The daemon and the read-ahead worker have
#: raised it by their first job file, so it cost them ~0.3 µs a file; 64 KiB costs neither.
_BLOCK = 1 << 16


#: A job file is opened with ``O_NOATIME``: its access time is left as it was.  On a fresh
#: copy of a run (``relatime`` updates a file's atime on its first read after a change), the
#: update cost the reading process ~1 µs a file (61,860 at 20,000 jobs: bench/README.md,
#: workerio30k), and a monitor reading a job's files is not a use of them.  The flag is
#: allowed to the file's owner only: on EPERM the plain open, and from then on in this process.
_FLAGS = [os.O_RDONLY | getattr(os, "O_NOATIME", 0)]


def _open(path: str) -> int:
    flags = _FLAGS[0]
    try:
        return os.open(path, flags)
    except PermissionError as exc:
        if exc.errno != errno.EPERM or flags == os.O_RDONLY:
            raise
    _FLAGS[0] = os.O_RDONLY  # not the owner (a shared run directory): as a plain read
    return os.open(path, os.O_RDONLY)


def read_text(path: str) -> str | None:
    """A job file's text, or None when it cannot be read (raw fd I/O: tens of thousands per replay)."""
    found = _read_file(path, False)
    return None if found is None else found[1]


def read_text_stat(path: str) -> tuple[os.stat_result, str] | None:
    """A job file's stat, taken before its read (a change after it shows), and its text; None
    when it cannot be read (the ``--read-ahead`` worker, monitord/daemon/readahead.py)."""
    found = _read_file(path, True)
    if found is None or found[0] is None:
        return None
    return found[0], found[1]


def _read_file(path: str, stat: bool) -> tuple[os.stat_result | None, str] | None:
    """The one read of a job file: its stat when ``stat`` is asked for, and its text.

    A read shorter than asked for is the end of a regular file, so a file smaller than
    the block costs one read, not a second one to see the end (60,000 reads fewer in a
    20,000-job replay).
    """
    _read[0] += 1
    try:
        fd = _open(path)
    except OSError:
        return None
    try:
        st = os.fstat(fd) if stat else None
        data = os.read(fd, _BLOCK)
        if len(data) == _BLOCK:
            parts = [data]
            while True:
                block = os.read(fd, _BLOCK)
                if not block:
                    break
                parts.append(block)
            data = b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)
    text = data.decode("utf-8", errors="replace")
    if "\r" in text:  # universal newlines, as a text-mode open() would give
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return st, text
