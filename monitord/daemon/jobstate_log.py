"""The per-workflow ``jobstate.log`` writer (spec 3.1-3.2).

Each line has seven space-separated fields::

    <ts> <job name> <state> <status|sched_id|-> <site|-> <time requirement|-> <job_submit_seq>

plus the INTERNAL lines framing monitord and DAGMan runs.

Durability trade-off: the reference writes every line unbuffered, so a crash
loses nothing already processed.  Doing one ``write`` syscall per line would
dominate a 100k-job replay, so lines are kept in memory and written by
``flush()``, which the caller issues after every dagman.out chunk and at the
end.  A crash can therefore lose at most the lines of the chunk being
processed; those lines are regenerated anyway, because the restart resumes
from the last dagman.out position saved in ``monitord.info`` (or replays from
scratch after a crash, which rotates this file).
"""

from __future__ import annotations

import os
import time
from typing import Any, TextIO

import structlog

from monitord.system.ownership import chown_new

log = structlog.get_logger(__name__)

DEFAULT_NAME = "jobstate.log"
MAX_ROTATIONS = 1000


class JobstateLogError(OSError):
    """The jobstate.log cannot be rotated or created (the workflow is not tracked)."""


def jobstate_log_path(
    run_dir: str,
    *,
    name: str | None = None,
    output_dir: str | None = None,
    wf_uuid: str | None = None,
) -> str:
    """Where this workflow's jobstate.log lives: ``-j NAME`` and ``-o DIR`` rules of 3.1.

    ``name`` is the ``-j`` value (default ``jobstate.log``); with ``output_dir`` the file
    is ``<DIR>/<wf_uuid>-<basename of name>`` and a relative DIR is taken from the run dir.
    """
    jsd = name or DEFAULT_NAME
    if output_dir:
        out = output_dir if os.path.isabs(output_dir) else os.path.join(run_dir, output_dir)
        return os.path.join(out, f"{wf_uuid}-{os.path.basename(jsd)}")
    if os.path.isabs(jsd):
        return jsd
    return os.path.join(run_dir, jsd)


def rotate_existing(path: str) -> str | None:
    """Rename ``path`` to the first free ``path.000``..``path.999``; None if it did not exist."""
    if not os.path.exists(path):
        return None
    for n in range(MAX_ROTATIONS):
        target = f"{path}.{n:03d}"
        if not os.path.exists(target):
            try:
                os.rename(path, target)
            except OSError as exc:
                raise JobstateLogError(f"cannot rotate {path} to {target}: {exc}") from exc
            log.info("rotated jobstate.log", path=path, target=target)
            return target
    raise JobstateLogError(f"cannot rotate {path}: {path}.000 to {path}.999 all exist")


def _field(value: Any) -> str:
    if value is None or value == "":
        return "-"
    return str(value)


def format_state_line(
    ts: int | float,
    job_name: str,
    state: str,
    status_or_sched: Any,
    site: Any,
    time_requirement: Any,
    job_submit_seq: int,
) -> str:
    """One job line; None/empty optional fields print as ``-``."""
    return (
        f"{int(ts)} {job_name} {state} {_field(status_or_sched)} {_field(site)} "
        f"{_field(time_requirement)} {job_submit_seq}\n"
    )


def format_internal_line(ts: int | float, message: str) -> str:
    return f"{int(ts)} INTERNAL *** {message} ***\n"


class JobstateLog:
    """Buffered jobstate.log writer; ``rotate`` starts a fresh file (replay/recovery)."""

    def __init__(self, path: str, *, rotate: bool = False) -> None:
        self.path = path
        self.rotate = rotate
        self._fh: TextIO | None = None
        self._pending: list[str] = []

    def open(self) -> None:
        """Rotate if asked, then open for append; raises JobstateLogError on failure."""
        if self._fh is not None:
            return
        if self.rotate:
            rotate_existing(self.path)
        try:
            self._fh = open(self.path, "a", encoding="utf-8")
        except OSError as exc:
            raise JobstateLogError(f"cannot create {self.path}: {exc}") from exc
        chown_new(self.path)  # service as root: the workflow's owner's (monitord/ownership.py)

    # --- lines ----------------------------------------------------------
    def state(
        self,
        ts: int | float,
        job_name: str,
        state: str,
        status_or_sched: Any,
        site: Any,
        time_requirement: Any,
        job_submit_seq: int,
    ) -> None:
        self._pending.append(
            format_state_line(
                ts, job_name, state, status_or_sched, site, time_requirement, job_submit_seq
            )
        )

    def extend(self, lines: list[str]) -> None:
        """Queue lines already formatted by the state machine."""
        self._pending.extend(lines)

    def internal(self, ts: int | float, message: str) -> None:
        self._pending.append(format_internal_line(ts, message))

    def monitord_started(self, ts: float | None = None) -> None:
        self.internal(time.time() if ts is None else ts, "MONITORD_STARTED")

    def dagman_started(self, ts: int | float, dagman_id: str) -> None:
        self.internal(ts, f"DAGMAN_STARTED {dagman_id}")

    def dagman_finished(self, ts: int | float, exit_code: Any) -> None:
        self.internal(ts, f"DAGMAN_FINISHED {exit_code}")

    def monitord_finished(self, exit_code: int, ts: float | None = None) -> None:
        self.internal(time.time() if ts is None else ts, f"MONITORD_FINISHED {exit_code}")

    # --- durability -------------------------------------------------------
    def size(self) -> int:
        """Bytes on disk once the buffered lines are written (a resume snapshot's length)."""
        self.flush()
        if self._fh is not None:
            return os.fstat(self._fh.fileno()).st_size
        try:
            return os.path.getsize(self.path)
        except OSError:
            return 0

    def cut_back(self, size: int) -> None:
        """Resume from a snapshot: drop what a crashed daemon wrote after it (before open)."""
        if os.path.getsize(self.path) > size:
            os.truncate(self.path, size)

    def flush(self) -> None:
        """Write the buffered lines with one call and hand them to the OS."""
        if not self._pending:
            return
        if self._fh is None:
            self.open()
        assert self._fh is not None
        data = "".join(self._pending)
        self._pending.clear()
        self._fh.write(data)
        self._fh.flush()

    def close(self) -> None:
        try:
            self.flush()
        finally:
            fh, self._fh = self._fh, None
            if fh is not None:
                fh.close()

    def __enter__(self) -> JobstateLog:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
