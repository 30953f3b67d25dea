"""Replays one submit directory with the reference and with monitord, and classifies the differences.

Used by the differential tests (test_differential_json.py, test_differential_fuzz.py) and by
``tests/fuzz_run.py`` (the large on-demand set).  Both daemons get the same bytes (a fresh copy
of the submit directory each), the corpus time zone and a scratch HOME; each side is replayed
twice, once into a ``-d file://`` event stream and once into its default SQLite database, like
the conformance tests do.  monitord runs under tests/event_check.py: every event it builds is
checked against the catalogue's attributes and types (``Replay.violations``).

A comparison has one of three verdicts:

* ``agree``: database, jobstate.log tree and event stream match (``stampede-diff``);
* ``ours-better``: every difference is one the README's *Differences* section names as monitord
  keeping more (see ``KEPT``): rows, lines or events only monitord has, or a value the reference
  left empty (NULL, absent, ``''``, ``unknown``) that monitord filled;
* ``differ``: anything else.

When the reference fails (non-zero exit or a traceback), monitord must exit without a traceback
and keep every row the reference kept (``keeps_reference_rows``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests import event_check
from tests.conftest import CORPUS_TZ, STAMPEDE_DIFF, copy_submit_dir
from tests.oracle import Oracle

BP_IGNORE = "stampede.static.start:ts,stampede.static.end:ts,stampede.rc.pfn:ts"
# Values the reference writes where it knows nothing: monitord writing a value there keeps more.
EMPTY = (None, "", "None", "unknown", "<absent>", "[{}]", "{}", "[]")

# The kept differences, as the README's "Differences from the reference" section names them.
KEPT = {
    "more": "rows, jobstate.log lines or events only monitord has (the reference lost them)",
    "filled": "a value the reference left empty (NULL/absent/''/unknown) that monitord filled",
}


@dataclass(frozen=True)
class Replay:
    returncode: int
    stderr: str
    run: Path
    events: Path
    db: Path | None

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.stderr

    @property
    def clean(self) -> bool:
        return self.returncode == 0 and not self.traceback

    @property
    def violations(self) -> list[str]:
        """Events outside the catalogue's attributes or types (monitord's side only)."""
        return event_check.parse(self.stderr)


def _ours() -> list[str]:
    """monitord's CLI, with every event it builds checked against the catalogue at exit."""
    return event_check.command()


def _reference(oracle: Oracle) -> list[str]:
    return [str(oracle.python), str(oracle.cli / "pegasus-monitord.py")]


def _run(
    command: Sequence[str], src: Path, work: Path, extra: Sequence[str], timeout: float
) -> tuple[subprocess.CompletedProcess[str], Path]:
    run = work / "run"
    dagman_out = copy_submit_dir(src, run)
    (work / "home").mkdir(exist_ok=True)
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(work / "home")}
    proc = subprocess.run(
        [*command, *extra, "-r", dagman_out.name],
        cwd=run,
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
    )
    return proc, run


def replay(
    command: Sequence[str], src: Path, work: Path, *, encoding: str = "bp", timeout: float = 300
) -> Replay:
    """Two replays of a copy of ``src`` under ``work``: events to a file, then the default DB."""
    events = work / f"events.{encoding}"
    extra = ["-d", f"file://{events}"] + (["-e", encoding] if encoding != "bp" else [])
    proc, run = _run(command, src, work / "events", extra, timeout)
    proc_db, run_db = _run(command, src, work / "db", [], timeout)
    dbs = sorted(run_db.glob("*.stampede.db"))
    rc = proc.returncode or proc_db.returncode
    return Replay(rc, proc.stderr + proc_db.stderr, run, events, dbs[0] if dbs else None)


def replay_both(
    oracle: Oracle, src: Path, work: Path, encoding: str = "bp"
) -> tuple[Replay, Replay]:
    ref = replay(_reference(oracle), src, work / "ref", encoding=encoding)
    ours = replay(_ours(), src, work / "ours", encoding=encoding)
    return ref, ours


# ---------------------------------------------------------------- comparison


