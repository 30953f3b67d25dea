"""YAML loading for kickstart records: a fast path for kickstart's YAML subset.

The reference loads each record with a safe YAML loader that keeps timestamps
as strings. A 100k-job replay loads 100k records, and even libyaml costs
milliseconds per record, so :func:`load_yaml` first tries :func:`fast_load`, a
line-oriented parser for exactly what kickstart writes: block mappings and
block sequences structured by space indentation, plain / double-quoted /
single-quoted single-line scalars and ``|`` literal block scalars. Plain
scalars are resolved with PyYAML's own implicit-resolver table, so numbers,
booleans and nulls come out identical.

Whenever the fast path meets anything outside that subset (flow collections,
anchors, tags, comments, multi-line flow scalars, folded scalars, tabs, odd
indentation, ...) it raises :class:`Unsupported` and the record is loaded by
PyYAML (``CSafeLoader`` when libyaml is present). That fallback is also what
produces the errors for broken YAML, so both paths accept and reject the same
inputs. ``tests/test_readers_kickstart.py`` checks equality over the corpus and
over crafted edge cases.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode

from monitord.core.bounded import make_room

__all__ = [
    "PLAIN_ASCII",
    "SPECIAL_CHARS",
    "Unsupported",
    "block_literal",
    "cached_key",
    "cached_value",
    "double_quoted",
    "fast_load",
    "load_yaml",
    "pyyaml_load",
]

_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"


# --- PyYAML path -------------------------------------------------------------

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _KickstartLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe loader whose timestamps stay the strings they were written as."""


_KickstartLoader.add_constructor(_TIMESTAMP, SafeConstructor.construct_yaml_str)


def pyyaml_load(text: str) -> Any:
    """Load with PyYAML (raises ``yaml.YAMLError`` on bad input)."""
    return yaml.load(text, Loader=_KickstartLoader)  # safe loader subclass


def load_yaml(text: str) -> Any:
    """Load one kickstart YAML document, fast path first (raises ``yaml.YAMLError``)."""
    try:
        return fast_load(text)
    except Unsupported:
        return pyyaml_load(text)


# --- scalar resolution -------------------------------------------------------


class Unsupported(Exception):
    """The fast path does not handle this input; use PyYAML."""


_RESOLVERS: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    key: list(value) for key, value in yaml.SafeLoader.yaml_implicit_resolvers.items() if key
}
_EMPTY_RESOLVERS = list(yaml.SafeLoader.yaml_implicit_resolvers.get("", []))
if yaml.SafeLoader.yaml_implicit_resolvers.get(None):  # type: ignore[call-overload]
    raise ImportError("PyYAML wildcard implicit resolvers are not supported by the fast path")

_constructor = SafeConstructor()
# The key and value caches (below) hold what a record repeats: its field names, its common
# values, the file names it lists twice.  Measured on a 20,000-job replay, a value is found
# again within ~550 lookups (p99) and a key within ~7,200: a few thousand entries buy every
# hit that 65,536 did, while 65,536 of them per cache (~100 B each) grew with the job count to
# ~20 MB at 100,000 jobs (bench/README.md, "Issue 30, fifth session: mem30b").
_CACHE_MAX = 8192


def _construct(tag: str, value: str) -> Any:
    if tag == _INT:
        if value.isdigit() and (value[0] != "0" or value == "0"):
            return int(value)
        return _constructor.construct_yaml_int(ScalarNode(tag, value))
    if tag == _FLOAT:
        return _constructor.construct_yaml_float(ScalarNode(tag, value))
    if tag == _BOOL:
        return _constructor.construct_yaml_bool(ScalarNode(tag, value))
    if tag == _NULL:
        return None
    if tag == _TIMESTAMP:
        return value
    raise Unsupported(tag)  # merge '<<', value '=', yaml '!' ...


