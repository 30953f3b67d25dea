"""Kickstart YAML invocation → mapped record, without building the YAML tree.

pegasus-kickstart writes every record in one fixed style: two-space
indentation, ``key: value`` lines, plain or simple double-quoted scalars,
``- "arg"`` items and ``|`` blocks for the captured stdout/stderr. For text in
exactly that style the structure is unambiguous, so one compiled regex
validates the whole record and a few more slice out the handful of fields the
spec 1.6 mapping reads. Everything else (most of ``machine``, ``usage``,
``jobids``, per-file stat fields, ...) is validated but never constructed,
which is what makes this several times faster than loading the record.

:func:`extract_invocation` returns ``None`` for anything outside that style
and the caller falls back to the generic path (``load_yaml`` + mapping). The
accepted language is a subset of what :func:`kickstart_yaml.fast_load`
accepts and the scalars are built by the same cached constructors, so the
results are identical; ``tests/test_readers_kickstart_fast.py`` checks that
against the generic path.
"""

from __future__ import annotations

import re
from typing import Any

from monitord.readers.kickstart_yaml import (
    PLAIN_ASCII,
    SPECIAL_CHARS,
    Unsupported,
    block_literal,
    cached_key,
    cached_value,
    double_quoted,
)

__all__ = ["extract_invocation"]

_RECORD_START = "- invocation: "
_DEEPEST = 12  # deepest indentation (spaces) of a mapping entry the validator accepts

# --- validation grammar ----------------------------------------------------------
# Each piece accepts only text that fast_load loads without deferring to PyYAML.
# Plain key: not an indicator, no whitespace, ':' or '#'; not '=' / '<<' (special tags).
_KEY = r"[^ \t\n\"'\[\]{},#&*!|>%@`?:<=\-][^ \t\n:#]*"
_DQ = r'"[^"\\\n]*"'  # double-quoted, no escapes
# Plain scalar: no indicator start, no tab, no ': ', no ' #', no trailing ':'.
_PLAIN = (
    r"(?:[^ \t\n\[\]{},#&*!|>'\"%@`?:<=\-]|[-?:](?=[^ \t\n]))"
    r"[^\n\t:#]*+(?:(?::(?=[^ \t\n])|(?<! )#)[^\n\t:#]*+)*+"
)
_SCALAR = rf"(?:{_DQ} *|{_PLAIN})"


def _sequence(indent: int) -> str:
    return rf"(?:{' ' * indent}- {_SCALAR}\n|\n)++"


def _mapping(indent: int) -> str:
    """Entries at exactly ``indent`` spaces (and blank lines), children 2 deeper."""
    deeper = " " * (indent + 2)
    key = f"(?:{_KEY}|{_DQ})" if indent == 4 else _KEY  # quoted keys: file names only
    literal = rf" \|[-+]?\n{deeper}[^ \n][^\n]*\n(?:{deeper}[^\n]*\n| *\n)*+"
    if indent < _DEEPEST:
        children = rf"\n(?>{_mapping(indent + 2)}|{_sequence(indent + 2)})?"
    else:
        children = r"\n"
    return rf"(?:{' ' * indent}{key}:(?> {_SCALAR}\n|{literal}|{children})|\n)++"


_RECORD = re.compile(rf"- invocation: {_SCALAR}\n(?:{_mapping(2)})?")


# --- extraction --------------------------------------------------------------------
def _entries(indent: int) -> re.Pattern[str]:
    """(key, inline value, child block) of every entry at ``indent`` in validated text."""
    return re.compile(
        rf'^{" " * indent}("[^"\n]*"|[^ \n:"][^ \n:]*):(?: ([^\n]*))?\n'
        rf"((?:{' ' * (indent + 2)}[^\n]*\n| *\n)*+)",
        re.M,
    )


_TOP = _entries(2)
_SECTION = _entries(4)
_LEAF = _entries(6)

_TOP_KEYS = ("hostname", "resource", "user", "hostaddr", "transformation", "derivation", "cwd")
_STATUS_KEYS = (
    ("raw", "raw"),
    ("regular_exitcode", "exitcode"),
    ("signalled_signal", "signal"),
    ("signalled_name", "action"),
    ("corefile", "corefile"),
)
_MACHINE_KEYS = (
    ("ram_total", "ram"),
    ("uname_system", "system"),
    ("uname_release", "release"),
    ("uname_machine", "machine"),
    ("cpu_count", "cpu_count"),
    ("cpu_speed", "cpu_speed"),
    ("cpu_vendor", "cpu_vendor"),
    ("cpu_model", "cpu_model"),
    ("cpu_name", "cpu_model"),
)
_EXCLUDED_FILES = frozenset(("stdin", "stdout", "stderr", "metadata"))
_MB = 1048576

Entry = tuple[str, str]  # (inline value, child block)
_NOT_A_MAPPING: dict[str, Entry] = {}


