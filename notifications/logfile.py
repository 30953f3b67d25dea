"""``monitord-notifications.log``: one record per finished script, as the reference writes it.

With the daemon at its default level (INFO, or more verbose) each record is
the full block of doc §11.3 (time, event, action, status, environment,
stdout, stderr); otherwise one line ``<iso> - <job id> - <event> - <action> -
<status>``.  Records are appended in the order scripts finish.  The 5.1
reference prints the daemon's start time as "Notification time"; this prints
the time the script finished.
"""

from __future__ import annotations

import asyncio
import os
from typing import TextIO

from monitord.ownership import chown_new
from monitord.timeparse import iso_local
from notifications.pool import Finished

LOG_NAME = "monitord-notifications.log"
RULE = "-" * 80


def log_path(run_dir: str, output_dir: str | None = None) -> str:
    """In the top-level run dir, or ``<run dir>/<output dir>`` (unprefixed) with ``-o``."""
    base = os.path.join(run_dir, output_dir) if output_dir else run_dir
    return os.path.join(base, LOG_NAME)


def format_record(done: Finished, *, full: bool = True) -> str:
    firing = done.firing
    when = iso_local(done.ended)
    if not full:
        job_id = firing.env.get("PEGASUS_JOBID", firing.subject)
        return f"{when} - {job_id} - {firing.event} - {firing.action} - {done.status}\n"
    parts = [
        RULE,
        f"Notification time  : {when}",
        f"Notification event : {firing.subject} - {firing.event}",
        f"Notification action: {firing.action}",
        f"Notification status: {done.status}",
        "",
        "Notification environment",
        *(f"{key} : {value}" for key, value in firing.env.items()),
        "",
        "stdout:",
    ]
    return "\n".join(parts) + "\n" + done.stdout + "\nstderr:\n" + done.stderr + "\n\n"


class NotificationsLog:
    """The append-only log file; writes go through a worker thread, one record at a time."""

    def __init__(self, path: str, *, full: bool = True) -> None:
        self.path = path
        self.full = full
        self._fh: TextIO | None = open(path, "a", encoding="utf-8")
        chown_new(path)  # service as root: the workflow's owner's (monitord/ownership.py)
        self._lock = asyncio.Lock()

    async def write(self, done: Finished) -> None:
        text = format_record(done, full=self.full)
        async with self._lock:
            await asyncio.to_thread(self._append, text)

    def _append(self, text: str) -> None:
        if self._fh is not None:
            self._fh.write(text)
            self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
