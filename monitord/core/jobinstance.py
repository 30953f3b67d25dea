"""What monitord remembers about one job instance (a DAG node attempt)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any


def shared(value: Any) -> Any:
    """One copy of a text that many job instances hold (a state, a site, a user, a directory):
    a finished instance is kept to the end, so each copy costs memory per job."""
    return sys.intern(value) if type(value) is str else value


def raw_exitcode(status: int) -> int:
    """dagman.out plain exit status -> raw wait status, as stored in the DB (doc §5.6)."""
    if status == -128:
        return -1
    return status << 8


def plain_exitcode(raw: int) -> int:
    """Raw wait status -> plain exit code (used by notifications and tools)."""
    if raw < 0:
        return -128
    if raw & 0x7F:
        return -(raw & 0x7F)
    return raw >> 8


@dataclass(slots=True)
class JobInstance:
    name: str
    seq: int
    submit_dir: str
    state: str | None = None
    js_seq: int = 0
    sched_id: str | None = None
    site: str | None = None
    out_num: int | None = None
    time_req: int | None = None
    # Values from the .sub file (None until parsed).
    sub: Any = None
    pre_start: float | None = None
    pre_end: float | None = None
    pre_exitcode: int | None = None
    main_start: float | None = None
    main_end: float | None = None
    # int (raw) from dagman.out, or a str (PegasusLite exit code quirk, §5.6).
    main_exitcode: int | str | None = None
    post_start: float | None = None
    post_end: float | None = None
    post_exitcode: int | None = None
    # Filled by the output parse.
    user: str | None = None
    work_dir: str | None = None
    cluster_start: int | None = None
    cluster_dur: Any = None
    stdout_text: str | None = None
    stderr_text: str | None = None
    stdout_file: str | None = None
    kickstart_parsed: bool = False
    rotated: bool = False
    deferred_main_end: dict[str, Any] | None = None
    composite_extra: dict[str, Any] = field(default_factory=dict)
    prev_state: str | None = None
    retired: bool = False  # see retire(); a later state (duplicated lines) reads the .sub again
    known_state: str | None = None  # the last state with a row in the job state table

    def retire(self) -> None:
        """Drop what only the job's final events needed (texts, submit info, composite extras)."""
        self.retired = True
        self.sub = None
        self.stdout_text = None
        self.stderr_text = None
        self.composite_extra = {}
        self.deferred_main_end = None
