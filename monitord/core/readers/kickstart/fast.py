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
:func:`yaml_load.fast_load` loads without deferring to PyYAML, and the
scalars are built by the same cached constructors, so the results are
identical. ``tests/test_readers_kickstart_fast.py`` checks that against the
generic path.

Regex notes: every repetition is possessive and each line has one way to
match, so a failing record costs one pass, never a backtracking blow-up.
``files`` is taken whole by the record regex and its entries are matched by a
second pattern (``findall``), so each entry's captures start fresh. CPython
3.11's ``re`` can raise ``SystemError`` for a capture left half-set inside a
possessive repeat (gh-101955); that, like any other surprise, only sends the
record to the generic path.
"""

from __future__ import annotations

import re
from functools import cache
from operator import itemgetter
from typing import Any, NamedTuple

from monitord.core.bounded import make_room
from monitord.core.readers.kickstart.yaml_load import (
    NOT_PLAIN_START,
    PLAIN_ASCII,
    RESOLVED_FIRST,
    SPECIAL_CHARS,
    block_literal,
    cached_key,
    cached_value,
)

__all__ = ["RECORD_START", "extract_invocation", "warmed_up"]

RECORD_START = "- invocation: "

# --- scalars and keys ---------------------------------------------------------------
# Each piece accepts only text that fast_load loads itself (never defers to PyYAML).


def _not(chars: str) -> str:
    """A class of any character but ``chars`` (regex class syntax)."""
    return f"[^{chars}]"


_LINE = _not(r"\n") + "*+"  # the rest of a line, tabs allowed (block scalar content)
_NOT_SPACE = _not(r" \n")
_INDICATORS = r"\[\]{},#&*!|>'\"%@`?:<=\-"
# Plain key: no indicator start, no whitespace, ':' or '#'; not '=' / '<<' (special tags).
_KEY = _not(r" \t\n" + _INDICATORS) + _not(r" \t\n:#") + "*+"
_DQ = '"' + _not(r'"\\\n\t') + '*+"'  # double-quoted, no escapes (nor tabs)
# Plain scalar: no indicator start; a ':' only before a non-space; no ' #'; no tab.
_PLAIN_FIRST = _not(r" \t\n" + _INDICATORS)
_PLAIN_REST = _not(r"\n\t:#") + "*+"
_AFTER_COLON = _not(r" \t\n:#")
_NOT_BLANK = _not(r" \t\n")
_PLAIN = (
    f"(?:{_PLAIN_FIRST}|[-?:](?={_NOT_BLANK}))"
    f"{_PLAIN_REST}(?:(?::{_AFTER_COLON}|(?<! )#){_PLAIN_REST})*+"
)
# The common case first, as one character run: no spaces, so no ': ' or ' #' inside.
_SIMPLE = r"[A-Za-z0-9./_+][A-Za-z0-9./_+:\-]*+(?<!:)"
_SCALAR = rf"(?:{_SIMPLE}|{_PLAIN}|{_DQ} *+)"  # always followed by a line break
_DEEPEST = 12  # deepest indentation (spaces) of a mapping entry the grammar accepts


def _spaces(indent: int) -> str:
    return " " * indent


def _sequence(indent: int) -> str:
    return rf"(?:{_spaces(indent)}- {_SCALAR}\n|\n)++"


def _literal_lines(indent: int) -> str:
    """The lines of a ``|`` block under a key at ``indent``: the first exactly 2 deeper."""
    deeper = _spaces(indent + 2)
    return rf"{deeper}{_NOT_SPACE}{_LINE}\n(?:{deeper}{_LINE}\n| *+\n)*+"


def _literal(indent: int) -> str:
    return rf"\|[-+]?+\n{_literal_lines(indent)}"


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
# (record key, group, is a number or timestamp) in the order map_yaml_invocation fills
# the record; numbers and timestamps are mostly unique, so they skip the value cache
_CAPTURED = (
    ("hostname", "hostname", False),
    ("resource", "resource", False),
    ("user", "user", False),
    ("hostaddr", "hostaddr", False),
    ("transformation", "transformation", False),
    ("derivation", "derivation", False),
    ("cwd", "cwd", False),
    ("start", "mainjob__start", True),
    ("duration", "mainjob__duration", True),
    ("utime", "mainjob__usage__utime", True),
    ("stime", "mainjob__usage__stime", True),
    ("maxrss", "mainjob__usage__maxrss", True),
    ("raw", "mainjob__status__raw", True),
    ("exitcode", "mainjob__status__regular_exitcode", True),
    ("signal", "mainjob__status__signalled_signal", True),
    ("action", "mainjob__status__signalled_name", False),
    ("corefile", "mainjob__status__corefile", False),
    ("name", "mainjob__executable__file_name", False),
    ("ram", "machine__ram_total", True),
    ("system", "machine__uname_system", False),
    ("release", "machine__uname_release", False),
    ("machine", "machine__uname_machine", False),
    ("cpu_count", "machine__cpu_count", True),
    ("cpu_speed", "machine__cpu_speed", True),
    ("cpu_vendor", "machine__cpu_vendor", False),
    ("cpu_model", "machine__cpu_model", False),
    ("cpu_model", "machine__cpu_name", False),
)
_GROUPS = tuple(group for _, group, _ in _CAPTURED)

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
        elif sub == FILES:
            # kickstart writes files last: take the rest, _map_files matches each entry
            # (and bails out on anything else, such as a top-level key after files)
            branches.append(f"{name}:\n(?P<{group}>(?s:.*+))")
        else:
            assert isinstance(sub, dict)
            inner = _schema_mapping(indent + 2, sub, f"{group}__")
            branches.append(f"{name}:\n{_once(group)}(?P<{group}>)(?:{inner})?+")
    others = "(?!(?:{}):){}{}".format("|".join(schema), _KEY, _after_key(indent))
    return r"(?:{}(?:{}|{})|\n)++".format(_spaces(indent), "|".join(branches), others)


_GROUP = re.compile(r"\(\?P<(\w+)>")


def _compile_record() -> re.Pattern[str]:
    """The record pattern, compiled once (it is most of a daemon's start-up regex work).

    Every group is named, so a group's number is its place among the ``(?P<`` of the text;
    the compiled pattern's own numbering is checked against that.
    """
    text = rf"- invocation: {_SCALAR}\n(?:{_schema_mapping(2, _SCHEMA)})?+"
    numbers = {name: n for n, name in enumerate(_GROUP.findall(text), 1)}
    compiled = re.compile(_ONCE.sub(lambda m: f"(?({numbers[m.group(1)]})(?!))", text))
    if dict(compiled.groupindex) != numbers or compiled.groups != len(numbers):
        raise RuntimeError("kickstart record pattern: a group is not where it was counted")
    return compiled


# The record outside ``files`` as kickstart writes it for a job that ran and exited: its keys
# in a fixed order, each once ("key(...)": a mapping of those keys; "key*": any value, as
# the general pattern takes an unmapped key's).  A line tries no branches, no key is checked
# against the schema's, no mapped key against its having been seen.
_COMMON_RECORD = """
version start duration transformation derivation resource wf-label wf-stamp interface hostaddr
hostname pid uid user gid group umask mainjob( start duration pid usage( utime stime maxrss
minflt majflt nswap inblock outblock msgsnd msgrcv nsignals nvcsw nivcsw ) status( raw
regular_exitcode ) executable( file_name mode size inode nlink blksize blocks mtime atime ctime
uid user gid group ) argument_vector* procs* ) jobids* cwd usage* machine( page-size
uname_system uname_nodename uname_release uname_machine ram_total ram_free ram_shared
ram_buffer swap_total swap_free cpu_count cpu_speed cpu_vendor cpu_model load_min1 load_min5
load_min15 procs_total procs_running procs_sleeping procs_other procs_vmsize procs_rss
task_total task_running task_sleeping task_other ) files
"""


def _common_mapping(words: list[str], indent: int, schema: Schema, path: str = "") -> str:
    """The lines of one level of :data:`_COMMON_RECORD` (``words`` consumed up to its ``)``),
    each as :func:`_schema_mapping`'s branch for its key takes it, the same groups named."""
    lines = []
    while words and (word := words.pop(0)) != ")":
        key = word.rstrip("(*")
        sub = schema.get(key, "unmapped")
        lead = f"{_spaces(indent)}{re.escape(key)}:"
        if isinstance(sub, dict):  # a mapped block: "key("
            inner = _common_mapping(words, indent + 2, sub, f"{path}{key}__")
            lines.append(rf"{lead}\n{inner}")
        elif word.endswith("*"):
            lines.append(lead[:-1] + _after_key(indent))  # which starts with the ":"
        elif sub is None:
            lines.append(rf"{lead} (?P<{path}{key}>{_SCALAR})\n")
        elif sub == FILES:
            lines.append(rf"{lead}\n(?P<{FILES}>(?s:.*+))")
        else:
            lines.append(rf"{lead} {_SCALAR}\n")
    return "".join(f"(?>{line})" for line in lines)  # atomic: no backtracking into a line


