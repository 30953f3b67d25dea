"""How the machine gets a job's files, read and parsed: one object handed in (composition).

The machine asks for a file by its path and what it needs of it: a submit file's
:class:`SubmitInfo`, a ``.out`` file's kickstart records, a ``.err`` file's text and facts,
a PegasusLite exit code.  :class:`ParsingReader` is the default: it reads each file with the
context's ``read_text`` and parses it here, as the machine always has.  A replay may hand in
another (``monitord/daemon/readahead.py``) whose results were parsed ahead by a worker; it
answers every question exactly as this one would, or asks this one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from monitord.core.jobtext import (
    stderr_text_from_err,
    stdout_text_from_records,
    stdout_text_without_kickstart,
)
from monitord.core.readers import errfile
from monitord.core.readers.kickstart import KickstartRecord, parse_kickstart
from monitord.core.readers.pickled import by_fields
from monitord.core.readers.subfile import SubmitInfo, parse_submit_file
from monitord.core.timeparse import iso_to_epoch

ReadText = Callable[[str], "str | None"]


@by_fields
@dataclass(slots=True)
class OutFile:
    """A ``.out`` file: its kickstart records, and what the output parse takes from them that
    does not depend on the job's state: the job's stdout text as stored and the monitoring
    payloads cut out of it (from the records, else from the whole text), and each invocation
    record's start in whole epoch seconds.  With ``--read-ahead`` the worker sends the records
    only and the parser makes the texts (:func:`with_texts`): the text once across the pipe."""

    records: list[KickstartRecord]
    stdout_text: str
    payloads: list[dict[str, Any]]
    starts: tuple[int | None, ...]  # of the records of kind "invocation", in order


@by_fields
@dataclass(slots=True)
class ErrFile:
    """A ``.err`` file: the stderr text (payloads out), the payloads, the PegasusLite host
    and exit code it names."""

    stderr_text: str
    payloads: list[dict[str, Any]]
    host: tuple[str, str | None] | None
    exitcode: str | None


class JobReader(Protocol):
    """What the machine asks of a job's files; ``None``: the file cannot be read."""

    def submit_file(
        self, path: str, job_name: str, orig_submit_dir: str | None
    ) -> SubmitInfo | None: ...

    def out_file(self, path: str) -> OutFile | None: ...

    def err_file(self, path: str) -> ErrFile | None: ...

    def exitcode(self, path: str) -> tuple[bool, str | None]:
        """``(readable, PegasusLite exit code)`` of the file at ``path``."""
        ...


def parse_out(text: str) -> OutFile:
    return with_texts(parse_out_records(text))


def parse_out_records(text: str) -> OutFile:
    """:func:`parse_out` but, when the file has kickstart records, its stdout text and
    payloads: they are the records' (:func:`with_texts` makes them).  The ``--read-ahead``
    worker sends the records once, not their stdout twice (raw, and quoted in the text)."""
    records = parse_kickstart(text)
    if not records:
        stdout_text, payloads = stdout_text_without_kickstart(text)
        return OutFile(records, stdout_text, payloads, ())
    return OutFile(records, "", [], _starts(records))


def with_texts(found: OutFile) -> OutFile:
    """``found`` (of :func:`parse_out_records`) with its records' stdout text and payloads."""
    if found.records:
        found.stdout_text, found.payloads = stdout_text_from_records(found.records)
    return found


def _starts(records: list[KickstartRecord]) -> tuple[int | None, ...]:
    """Each invocation record's start (its ISO text) in whole epoch seconds; None: none."""
    starts: list[int | None] = []
    for record in records:
        if record.kind == "invocation":
            start = record.data.get("start")
            epoch = None if start is None else iso_to_epoch(str(start))
            starts.append(None if epoch is None else int(epoch))
    return tuple(starts)


def parse_err(text: str) -> ErrFile:
    stderr_text, payloads = stderr_text_from_err(text)
    return ErrFile(
        stderr_text, payloads, errfile.pegasus_lite_host(text), errfile.pegasus_lite_exitcode(text)
    )


class ParsingReader:
    """The default :class:`JobReader`: reads with ``read_text`` and parses each file here."""

    __slots__ = ("read_text",)

    def __init__(self, read_text: ReadText) -> None:
        self.read_text = read_text

    def submit_file(
        self, path: str, job_name: str, orig_submit_dir: str | None
    ) -> SubmitInfo | None:
        text = self.read_text(path)
        if text is None:
            return None
        return parse_submit_file(text, job_name=job_name, orig_submit_dir=orig_submit_dir)

    def out_file(self, path: str) -> OutFile | None:
        text = self.read_text(path)
        return None if text is None else parse_out(text)

    def err_file(self, path: str) -> ErrFile | None:
        text = self.read_text(path)
        return None if text is None else parse_err(text)

    def exitcode(self, path: str) -> tuple[bool, str | None]:
        text = self.read_text(path)
        return (False, None) if text is None else (True, errfile.pegasus_lite_exitcode(text))
