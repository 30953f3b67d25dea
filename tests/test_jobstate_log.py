"""jobstate.log writer (spec 3.1-3.2)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from monitord.daemon.jobstate_log import (
    JobstateLog,
    JobstateLogError,
    format_state_line,
    jobstate_log_path,
    rotate_existing,
)


def test_path_resolution() -> None:
    assert jobstate_log_path("/run") == "/run/jobstate.log"
    assert jobstate_log_path("/run", name="js.txt") == "/run/js.txt"
    assert jobstate_log_path("/run", name="/abs/js.log") == "/abs/js.log"
    assert (
        jobstate_log_path("/run", output_dir="logs", wf_uuid="u-1", name="jobstate.log")
        == "/run/logs/u-1-jobstate.log"
    )
    assert jobstate_log_path("/run", output_dir="/o", wf_uuid="u-1") == "/o/u-1-jobstate.log"


def test_line_format_matches_spec_examples() -> None:
    assert (
        format_state_line(1677913809, "ls_ID0000001", "SUBMIT", "9.0", "condorpool", None, 2)
        == "1677913809 ls_ID0000001 SUBMIT 9.0 condorpool - 2\n"
    )
    assert (
        format_state_line(
            1677959833.0, "pegasus-plan_x", "PRE_SCRIPT_STARTED", None, "local", None, 5
        )
        == "1677959833 pegasus-plan_x PRE_SCRIPT_STARTED - local - 5\n"
    )
    assert (
        format_state_line(1, "j", "JOB_FAILURE", 2, None, 600, 3) == "1 j JOB_FAILURE 2 - 600 3\n"
    )


def test_buffered_until_flush_and_internal_lines(tmp_path: Path) -> None:
    path = tmp_path / "jobstate.log"
    log = JobstateLog(str(path))
    log.open()
    log.monitord_started(1677911025)
    log.dagman_started(1677911023, "1.0")
    log.state(1677911024, "create_dir", "SUBMIT_FAILED", None, "local", None, 1)
    assert path.read_text() == ""
    log.flush()
    log.dagman_finished(1677911100, 0)
    log.monitord_finished(0)
    log.close()
    lines = path.read_text().splitlines()
    assert lines[:4] == [
        "1677911025 INTERNAL *** MONITORD_STARTED ***",
        "1677911023 INTERNAL *** DAGMAN_STARTED 1.0 ***",
        "1677911024 create_dir SUBMIT_FAILED - local - 1",
        "1677911100 INTERNAL *** DAGMAN_FINISHED 0 ***",
    ]
    assert re.fullmatch(r"\d{10} INTERNAL \*\*\* MONITORD_FINISHED 0 \*\*\*", lines[4])


def test_append_without_rotation(tmp_path: Path) -> None:
    path = tmp_path / "jobstate.log"
    path.write_text("old\n")
    with JobstateLog(str(path)) as log:
        log.monitord_started(5)
    assert path.read_text() == "old\n5 INTERNAL *** MONITORD_STARTED ***\n"
    assert not (tmp_path / "jobstate.log.000").exists()


def test_rotation_takes_first_free_slot(tmp_path: Path) -> None:
    path = tmp_path / "jobstate.log"
    path.write_text("run1\n")
    (tmp_path / "jobstate.log.000").write_text("older\n")
    with JobstateLog(str(path), rotate=True) as log:
        log.monitord_started(7)
    assert (tmp_path / "jobstate.log.001").read_text() == "run1\n"
    assert (tmp_path / "jobstate.log.000").read_text() == "older\n"
    assert path.read_text() == "7 INTERNAL *** MONITORD_STARTED ***\n"
    assert rotate_existing(str(tmp_path / "absent.log")) is None


def test_rotation_fails_when_all_slots_taken(tmp_path: Path) -> None:
    path = tmp_path / "jobstate.log"
    path.write_text("x\n")
    for n in range(1000):
        (tmp_path / f"jobstate.log.{n:03d}").touch()
    with pytest.raises(JobstateLogError, match="999"):
        JobstateLog(str(path), rotate=True).open()


def test_cannot_create(tmp_path: Path) -> None:
    with pytest.raises(JobstateLogError):
        JobstateLog(str(tmp_path / "no" / "such" / "dir" / "jobstate.log")).open()
