"""``monitord attach --wait`` on a terminal shows that it waits (issue 29: every command over
~2 s says something); -q and a stderr that is not a terminal show nothing extra."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import require_corpus
from tests.test_cli_commands import MONITORD, run_in_pty
from tests.test_service import (
    corpus_source,
    service_env,
    start_service,
    stop_service,
    write_config,
)


def test_attach_wait_shows_a_spinner_on_a_terminal_only(tmp_path: Path) -> None:
    require_corpus()
    cfg = write_config(tmp_path)
    env = service_env(tmp_path, cfg)
    service = start_service(cfg, env, tmp_path / "service.log")
    try:
        outputs = {}
        for way in ("terminal", "quiet", "plain"):
            run = corpus_source("process_wf_success", tmp_path / way)
            name = next(run.glob("*.dag.dagman.out")).name
            cmd = [*MONITORD, "attach", "--wait", "--config", str(cfg), "--no-dashboard", name]
            if way == "plain":
                proc = subprocess.run(
                    cmd, cwd=run, env=env, capture_output=True, text=True, timeout=120
                )
                assert proc.returncode == 0, proc.stderr
                outputs[way] = proc.stderr
                continue
            status, out = run_in_pty([*cmd, "-q"] if way == "quiet" else cmd, run, tmp_path)
            assert status == 0 and "Traceback" not in out, out[-2000:]
            outputs[way] = out
    finally:
        assert stop_service(service) == 0
    waiting = "the service follows process-0.dag.dagman.out; waiting for its end"
    assert waiting in outputs["terminal"], outputs["terminal"][-2000:]
    assert waiting not in outputs["quiet"] and outputs["plain"] == ""