def _compile_common_record() -> re.Pattern[str]:
    """The record of :data:`_COMMON_RECORD`'s shape.  Where it matches, the record pattern
    matches too with the same captures: each line is one a level's repeat there takes by the
    same branch (a mapped key's, or ``others`` for a key outside the schema)."""
    body = _common_mapping(_COMMON_RECORD.split(), 2, _SCHEMA)
    # the groups of _CAPTURED this shape has not (a signal, cpu_name): never set, so None
    absent = "".join(f"(?P<{group}>)" for group in _GROUPS if f"<{group}>" not in body)
    return re.compile(rf"- invocation: {_SCALAR}\n{body}(?:(?!){absent})?+")


_TOP_LINE = re.compile(r"\n(?=  [^ \n])")

# --- one ``files`` entry ---------------------------------------------------------------
# in the order kickstart writes them, so the common-shape pattern numbers its groups alike
_FILE_KEYS = ("size", "ctime", "user", "output", "sha256", "checksum_timing")
# The stat keys kickstart writes in (almost) every entry, none of them mapped.  An entry's line
# tries them first, by name, with the two value forms they take (``_after_key``'s first and
# third): such a line skips the mapped keys' branches and the lookahead of ``others`` (~20 of a
# line's ~100 ns).  ``others`` takes the same line with the same span, and a line this does
# not take (another key or value form) goes on to the branches after it: the same language.
_STAT_KEYS = (
    "lfn", "file_name", "mode", "inode", "nlink", "blksize", "blocks", "mtime", "atime",
    "uid", "gid", "group", "temporary_name", "descriptor", "data_truncated",
)  # fmt: skip


