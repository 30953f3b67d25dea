"""The planner's ``<dag-basename>.static.bp`` (spec 1.2): BP records relayed as events.

A static.bp holds several records per job, so for a large workflow it is
read hundreds of thousands of times; a planner's line is cut with ``str.split``, any
other with one precompiled regex.  Its quoting rules are
those of :mod:`monitord.core.readers.bp` (``\\"`` is the only escape), with one
difference observed on the reference: a bare word without ``=`` is skipped
instead of being glued to the next key.

Attribute keys stay as written (``task.id``; a ``__`` is turned into ``.`` by
the BP encoder and into ``_`` by the JSON one, like the reference).  ``ts``
becomes integer epoch; a ``ts`` that is not an ISO stamp is kept verbatim.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from sys import intern
from typing import Any

from monitord.core.bounded import make_room
from monitord.core.readers.braindump import planner_iso_epoch

PREFIX = "stampede."

# key=value, key="quoted \" value"; the possessive group never backtracks into
# a \" escape, which is what the reference reader does.
_TOKEN = re.compile(r'([^\s="]+)=(?:"((?:[^"\\]|\\"|\\)*+)"?|([^\s]*))')
_FINDALL = _TOKEN.findall


class StaticBPError(ValueError):
    """A static.bp record without ``ts`` or ``event`` (the daemon exits with status 1)."""

    def __init__(self, path: str, lineno: int, message: str) -> None:
        super().__init__(f"{path}:{lineno}: {message}")
        self.path = path
        self.lineno = lineno


def static_bp_name(dag: str) -> str:
    """``process-0.dag`` -> ``process-0.static.bp``."""
    return os.path.splitext(dag)[0] + ".static.bp"


#: :func:`tokenize`'s keys by the text between two quoted values (`` type=`` -> ``type``),
#: for a text that is nothing but the key: a planner writes a few dozen such texts, so
#: the bound is never reached by one; it only caps what an odd file can add.
_KEY_OF: dict[str, str] = {}
_KEY_OF_MAX = 4096


def tokenize(line: str) -> dict[str, str]:
    """Ordered ``key -> raw value`` of one BP line (quotes removed, ``\\"`` unescaped).

    A planner's line (no backslash, quotes paired, each quoted value right after its
    ``key=``) is cut with ``str.split``: ~40 % less CPU than the regex, which walks a
    quoted value one character at a time.  Any other line takes the regex
    (:func:`tokenize_regex`); both give the same dict (``tests/test_readers_staticbp.py``
    compares them on random lines).  A text between two quoted values that is only the
    next one's ``key=`` (`` type=``: all but the first of a planner's line) is looked up
    in :data:`_KEY_OF`, filled from what this loop found for it (no split, no checks); a
    first text whose words after ``ts=STAMP`` were cut before is taken from :data:`_HEAD_OF`.
    Every key this path gives is one shared string (interned, or :data:`_KEY_OF`'s): a
    crossing to the ``--sql-process`` child pickles a relayed event's attributes, and
    pickles a string it has seen in the batch as a reference (static.bp batches ~20 %
    fewer bytes, less to decode there).
    """
    if "\\" in line:
        return tokenize_regex(line)
    segs = line.split('"')  # outside, quoted, outside, ..., outside when the quotes pair
    last = len(segs) - 1
    if last & 1:
        return tokenize_regex(line)
    attrs: dict[str, str] = {}
    key_of = _KEY_OF
    start = 0
    if last:  # the first text: ``ts=STAMP`` and words the kind's lines share, then ``key=``
        word, _, rest = segs[0].partition(" ")
        head = _HEAD_OF.get(rest)
        if head is None:
            _learn_head(word, rest)
        elif word[:3] == "ts=" and word.isprintable():
            attrs["ts"] = word[3:]
            attrs.update(head[0])
            attrs[head[1]] = segs[1]
            start = 2
    for i in range(start, last, 2):  # each text before a quoted value ends with its ``key=``
        outside = segs[i]
        key = key_of.get(outside)
        if key is None:
            words = outside.split()
            if outside[-1:] != "=" or not words:
                return tokenize_regex(line)
            key = intern(words.pop()[:-1])
            if not key or "=" in key:
                return tokenize_regex(line)
            if words:
                if not _bare(words, attrs):
                    return tokenize_regex(line)
            elif len(key_of) < _KEY_OF_MAX:
                key_of[outside] = key  # nothing but ``key=``: the same key every time
        attrs[key] = segs[i + 1]
    tail = segs[last]
    if tail and not _bare(tail.split(), attrs):
        return tokenize_regex(line)
    return attrs


#: :func:`tokenize`'s first text after its ``ts=STAMP`` word (`` event=task.info xwf.id=ID
#: task.id=``: the same for every line of a kind in a workflow) -> its bare words' items and
#: the quoted value's key; cleared when full (a service's many workflows).
_HEAD_OF: dict[str, tuple[tuple[tuple[str, str], ...], str]] = {}


def _learn_head(word: str, rest: str) -> None:
    """Remember ``rest`` in :data:`_HEAD_OF` when the split path cuts ``word rest`` into
    ``ts`` = the word's value, ``rest``'s bare words, then the quoted value's ``key=``: a
    word with no whitespace (printable, and ``partition`` took the first space) is one
    ``str.split`` word, so the items are those the loop makes, in its order."""
    words = rest.split()
    if word[:3] != "ts=" or not word.isprintable() or rest[-1:] != "=" or not words:
        return
    key = intern(words.pop()[:-1])
    pairs: dict[str, str] = {}
    if not key or "=" in key or not _bare(words, pairs):
        return
    make_room(_HEAD_OF, _KEY_OF_MAX)
    _HEAD_OF[rest] = (tuple(pairs.items()), key)


def _bare(words: list[str], attrs: dict[str, str]) -> bool:
    """``key=value`` words into ``attrs`` (a word without ``=`` skipped); False for one the
    split cannot take (``=a=b``: the regex finds ``a`` inside it)."""
    for word in words:
        name, eq, value = word.partition("=")
        if eq:
            if not name:
                return False
            attrs[intern(name)] = value
    return True


def tokenize_regex(line: str) -> dict[str, str]:
    """:func:`tokenize` for any line: one ``findall`` and a dict comprehension.

    ``findall`` gives ``""`` for the group that did not match; a quoted value that is not
    empty stays so unescaped, so ``or`` picks the bare one exactly when the quoted one is
    empty, and then both are (no match object per token).
    """
    return {key: quoted.replace('\\"', '"') or bare for key, quoted, bare in _FINDALL(line)}


def parse_static_bp(
    lines: Iterable[str], *, path: str = "static.bp"
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(event name without prefix, attrs)`` per line; raise StaticBPError on a bad one."""
    for lineno, line in enumerate(lines, 1):
        attrs: dict[str, Any] = tokenize(line.rstrip("\r\n"))
        name = attrs.pop("event", None)
        ts = attrs.get("ts")
        if ts is None or name is None:
            raise StaticBPError(path, lineno, "record without ts or event")
        epoch = planner_iso_epoch(ts)
        if epoch is not None:
            attrs["ts"] = epoch  # in place: the keys keep the order they were written in
        if name.startswith(PREFIX):
            name = name[len(PREFIX) :]
        yield name, attrs


def read_static_bp(path: str) -> list[tuple[str, dict[str, Any]]]:
    """Read and parse a whole static.bp; OSError for a missing or unreadable file."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return list(parse_static_bp(fh, path=path))
