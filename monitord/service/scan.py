"""Watched roots: find new submit directories whose DAGMan output appeared.

A periodic walk, made cheap by remembering each directory's listing with its
mtime: an unchanged directory is not listed again (one ``stat``), and the walk
never descends into a submit directory (its sub-workflows belong to the root
workflow's follower).  A submit directory is a directory with a braindump.  A root that does
not exist (yet) is looked for again at every scan: :func:`root_problem` says what is wrong with
it, and each scan records the answer for the status (``RootScanner.problem``).
"""

from __future__ import annotations

import fnmatch
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

BRAINDUMPS = ("braindump.yml", "braindump.txt")
RECENT_NS = 2_000_000_000


@dataclass
class _Listing:
    mtime_ns: int
    subdirs: list[str]
    matches: list[str]
    submit_dir: bool


@dataclass
class RootScanner:
    root: str
    pattern: str = "*.dag.dagman.out"
    max_depth: int = 6
    _cache: dict[str, _Listing] = field(default_factory=dict)
    directories_listed: int = 0
    problem: str | None = None  # what was wrong with the root at the last scan (None: fine)
    scanned: bool = False  # a scan has run (until then ``problem`` says nothing)
    resolved: str = ""  # the root with symbolic links resolved, as of the last scan

    def scan(self) -> Iterator[str]:
        """Every matching dagman.out at the top of a submit directory below the root."""
        self.problem = root_problem(self.root)
        self.resolved = os.path.realpath(self.root)
        self.scanned = True
        seen: set[str] = set()
        yield from self._walk(self.root, 0, seen)
        for stale in set(self._cache) - seen:
            del self._cache[stale]

    def _walk(self, directory: str, depth: int, seen: set[str]) -> Iterator[str]:
        seen.add(directory)
        listing = self._list(directory)
        if listing is None:
            return
        if listing.submit_dir:
            for name in listing.matches:
                yield os.path.join(directory, name)
            return
        if depth >= self.max_depth:
            return
        for sub in listing.subdirs:
            yield from self._walk(os.path.join(directory, sub), depth + 1, seen)

    def _list(self, directory: str) -> _Listing | None:
        try:
            mtime = os.stat(directory).st_mtime_ns
        except OSError:
            return None
        cached = self._cache.get(directory)
        if cached is not None and cached.mtime_ns == mtime:
            return cached
        subdirs: list[str] = []
        matches: list[str] = []
        submit_dir = False
        self.directories_listed += 1
        try:
            with os.scandir(directory) as it:
                for entry in it:
                    name = entry.name
                    if name in BRAINDUMPS:
                        submit_dir = True
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            subdirs.append(name)
                        elif fnmatch.fnmatch(name, self.pattern):
                            matches.append(name)
                    except OSError:
                        continue
        except OSError:
            return None
        listing = _Listing(mtime, sorted(subdirs), sorted(matches), submit_dir)
        # Time stamps are coarse (a kernel tick): a listing taken in the same tick as a change
        # might miss it, so a directory changed within the last seconds is listed again.
        if time.time_ns() - mtime > RECENT_NS:
            self._cache[directory] = listing
        else:
            self._cache.pop(directory, None)
        return listing


def root_problem(root: str) -> str | None:
    """Why ``root`` cannot be watched now (``does not exist``, ...), None when it can."""
    try:
        if not os.path.isdir(root):
            return "is not a directory" if os.path.lexists(root) else "does not exist"
        with os.scandir(root):
            pass
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    return None