def _compile_file_entry(stat_first: bool = True) -> re.Pattern[str]:
    """A ``files`` entry at indent 4 (after blank lines), mapped keys captured (last wins).

    ``stat_first=False``: without the :data:`_STAT_KEYS` shortcut (what tests compare with).
    """
    fields = [f"{key}: (?P<{key}>{_SCALAR})\n" for key in _FILE_KEYS]
    fields.append(
        rf"data: (?:(?P<data>{_SCALAR})\n|(?P<data_chomp>\|[-+]?+)\n"
        rf"(?P<data_lines>{_literal_lines(6)}))"
    )
    others = "(?!(?:{}|data):){}{}".format("|".join(_FILE_KEYS), _KEY, _after_key(6))
    stat = "(?:{}): (?:{}|{} *+)\n".format("|".join(_STAT_KEYS), _SIMPLE, _DQ)
    branches = "|".join([stat, *fields, others] if stat_first else [*fields, others])
    entry = rf"(?:{_spaces(6)}(?:{branches})|\n)++"
    header = rf"\n*+{_spaces(4)}(?P<lfn>{_KEY}|{_DQ}):"
    # group 1 is the whole entry: findall skips what does not match, the lengths tell
    pattern = rf"{header}(?: (?:{_SCALAR}\n|{_literal(4)})|\n(?:{entry}|{_sequence(6)})?+)\n*+"
    compiled = re.compile(f"({pattern})")
    names = ("lfn", *_FILE_KEYS, "data", "data_chomp", "data_lines")
    assert tuple(compiled.groupindex) == names  # findall tuples: (entry, *names)
    return compiled


