"""What monitord remembers about one job instance (a DAG node attempt)."""

from __future__ import annotations

import marshal
import sys
from dataclasses import dataclass, field, fields
from operator import attrgetter
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


class FinishedJob(bytes):
    """A finished job instance as the workflow keeps it to the end: one bytes object, its
    state readable without unpacking, its other values packed (``marshal``).

    Which instance a later line of the node applies to depends on the latest instance's
    ``state`` (and, for a SUBMIT, its ``sched_id``); only a later state of the instance
    itself (duplicated lines) needs the rest, and :meth:`revive` gives it back whole. The
    instance object (37 slots), its times as float objects and its own sched id text cost
    ~580 B per instance; this record ~150 B (bench/README.md, "Memory"). It holds its
    ``seq`` too: the workflow keys it by the node's name alone (``Workflow.latest``).
    """

    __slots__ = ()

    @classmethod
    def of(cls, inst: JobInstance) -> JobInstance | FinishedJob:
        """The record of a retired instance (the instance itself if a value cannot be
        packed: only numbers, texts and plain containers can)."""
        state = b"\xff" if inst.state is None else inst.state.encode()
        try:
            packed = marshal.dumps(_packed_values(inst))
        except ValueError:
            return inst
        if len(state) > 254:
            return inst
        return cls(bytes((len(state),)) + state + packed)

    @property
    def state(self) -> str | None:
        n = self[0]
        return None if n == 255 else self[1 : 1 + n].decode()

    @property
    def sched_id(self) -> str | None:
        return self._values()[_SCHED_ID]  # type: ignore[no-any-return]

    @property
    def seq(self) -> int:
        return self._values()[_SEQ]  # type: ignore[no-any-return]

    def _values(self) -> tuple[Any, ...]:
        n = self[0]
        return marshal.loads(self[2 if n == 255 else 1 + n :])  # type: ignore[no-any-return]

    def revive(self, name: str) -> JobInstance:
        """The instance again, equal to the one that was packed (its texts shared again)."""
        state = self.state
        inst = JobInstance(name, 0, "", state=None if state is None else shared(state))
        for attr, value in zip(_PACKED, self._values(), strict=True):
            setattr(inst, attr, shared(value) if attr in _SHARED else value)
        return inst


# Every value of an instance but its name (the workflow's key for it) and its state, which
# the record keeps in the clear.
_PACKED = tuple(f.name for f in fields(JobInstance) if f.name not in ("name", "state"))
_SCHED_ID = _PACKED.index("sched_id")
_SEQ = _PACKED.index("seq")
_packed_values = attrgetter(*_PACKED)  # the tuple of those values, in one call
# The texts many instances hold one copy of (see shared).
_SHARED = frozenset(("submit_dir", "site", "user", "work_dir", "prev_state", "known_state"))
