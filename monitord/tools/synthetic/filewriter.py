"""How the generator puts files on disk: whole files, small ones through child processes.

A 100k-job workflow creates hundreds of thousands of files; creating them is what
costs, so big workflows hand the per-job files to child processes (see FileWriter).
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import IO

WRITER_CHILDREN = 1  # file-creating child processes for big workflows


def write_text(path: str, text: str) -> None:
    """One whole file (the few planner and DAGMan files, written inline)."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


_WRITER_CHILD = """
import os, sys
src = sys.stdin.buffer
flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
while True:
    head = src.readline()
    if not head:
        break
    plen, dlen = map(int, head.split())
    path = src.read(plen)
    data = src.read(dlen)
    fd = os.open(path, flags, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
"""


class FileWriter:
    """Creates the per-job files in child processes fed through pipes.

    File creation is syscall-bound (~100 us per file on a VM disk).  A thread
    cannot overlap it with generation: every syscall return waits for the GIL
    (the convoy effect made a thread slower than writing inline).  Child
    processes use the other cores; each submit subdirectory always goes to the
    same child, and the pipes bound memory whatever the workflow size.  Small
    workflows write inline, where starting children is not worth it.
    """

    def __init__(self, children: int = 0) -> None:
        self._procs = [
            subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _WRITER_CHILD],
                stdin=subprocess.PIPE,
                bufsize=1 << 20,
            )
            for _ in range(children)
        ]
        self._route: dict[str, IO[bytes]] = {}

    def write(self, path: str, text: str) -> None:
        data = text.encode()
        if not self._procs:
            _write_bytes(path, data)
            return
        folder = path[: path.rfind("/")]
        pipe = self._route.get(folder)
        if pipe is None:
            pipe = self._procs[len(self._route) % len(self._procs)].stdin
            assert pipe is not None
            self._route[folder] = pipe
        raw = path.encode()
        try:
            pipe.write(b"%d %d\n%s%s" % (len(raw), len(data), raw, data))
        except BrokenPipeError:
            raise OSError("synthetic file writer died") from None

    def close(self) -> None:
        failed = []
        for proc in self._procs:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
            except BrokenPipeError:
                pass
            if proc.wait() != 0:
                failed.append(proc.returncode)
        if failed:
            raise OSError(f"synthetic file writer failed (exit {failed})")


def _write_bytes(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
