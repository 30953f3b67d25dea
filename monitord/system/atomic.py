"""Whole-file writes a crash cannot tear: a temporary file beside the target, fsync, rename."""

from __future__ import annotations

import os
import tempfile


def replace_file(path: str, data: bytes, *, prefix: str = ".tmp-") -> None:
    """``path`` holds ``data`` afterwards, or (after a crash) what it held before."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
