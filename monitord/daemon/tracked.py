"""One workflow the daemon drives: its state machine, its files, its jobstate.log."""

from __future__ import annotations

from dataclasses import dataclass

from monitord.core.workflow import Workflow
from monitord.daemon.jobstate_log import JobstateLog


@dataclass
class Tracked:
    wf: Workflow | None
    run_dir: str
    dagman_out: str
    jobstate: JobstateLog | None
    started_at: float
    files: dict[str, str]
    exit_code: int = 0
    offset: int = 0  # dagman.out bytes fed (complete lines): a resume snapshot's offset