# The entries as kickstart writes them (~97 % of a 20,000-job workflow's): the keys in a fixed
# order, each once, so no line tries branches.  Optional runs: the ``lfn`` line; the file's
# name as ``file_name``, ``temporary_name`` + ``descriptor`` or ``descriptor_number``; after
# ``group``, a stream's ``data_truncated`` + ``data`` or an output's ``output`` + checksum.
_COMMON_ORDER = (
    "[lfn]",
    "(file_name|temporary_name descriptor|descriptor_number)",
    "mode",
    "size",
    "inode",
    "nlink",
    "blksize",
    "blocks",
    "mtime",
    "atime",
    "ctime",
    "uid",
    "user",
    "gid",
    "group",
    "[output sha256 checksum_timing|data_truncated data]",
)  # "[...]": optional; "|": between alternative runs of keys


def _common_line(key: str) -> str:
    """One entry line of the common shape, as the general entry's branch for ``key`` takes it."""
    if key == "data":
        return (
            rf"{_spaces(6)}data: (?:(?P<data>{_SCALAR})\n|(?P<data_chomp>\|[-+]?+)\n"
            rf"(?P<data_lines>{_literal_lines(6)}))"
        )
    if key in _FILE_KEYS:
        return f"{_spaces(6)}{key}: (?P<{key}>{_SCALAR})\n"
    return f"{_spaces(6)}{key}: (?:{_SIMPLE}|{_DQ} *+)\n"  # the stat branch's value forms


def _common_part(part: str) -> str:
    runs = part.strip("[]()").split("|")
    pattern = "|".join("".join(_common_line(key) for key in run.split()) for run in runs)
    return f"(?:{pattern})" + ("?+" if part.startswith("[") else "")


def _compile_common_entry() -> re.Pattern[str]:
    """A ``files`` entry of the common shape.  Where it matches and the next line is not at
    the entries' indent (as when its matches tile the section: a header or the end follows),
    :func:`_compile_file_entry`'s pattern matches the same span with the same groups: each
    line is one that pattern's repeat takes by the same branch, and both stop at that line."""
    lines = "".join(map(_common_part, _COMMON_ORDER))
    header = rf"\n*+{_spaces(4)}(?P<lfn>{_KEY}|{_DQ}):\n"
    compiled = re.compile(rf"({header}{lines}\n*+)")
    names = ("lfn", *_FILE_KEYS, "data", "data_chomp", "data_lines")
    assert tuple(compiled.groupindex) == names  # the same findall tuples
    return compiled


class _Patterns(NamedTuple):
    common_record: re.Pattern[str]  # the record pattern for the common shape only, faster
    common_entries: re.Pattern[str]  # the files entry pattern for the common shape only
    common_captured: tuple[int, ...]  # common_record's group numbers of _CAPTURED, in order


@cache
def _patterns() -> _Patterns:
    """The extractor's patterns, compiled on first use: they were most of the import time
    of the daemon (tens of ms), which a command that parses no record need not pay."""
    common = _compile_common_record()
    common_captured = tuple(common.groupindex[group] for group in _GROUPS)
    return _Patterns(common, _compile_common_entry(), common_captured)


