"""The workflow's ``.dag`` file (spec 1.3): submit files, PRE/POST scripts, SUBDAGs.

Only what the daemon needs per node is collected; RETRY, PARENT/CHILD, VARS,
PRIORITY, CATEGORY and MAXJOBS come from static.bp or do not matter.  Keywords
are matched case-insensitively on the first word of each line.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import structlog

log = structlog.get_logger(__name__)

# SCRIPT PRE|POST <node> <executable><one whitespace><arguments>, matched on the line
# with its line break (as the reference does): arguments keep any further leading and
# trailing whitespace, and a script without arguments matches (with empty arguments)
# unless it is the file's last line and has no line break.
_SCRIPT = re.compile(r"SCRIPT\s+(PRE|POST)\s+(\S+)\s+(\S+)\s(.*)", re.IGNORECASE)
_PRE_LOG = re.compile(r"-Dpegasus\.log\.\*=(\S+)\s")


@dataclass(frozen=True, slots=True)
class DagScript:
    executable: str
    arguments: str


# A node's values as the parsed .dag keeps them: texts with the node's name replaced by
# _NAME, so that nodes alike (every job of a directory running pegasus-exitcode) share one
# tuple: (submit_file, pre executable, pre arguments, post executable, post arguments,
# pre_script_log, subdag_file, subdag_dir, is_task, whether the name was taken out).
_NAME = "\x00"
(
    _AT_SUBMIT,
    _AT_PRE,
    _AT_PRE_ARGS,
    _AT_POST,
    _AT_POST_ARGS,
    _AT_PRE_LOG,
    _AT_SUBDAG,
    _AT_SUBDAG_DIR,
    _AT_TASK,
    _AT_NAMED,
) = range(10)
Shape = tuple[str | None, str | None, str | None, str | None, str | None, str | None,
              str | None, str | None, bool, bool]  # fmt: skip
_SCRIPTS = (_AT_PRE, _AT_POST)
_EMPTY: Shape = (None, None, None, None, None, None, None, None, False, False)


class DagNode:
    """One node of the .dag: its name and its shared :data:`Shape` (two slots, ~50 B; the
    values are given back whole, the name put back in)."""

    __slots__ = ("name", "_shape")

    def __init__(self, name: str, shape: Shape = _EMPTY) -> None:
        self.name = name
        self._shape = shape

    def _text(self, index: int) -> str | None:
        value = self._shape[index]
        if value is None or not self._shape[_AT_NAMED]:
            return value  # type: ignore[return-value]
        return value.replace(_NAME, self.name)  # type: ignore[union-attr]

    def _script(self, index: int) -> DagScript | None:
        executable = self._shape[index]
        if executable is None:
            return None
        return DagScript(executable, self._text(index + 1) or "")  # type: ignore[arg-type]

    @property
    def submit_file(self) -> str | None:
        return self._text(_AT_SUBMIT)

    @property
    def pre_script(self) -> DagScript | None:
        return self._script(_AT_PRE)

    @property
    def post_script(self) -> DagScript | None:
        return self._script(_AT_POST)

    @property
    def pre_script_log(self) -> str | None:
        return self._text(_AT_PRE_LOG)

    @property
    def subdag_file(self) -> str | None:
        return self._text(_AT_SUBDAG)

    @property
    def subdag_dir(self) -> str | None:
        return self._text(_AT_SUBDAG_DIR)

    @property
    def is_task(self) -> bool:
        return bool(self._shape[_AT_TASK])

    @property
    def is_subdag(self) -> bool:
        return self._shape[_AT_SUBDAG] is not None

    @property
    def has_post_script(self) -> bool:
        return self._shape[_AT_POST] is not None

    def __repr__(self) -> str:
        return f"DagNode({self.name!r}, {self._shape!r})"


@dataclass(slots=True)
class DagInfo:
    nodes: dict[str, DagNode] = field(default_factory=dict)
    is_pmc: bool = False

    def submit_path(self, name: str, run_dir: str) -> str | None:
        """The node's submit file joined with the run dir (None: SUBDAG, TASK or unknown)."""
        node = self.nodes.get(name)
        submit_file = None if node is None else node.submit_file
        if submit_file is None:
            return None
        return os.path.join(run_dir, submit_file)


