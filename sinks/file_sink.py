"""File sink: events appended to a ``.bp`` or JSON-lines file, or to stdout.

The reference opens the file line-buffered, in mode ``w`` for replay/recovery
and ``a`` otherwise.  Here a whole batch is encoded, joined and written with a
single ``write`` call; ``flush`` hands the bytes to the OS.  The destination
``-`` means standard output (the reference documents that but actually creates
a file named ``-``; we do what the documentation says).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import BinaryIO
from urllib.parse import unquote, urlsplit

import structlog

from monitord.core.events import StampedeEvent
from monitord.system.ownership import chown_new
from sinks.encoding import encode_bp, encode_json
from sinks.runtime.base import SinkError
from sinks.runtime.capabilities import NONE
from sinks.runtime.factory import PATH, SinkRequest, scheme_of

log = structlog.get_logger(__name__)

STDOUT = "-"


def _bp_bytes(event: StampedeEvent) -> bytes:
    return encode_bp(event).encode("utf-8")


def _json_line(event: StampedeEvent) -> bytes:
    return encode_json(event) + b"\n"


_ENCODERS: dict[str, Callable[[StampedeEvent], bytes]] = {"bp": _bp_bytes, "json": _json_line}


class FileSink:
    """Writes each batch with one ``write``; ``overwrite`` truncates on open."""

    def __init__(self, path: str, *, encoding: str = "bp", overwrite: bool = False) -> None:
        if encoding not in _ENCODERS:
            raise SinkError(f"file sink: unsupported encoding {encoding!r} (use bp or json)")
        self.path = path
        self.encoding = encoding
        self.overwrite = overwrite
        self.name = f"file:{path}"
        self._encode = _ENCODERS[encoding]
        self._fh: BinaryIO | None = None
        self.reader_gone = False  # stdout's reader closed the pipe: the rest was not written
        self.unread = 0  # events of the batches written after (or cut by) that

    @property
    def destination(self) -> str:
        """Where it writes, for people (``SinkHealth.destination``)."""
        return "stdout" if self.path == STDOUT else self.path

    def open(self) -> None:
        if self._fh is not None:
            return
        if self.path == STDOUT:
            self._fh = sys.stdout.buffer
            return
        try:
            self._fh = open(self.path, "wb" if self.overwrite else "ab")
        except OSError as exc:
            raise SinkError(f"cannot open event file {self.path}: {exc}") from exc
        chown_new(self.path)  # service as root: the workflow's owner's (monitord/ownership.py)
        log.info("event file opened", path=self.path, overwrite=self.overwrite)

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        if not events:
            return
        if self._fh is None:
            self.open()
        assert self._fh is not None
        encode = self._encode
        data = b"".join([encode(event) for event in events])
        if self.reader_gone:
            self.unread += len(events)
            return
        try:
            self._fh.write(data)
        except BrokenPipeError:
            self._reader_gone()
            self.unread += len(events)
        except OSError as exc:
            raise SinkError(f"cannot write event file {self.path}: {exc}") from exc

    def flush(self) -> None:
        if self._fh is None:
            return
        try:
            self._fh.flush()
        except BrokenPipeError:
            self._reader_gone()
        except OSError as exc:
            raise SinkError(f"cannot flush event file {self.path}: {exc}") from exc

    def close(self) -> None:
        fh, self._fh = self._fh, None
        if fh is None:
            return
        try:
            fh.flush()
        except BrokenPipeError:
            self._reader_gone()
            gone, self._fh = self._fh, None
            if gone is not None:
                gone.close()
        finally:
            if self.path != STDOUT:
                fh.close()

    def _reader_gone(self) -> None:
        """The reader of a pipe went away (``| head``): what it did not read, it did not want.

        As other command-line tools, stop writing without an error; for stdout, point the
        descriptor at /dev/null so that nothing (the interpreter's last flush included)
        complains later.
        """
        if self.path != STDOUT:
            raise SinkError(f"cannot write event file {self.path}: its reader went away")
        log.debug("stdout closed by its reader; events no longer written there")
        self.reader_gone = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
        self._fh = open(os.devnull, "wb")  # noqa: SIM115 - closed with the sink


class FileFactory:
    """Plain paths (relative to the run directory), ``-`` (stdout) and ``file:///path``."""

    name = "file"
    schemes = (PATH, "file")
    capabilities = NONE

    def check(self, request: SinkRequest) -> None:
        """Whether the file can be opened shows when the sink opens (the runtime retries)."""

    def build(self, request: SinkRequest) -> FileSink:
        dest = request.dest
        if dest == STDOUT:
            path = STDOUT
        elif scheme_of(dest) == "file":
            path = unquote(urlsplit(dest).path)
        else:
            path = dest if os.path.isabs(dest) else os.path.join(request.run_dir, dest)
        return FileSink(path, encoding=request.encoding, overwrite=request.restart)


FILE = FileFactory()