class _General(NamedTuple):
    file_entries: re.Pattern[str]  # any files entry (the common shape's are a part)
    tail: re.Pattern[str]  # after files, on failed jobs: top-level keys but the mapped ones


@cache
def _general() -> _General:
    """The files patterns for what the common shapes do not take, compiled on the first files
    section the common entries do not tile (~10 ms: none in a run whose entries all have the
    common shape, as the read-ahead worker's of a large generated workflow)."""
    tail = r"(?:  (?!(?:{}):){}{}|\n)++".format("|".join(_SCHEMA), _KEY, _after_key(2))
    return _General(_compile_file_entry(), re.compile(tail))


@cache
def _record_pattern() -> tuple[re.Pattern[str], tuple[int, ...]]:
    """The record pattern and its group numbers of _CAPTURED, compiled on the first record
    the common shape does not take (~26 ms: none in a run whose records all have it, as a
    large replay's read-ahead worker's often do)."""
    record = _compile_record()
    return record, tuple(record.groupindex[group] for group in _GROUPS)


# Records a process parses with the generic path before the extractor compiles its patterns:
# each costs a few hundred µs more than extracted, so a small workflow (a 10-job replay) does
# better without the compile, and a large one loses a few ms of its seconds.
WARM_UP = 64
_parsed = [0]


def warmed_up() -> bool:
    """Whether this record should take the extractor; counts the records before the warm-up.

    (Approximate when several threads parse: only when the compile happens moves.)
    """
    if _parsed[0] >= WARM_UP:
        return True
    _parsed[0] += 1
    return False


_EXCLUDED_FILES = frozenset(("stdin", "stdout", "stderr", "metadata"))
_MB = 1048576


_WHOLE = itemgetter(0)  # a files entry's whole text, in findall's tuples
_LFN = itemgetter(1)  # its key, as written
# the fields of a findall tuple: (whole, lfn, size, ctime, user, output, sha256, timing,
# data, data_chomp, data_lines)
_SIZE, _OUTPUT, _DATA = 2, 5, 8


def _entries(body: str, pos: int, end: int) -> dict[Any, tuple[str, ...]] | None:
    """findall tuples by file name (YAML's last-wins order); None unless entries tile it.

    Fields exist only in entries that are mappings; a mapping without any counts as
    an input of size 0, which is what an entry that is not a mapping counts as.
    A key whose first character no resolver and no indicator starts with is its own
    text (as in :func:`_text`): only the others are resolved (:func:`cached_key`).
    """
    found = _patterns().common_entries.findall(body, pos, end)
    if sum(map(len, map(_WHOLE, found))) != end - pos:
        # not all of the common shape (when its matches tile the section, each is the general
        # pattern's match there): the general pattern decides
        found = _general().file_entries.findall(body, pos, end)
        if sum(map(len, map(_WHOLE, found))) != end - pos:
            return None
    names = [
        lfn if lfn[0] in _TEXT_FIRST else lfn[1:-1] if lfn[0] == '"' else cached_key(lfn)
        for lfn in map(_LFN, found)
    ]
    return dict(zip(names, found, strict=True))


def _size(raw: str) -> int:
    if not raw:
        return 0
    if raw.isdigit() and raw.isascii() and (raw[0] != "0" or len(raw) == 1):
        return int(raw)  # what _scalar gives this shape, without its other tests
    try:
        return int(_scalar(raw))
    except (TypeError, ValueError):
        return 0


def _scalar(raw: str) -> Any:
    """``cached_value(raw)``, with shortcuts for the mostly unique numbers and timestamps.

    Each shortcut gives what the safe loader's resolvers give for that shape:
    canonical decimal int, ``digits.digits`` float, and for ``dddd-...`` a string
    (a timestamp, which stays a string, or a plain string: no int/float/bool/null
    pattern starts that way).
    """
    if raw.isascii():
        if raw.isdigit():
            if raw[0] != "0" or len(raw) == 1:
                return int(raw)
        elif raw[4:5] == "-" and raw[:4].isdigit() and raw[-1] != " ":
            return raw
        else:
            head, dot, tail = raw.partition(".")
            if dot and head.isdigit() and tail.isdigit():
                return float(raw)
    return cached_value(raw)