def _text_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` as a text file yields them (each with its line break)."""
    parts = text.split("\n")
    last = len(parts) - 1
    for i, part in enumerate(parts):
        yield part + "\n" if i < last else part


#: a line's first character that starts no keyword read here (JOB, TASK, SCRIPT, SUBDAG) nor
#: upper-cases into one (``ſ`` does): a comment, PARENT, VARS, RETRY, ... (60 % of a
#: planner's lines, VARS the longest) is dropped before it is split
_SKIP_FIRST = frozenset(chr(c) for c in range(128)) - frozenset("JjTtSs")


def parse_dag(text: str | Iterable[str]) -> DagInfo:
    """Collect per-node information from a ``.dag`` file: its text, or its lines as a text
    file yields them (an open file: a large .dag is never held whole, nor its lines at once;
    100,000 nodes are 45 MB of text).  Each node holds its shared :data:`Shape` from its
    first line on, re-made when a later line adds to it: holding every node's values and
    texts to the end (a list, the submit file, the script's arguments: ~500 B a node) made
    the parse the replay's peak, RSS kept to the end (bench/README.md, "mem30f")."""
    nodes: dict[str, DagNode] = {}
    is_pmc = _parse_lines(_text_lines(text) if isinstance(text, str) else text, _Parsing(nodes))
    return DagInfo(nodes, is_pmc)


def _parse_lines(lines: Iterable[str], parsing: _Parsing) -> bool:
    """Each node's lines into ``parsing``; whether the .dag has TASK nodes (a PMC dag)."""
    is_pmc = False
    for raw in lines:
        line = raw.strip()
        if not line or line[0] in _SKIP_FIRST:
            continue
        words = line.split()
        keyword = words[0].upper()
        if keyword == "JOB":
            if len(words) < 3:
                log.warning("dag JOB line without submit file", line=line)
                continue
            if words[-1].upper() == "DONE":
                continue
            parsing.set(words[1], {_AT_SUBMIT: words[2]})
        elif keyword == "TASK":
            if len(words) < 2:
                log.warning("dag TASK line without name", line=line)
                continue
            parsing.set(words[1], {_AT_TASK: True})
            is_pmc = True
        elif keyword == "SCRIPT":
            _script_line(parsing, raw, line)
        elif keyword == "SUBDAG":
            _subdag_line(parsing, words, line)
    return is_pmc


class _Parsing:
    """The nodes read so far, each with its shared :data:`Shape`."""

    __slots__ = ("nodes", "_shapes")

    def __init__(self, nodes: dict[str, DagNode] | NodesByHash) -> None:
        self.nodes = nodes
        self._shapes: dict[Shape, Shape] = {}

    def set(self, name: str, changes: dict[int, object]) -> None:
        """The node's values with ``changes`` (place -> value), shaped again."""
        node = self.nodes.get(name)
        shape = None
        if node is not None and node._shape[_AT_NAMED] and name:
            shape = _reshape(name, node._shape, changes, self._shapes)
        if shape is None:
            got: list[object] = list(_EMPTY) if node is None else _unshape(name, node._shape)
            for at, value in changes.items():
                got[at] = value
            shape = _shape(name, got, self._shapes)
        if node is None:
            node = DagNode(name, shape)
        else:
            node._shape = shape
        self.nodes[name] = node  # (a dict keeps the node; NodesByHash its shape)


def _script_line(parsing: _Parsing, raw: str, line: str) -> None:
    m = _SCRIPT.match(raw.lstrip())
    if m is None:
        log.debug("dag SCRIPT line not understood", line=line)
        return
    kind, name, executable, arguments = m.groups()
    at = _AT_PRE if kind.upper() == "PRE" else _AT_POST  # its arguments are at + 1
    changes: dict[int, object] = {at: executable, at + 1: arguments}
    log_match = _PRE_LOG.search(arguments) if at == _AT_PRE else None
    if log_match is not None:
        changes[_AT_PRE_LOG] = log_match.group(1)
    parsing.set(name, changes)


def _subdag_line(parsing: _Parsing, words: list[str], line: str) -> None:
    if len(words) < 4 or words[1].upper() != "EXTERNAL":
        log.warning("dag SUBDAG line not understood", line=line)
        return
    if words[-1].upper() == "DONE":
        return
    changes: dict[int, object] = {_AT_SUBDAG: words[3], _AT_SUBDAG_DIR: os.path.dirname(words[3])}
    for i in range(4, len(words) - 1):
        if words[i].upper() == "DIR":
            changes[_AT_SUBDAG_DIR] = words[i + 1]
            break
    parsing.set(words[2], changes)


def _shape(name: str, got: list[object], shapes: dict[Shape, Shape]) -> Shape:
    """The node's values with its name taken out of the texts, as one tuple shared by alike
    nodes (a node with a text holding _NAME already keeps its texts as they are; a script's
    path is one text shared by every node running it)."""
    named = bool(name) and not any(type(v) is str and _NAME in v for v in got)
    out: list[object] = []
    for at, value in enumerate(got):
        if named and type(value) is str and at not in _SCRIPTS:
            value = value.replace(name, _NAME)
        out.append(sys.intern(value) if type(value) is str else value)
    out[_AT_NAMED] = named
    shape: Shape = tuple(out)  # type: ignore[assignment]
    return shapes.setdefault(shape, shape)


def _reshape(
    name: str, shape: Shape, changes: dict[int, object], shapes: dict[Shape, Shape]
) -> Shape | None:
    """What :func:`_shape` makes of a named ``shape`` with ``changes``, taking the name out
    of the changed texts only; None when one holds _NAME (the node is no longer named)."""
    out: list[object] = list(shape)
    for at, value in changes.items():
        if type(value) is str:
            if _NAME in value:
                return None
            out[at] = sys.intern(value if at in _SCRIPTS else value.replace(name, _NAME))
        else:
            out[at] = value
    new: Shape = tuple(out)  # type: ignore[assignment]
    return shapes.setdefault(new, new)


def _unshape(name: str, shape: Shape) -> list[object]:
    """The values :func:`_shape` was given (the name put back in the texts it took it out of)."""
    if not shape[_AT_NAMED]:
        return list(shape)
    return [
        value.replace(_NAME, name) if type(value) is str and at not in _SCRIPTS else value
        for at, value in enumerate(shape)
    ]


def read_dag(path: str) -> DagInfo | None:
    """Parse the ``.dag`` at ``path`` line by line (the daemon's reader: the whole text and
    its lines were a replay's peak memory, ~1.4 KB per node for a moment, much of it not
    given back); None (with a warning) when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return parse_dag(fh)
    except OSError as exc:
        log.warning("cannot read dag file", path=path, error=str(exc))
        return None


class NodesByHash:
    """A .dag's nodes for a process that only predicts what a node's lines make the daemon
    read (the ``--read-ahead`` worker): each node's shared :data:`Shape` by the hash of its
    name; neither the name nor a node is kept (~70 B a node against ~170 B: the worker's
    memory was the .dag's, 35 MB at 20,000 jobs, 62 MB at 100,000).  A name not found, or
    found by another name's hash (one in ~10^9 at 10^5 nodes), is a wrong prediction: the
    daemon then reads the file itself."""

    __slots__ = ("_shapes",)

    def __init__(self) -> None:
        self._shapes: dict[int, Shape] = {}

    def get(self, name: str) -> DagNode | None:
        shape = self._shapes.get(hash(name))
        return None if shape is None else DagNode(name, shape)

    def __setitem__(self, name: str, node: DagNode) -> None:
        self._shapes[hash(name)] = node._shape

    def __len__(self) -> int:
        return len(self._shapes)


def read_dag_by_hash(path: str) -> tuple[NodesByHash, bool] | None:
    """:func:`read_dag` into :class:`NodesByHash`: the nodes, and whether it is a PMC dag."""
    nodes = NodesByHash()
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            is_pmc = _parse_lines(fh, _Parsing(nodes))
    except OSError as exc:
        log.warning("cannot read dag file", path=path, error=str(exc))
        return None
    return nodes, is_pmc
