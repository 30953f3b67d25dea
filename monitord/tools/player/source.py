"""The finished submit directory as the player sees it, and how it is read from disk.

``scan`` sorts every file into what exists before DAGMan starts (copied up front),
each workflow's dagman.out lines, and each job's outputs, and links every
sub-workflow to the parent job that starts it, as the daemon itself would find it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from monitord.core.readers.braindump import BraindumpError, read_braindump
from monitord.core.readers.dagfile import parse_dag
from monitord.core.readers.subfile import parse_submit_file


class PlayerError(Exception):
    """The source directory cannot be played (one line for the command line)."""


@dataclass
class SourceWorkflow:
    """One workflow of the source tree; paths are relative to the played root."""

    dagman_out: str
    lines: list[str]
    # node -> [(retry number or None for an unsuffixed file, path)]
    outputs: dict[str, list[tuple[int | None, str]]] = field(default_factory=dict)
    # (sub-workflow job, retry number) -> the sub-workflow played when that attempt starts
    subworkflows: dict[tuple[str, int], SourceWorkflow] = field(default_factory=dict)


@dataclass
class Source:
    root: SourceWorkflow
    static: list[str]  # copied up front, parents before children


_OUTPUT = re.compile(r"^(?P<stem>.+)\.(?:out|err)(?:\.(?P<num>\d+))?$")
# What monitord itself writes never belongs to a re-enacted DAGMan run.
_MONITORD_FILE = re.compile(r"^(?:monitord[.-].*|jobstate\.log.*|.*\.stampede\.db.*)$")


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _dagman_out_of(directory: str, names: Sequence[str]) -> str | None:
    outs = sorted(n for n in names if n.endswith(".dag.dagman.out"))
    if not outs:
        return None
    try:
        dag = read_braindump(directory).dag
    except BraindumpError:
        dag = None
    if dag and f"{dag}.dagman.out" in outs:
        return f"{dag}.dagman.out"
    return outs[0]


def scan(src: str) -> Source:
    """Read a finished submit directory into the model :func:`plan` works on."""
    src = os.path.abspath(src)
    listing: dict[str, list[str]] = {}  # relative dir -> file names
    static_dirs: list[str] = []
    for dirpath, dirnames, filenames in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        rel = "" if rel == "." else rel
        dirnames.sort()
        for d in list(dirnames):
            if os.path.islink(os.path.join(dirpath, d)):
                filenames.append(d)  # a symlinked directory is copied as a link
                dirnames.remove(d)
        if rel:
            static_dirs.append(rel)
        listing[rel] = sorted(filenames)
    root_out = _dagman_out_of(src, listing.get("", []))
    if root_out is None:
        raise PlayerError(f"{src}: no *.dag.dagman.out here")
    workflows: dict[str, SourceWorkflow] = {}  # relative dir -> workflow
    for rel, names in listing.items():
        name = _dagman_out_of(os.path.join(src, rel), names)
        if name is not None:
            path = os.path.join(rel, name)
            lines = _read(os.path.join(src, path)).splitlines(keepends=True)
            workflows[rel] = SourceWorkflow(path, lines)
    deferred: set[str] = set()
    linked: set[str] = {""}
    for rel, wf in workflows.items():
        _scan_workflow(src, rel, wf, listing, workflows, linked)
    for rel in list(workflows):
        if rel not in linked:
            del workflows[rel]  # no parent starts it: its files are plain static files
    for wf in workflows.values():
        deferred.add(wf.dagman_out)
        for paths in wf.outputs.values():
            deferred.update(path for _, path in paths)
    static = list(static_dirs)
    for rel, names in listing.items():
        for name in names:
            path = os.path.join(rel, name)
            if path not in deferred and not _MONITORD_FILE.match(name):
                static.append(path)
    return Source(workflows[""], static)


def _scan_workflow(
    src: str,
    rel: str,
    wf: SourceWorkflow,
    listing: dict[str, list[str]],
    workflows: dict[str, SourceWorkflow],
    linked: set[str],
) -> None:
    directory = os.path.join(src, rel)
    try:
        bd = read_braindump(directory)
    except BraindumpError:
        return
    if not bd.dag:
        return
    try:
        dag = parse_dag(_read(os.path.join(directory, bd.dag)))
    except OSError:
        return
    by_dir: dict[str, set[str]] = {}
    for node in dag.nodes.values():
        if node.submit_file:
            job_dir = os.path.normpath(os.path.join(rel, os.path.dirname(node.submit_file)))
            by_dir.setdefault("" if job_dir == "." else job_dir, set()).add(node.name)
    for job_dir, nodes in by_dir.items():
        for name in listing.get(job_dir, ()):
            m = _OUTPUT.match(name)
            if m and m.group("stem") in nodes:
                num = int(m.group("num")) if m.group("num") is not None else None
                wf.outputs.setdefault(m.group("stem"), []).append(
                    (num, os.path.join(job_dir, name))
                )
    orig = (bd.submit_dir or directory).rstrip("/") + "/"
    for node in dag.nodes.values():
        if not node.submit_file or not node.name.startswith(("pegasus-plan", "subdax_")):
            continue
        try:
            text = _read(os.path.join(directory, node.submit_file))
        except OSError:
            continue
        sub = parse_submit_file(text, job_name=node.name, orig_submit_dir=bd.submit_dir)
        if not sub.dagman_log:
            continue
        log_path = os.path.normpath(sub.dagman_log)
        if orig in log_path:
            log_path = os.path.join(rel, log_path.replace(orig, "", 1))
        base_dir, fname = os.path.split(os.path.normpath(log_path))
        for sub_rel, sub_wf in workflows.items():
            head, dot, suffix = sub_rel.rpartition(".")
            if dot and head == base_dir and suffix.isdigit() and sub_wf.dagman_out.endswith(fname):
                wf.subworkflows[(node.name, int(suffix))] = sub_wf
                linked.add(sub_rel)
