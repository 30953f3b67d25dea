"""What monitord remembers about one job instance (a DAG node attempt)."""

from __future__ import annotations

import marshal
import struct
import sys
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any


def shared(value: Any) -> Any:
    """One copy of a text that many job instances hold (a state, a site, a user): not one job's
    own text (its work directory), which would only grow the interpreter's table of them;
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


# A finished job instance as the workflow keeps it to the end: one plain ``bytes`` (a record),
# its state readable without unpacking, its other values packed. Plain, not a subclass: a
# subclass's object is 16 B more a record (~1.6 MB at 100,000 jobs; bench/README.md "Issue
# 30, fifteenth session: memory30n"), so a record is told from a live JobInstance by its type
# (``type(x) is bytes``) and read with the functions below. The name stays for the snapshots
# of version <= 7, whose records were pickled as this class: unpickled, they are plain bytes.
FinishedJob = bytes
#
# Which instance a later line of the node applies to depends on the latest instance's
# ``state`` (and, for a SUBMIT, its ``sched_id``); only a later state of the instance itself
# (duplicated lines) needs the rest, and :func:`revive` gives it back whole. The instance
# object (37 slots), its times as float objects and its own sched id text cost ~580 B per
# instance; this record ~190 B (bench/README.md, "Issue 30, sixth session: mem30c"). It holds
# its ``seq`` too: the workflow keys it by the node's name alone (``Workflow.latest``).
#
# Layout: the codes of ``state``, ``prev_state`` and ``known_state`` (one byte each: an index
# in STATE_CODES, _NONE, or _TEXT: the state's text follows, after its length), a flags byte
# (its upper bits: ``out_num``, see _out_code), then the values of _PACKED: laid out by
# position (_encode_positional), else tagged (_encode; a record of an older snapshot too),
# else marshalled. What JobInstance.retire cleared is not packed, nor the submit directory
# when it is the one the node's ``.dag`` entry gives (the caller's ``submit_dir``): per
# record, those were ~120 of ~295 bytes.


def finished(
    inst: JobInstance, submit_dir: str | None = None, texts: TextTable | None = None
) -> JobInstance | bytes:
    """The record of a retired instance (the instance itself if a value cannot be packed:
    only numbers, texts and plain containers can; or if it is not retired). ``submit_dir``:
    the node's own, which :func:`revive` is given back; ``texts``: the workflow's table of
    shared texts, which :func:`revive` is given too."""
    if not inst.retired or _cleared(inst) != _CLEARED_VALUES:
        return inst
    head = bytearray(4)
    for at, state in enumerate((inst.state, inst.prev_state, inst.known_state)):
        code = _NONE if state is None else _CODE.get(state, _TEXT)
        head[at] = code
        if code == _TEXT:
            text = state.encode()  # type: ignore[union-attr]
            if len(text) > 255:
                return inst
            head += bytes((len(text),)) + text
    values = list(_packed_values(inst))
    if values[_SUBMIT_DIR] == submit_dir:
        values[_SUBMIT_DIR] = None
    head[3] |= _out_code(inst.out_num)
    if _whole_times(values):
        head[3] |= _INT_TIMES
        for at in _TIMES:
            t = values[at]
            if t is not None:
                values[at] = int(t)
    compact = _encode_positional(values, texts, bool(head[3] & _INT_TIMES))
    if compact is None:
        compact = _encode(values, texts)
    if compact is not None:
        head[3] |= _COMPACT
        return bytes(head + compact)
    try:
        packed = marshal.dumps(tuple(values))
    except ValueError:
        return inst
    return bytes(head + packed)


def record_state(record: bytes) -> str | None:
    """A record's ``state``, read off its head."""
    code = record[0]
    if code < _TEXT:
        return STATE_CODES[code]
    return None if code == _NONE else record[5 : 5 + record[4]].decode()


def record_out_num(record: bytes) -> int | None:
    """A record's output number, read off the head when it is there (a record made before it
    was, a snapshot's: from the packed values)."""
    code = record[3] >> _OUT_SHIFT
    if code:
        return None if code == _OUT_NONE else code - _OUT_FIRST
    return _values(record)[_OUT_NUM]  # type: ignore[no-any-return]


def record_sched_id(record: bytes) -> str | None:
    return _values(record)[_SCHED_ID]  # type: ignore[no-any-return]


def record_seq(record: bytes) -> int:
    return _values(record)[_SEQ]  # type: ignore[no-any-return]


