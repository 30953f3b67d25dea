"""Passwords given in argv never show in the process title (ps, /proc/<pid>/cmdline)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from monitord.daemon.proctitle import mask_secrets
from tests.conftest import CORPUS, CORPUS_TZ, copy_submit_dir, require_corpus

SECRET = "Pr0cT1tleS3cret"


def test_mask_secrets_masks_only_the_password() -> None:
    assert (
        mask_secrets(f"-d postgresql://monitord:{SECRET}@db.example:5432/stampede")
        == "-d postgresql://monitord:***@db.example:5432/stampede"
    )
    assert mask_secrets("amqp://u:p%40ss@h/v/x") == "amqp://u:***@h/v/x"
    assert mask_secrets("sqlite:////tmp/a.db") == "sqlite:////tmp/a.db"
    assert mask_secrets("mysql://user@host/db") == "mysql://user@host/db"


def test_a_running_daemon_shows_no_password(tmp_path: Path) -> None:
    require_corpus()
    dagman_out = copy_submit_dir(CORPUS / "process_wf_success" / "input", tmp_path / "run")
    # Keep only the first lines: the daemon then waits for more and stays alive.
    lines = dagman_out.read_text().splitlines(keepends=True)
    dagman_out.write_text("".join(lines[:20]))
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(tmp_path)}
    url = f"amqp://monitord:{SECRET}@127.0.0.1:1/vhost/exchange"
    proc = subprocess.Popen(
        [sys.executable, "-m", "monitord.cli", "--no-dashboard", "-d", url, str(dagman_out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=Path(__file__).resolve().parent.parent,
    )
    try:
        deadline = time.monotonic() + 30
        cmdline = b""
        while time.monotonic() < deadline:
            cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
            if b"***" in cmdline:
                break
            time.sleep(0.1)
        assert b"monitord:***@127.0.0.1" in cmdline
        assert SECRET.encode() not in cmdline
        ps = subprocess.run(["ps", "-o", "args=", "-p", str(proc.pid)], capture_output=True)
        assert SECRET.encode() not in ps.stdout and b"***" in ps.stdout
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert SECRET.encode() not in err
