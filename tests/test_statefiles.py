"""monitord.info / monitord.pid / monitord.done files."""

from __future__ import annotations

import os
import re
from pathlib import Path

from monitord.daemon import statefiles as sf


def test_info_round_trip_and_malformed_tail(tmp_path: Path) -> None:
    path = str(tmp_path / "monitord.info")
    sf.write_info(
        path, job_seq=4, line_no=268, restart_count=1, counters={"ls_ID0000001": 1}.items()
    )
    assert Path(path).read_text().splitlines() == [
        "monitord_job_sequence 4",
        "monitord_dagman_out_sequence 268",
        "monitord_workflow_restart_count 1",
        "ls_ID0000001 1",
    ]
    with open(path, "a") as fh:
        fh.write("broken line\nlater 3\n")
    info = sf.read_info(path)
    assert info == {
        "monitord_job_sequence": 4,
        "monitord_dagman_out_sequence": 268,
        "monitord_workflow_restart_count": 1,
        "ls_ID0000001": 1,
    }


def test_pid_file_detects_live_and_dead_processes(tmp_path: Path) -> None:
    path = tmp_path / "monitord.pid"
    assert not sf.other_instance_running(str(path))
    path.write_text(f"pid {os.getppid()}\n")
    assert sf.other_instance_running(str(path))
    path.write_text("pid 999999999\n")
    assert not sf.other_instance_running(str(path))
    path.write_text("garbage\n")
    assert sf.other_instance_running(str(path))  # unreadable counts as running, like the reference


def test_done_and_started_formats(tmp_path: Path) -> None:
    sf.write_started(str(tmp_path / "s"), now=1677911025.0)
    sf.write_done(str(tmp_path / "d"), started=1677911025.0, now=1677911101.0)
    assert re.fullmatch(
        r"pid \d+\ntimestamp \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}\n",
        (tmp_path / "s").read_text(),
    )
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} 76\.000\n", (tmp_path / "d").read_text()
    )


def test_info_of_many_jobs_is_written_in_pieces(tmp_path: Path) -> None:
    """monitord.info of a large workflow is written a piece at a time: what writing it
    allocates stays far below its size (one text of every line was a 100,000-job replay's
    peak at its end, issue 30), and its lines are every job's, in order."""
    import tracemalloc

    counters = {f"merge_synthetic_ID{i:07d}": i % 3 for i in range(20_005)}
    path = str(tmp_path / "monitord.info")
    tracemalloc.start()
    try:
        sf.write_info(path, job_seq=9, line_no=7, restart_count=0, counters=counters.items())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    size = os.path.getsize(path)
    assert peak < size / 2, (peak, size)
    info = sf.read_info(path)
    assert list(info.items())[3:] == list(counters.items())
