"""Replay options on a real sample: encodings, --skip-stdout, -j, -o, --no-events, -D properties."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import CORPUS, CORPUS_TZ, replay_copy, require_corpus

SAMPLE = "process_wf_success"


def replay(tmp_path: Path, *args: str) -> Path:
    require_corpus()
    return replay_copy(CORPUS / SAMPLE / "input", tmp_path, *args, timeout=120)


def test_json_encoding_has_one_object_per_event(tmp_path: Path) -> None:
    out = tmp_path / "ev.json"
    replay(tmp_path, "-e", "json", "-d", f"file://{out}")
    lines = out.read_text().splitlines()
    expected = sum(1 for _ in open(CORPUS / SAMPLE / "expected" / "events.bp"))
    assert len(lines) == expected
    first = json.loads(lines[0])
    assert list(first)[-1] == "event" and first["event"] == "stampede.wf.plan"
    assert "xwf_id" in first and "root_xwf_id" in first


def test_skip_stdout_drops_job_texts(tmp_path: Path) -> None:
    out = tmp_path / "ev.bp"
    replay(tmp_path, "--skip-stdout", "-d", str(out))
    text = out.read_text()
    assert "stampede.job_inst.main.end" in text
    assert "stdout.text=" not in text and "stderr.text=" not in text


def test_no_events_writes_jobstate_only(tmp_path: Path) -> None:
    run = replay(tmp_path, "--no-events")
    assert (run / "jobstate.log").exists()
    assert not list(run.glob("*.stampede.db"))


def test_job_and_output_dir_names(tmp_path: Path) -> None:
    run = replay(tmp_path, "--no-events", "-j", "js.txt", "-o", "outdir")
    uuid = "f00c0056-abd4-4e8e-b793-24eb760dda1f"
    assert (run / "outdir" / f"{uuid}-js.txt").exists()
    assert (run / "outdir" / f"{uuid}-monitord.info").exists()
    assert not (run / "jobstate.log").exists()


def test_properties_choose_the_destination(tmp_path: Path) -> None:
    out = tmp_path / "from-props.bp"
    replay(tmp_path, f"-Dpegasus.catalog.workflow.url=file://{out}")
    assert out.exists() and "stampede.xwf.end" in out.read_text()


def test_dest_stdout(tmp_path: Path) -> None:
    require_corpus()
    run = tmp_path / "run"
    shutil.copytree(CORPUS / SAMPLE / "input", run)
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "monitord.cli", "-r", "-d", "-", "process-0.dag.dagman.out"],
        cwd=run,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("event=stampede.") == 98
