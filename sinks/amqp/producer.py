"""The producer identity and sequence numbers of an AMQP endpoint's messages (docs/ingest.md).

``monitord-producer`` names the endpoint of one run directory, kept across daemon restarts
(``<run dir>/monitord.amqp-producer/<key>/id``), so its messages keep their ingest partition
(``monitord-slot``).  ``monitord-seq`` grows strictly along everything that producer ever
publishes: numbers are reserved on disk in blocks before they are used, so a daemon started
after a crash begins past anything its predecessor may have sent.  A batch the runtime
publishes again takes new numbers; what makes it exactly once in the ingest is its events'
numbers (``monitord-stream`` / ``monitord-event``, :mod:`sinks.amqp.stream`), which do not change.
Both files are checked on open: one not of the form written here (hand-edited) is refused.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import uuid

from monitord.system.ownership import Owner, chown_new, current, makedirs_owned
from sinks.runtime.base import SinkError

BLOCK = 1 << 20  # numbers reserved per write of the high-water file
DIR_NAME = "monitord.amqp-producer"
FORMS = {"id": re.compile(r"[0-9a-f]{32}"), "seq": re.compile(r"[0-9]+")}  # what it writes
REPAIR = {
    "id": "restore the id it had (the ingest's monitord_ingest_producers lists them) or, once"
    " the ingest has emptied its queues, delete the file (a new id is made)",
    "seq": "write a number past this producer's seq in the ingest's monitord_ingest_producers",
}


class Producer:
    """One endpoint's producer id and its next sequence numbers (one user thread)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.id = ""
        self._next = 0
        self._reserved = 0  # numbers below this are reserved on disk
        self._lock_fd: int | None = None
        self._owner: Owner | None = None  # the service as root: the workflow's owner

    def open(self) -> None:
        """Take the directory (one daemon at a time), its id (made once) and high-water; in
        the service running as root, what it creates is the workflow owner's."""
        self._owner = current()
        lock = os.path.join(self.path, "lock")
        try:
            makedirs_owned(self.path, self._owner)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
            chown_new(lock, self._owner)
        except OSError as exc:
            raise SinkError(f"cannot use {self.path}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise SinkError(f"{self.path} is used by another monitord") from None
        self._lock_fd = fd
        try:
            held, seq = self._read("id"), self._read("seq")
            self.id = self._write("id", uuid.uuid4().hex) if held is None else held
            seq = "0" if seq is None else seq
            self._check("id", self.id)
            self._check("seq", seq)
            self._next = self._reserved = int(seq)
        except (OSError, ValueError) as exc:
            self.close()
            raise SinkError(f"cannot read the AMQP producer state in {self.path}: {exc}") from None
        except SinkError:
            self.close()
            raise

    def reserve(self, count: int) -> int:
        """The first of ``count`` fresh sequence numbers (durably past any used before)."""
        first = self._next
        if first + count > self._reserved:
            high = first + max(count, BLOCK)
            try:
                self._write("seq", str(high))
            except OSError as exc:
                raise SinkError(
                    f"cannot write the AMQP producer state in {self.path}: {exc.strerror}",
                    retryable=True,
                ) from None
            self._reserved = high
        self._next = first + count
        return first

    def close(self) -> None:
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _check(self, name: str, value: str) -> None:
        """Refuse a file not of the form monitord writes (hand-edited): an id holding a space
        would make every message's ``monitord-id`` malformed (dead-lettered by the ingest), and
        a new id made in its place would move the producer to another partition while its
        earlier messages may still wait in the old one (loaded after later events, so below
        the ingest's marks: lost).  Retryable: the runtime spools the events and opens the
        sink again until the file is put right."""
        if not FORMS[name].fullmatch(value):
            raise SinkError(
                f"{os.path.join(self.path, name)} holds {value[:80]!r}, not what monitord writes"
                f" ({FORMS[name].pattern}): {REPAIR[name]}; the events wait in the spool meanwhile",
                retryable=True,
            )

    def _read(self, name: str) -> str | None:
        """The file's text, None if there is none (an empty file is not a missing one: it is
        refused, not replaced by a new id)."""
        try:
            with open(os.path.join(self.path, name), encoding="ascii", errors="replace") as fh:
                return fh.read().strip()
        except FileNotFoundError:
            return None

    def _write(self, name: str, value: str) -> str:
        """Atomically and durably (temporary file, fsync, rename)."""
        target = os.path.join(self.path, name)
        tmp = f"{target}.tmp"
        with open(tmp, "w", encoding="ascii") as fh:
            fh.write(value)
            fh.flush()
            os.fsync(fh.fileno())
        chown_new(tmp, self._owner)
        os.replace(tmp, target)
        return value
