"""Facts taken from a job's ``.err[.NNN]`` file (spec 1.7).

Pure functions over the file's text; reading the file is the caller's job.
"""

from __future__ import annotations

import re
from typing import Any

from monitord.core.readers.payloads import split_payloads

__all__ = ["err_text_and_payloads", "pegasus_lite_exitcode", "pegasus_lite_host"]

_HOST_MARK = "Executing on host "
_HOST = re.compile(r"Executing on host (\S+)(?: IP=(\S+))?")
_EXIT_MARK = "PegasusLite: exitcode "
_DIGITS = re.compile(r"\d+")


def err_text_and_payloads(text: str) -> tuple[str, list[dict[str, Any]]]:
    """The stderr text without monitoring payloads, and the payloads (PM-1274)."""
    return split_payloads(text)


def pegasus_lite_host(text: str) -> tuple[str, str | None] | None:
    """``(host, ip or None)`` from the first ``Executing on host <h> [IP=<ip>]`` line (PM-1355)."""
    if _HOST_MARK not in text:
        return None
    match = _HOST.search(text)
    if match is None:
        return None
    return match.group(1), match.group(2)


def pegasus_lite_exitcode(text: str) -> str | None:
    """N (a string) from the first line starting ``PegasusLite: exitcode N`` (PM-733).

    Trailing text after the number is allowed ([5.1-branch]).
    """
    # the mark found by str.find, then checked to start a line: a ``^`` pattern in MULTILINE
    # mode tries every position of the text (4x the CPU on a PegasusLite .err)
    pos = text.find(_EXIT_MARK)
    while pos >= 0:
        if pos == 0 or text[pos - 1] == "\n":
            match = _DIGITS.match(text, pos + len(_EXIT_MARK))
            if match is not None:
                return match.group()
        pos = text.find(_EXIT_MARK, pos + 1)
    return None
