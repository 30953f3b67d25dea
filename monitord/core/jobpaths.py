"""A job file's path from its directory and name, as the machine and the read-ahead worker
build it (a module of its own: the worker predicts paths without importing the machine's
event classes, ~60 ms of its start-up)."""

from __future__ import annotations

import os


def join(head: str, tail: str) -> str:
    """``os.path.join`` of two parts, without its generic work for the usual ones (twice a job)."""
    if not head or tail.startswith("/"):
        return os.path.join(head, tail)
    return head + tail if head.endswith("/") else f"{head}/{tail}"