_PREFIX = "\n" + _spaces(8)


def _block(lines: str, chomp: str) -> str:
    """The value of a ``|`` block whose lines (each with its 8-space indent) are ``lines``."""
    if chomp == "|":
        # the usual block: every line indented (no blank line inside): strip the indent,
        # the trailing line breaks, and keep one
        text = "\n" + lines.rstrip("\n")
        if text.count("\n") == text.count(_PREFIX):
            return text.replace(_PREFIX, "\n").rstrip("\n")[1:] + "\n"
    # a header line, the block's lines, and "" for the line break ending the last
    return str(block_literal(["", *lines.split("\n")], 0, 6, chomp)[0])


# A plain scalar's first character that no implicit resolver (bool, int, float, null,
# timestamp, merge, ...) starts with and that is no indicator: the scalar is its own text.
_TEXT_FIRST = frozenset(
    chr(c) for c in range(0x21, 0x7F) if chr(c) not in RESOLVED_FIRST | NOT_PLAIN_START
)


def _text(raw: str) -> Any:
    """``cached_value(raw)`` for a scalar the patterns accepted, without the value cache for
    the shapes that are strings as written: a cwd, a path, a checksum, mostly unique, would
    only push the repeated values out of the cache.

    The patterns' scalars hold no tab, ``": "`` or ``" #"`` and do not end in ``:``: only the
    first character (and a checksum's hex digits: YAML 1.1 reads ``0x``/``0b`` prefixes and
    digits-only as ints, and a float needs a ``.``) decides whether a resolver applies.  Their
    double-quoted scalars have no escape: the text between the quotes (a job's derivation).
    """
    if raw[0] == '"':
        return raw.rstrip(" ")[1:-1]
    if raw[-1] != " ":
        first = raw[0]
        if first in _TEXT_FIRST:
            return raw
        if (
            first.isdigit()
            and raw.isascii()
            and raw.isalnum()
            and not raw.isdigit()
            and raw[1:2] not in ("x", "b")
        ):
            return raw
    return cached_value(raw)


_TEXT_UNIQUE = frozenset(("cwd", "derivation"))  # values that seldom repeat (dir_<pid>, ID<n>)
_RECORD_FIELDS = tuple(
    (key, _scalar if number else _text if key in _TEXT_UNIQUE else cached_value)
    for key, _, number in _CAPTURED
)
# _CAPTURED in runs: a run whose values repeat from record to record (a host and the job's
# transformation, an exit status and executable, a machine) is converted once per distinct
# run of raw values, its keys and values copied from then on (~1 µs of a record's ~5 in
# field conversions); the fields between (derivation, cwd, times, usage: mostly unique) are
# converted one by one.  Each run's keys are its own, so copying them keeps the key order.
_HOST, _STATUS, _MACHINE = (5, 12, 18)  # the ends of the host, unique and status runs
_RunCache = dict[tuple[str | None, ...], dict[str, Any]]
_RUN_CACHE_MAX = 1024  # distinct runs kept (a run's values are few: hosts x jobs, machines)
_run_caches: tuple[_RunCache, _RunCache, _RunCache] = ({}, {}, {})


def _converted_run(cache: _RunCache, start: int, raws: tuple[str | None, ...]) -> dict[str, Any]:
    """The keys and values of the fields ``start:start + len(raws)``, as the field-by-field
    conversion gives them (so one more cpu_model overwrites the first in place)."""
    items = cache.get(raws)
    if items is None:
        items = {}
        for (key, convert), raw in zip(_RECORD_FIELDS[start:], raws, strict=False):
            if raw is not None:
                items[key] = convert(raw)
        make_room(cache, _RUN_CACHE_MAX)
        cache[raws] = items
    return items


