"""Where a workflow's Stampede database goes when no destination is given (doc §7.1).

Used by the daemon and by the notification clients (which read that database), so it
lives in the core rather than in either of them.
"""

from __future__ import annotations

import os
from typing import Any

from monitord.core.readers.braindump import BraindumpError, read_braindump


def _root_dir(start: str) -> str | None:
    """Walk up from ``start`` to the directory whose braindump is the root workflow's."""
    probe = start
    while True:
        try:
            bd = read_braindump(probe)
            if bd.root_wf_uuid and bd.root_wf_uuid == bd.wf_uuid:
                return probe
        except BraindumpError:
            pass
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent


def default_db_url(run_dir: str, braindump: Any) -> str:
    """``sqlite:///<root submit dir>/<dag up to .dag>.stampede.db`` (doc §7.1).

    The root is found from the directory being read (``run_dir``, made absolute), never from
    the braindump's recorded ``submit_dir``: the reference prefers that one when it still
    exists, so a replay of a copy rotated the original's database (docs/differences.md).
    """
    run_dir = os.path.abspath(run_dir)
    root = _root_dir(run_dir) or run_dir
    dag = braindump.dag or "workflow.dag"
    base = dag[: dag.index(".dag")] if ".dag" in dag else dag
    return f"sqlite:///{os.path.join(root, base)}.stampede.db"