def _plain(value: str) -> Any:
    """Resolve and construct a plain scalar exactly as the safe loader would (uncached: its
    callers, :func:`_cached_key` and :func:`_cached_value`, cache by the same text)."""
    result: Any = value
    if value:
        for tag, regexp in _RESOLVERS.get(value[0], ()):
            if regexp.match(value):
                result = _construct(tag, value)
                break
    else:
        result = None if _EMPTY_RESOLVERS else ""
    return result


# --- quoted scalars ----------------------------------------------------------

_ESCAPES = {
    "0": "\0",
    "a": "\x07",
    "b": "\x08",
    "t": "\x09",
    "\t": "\x09",
    "n": "\x0a",
    "v": "\x0b",
    "f": "\x0c",
    "r": "\x0d",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_LEN = {"x": 2, "u": 4, "U": 8}
_HEX = frozenset("0123456789abcdefABCDEF")


def _double_quoted(src: str) -> tuple[str, str]:
    """Parse ``"..."`` at the start of ``src``; return (value, rest after the quote)."""
    i = 1
    n = len(src)
    out: list[str] = []
    while True:
        j = i
        while j < n and src[j] != '"' and src[j] != "\\":
            j += 1
        if j >= n:
            raise Unsupported("multi-line double-quoted scalar")
        out.append(src[i:j])
        if src[j] == '"':
            return "".join(out), src[j + 1 :]
        if j + 1 >= n:
            raise Unsupported("escaped line break")
        esc = src[j + 1]
        if esc in _ESCAPES:
            out.append(_ESCAPES[esc])
            i = j + 2
        elif esc in _HEX_LEN:
            width = _HEX_LEN[esc]
            digits = src[j + 2 : j + 2 + width]
            if len(digits) != width or not all(c in _HEX for c in digits):
                raise Unsupported("bad hex escape")
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise Unsupported("escape out of range")
            out.append(chr(code))
            i = j + 2 + width
        else:
            raise Unsupported("unknown escape")


def _single_quoted(src: str) -> tuple[str, str]:
    """Parse ``'...'`` at the start of ``src``; return (value, rest after the quote)."""
    i = 1
    out: list[str] = []
    while True:
        j = src.find("'", i)
        if j < 0:
            raise Unsupported("multi-line single-quoted scalar")
        out.append(src[i:j])
        if src.startswith("'", j + 1):
            out.append("'")
            i = j + 2
            continue
        return "".join(out), src[j + 1 :]


def _check_tail(rest: str) -> None:
    if rest.strip(" "):
        raise Unsupported("text after a quoted scalar")


# Characters that cannot start a plain scalar (or start something we leave to PyYAML).
_NOT_PLAIN_START = frozenset("[]{},#&*!|>'\"%@`?:-\t")
_MAPPING_START_OK = frozenset("-?:")


def _value(src: str) -> Any:
    """Construct a single-line scalar that stands alone (no block scalar)."""
    c = src[0]
    if c == '"':
        value, rest = _double_quoted(src)
        _check_tail(rest)
        return value
    if c == "'":
        value, rest = _single_quoted(src)
        _check_tail(rest)
        return value
    if c in _NOT_PLAIN_START:
        if c not in _MAPPING_START_OK or len(src) < 2 or src[1] in " \t":
            raise Unsupported("indicator at scalar start")
    if " #" in src or "\t" in src or ": " in src or src[-1] == ":":
        raise Unsupported("comment, tab or colon in a plain scalar")
    return _plain(src.rstrip(" "))


def _key(src: str) -> Any:
    if src[0] in _NOT_PLAIN_START or src[-1] == " " or " #" in src or "\t" in src:
        raise Unsupported("unusual mapping key")
    return _plain(src)


# --- structure ---------------------------------------------------------------

# Anything PyYAML rejects (non-printable), treats as a line break (\r, \x85,
# \u2028/9) or as a BOM goes to PyYAML; what is left is plain lines.
_SPECIAL_CHARS = re.compile(
    "[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)


_PLAIN_ASCII = bytes([0x09, 0x0A, *range(0x20, 0x7F)])

_MISSING = object()
_KEY_CACHE: dict[str, Any] = {}
_VALUE_CACHE: dict[str, Any] = {}


def _cached_key(src: str) -> Any:
    key = _KEY_CACHE.get(src, _MISSING)
    if key is _MISSING:
        key = _key(src)
        make_room(_KEY_CACHE, _CACHE_MAX)
        _KEY_CACHE[src] = key
    return key


def _cached_value(src: str) -> Any:
    value = _VALUE_CACHE.get(src, _MISSING)
    if value is _MISSING:
        value = _value(src)
        make_room(_VALUE_CACHE, _CACHE_MAX)
        _VALUE_CACHE[src] = value
    return value


def _literal(lines: list[str], i: int, parent: int, header: str) -> tuple[str, int]:
    """The ``|``/``|-``/``|+`` block scalar introduced on line ``i``; also the next line index."""
    if header not in ("|", "|-", "|+"):
        raise Unsupported("block scalar header")
    n = len(lines)
    first = j = i + 1
    if j >= n:
        raise Unsupported("empty block scalar")
    line = lines[j]
    stripped = line.lstrip(" ")
    width = len(line) - len(stripped)
    if not stripped or width <= parent:
        raise Unsupported("block scalar that is empty or starts with blank lines")
    prefix = " " * width
    j += 1
    while j < n:
        line = lines[j]
        if not line.startswith(prefix) and line.strip(" "):
            break
        j += 1
    # line k is followed by a line break iff k < n - 1
    body = [lines[k][width:] for k in range(first, j)]
    end = len(body)
    while not body[end - 1]:
        end -= 1
    text = "\n".join(body[:end])
    if header == "|-":
        return text, j
    last = first + end - 1
    if last < n - 1:
        text += "\n"
    if header == "|+":
        text += "\n" * sum(1 for k in range(last + 1, j) if k < n - 1)
    return text, j


def fast_load(text: str) -> Any:
    """Load kickstart-style YAML without PyYAML; raise :class:`Unsupported` otherwise.

    One pass over the lines with an explicit stack of open collections (:class:`_Nodes`);
    the common ``key: scalar`` line is handled inline with cached key/value construction.
    """
    if text.isascii():
        if text.encode("ascii").translate(None, _PLAIN_ASCII):
            raise Unsupported("control characters")
    elif _SPECIAL_CHARS.search(text):
        raise Unsupported("characters PyYAML treats specially")
    lines = text.split("\n")
    n = len(lines)
    nodes = _Nodes()
    i = 0
    while i < n:
        line = lines[i]
        content = line.lstrip(" ")
        if not content:
            i += 1
            continue
        ind = len(line) - len(content)
        item = content[0] == "-" and (len(content) == 1 or content[1] == " ")
        top = nodes.top
        if item or ind != nodes.top_ind or nodes.pending is not None or type(top) is not dict:
            top = nodes.enter(content, ind, item)  # else: the next entry of the same mapping
        if item:
            rest = content[1:].lstrip(" ")
            if not rest:
                top.append(None)
                nodes.wait(top, len(top) - 1, ind)
                i += 1
                continue
            if not _compact_item(rest):
                value = _VALUE_CACHE.get(rest, _MISSING)
                top.append(_cached_value(rest) if value is _MISSING else value)
                i += 1
                continue
            top = nodes.open_item(len(line) - len(rest))
            content = rest
        key, rest = _entry_key(content)
        if not rest:
            top[key] = None
            nodes.wait(top, key, nodes.top_ind)
            i += 1
        elif rest[0] == "|":
            top[key], i = _literal(lines, i, nodes.top_ind, rest)
        else:
            value = _VALUE_CACHE.get(rest, _MISSING)
            top[key] = _cached_value(rest) if value is _MISSING else value
            i += 1
    return nodes.root


class _Nodes:
    """:func:`fast_load`'s open collections: the innermost (``top``) and those enclosing it,
    and the collection waiting for the value of an empty ``key:`` / ``-``."""

    __slots__ = ("frames", "pending", "pending_ind", "pending_key", "root", "top", "top_ind")

    def __init__(self) -> None:
        self.root: Any = None
        self.frames: list[tuple[int, Any]] = []  # enclosing (indent, collection) pairs
        self.top: Any = None
        self.top_ind = -1
        self.pending: Any = None
        self.pending_key: Any = None
        self.pending_ind = -1

    def wait(self, collection: Any, key: Any, ind: int) -> None:
        """``collection[key]`` is the value of the lines that follow, if deeper."""
        self.pending, self.pending_key, self.pending_ind = collection, key, ind

    def enter(self, content: str, ind: int, item: bool) -> Any:
        """The collection a line at ``ind`` belongs to: a new one under a waiting key,
        the root, or an enclosing one after a dedent."""
        pending = self.pending
        if pending is not None:
            if ind > self.pending_ind or (
                item and ind == self.pending_ind and type(pending) is dict
            ):
                new: Any = [] if item else {}
                pending[self.pending_key] = new
                self.frames.append((self.top_ind, self.top))
                self.top, self.top_ind = new, ind
            self.pending = None
        elif self.root is None:
            if content.startswith(("---", "...")):
                raise Unsupported("document markers")
            self.root = self.top = [] if item else {}
            self.top_ind = ind
        if ind != self.top_ind:
            frames = self.frames
            while ind < self.top_ind:
                if not frames:
                    raise Unsupported("content outside the root node")
                self.top_ind, self.top = frames.pop()
            if ind != self.top_ind:
                raise Unsupported("unexpected indentation")
        if type(self.top) is list:
            if not item:
                # a key at the indent of an indentless sequence closes it
                frames = self.frames
                if frames and frames[-1][0] == ind and type(frames[-1][1]) is dict:
                    self.top_ind, self.top = frames.pop()
                else:
                    raise Unsupported("not a sequence item")
        elif item:
            raise Unsupported("sequence item inside a mapping")
        return self.top

    def open_item(self, ind: int) -> dict[Any, Any]:
        """A compact ``- key: value`` item: a new mapping at ``ind`` in the sequence."""
        new: dict[Any, Any] = {}
        self.top.append(new)
        self.frames.append((self.top_ind, self.top))
        self.top, self.top_ind = new, ind
        return new


def _compact_item(rest: str) -> bool:
    """Whether a sequence item's text (after ``- ``) opens a mapping (``- key: value``)."""
    c = rest[0]
    if c == '"' or c == "'":
        _, tail = _double_quoted(rest) if c == '"' else _single_quoted(rest)
        return tail[:1] == ":"
    if c == "|" or (c == "-" and (len(rest) == 1 or rest[1] == " ")):
        raise Unsupported("block scalar or nested sequence as a compact item")
    return ": " in rest or rest[-1] == ":"


def _entry_key(content: str) -> tuple[Any, str]:
    """A mapping entry's key and the text after its ``:`` (``""``: the value follows)."""
    c = content[0]
    if c == '"' or c == "'":
        key, rest = _double_quoted(content) if c == '"' else _single_quoted(content)
        if rest == ":":
            return key, ""
        if rest[:2] == ": ":
            return key, rest[2:].lstrip(" ")
        raise Unsupported("quoted scalar where a key was expected")
    sep = content.find(": ")
    if sep > 0:
        key = _KEY_CACHE.get(content[:sep], _MISSING)
        if key is _MISSING:
            key = _cached_key(content[:sep])
        return key, content[sep + 2 :].lstrip(" ")
    if sep < 0 and content[-1] == ":" and len(content) > 1:
        return _cached_key(content[:-1]), ""
    raise Unsupported("not a mapping entry")


# --- shared with the kickstart record extractor (kickstart.fast) -------------------
# Same objects, so both paths type scalars identically and share the caches.
PLAIN_ASCII = _PLAIN_ASCII
SPECIAL_CHARS = _SPECIAL_CHARS
NOT_PLAIN_START = _NOT_PLAIN_START
RESOLVED_FIRST = frozenset(_RESOLVERS)  # a plain scalar starting otherwise stays a string
block_literal = _literal
cached_key = _cached_key
cached_value = _cached_value
double_quoted = _double_quoted
