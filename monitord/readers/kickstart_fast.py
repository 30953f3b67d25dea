"""Kickstart YAML invocation → mapped record, without building the YAML tree.

pegasus-kickstart writes every record in one fixed style: two-space
indentation, ``key: value`` lines, plain or simple double-quoted scalars,
``- "arg"`` items and ``|`` blocks for the captured stdout/stderr. For text in
exactly that style the structure is unambiguous, so compiled regexes can both
validate the record and, through named groups, capture the few values the
spec 1.6 mapping reads: one regex for the record outside ``files``, one per
``files`` entry. Everything else (most of ``machine``, ``usage``, ``jobids``,
the stat fields, ...) is checked but never constructed, which is several
times faster than loading the record.

:func:`extract_invocation` returns ``None`` for anything outside that style,
and for a mapped key that appears twice or in another form than
``key: scalar``; the caller then uses the generic path (``load_yaml`` + the
mapping). The accepted language is a subset of what
:func:`kickstart_yaml.fast_load` loads without deferring to PyYAML, and the
scalars are built by the same cached constructors, so the results are
identical. ``tests/test_readers_kickstart_fast.py`` checks that against the
generic path.

Regex notes: every repetition is possessive and each line has one way to
match, so a failing record costs one pass, never a backtracking blow-up.
Captures inside repeated groups make the engine save marks at every branch,
which is why ``files`` entries are matched one by one with a small pattern.
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
)

__all__ = ["RECORD_START", "extract_invocation"]

RECORD_START = "- invocation: "

# --- scalars and keys ---------------------------------------------------------------
# Each piece accepts only text that fast_load loads itself (never defers to PyYAML).
# Plain key: no indicator start, no whitespace, ':' or '#'; not '=' / '<<' (special tags).
_KEY = r"[^ \t\n\"'\[\]{},#&*!|>%@`?:<=\-][^ \t\n:#]*+"
_DQ = r'"[^"\\\n]*+"'  # double-quoted without escapes
# Plain scalar: no indicator start; a ':' only before a non-space; no ' #'; no tab.
_PLAIN = (
    r"(?:[^ \t\n\[\]{},#&*!|>'\"%@`?:<=\-]|[-?:](?=[^ \t\n]))"
    r"[^\n\t:#]*+(?:(?::[^ \t\n:#]|(?<! )#)[^\n\t:#]*+)*+"
)
# The common case first, as one character run: no spaces, so no ': ' or ' #' inside.
_SIMPLE = r"[A-Za-z0-9./_+][A-Za-z0-9./_+:\-]*+(?<!:)"
_SCALAR = rf"(?:{_SIMPLE}|{_PLAIN}|{_DQ} *+)"  # always followed by a line break
_DEEPEST = 12  # deepest indentation (spaces) of a mapping entry the grammar accepts


def _spaces(indent: int) -> str:
    return " " * indent


def _sequence(indent: int) -> str:
    return rf"(?:{_spaces(indent)}- {_SCALAR}\n|\n)++"


def _literal(indent: int) -> str:
    """``|`` block under a key at ``indent``: content at exactly 2 deeper (then blank or deeper)."""
    deeper = _spaces(indent + 2)
    return rf"\|[-+]?+\n{deeper}[^ \n][^\n]*+\n(?:{deeper}[^\n]*+\n| *+\n)*+"


def _after_key(indent: int) -> str:
    """What may follow ``key:`` at ``indent``: a scalar, a literal, or a child block."""
    if indent < _DEEPEST:
        children = rf"\n(?:{_mapping(indent + 2)}|{_sequence(indent + 2)})?+"
    else:
        children = r"\n"
    return rf":(?: {_SIMPLE}\n| {_PLAIN}\n| {_DQ} *+\n| {_literal(indent)}|{children})"


def _mapping(indent: int, key: str = _KEY) -> str:
    """Entries at exactly ``indent`` spaces, and blank lines."""
    return rf"(?:{_spaces(indent)}{key}{_after_key(indent)}|\n)++"


# --- the record outside ``files`` ----------------------------------------------------
# key -> None (a scalar, captured) or a nested schema; FILES is captured as raw lines.
FILES = "files"
Schema = dict[str, "Schema | str | None"]
_SCHEMA: Schema = {
    **dict.fromkeys(
        ("hostname", "resource", "user", "hostaddr", "transformation", "derivation", "cwd")
    ),
    "mainjob": {
        "start": None,
        "duration": None,
        "usage": dict.fromkeys(("utime", "stime", "maxrss")),
        "status": dict.fromkeys(
            ("raw", "regular_exitcode", "signalled_signal", "signalled_name", "corefile")
        ),
        "executable": {"file_name": None},
    },
    "machine": dict.fromkeys(
        (
            "ram_total",
            "uname_system",
            "uname_release",
            "uname_machine",
            "cpu_count",
            "cpu_speed",
            "cpu_vendor",
            "cpu_model",
            "cpu_name",
        )
    ),
    FILES: FILES,
}
# (record key, group) in the order map_yaml_invocation fills the record
_CAPTURED = (
    ("hostname", "hostname"),
    ("resource", "resource"),
    ("user", "user"),
    ("hostaddr", "hostaddr"),
    ("transformation", "transformation"),
    ("derivation", "derivation"),
    ("cwd", "cwd"),
    ("start", "mainjob__start"),
    ("duration", "mainjob__duration"),
    ("utime", "mainjob__usage__utime"),
    ("stime", "mainjob__usage__stime"),
    ("maxrss", "mainjob__usage__maxrss"),
    ("raw", "mainjob__status__raw"),
    ("exitcode", "mainjob__status__regular_exitcode"),
    ("signal", "mainjob__status__signalled_signal"),
    ("action", "mainjob__status__signalled_name"),
    ("corefile", "mainjob__status__corefile"),
    ("name", "mainjob__executable__file_name"),
    ("ram", "machine__ram_total"),
    ("system", "machine__uname_system"),
    ("release", "machine__uname_release"),
    ("machine", "machine__uname_machine"),
    ("cpu_count", "machine__cpu_count"),
    ("cpu_speed", "machine__cpu_speed"),
    ("cpu_vendor", "machine__cpu_vendor"),
    ("cpu_model", "machine__cpu_model"),
    ("cpu_model", "machine__cpu_name"),
)
_RECORD_KEYS = tuple(key for key, _ in _CAPTURED)
_GROUPS = tuple(group for _, group in _CAPTURED)

_ONCE = re.compile(r"\(\?\(@(\w+)\)\(\?!\)\)")  # placeholder, resolved to a group number


def _once(group: str) -> str:
    """Fail if ``group`` already matched: a repeated mapped key goes to the generic path."""
    return f"(?(@{group})(?!))"


def _schema_mapping(indent: int, schema: Schema, path: str = "") -> str:
    """Like :func:`_mapping`, but the schema keys are captured, once, and only as described.

    The other keys may not be schema keys, so a schema key in another form fails
    the match (a quoted key could alias one, so there are none here).
    """
    branches = []
    for name, sub in schema.items():
        group = path + name
        if sub is None:
            branches.append(f"{name}: {_once(group)}(?P<{group}>{_SCALAR})\n")
        elif sub == FILES:  # loose here, each entry is matched by _FILE_ENTRY
            lines = rf"(?:{_spaces(indent + 2)}[^\n]*+\n| *+\n)*+"
            branches.append(f"{name}:\n{_once(group)}(?P<{group}>{lines})")
        else:
            assert isinstance(sub, dict)
            inner = _schema_mapping(indent + 2, sub, f"{group}__")
            branches.append(f"{name}:\n{_once(group)}(?P<{group}>)(?:{inner})?+")
    others = "(?!(?:{}):){}{}".format("|".join(schema), _KEY, _after_key(indent))
    return r"(?:{}(?:{}|{})|\n)++".format(_spaces(indent), "|".join(branches), others)


def _compile_record() -> re.Pattern[str]:
    text = rf"- invocation: {_SCALAR}\n(?:{_schema_mapping(2, _SCHEMA)})?+"
    numbers = re.compile(_ONCE.sub("", text)).groupindex
    return re.compile(_ONCE.sub(lambda m: f"(?({numbers[m.group(1)]})(?!))", text))


_RECORD = _compile_record()

# --- one ``files`` entry ---------------------------------------------------------------
_FILE_KEYS = ("output", "size", "user", "ctime", "sha256", "checksum_timing")


def _compile_file_entry() -> re.Pattern[str]:
    """A ``files`` entry at indent 4 (after blank lines), mapped keys captured (last wins)."""
    fields = [f"{key}: (?P<{key}>{_SCALAR})\n" for key in _FILE_KEYS]
    fields.append(
        rf"data: (?:(?P<data>{_SCALAR})\n|(?P<data_chomp>\|[-+]?+)\n"
        rf"(?P<data_lines>{_spaces(8)}[^ \n][^\n]*+\n(?:{_spaces(8)}[^\n]*+\n| *+\n)*+))"
    )
    others = "(?!(?:{}|data):){}{}".format("|".join(_FILE_KEYS), _KEY, _after_key(6))
    entry = rf"(?:(?P<is_mapping>{_spaces(6)})(?:{'|'.join(fields)}|{others})|\n)++"
    header = rf"\n*+{_spaces(4)}(?P<lfn>{_KEY}|{_DQ}):"
    # group 1 is the whole entry: findall skips what does not match, the lengths tell
    pattern = rf"{header}(?: (?:{_SCALAR}\n|{_literal(4)})|\n(?:{entry}|{_sequence(6)})?+)\n*+"
    compiled = re.compile(f"({pattern})")
    names = ("lfn", "is_mapping", *_FILE_KEYS, "data", "data_chomp", "data_lines")
    assert tuple(compiled.groupindex) == names  # findall tuples: (entry, *names)
    return compiled


_FILE_ENTRIES = _compile_file_entry()
_EXCLUDED_FILES = frozenset(("stdin", "stdout", "stderr", "metadata"))
_MB = 1048576


class _Bail(Exception):
    """Not handled here: leave the record to the generic path."""


def extract_invocation(body: str) -> dict[str, Any] | None:
    """The mapped record of one ``- invocation:`` body, or ``None`` to use the generic path."""
    if body[-1:] != "\n":
        return None
    if body.isascii():
        if body.encode("ascii").translate(None, PLAIN_ASCII):
            return None
    elif SPECIAL_CHARS.search(body):
        return None
    match = _RECORD.fullmatch(body)
    if match is None:
        return None
    rec: dict[str, Any] = {}
    try:
        for key, raw in zip(_RECORD_KEYS, match.group(*_GROUPS), strict=True):
            if raw is not None:
                rec[key] = cached_value(raw)
        start, end = match.span(FILES)
        _map_files(body, start, end, rec)  # nothing when absent: start == end == -1
    except (_Bail, Unsupported):
        return None
    return rec


def _map_files(body: str, pos: int, end: int, rec: dict[str, Any]) -> None:
    # name -> captured fields, for the entries that are mappings (YAML's last-wins order)
    files: dict[Any, tuple[str, ...] | None] = {}
    covered = 0
    for whole, key, is_mapping, *fields in _FILE_ENTRIES.findall(body, pos, end):
        covered += len(whole)
        lfn = key[1:-1] if key[0] == '"' else cached_key(key)
        files[lfn] = fields if is_mapping else None
    if covered != end - pos:
        raise _Bail("files entry outside the accepted style")
    for stream in ("stdout", "stderr"):
        fields = files.get(stream)
        if fields is None:
            continue
        data, chomp, lines = fields[6:]  # findall gives "" for a group that did not match
        if data:
            if chomp:
                raise _Bail("data given twice, in two forms")
            rec[stream] = cached_value(data)
        elif chomp:
            # a header line, the block's lines, and "" for the line break ending the last
            rec[stream] = block_literal(["", *lines.split("\n")], 0, 6, chomp)[0]
    outputs: dict[str, dict[str, Any]] = {}
    input_bytes = 0
    output_bytes = 0
    for lfn, fields in files.items():
        if fields is None or lfn in _EXCLUDED_FILES:
            continue
        output, size, user, ctime, sha256, timing = fields[:6]
        if not output:
            input_bytes += _size(size)
        elif cached_value(output):
            output_bytes += _size(size)
            meta: dict[str, Any] = {}
            if user:
                meta["user"] = cached_value(user)
            if size:
                meta["size"] = str(cached_value(size))
            if ctime:
                meta["ctime"] = cached_value(ctime)
            if sha256:
                meta["checksum.type"] = "sha256"
                meta["checksum.value"] = cached_value(sha256)
                if timing:
                    meta["checksum.timing"] = str(cached_value(timing))
            outputs[str(lfn)] = meta
    if outputs:
        rec["outputs"] = outputs
    rec["tot_ip_size_mb"] = round(input_bytes / _MB, 6)
    rec["tot_op_size_mb"] = round(output_bytes / _MB, 6)


def _size(raw: str) -> int:
    if not raw:
        return 0
    try:
        return int(cached_value(raw))
    except (TypeError, ValueError):
        return 0