def _diff(*args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(STAMPEDE_DIFF), "--json", "--show", "100000", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode == 2:
        raise RuntimeError(f"stampede-diff {args}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


@dataclass
class Comparison:
    """What differs, each item tagged with the KEPT rule that allows it (or ``None``)."""

    items: list[tuple[str | None, str]] = field(default_factory=list)

    def add(self, rule: str | None, what: str) -> None:
        self.items.append((rule, what))

    @property
    def verdict(self) -> str:
        if not self.items:
            return "agree"
        return "ours-better" if all(rule for rule, _ in self.items) else "differ"

    def unexplained(self) -> list[str]:
        return [what for rule, what in self.items if rule is None]

    def rules(self) -> set[str]:
        return {rule for rule, _ in self.items if rule}


def _filled(expected: Any, actual: Any) -> bool:
    """``expected`` empty, or a key whose parts are equal or empty (a host the reference left unknown)."""
    if expected in EMPTY:
        return True
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return all(e == a or _filled(e, a) for e, a in zip(expected, actual, strict=True))
    return False


def _wall_clock(value: Any) -> bool:
    """A BP ``ts`` written at replay time (an event without a time of its own gets "now")."""
    if not isinstance(value, str):
        return False
    try:
        stamp = datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    except ValueError:
        return False
    return abs(datetime.now(UTC) - stamp) < timedelta(days=1)


def _pair_rule(diffs: list[dict[str, Any]]) -> str | None:
    if not diffs or not all(_filled(d.get("expected"), d.get("actual")) for d in diffs):
        return None
    return "filled"


def _real(diffs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Differences other than two wall-clock ``ts`` (both sides' "now")."""
    return [
        d
        for d in diffs
        if not (
            d.get("attribute") == "ts"
            and _wall_clock(d.get("expected"))
            and _wall_clock(d.get("actual"))
        )
    ]


def _compare_rows(report: dict[str, Any], groups: str, out: Comparison) -> None:
    for name, table in report.get(groups, {}).items():
        if table.get("schema_differences"):
            out.add(None, f"{name}: schema {table['schema_differences']}")
        for row in table.get("only_expected", []):
            out.add(None, f"{name}: only the reference has {row}")
        if table.get("only_actual_total"):
            out.add("more", f"{name}: {table['only_actual_total']} only in monitord")
        for pair in table.get("differing_pairs", []):
            diffs = _real(pair.get("differences") or [])
            if diffs:
                out.add(_pair_rule(diffs), f"{name}: {pair}")


def _hunk_rule(hunk: dict[str, Any]) -> str | None:
    """Lines only monitord has, or the reference's lines kept among more (it stopped early).

    The reference's own MONITORD_FINISHED line may then carry its failure status (42: it
    stopped reading at a byte it could not decode); monitord's carries its own.
    """
    expected = [ln for ln in hunk.get("expected", []) if "*** MONITORD_FINISHED" not in ln]
    actual = iter(hunk.get("actual", []))
    if len(hunk.get("actual", [])) <= len(hunk.get("expected", [])):
        return None
    return "more" if all(line in actual for line in expected) else None


def _compare_jobstate(report: dict[str, Any], out: Comparison) -> None:
    for f in report.get("files", []):
        if f["status"] == "ok":
            continue
        for hunk in f.get("hunks", []):
            out.add(_hunk_rule(hunk), f"jobstate {f['file']}: {hunk}")
        if not f.get("hunks"):
            # a jobstate.log only monitord wrote: a sub-workflow the reference never reached
            rule = "more" if f["status"] == "EXTRA" else None
            out.add(rule, f"jobstate {f['file']}: {f['status']}")


def compare(ref: Replay, ours: Replay) -> Comparison:
    out = Comparison()
    if ref.db is not None and ours.db is not None:
        _compare_rows(_diff(str(ref.db), str(ours.db)), "tables", out)
    elif ref.db is not None:
        out.add(None, "monitord wrote no database")
    _compare_jobstate(_diff("--jobstate", str(ref.run), str(ours.run)), out)
    if ref.events.exists() and ours.events.exists():
        report = _diff("--bp", str(ref.events), str(ours.events), "--ignore", BP_IGNORE)
        _compare_rows(report, "events", out)
    elif ref.events.exists():
        out.add(None, "monitord wrote no event file")
    return out


def keeps_reference_rows(ref: Replay, ours: Replay) -> list[str]:
    """The reference's rows monitord lacks (empty when it kept all of them)."""
    if ref.db is None:
        return []
    if ours.db is None:
        return ["monitord wrote no database"]
    report = _diff(str(ref.db), str(ours.db))
    return [
        f"{name}: {row}"
        for name, table in report["tables"].items()
        for row in table.get("only_expected", [])
    ]
