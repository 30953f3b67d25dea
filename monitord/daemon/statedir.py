"""The per-workflow daemon's own state directory: where its crash-resume snapshots live.

The service keeps its snapshots in its state directory (``/var/lib/monitord``); a
``pegasus-monitord`` started by pegasus-run keeps them in the user's: ``--state-dir``,
else the ``pegasus.monitord.state.dir`` property, else ``$XDG_STATE_HOME/monitord``, else
``~/.local/state/monitord``.  Never the submit directory: snapshots are pickles, so the
directory must be the user's alone (mode 0700, owned by the user); one that is not is not
used, and the daemon recovers from a crash as the reference does.
"""

from __future__ import annotations

import os
import stat

import structlog

from monitord.daemon.config import MonitorConfig
from monitord.daemon.resume import ResumeStore

log = structlog.get_logger(__name__)

RESUME_DIR = "resume"  # below the state directory, as in the service's
STATE_DIR_PROPERTY = "pegasus.monitord.state.dir"


def default_state_dir() -> str:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(base, "monitord")


def private_dir(path: str) -> str | None:
    """``path`` created (mode 0700) if missing; None (why: the return) if it is not ours alone."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.stat(path)
    except OSError as exc:
        return f"cannot create {path}: {exc.strerror}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a directory"
    if st.st_uid != os.getuid():
        return f"{path} belongs to another user"
    if st.st_mode & 0o022:
        return f"{path} is writable by others"
    return None


def daemon_resume_store(config: MonitorConfig) -> tuple[ResumeStore | None, str]:
    """The live daemon's snapshot store, or None and why it cannot keep one."""
    state = config.state_dir or default_state_dir()
    state = os.path.abspath(os.path.expanduser(state))
    problem = private_dir(state) or private_dir(os.path.join(state, RESUME_DIR))
    if problem is not None:
        return None, f"no crash-resume snapshots: {problem}"
    return ResumeStore(os.path.join(state, RESUME_DIR)), ""
