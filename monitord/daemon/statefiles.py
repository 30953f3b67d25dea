"""The small per-workflow state files: monitord.started, .done, .info, .recover, .pid (doc §4.6, §9.4)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from itertools import islice

import structlog

from monitord.core.timeparse import iso_local
from monitord.system.ownership import chown_new

log = structlog.get_logger(__name__)


def state_path(
    run_dir: str, name: str, *, output_dir: str | None = None, wf_uuid: str | None = None
) -> str:
    """``<run dir>/monitord.X``, or ``<outdir>/<wf_uuid>-monitord.X`` with ``-o``."""
    if output_dir:
        out = output_dir if os.path.isabs(output_dir) else os.path.join(run_dir, output_dir)
        return os.path.join(out, f"{wf_uuid}-{name}")
    return os.path.join(run_dir, name)


def _write(path: str, text: str | Iterable[str]) -> None:
    """``text``, or its pieces one after the other (a large file never held whole)."""
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            if isinstance(text, str):
                fh.write(text)
            else:
                fh.writelines(text)
        chown_new(tmp)  # service as root: the workflow's owner's (monitord/ownership.py)
        os.replace(tmp, path)
    except OSError as exc:
        log.error("cannot write state file", path=path, error=str(exc))


def remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("cannot remove state file", path=path, error=str(exc))


def write_started(path: str, now: float | None = None) -> None:
    now = time.time() if now is None else now
    _write(path, f"pid {os.getpid()}\ntimestamp {iso_local(now)}\n")


def write_done(path: str, started: float, now: float | None = None) -> None:
    now = time.time() if now is None else now
    _write(path, f"{iso_local(now)} {now - started:.3f}\n")


def write_info(
    path: str,
    *,
    job_seq: int,
    line_no: int,
    restart_count: int,
    counters: Iterable[tuple[str, int]],
) -> None:
    """Written in pieces of :data:`INFO_PIECE` lines: one text of every job's line was a
    replay's peak at its end (~13 MB for the lines, their text and its encoding at 100,000
    jobs, on top of everything the workflow kept)."""
    head = (
        f"monitord_job_sequence {job_seq}\n"
        f"monitord_dagman_out_sequence {line_no}\n"
        f"monitord_workflow_restart_count {restart_count}\n"
    )
    _write(path, _pieces(head, counters))


INFO_PIECE = 1024


def _pieces(head: str, counters: Iterable[tuple[str, int]]) -> Iterator[str]:
    yield head
    items = iter(counters)  # the caller's thread is the only one changing them
    while piece := list(islice(items, INFO_PIECE)):
        yield "".join([f"{name} {n}\n" for name, n in piece])


def read_info(path: str) -> dict[str, int]:
    """``key value`` lines; a malformed line is logged and the values read so far kept."""
    out: dict[str, int] = {}
    try:
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                parts = line.split()
                if not parts:
                    continue
                try:
                    out[parts[0]] = int(parts[1])
                except (IndexError, ValueError):
                    log.error("malformed monitord.info line", path=path, line=n)
                    break
    except OSError:
        pass
    return out


def write_recover(path: str, line_no: int) -> None:
    """The crash marker: present while following, with the last line whose events are durable."""
    _write(path, f"line_processed {line_no}\n")


def write_pid(path: str) -> None:
    _write(path, f"pid {os.getpid()}\ntimestamp {iso_local(time.time())}\n")


def other_instance_running(path: str) -> bool:
    """True when ``monitord.pid`` names a live process (or cannot be read)."""
    if not os.path.exists(path):
        return False
    try:
        with open(path, encoding="utf-8") as fh:
            fields = dict(line.split(None, 1) for line in fh if line.strip())
        pid = int(fields["pid"].strip())
    except (OSError, KeyError, ValueError):
        return True
    if pid == os.getpid():
        return False
    return pid_alive(pid)


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists (a process of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