def state_of(latest: JobInstance | bytes) -> str | None:
    """The state of a node's latest: a live instance's or its record's."""
    return record_state(latest) if type(latest) is bytes else latest.state  # type: ignore[union-attr]


def out_num_of(latest: JobInstance | bytes) -> int | None:
    """The output number of a node's latest: a live instance's or its record's."""
    return record_out_num(latest) if type(latest) is bytes else latest.out_num  # type: ignore[union-attr]


def sched_id_of(latest: JobInstance | bytes) -> str | None:
    """The sched id of a node's latest: a live instance's or its record's."""
    return record_sched_id(latest) if type(latest) is bytes else latest.sched_id  # type: ignore[union-attr]


def _states(record: bytes) -> tuple[list[str | None], int]:
    """A record's three states and where its packed values start."""
    states: list[str | None] = []
    at = 4
    for code in record[:3]:
        if code < _TEXT:
            states.append(STATE_CODES[code])
        elif code == _NONE:
            states.append(None)
        else:
            n = record[at]
            states.append(shared(record[at + 1 : at + 1 + n].decode()))
            at += 1 + n
    return states, at


def _values(record: bytes, texts: TextTable | None = None) -> tuple[Any, ...]:
    """A record's packed values (without ``texts``, a shared text's place holds None)."""
    at = _states(record)[1]
    if record[3] & _COMPACT:
        return _decode(record, at, texts)
    return marshal.loads(record[at:])  # type: ignore[no-any-return]


def revive(
    record: bytes, name: str, submit_dir: str | None = None, texts: TextTable | None = None
) -> JobInstance:
    """The instance again, equal to the one that was packed (its texts shared again);
    ``submit_dir`` and ``texts``: those :func:`finished` was given."""
    (state, prev_state, known_state), at = _states(record)
    values = _decode(record, at, texts) if record[3] & _COMPACT else marshal.loads(record[at:])
    inst = JobInstance(name, 0, "", state=state)
    for attr, value in zip(_PACKED, values, strict=True):
        setattr(inst, attr, shared(value) if attr in _SHARED else value)
    if record[3] & _INT_TIMES:
        for attr in _TIME_NAMES:
            value = getattr(inst, attr)
            if value is not None:
                setattr(inst, attr, float(value))
    if inst.submit_dir is None:
        inst.submit_dir = submit_dir  # type: ignore[assignment]
    inst.prev_state, inst.known_state = prev_state, known_state
    inst.retired = True
    return inst


# The job states a record keeps as one byte: its code is the index here. Append only (a
# crash-resume snapshot's records are read with this table: monitord/daemon/resume.py
# VERSION); any other state is kept as its text.
STATE_CODES = (
    "PRE_SCRIPT_STARTED", "PRE_SCRIPT_TERMINATED", "PRE_SCRIPT_SUCCESS", "PRE_SCRIPT_FAILURE",
    "DAGMAN_SUBMIT", "SUBMIT", "GRID_SUBMIT", "GLOBUS_SUBMIT", "SUBMIT_FAILED",
    "GRID_SUBMIT_FAILED", "GLOBUS_SUBMIT_FAILED", "EXECUTE", "IMAGE_SIZE", "REMOTE_ERROR",
    "JOB_HELD", "JOB_HELD_REASON", "JOB_RELEASED", "JOB_EVICTED", "JOB_TERMINATED",
    "JOB_ABORTED", "JOB_SUCCESS", "JOB_FAILURE", "POST_SCRIPT_STARTED",
    "POST_SCRIPT_TERMINATED", "POST_SCRIPT_SUCCESS", "POST_SCRIPT_FAILURE",
)  # fmt: skip
_CODE = {state: code for code, state in enumerate(STATE_CODES)}
_NONE, _TEXT = 255, 254
_INT_TIMES = 1  # flag: the times were whole floats, packed as ints (4 bytes less each)
_COMPACT = 2  # flag: the values are packed by _encode, not marshal
# The flags byte's upper six bits: the output number again, readable without unpacking (the
# workflow's output counters are read off the latest records: Workflow.out_counts). 0: not
# there (an older record: read the values), _OUT_NONE: None, else out_num + _OUT_FIRST.
_OUT_SHIFT, _OUT_NONE, _OUT_FIRST = 2, 1, 2