class _Bail(Exception):
    """A needed value is a collection (or otherwise unusual): use the generic path."""


def extract_invocation(body: str) -> dict[str, Any] | None:
    """The mapped record of one ``- invocation:`` body, or ``None`` to use the generic path."""
    if not body.startswith(_RECORD_START) or body[-1:] != "\n":
        return None
    if body.isascii():
        if body.encode("ascii").translate(None, PLAIN_ASCII):
            return None
    elif SPECIAL_CHARS.search(body):
        return None
    if _RECORD.fullmatch(body) is None:
        return None
    try:
        return _map(body)
    except (_Bail, Unsupported):
        return None


def _leaf(entry: Entry, parent: int) -> Any:
    value, block = entry
    if value:
        if value[0] == "|":
            return block_literal(["", *block.split("\n")], 0, parent, value)[0]
        return cached_value(value)
    if block and not block.isspace():
        raise _Bail("collection where a scalar is mapped")
    return None


def _sub(entry: Entry | None, pattern: re.Pattern[str]) -> dict[str, Entry]:
    """Entries of a child mapping keyed by plain key text (``{}`` when not a mapping)."""
    if entry is None or entry[0]:
        return _NOT_A_MAPPING
    out: dict[str, Entry] = {}
    for key, value, block in pattern.findall(entry[1]):
        if key[0] == '"':
            raise _Bail("quoted key in a mapped section")
        out[key] = (value, block)
    return out


def _size(entry: dict[str, Entry]) -> int:
    size = _leaf(entry["size"], 6) if "size" in entry else 0
    try:
        return int(size)
    except (TypeError, ValueError):
        return 0


def _map(body: str) -> dict[str, Any]:
    top: dict[str, Entry] = {
        key: (value, block)
        for key, value, block in _TOP.findall(body, body.index("\n") + 1)
    }
    rec: dict[str, Any] = {}
    for key in _TOP_KEYS:
        if key in top:
            rec[key] = _leaf(top[key], 2)
    mainjob = _sub(top.get("mainjob"), _SECTION)
    if mainjob:
        if "start" in mainjob:
            rec["start"] = _leaf(mainjob["start"], 4)
        if "duration" in mainjob:
            rec["duration"] = _leaf(mainjob["duration"], 4)
        usage = _sub(mainjob.get("usage"), _LEAF)
        for key in ("utime", "stime", "maxrss"):
            if key in usage:
                rec[key] = _leaf(usage[key], 6)
        status = _sub(mainjob.get("status"), _LEAF)
        for src, dst in _STATUS_KEYS:
            if src in status:
                rec[dst] = _leaf(status[src], 6)
        executable = _sub(mainjob.get("executable"), _LEAF)
        if "file_name" in executable:
            rec["name"] = _leaf(executable["file_name"], 6)
    machine = _sub(top.get("machine"), _SECTION)
    for src, dst in _MACHINE_KEYS:
        if src in machine:
            rec[dst] = _leaf(machine[src], 4)
    _map_files(top.get("files"), rec)
    return rec


def _map_files(files_entry: Entry | None, rec: dict[str, Any]) -> None:
    files: dict[Any, Entry] = {}
    if files_entry is not None and not files_entry[0]:
        for key, value, block in _SECTION.findall(files_entry[1]):
            lfn = double_quoted(key)[0] if key[0] == '"' else cached_key(key)
            files[lfn] = (value, block)
    for stream in ("stdout", "stderr"):
        entry = _sub(files.get(stream), _LEAF)
        if "data" in entry:
            rec[stream] = _leaf(entry["data"], 6)
    outputs: dict[str, dict[str, Any]] = {}
    input_bytes = 0
    output_bytes = 0
    for lfn, file_entry in files.items():
        if lfn in _EXCLUDED_FILES:
            continue
        entry = _sub(file_entry, _LEAF)
        if not entry:  # not a mapping (a block mapping is never empty)
            continue
        is_output = _leaf(entry["output"], 6) if "output" in entry else None
        if is_output is None and "output" not in entry:
            input_bytes += _size(entry)
        elif is_output:
            output_bytes += _size(entry)
            meta: dict[str, Any] = {}
            for key in ("user", "size", "ctime"):
                if key in entry:
                    value = _leaf(entry[key], 6)
                    meta[key] = str(value) if key == "size" else value
            if "sha256" in entry:
                meta["checksum.type"] = "sha256"
                meta["checksum.value"] = _leaf(entry["sha256"], 6)
                if "checksum_timing" in entry:
                    meta["checksum.timing"] = str(_leaf(entry["checksum_timing"], 6))
            outputs[str(lfn)] = meta
    if outputs:
        rec["outputs"] = outputs
    rec["tot_ip_size_mb"] = round(input_bytes / _MB, 6)
    rec["tot_op_size_mb"] = round(output_bytes / _MB, 6)
