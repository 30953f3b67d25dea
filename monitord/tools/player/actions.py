"""The write actions a play is made of; a plan is a list of them, in order.

Separating what to write from writing it lets the order be tested without a disk or
a clock, and lets a benchmark inspect a plan (which line lands when) before playing it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Copy:
    """A file, directory or symlink that exists before DAGMan starts (copied up front)."""

    path: str


@dataclass(frozen=True, slots=True)
class Append:
    """One dagman.out line (with its newline) appended to ``path``."""

    path: str
    line: str


@dataclass(frozen=True, slots=True)
class WriteFile:
    """A file written whole at this point: a job output, or a dagman.out nobody starts."""

    path: str


@dataclass(frozen=True, slots=True)
class Pause:
    """A gap between two DAGMan runs of one dagman.out (rescue DAG resubmission)."""

    seconds: float
    path: str


Action = Copy | Append | WriteFile | Pause