def _out_code(out_num: int | None) -> int:
    """``out_num`` as the flags byte's upper bits (0 when it does not fit in them)."""
    if out_num is None:
        return _OUT_NONE << _OUT_SHIFT
    code = out_num + _OUT_FIRST
    return code << _OUT_SHIFT if 0 <= out_num and code < 1 << (8 - _OUT_SHIFT) else 0


# What retire() clears, as it leaves it; a record does not pack these.
_CLEARED = ("sub", "stdout_text", "stderr_text", "composite_extra", "deferred_main_end")
_CLEARED_VALUES: tuple[Any, ...] = (None, None, None, {}, None)
_cleared = attrgetter(*_CLEARED)
# Every value of an instance but its name (the workflow's key for it), its states (the
# record's head), what retire() cleared and ``retired`` itself.
_PACKED = tuple(
    f.name
    for f in fields(JobInstance)
    if f.name not in ("name", "state", "prev_state", "known_state", "retired", *_CLEARED)
)
_SCHED_ID = _PACKED.index("sched_id")
_SEQ = _PACKED.index("seq")
_OUT_NUM = _PACKED.index("out_num")
_SUBMIT_DIR = _PACKED.index("submit_dir")
_TIME_NAMES = ("pre_start", "pre_end", "main_start", "main_end", "post_start", "post_end")
_TIMES = tuple(_PACKED.index(name) for name in _TIME_NAMES)
_packed_values = attrgetter(*_PACKED)  # the tuple of those values, in one call
# The texts many instances hold one copy of (see shared).
_SHARED = frozenset(("submit_dir", "site", "user", "work_dir"))


class TextTable:
    """A workflow's texts that its finished instances' records name by number (a site, a
    user, a submit directory, a work directory's parent: the same few for thousands of
    jobs), so that a record holds a byte or two, not the text.  Append only, at most
    :data:`TEXTS_MAX` texts (a text past that is packed in the record itself); pickled with
    the workflow (a crash-resume snapshot)."""

    __slots__ = ("texts", "_index")

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._index: dict[str, int] = {}

    def number(self, text: str) -> int | None:
        """The text's number, added if new (None: the table is full)."""
        found = self._index.get(text)
        if found is None and len(self.texts) < TEXTS_MAX:
            found = self._index[text] = len(self.texts)
            self.texts.append(sys.intern(text))
        return found

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TextTable) and self.texts == other.texts

    __hash__ = None  # type: ignore[assignment]

    def __getstate__(self) -> list[str]:
        return self.texts

    def __setstate__(self, texts: list[str]) -> None:
        self.texts = texts
        self._index = {text: at for at, text in enumerate(texts)}


TEXTS_MAX = 4096

# _encode's tags: one byte before each value.
_T_NONE, _T_FALSE, _T_TRUE, _T_INT, _T_NEG, _T_FLOAT, _T_STR, _T_TEXT, _T_PATH, _T_DELTA = range(10)
_T_SCHED = 10  # a sched id "C.P" (HTCondor's cluster and proc) as two varints
_T_NUMBERED = 11  # a work directory "...dir_N": the text before N numbered, then N
_SCHED_AT = _PACKED.index("sched_id")
_TEXT_AT = frozenset(_PACKED.index(name) for name in ("submit_dir", "site", "user"))
_WORK_DIR = _PACKED.index("work_dir")
_TIME_SET = frozenset(_TIMES)
_pack_float = struct.Struct("<d")

# The layout by position (_encode_positional): what each value is, so that it needs no tag.
_K_TAGGED, _K_INT, _K_TIME, _K_BOOL = range(4)
_BOOLS = frozenset(_PACKED.index(name) for name in ("kickstart_parsed", "rotated"))
_INTS = ("seq", "js_seq", "out_num", "time_req", "pre_exitcode", "post_exitcode", "cluster_start")
_KINDS = tuple(
    _K_TIME if at in _TIME_SET else _K_BOOL if at in _BOOLS else _K_INT if name in _INTS else _K_TAGGED
    for at, name in enumerate(_PACKED)
)  # fmt: skip
# Its head: one bit a value (set: there, not None; a bool's: its value) and the top bit, which
# tells it from _encode's layout (whose first byte is a tag, < 0x80).
_MAP_BYTES = (len(_PACKED) + 8) // 8
_MAP_MARK = 1 << (8 * _MAP_BYTES - 1)


