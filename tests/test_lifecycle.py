"""The ordinary ways a live daemon is stopped and started again keep every row (issue 29).

Each play re-enacts a finished submit directory while the daemon follows it; at seeded moments
the daemon is stopped with SIGINT, SIGTERM, SIGHUP or SIGKILL (to its main process or its whole
process group, in turn) and started again at once, several times in one run.  A clean stop must
end by itself with 128 + the signal's number and one line saying where it stopped; afterwards
the database and every jobstate.log equal the replay's (stampede-diff), the database was never
rotated, and no daemon logged an error a replay does not (tests/kills.py).  The forms are
``monitord follow`` and the drop-in ``pegasus-monitord -N`` as pegasus-dagman starts it; the
sources a corpus sample with sub-workflows and a generated workflow with retries whose every
job and the workflow have notification scripts: none may run twice, none may be lost.

``python -m tests.kills --trials 100 --signals SIGINT,SIGTERM,SIGHUP,SIGKILL --forms
follow,dropin`` makes 100 seeded stop/starts on demand.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import CORPUS, CORPUS_TZ, STAMPEDE_DIFF, require_corpus
from tests.kills import describe, generated_source, play_with_kills

SEED = int(os.environ.get("MONITORD_KILL_SEED", "29"))
EVERY_WAY = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL)
CLEAN = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

RECORDER = """\
#!{python}
import json, os, sys, uuid
env = {{k: v for k, v in os.environ.items() if k.startswith("PEGASUS_")}}
with open(os.path.join({where!r}, uuid.uuid4().hex + ".json"), "w") as fh:
    json.dump({{"argv": sys.argv[1:], "env": env}}, fh)
"""


def _with_notifications(src: Path, records: Path) -> list[str]:
    """Give ``src``'s root workflow a notification for its end and every job's end, each
    recording what it was run with into ``records``; returns the jobs of the .dag."""
    records.mkdir(parents=True)
    recorder = src / "recorder.py"
    recorder.write_text(RECORDER.format(python=sys.executable, where=str(records)))
    recorder.chmod(0o755)
    run = src / "input"
    dag = next(run.glob("*.dag"))
    jobs = [line.split()[1] for line in dag.read_text().splitlines() if line.startswith("JOB ")]
    braindump = (run / "braindump.yml").read_text()
    uuid = next(
        line.split(":", 1)[1].strip().strip('"')
        for line in braindump.splitlines()
        if line.startswith("wf_uuid:")
    )
    lines = [f"WORKFLOW {uuid} at_end {recorder} workflow-end"]
    lines += [f"JOB {job} at_end {recorder} job-end {job}" for job in jobs]
    next(run.glob("*.notify")).write_text("\n".join(lines) + "\n")
    return jobs


def _recorded(records: Path) -> list[str]:
    """Every script run, as a canonical string of its arguments and PEGASUS_* environment."""
    out = []
    for path in records.glob("*.json"):
        out.append(json.dumps(json.loads(path.read_text()), sort_keys=True))
    return out


@pytest.mark.parametrize("form", ["follow", "dropin"])
def test_stops_of_every_kind_keep_every_row(form: str, tmp_path: Path) -> None:
    """hierarchical_wf_success (a sub-workflow) stopped four times, once by each signal."""
    require_corpus()
    src = CORPUS / "hierarchical_wf_success"
    order = EVERY_WAY if form == "follow" else tuple(reversed(EVERY_WAY))
    result = play_with_kills(src, tmp_path, SEED, 4, signals=order, form=form)
    print(describe([result]))
    assert len(result.kills) >= 3, describe([result])
    assert not result.failures, "\n".join(result.failures)


@pytest.mark.parametrize("form", ["follow", "dropin"])
def test_clean_stops_run_no_notification_twice_and_lose_none(form: str, tmp_path: Path) -> None:
    """A generated workflow with retries, stopped cleanly four times: the rows equal the
    replay's, every job's end notification ran once per job instance, the workflow's once."""
    require_corpus()  # stampede-diff
    src = generated_source(tmp_path / "gen", 40, seed=SEED)
    records = tmp_path / "records"
    jobs = _with_notifications(src, records)
    result = play_with_kills(src, tmp_path / "play", SEED, 4, signals=CLEAN, form=form)
    print(describe([result]))
    assert len(result.kills) >= 3, describe([result])
    assert not result.failures, "\n".join(result.failures)
    recorded = _recorded(records)
    twice = [item for item, n in Counter(recorded).items() if n > 1]
    assert not twice, f"{len(twice)} notifications ran twice, e.g. {twice[0]}"
    ends = Counter(json.loads(r)["argv"][1] for r in recorded if "job-end" in r)
    instances = _instances_per_job(src / "expected" / "stampede.db")  # the replay's
    assert {job: ends.get(job, 0) for job in jobs} == {job: instances[job] for job in jobs}
    assert sum("workflow-end" in r for r in recorded) == 1


def _instances_per_job(db: Path) -> Counter[str]:
    import sqlite3

    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT j.exec_job_id, COUNT(*) FROM job_instance ji JOIN job j USING (job_id) "
            "GROUP BY j.exec_job_id"
        ).fetchall()
    return Counter({name: n for name, n in rows})


def test_without_a_snapshot_store_a_clean_stop_re_reads_from_line_1(tmp_path: Path) -> None:
    """A state directory others can write is not used (no snapshots): SIGTERM still leaves
    monitord.recover, says the next start re-reads from line 1, and that start rebuilds every
    row (as the reference does after SIGTERM), never a partial state."""
    require_corpus()
    src = generated_source(tmp_path / "gen", 20, seed=SEED)
    run = src / "input"
    dagman_out = next(run.glob("*.dag.dagman.out"))
    lines = dagman_out.read_text(encoding="utf-8").splitlines(keepends=True)
    half = len(lines) // 2
    dagman_out.write_text("".join(lines[:half]), encoding="utf-8")
    state = tmp_path / "shared-state"
    state.mkdir()
    state.chmod(0o777)
    db = tmp_path / "live.db"
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(tmp_path)}
    cmd = [sys.executable, "-m", "monitord.cli", "follow", "--no-dashboard"]
    cmd += ["--state-dir", str(state), "-d", f"sqlite:///{db}", dagman_out.name]
    err = tmp_path / "first.err"
    with err.open("w") as fh:
        first = subprocess.Popen(cmd, cwd=run, env=env, stderr=fh)
    try:
        deadline = time.monotonic() + 60
        while _recover_line(run) < half - 5:  # it has read what is there
            assert first.poll() is None, err.read_text()
            assert time.monotonic() < deadline, "the daemon did not read the first half"
            time.sleep(0.05)
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=60) == 128 + signal.SIGTERM, err.read_text()
    finally:
        if first.poll() is None:
            first.kill()
    said = [line for line in err.read_text().splitlines() if "stopped;" in line]
    assert len(said) == 1 and "from line 1" in said[0], err.read_text()
    assert (run / "monitord.recover").exists(), "a clean stop without snapshots is a recovery"
    with dagman_out.open("a", encoding="utf-8") as fh:
        fh.write("".join(lines[half:]))
    second = subprocess.run(cmd, cwd=run, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert "recovering from line 1" in second.stderr
    diff = subprocess.run(
        [sys.executable, str(STAMPEDE_DIFF), str(src / "expected" / "stampede.db"), str(db)],
        capture_output=True,
        text=True,
    )
    assert diff.returncode == 0 and "TOTAL" in diff.stdout, diff.stdout[-3000:]


def _recover_line(run: Path) -> int:
    try:
        return int((run / "monitord.recover").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0