def _record_fields(raws: tuple[str | None, ...]) -> dict[str, Any]:
    """The record's mapped fields from the raw text of _CAPTURED's groups (None: absent)."""
    host, status, machine = _run_caches
    rec = _converted_run(host, 0, raws[:_HOST]).copy()
    for (key, convert), raw in zip(_RECORD_FIELDS[_HOST:_STATUS], raws[_HOST:_STATUS], strict=True):
        if raw is not None:
            rec[key] = convert(raw)
    rec.update(_converted_run(status, _STATUS, raws[_STATUS:_MACHINE]))
    rec.update(_converted_run(machine, _MACHINE, raws[_MACHINE:]))
    return rec


class _Bail(Exception):
    """Not handled here: leave the record to the generic path."""


def extract_invocation(body: str) -> dict[str, Any] | None:
    """The mapped record of one ``- invocation:`` body, or ``None`` to use the generic path."""
    if body[-1:] != "\n":
        return None
    # what fast_load refuses outright: control characters, and non-ASCII PyYAML
    # treats specially (line breaks, BOM, non-printables)
    if body.isascii():
        if body.encode("ascii").translate(None, PLAIN_ASCII):
            return None
    elif SPECIAL_CHARS.search(body):
        return None
    try:
        patterns = _patterns()
        match = patterns.common_record.fullmatch(body)
        if match is not None:  # then the record pattern matches with the same captures
            rec = _record_fields(match.group(*patterns.common_captured))
        else:
            record, captured = _record_pattern()
            match = record.fullmatch(body)
            if match is None:
                return None
            rec = _record_fields(match.group(*captured))
        start, end = match.span(FILES)
        if start >= 0:
            _map_files(body, start, end, rec)
        # no files section (a record cut short): no size totals, as the reference
    except Exception:
        # _Bail, and anything else (such as the SystemError CPython 3.11's re can raise
        # for captures in possessive repeats, gh-101955): the generic path decides
        return None
    return rec


def _map_files(body: str, start: int, end: int, rec: dict[str, Any]) -> None:
    files = _entries(body, start, end)
    if files is None:  # failed jobs: more top-level keys (environment, limits) follow
        top = _TOP_LINE.search(body, start - 1)
        if top is None or _general().tail.fullmatch(body, top.end()) is None:
            raise _Bail("files entries outside the accepted style")
        files = _entries(body, start, top.end())
        if files is None:
            raise _Bail("files entries outside the accepted style")
    for stream in ("stdout", "stderr"):
        fields = files.get(stream)
        if fields is None:
            continue
        data, chomp, lines = fields[_DATA:]  # findall gives "" for a group that did not match
        if data:
            if chomp:
                raise _Bail("data given twice, in two forms")
            rec[stream] = cached_value(data)
        elif chomp:
            rec[stream] = _block(lines, chomp)
    outputs: dict[str, dict[str, Any]] = {}
    input_bytes = 0
    output_bytes = 0
    for lfn, fields in files.items():
        if lfn in _EXCLUDED_FILES:
            continue
        output = fields[_OUTPUT]
        if not output:
            input_bytes += _size(fields[_SIZE])
        elif cached_value(output):
            _, _, size, ctime, user, _, sha256, timing, *_ = fields
            output_bytes += _size(size)
            meta: dict[str, Any] = {}
            if user:
                meta["user"] = cached_value(user)
            if size:
                meta["size"] = str(_scalar(size))
            if ctime:
                meta["ctime"] = _scalar(ctime)
            if sha256:
                meta["checksum.type"] = "sha256"
                meta["checksum.value"] = _text(sha256)
                if timing:
                    meta["checksum.timing"] = str(_scalar(timing))
            outputs[str(lfn)] = meta
    if outputs:
        rec["outputs"] = outputs
    rec["tot_ip_size_mb"] = round(input_bytes / _MB, 6)
    rec["tot_op_size_mb"] = round(output_bytes / _MB, 6)