def _whole_times(values: list[Any]) -> bool:
    """Whether every time of a record's values is None or a whole float of 32 bits."""
    for at in _TIMES:
        t = values[at]
        if t is not None and not (type(t) is float and t.is_integer() and abs(t) < 2**31):
            return False
    return True


def _varint(out: bytearray, n: int) -> None:
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)


_DIGITS = "0123456789"


def _decimal(text: str) -> int | None:
    """The number a text of ASCII digits writes, if ``str`` of it gives the text back (no
    leading zero, not empty); else None."""
    if not text or len(text) > 18 or not text.isascii() or not text.isdigit():
        return None
    if text[0] == "0" and len(text) > 1:
        return None
    return int(text)


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    """The varint :func:`_varint` wrote at ``data[at]``, and where the next value starts."""
    n = shift = 0
    while True:
        byte = data[at]
        at += 1
        n |= (byte & 0x7F) << shift
        if byte < 0x80:
            return n, at
        shift += 7


def _encode(values: list[Any], texts: TextTable | None) -> bytes | None:
    """The values as tagged bytes: ints as varints, a time after another as its difference,
    shared texts by their number in ``texts``; a text of the work directory as its parent's
    number and its last part, or, when it ends in a number (HTCondor's ``.../dir_<pid>``), the
    text before the number numbered and the number; a sched id ``C.P`` as its two numbers
    (marshal spent 5 bytes on every int and each text whole: a record ~137 -> ~65 bytes, and
    ~12 bytes less with these two).  None: a value this does not pack (marshal does)."""
    out = bytearray()
    last_time: int | None = None
    for at, value in enumerate(values):
        if type(value) is int and at in _TIME_SET:
            if last_time is None:
                last_time = value
            else:
                delta, last_time = value - last_time, value
                out.append(_T_DELTA)
                _varint(out, delta << 1 if delta >= 0 else (-delta << 1) - 1)
                continue
        if not _encode_one(out, at, value, texts):
            return None
    return bytes(out)


def _encode_positional(values: list[Any], texts: TextTable | None, int_times: bool) -> bytes | None:
    """The values in the layout by position: a bitmap of those there (a bool's value its bit),
    then each value there, an int as its zigzag varint, a time as one too (whole times: after
    another, its difference) or 8 bytes, the others tagged (:func:`_encode_one`).  No tag for
    a None, an int or a bool: ~20 bytes less than :func:`_encode`'s for a usual record (issue
    30).  None: a value not of its position's kind (``_encode``'s layout takes it)."""
    out = bytearray(_MAP_BYTES)
    present = _MAP_MARK
    last_time: int | None = None
    for at, value in enumerate(values):
        kind = _KINDS[at]
        if kind == _K_BOOL:
            if type(value) is not bool:
                return None
            present |= value << at
            continue
        if value is None:
            continue
        present |= 1 << at
        if kind == _K_TAGGED:
            if not _encode_one(out, at, value, texts):
                return None
        elif kind == _K_TIME and not int_times:
            if type(value) is not float:
                return None
            out += _pack_float.pack(value)
        elif type(value) is not int:
            return None
        else:
            n = value
            if kind == _K_TIME:
                n, last_time = (value if last_time is None else value - last_time), value
            _varint(out, n << 1 if n >= 0 else (-n << 1) - 1)
    out[:_MAP_BYTES] = present.to_bytes(_MAP_BYTES, "big")
    return bytes(out)


def _encode_one(out: bytearray, at: int, value: Any, texts: TextTable | None) -> bool:
    """The value at position ``at`` of a record appended to ``out`` as a tag and its bytes;
    False when it does not pack."""
    kind = type(value)
    if value is None:
        out.append(_T_NONE)
    elif kind is bool:
        out.append(_T_TRUE if value else _T_FALSE)
    elif kind is int:
        out.append(_T_INT if value >= 0 else _T_NEG)
        n = value if value >= 0 else -value
        if n < 0x80:  # the usual small number: one byte, no call
            out.append(n)
        else:
            _varint(out, n)
    elif kind is float:
        out.append(_T_FLOAT)
        out += _pack_float.pack(value)
    elif kind is str:
        return _encode_text(out, at, value, texts)
    else:
        return False
    return True


def _encode_text(out: bytearray, at: int, value: str, texts: TextTable | None) -> bool:
    """The text at position ``at`` of a record appended to ``out`` (numbered, a path under a
    numbered parent, numbered and a number, a sched id's two numbers, or whole); False when
    it does not pack (a lone surrogate: marshal keeps it)."""
    number = None
    if texts is not None:
        if at in _TEXT_AT:
            number = texts.number(value)
            if number is not None:
                out.append(_T_TEXT)
                _varint(out, number)
                return True
        elif at == _WORK_DIR and "/" in value:
            stem = value.rstrip(_DIGITS)
            tail = _decimal(value[len(stem) :])
            if tail is not None:
                number = texts.number(stem)
                if number is not None:
                    out.append(_T_NUMBERED)
                    _varint(out, number)
                    _varint(out, tail)
                    return True
            parent, _, last = value.rpartition("/")
            number = texts.number(parent)
            if number is not None:
                out.append(_T_PATH)
                _varint(out, number)
                value = last
    if at == _SCHED_AT and number is None:
        cluster, dot, proc = value.partition(".")
        c, p = _decimal(cluster), _decimal(proc)
        if dot and c is not None and p is not None:
            out.append(_T_SCHED)
            _varint(out, c)
            _varint(out, p)
            return True
    if number is None:
        out.append(_T_STR)
    try:
        data = value.encode()
    except UnicodeEncodeError:  # a lone surrogate: marshal keeps it
        return False
    _varint(out, len(data))
    out += data
    return True


def _decode(data: bytes, at: int, texts: TextTable | None) -> tuple[Any, ...]:
    """The values :func:`_encode` or :func:`_encode_positional` packed from ``data[at:]``
    (``data``: the record, its flags at ``data[3]``)."""
    if data[at] & 0x80:
        return _decode_positional(data, at, texts, bool(data[3] & _INT_TIMES))
    values: list[Any] = []
    last_time: int | None = None
    end = len(data)
    while at < end:
        if data[at] == _T_DELTA:
            n, at = _read_varint(data, at + 1)
            value = last_time = last_time + (-(n + 1 >> 1) if n & 1 else n >> 1)  # type: ignore[operator]
        else:
            value, at = _decode_one(data, at, texts)
            if type(value) is int and len(values) in _TIME_SET:
                last_time = value
        values.append(value)
    return tuple(values)


def _decode_one(data: bytes, at: int, texts: TextTable | None) -> tuple[Any, int]:
    """The value :func:`_encode_one` wrote at ``data[at]``, and where the next one starts."""
    tag = data[at]
    at += 1
    if tag <= _T_TRUE:
        return (None if tag == _T_NONE else tag == _T_TRUE), at
    if tag == _T_FLOAT:
        return _pack_float.unpack_from(data, at)[0], at + 8
    n, at = _read_varint(data, at)
    if tag == _T_INT or tag == _T_NEG:
        return (n if tag == _T_INT else -n), at
    if tag == _T_TEXT:
        return (None if texts is None else texts.texts[n]), at
    if tag == _T_SCHED or tag == _T_NUMBERED:
        tail, at = _read_varint(data, at)
        if tag == _T_SCHED:
            return f"{n}.{tail}", at
        return (None if texts is None else f"{texts.texts[n]}{tail}"), at
    # _T_STR: n bytes follow; _T_PATH: n numbers the parent, then a _T_STR's
    parent = None
    if tag == _T_PATH:
        parent = None if texts is None else texts.texts[n]
        n, at = _read_varint(data, at)
    value = data[at : at + n].decode()
    if tag == _T_PATH:
        value = None if parent is None else f"{parent}/{value}"  # type: ignore[assignment]
    return value, at + n


def _decode_positional(
    data: bytes, at: int, texts: TextTable | None, int_times: bool
) -> tuple[Any, ...]:
    """The values :func:`_encode_positional` packed from ``data[at:]``."""
    present = int.from_bytes(data[at : at + _MAP_BYTES], "big")
    at += _MAP_BYTES
    values: list[Any] = []
    last_time: int | None = None
    for i, kind in enumerate(_KINDS):
        there = present >> i & 1
        if kind == _K_BOOL:
            values.append(there == 1)
            continue
        if not there:
            values.append(None)
            continue
        if kind == _K_TAGGED:
            value, at = _decode_one(data, at, texts)
        elif kind == _K_TIME and not int_times:
            value = _pack_float.unpack_from(data, at)[0]
            at += 8
        else:
            n, at = _read_varint(data, at)
            value = -(n + 1 >> 1) if n & 1 else n >> 1
            if kind == _K_TIME:
                value = last_time = value if last_time is None else last_time + value
        values.append(value)
    return tuple(values)
