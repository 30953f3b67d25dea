"""Workflows the service finds itself (below its watched roots): which to take, with what options."""

from __future__ import annotations

import os

from monitord.core.readers.braindump import BraindumpError, read_braindump
from monitord.core.readers.workflow_properties import load_properties
from monitord.daemon.config import MonitorConfig, Options, monitor_config
from monitord.daemon.statefiles import other_instance_running
from monitord.service.config import ServiceConfig
from monitord.service.scan import root_problem


def root_warning(root: str, problem: str, cfg: ServiceConfig) -> str:
    """The one line for a watched root the service cannot list: which, why, what it does."""
    every = cfg.limits.scan_interval_seconds
    return (
        f"[[watch]] root {root} {problem}: the service looks for it again every {every:g} s "
        "and follows the workflows below it once it can list it"
    )


def watch_root_warnings(cfg: ServiceConfig) -> list[str]:
    """One line per ``[[watch]] root`` that does not exist or cannot be listed now."""
    found = ((w.root, root_problem(w.root)) for w in cfg.watch)
    return [root_warning(root, problem, cfg) for root, problem in found if problem is not None]


def found_config(dagman_out: str, cfg: ServiceConfig) -> MonitorConfig | None:
    """Options for a workflow found below a watched root, or None to leave it alone."""
    run_dir = os.path.dirname(dagman_out)
    try:
        bd = read_braindump(run_dir)
    except BraindumpError:
        return None
    if not bd.wf_uuid or (bd.root_wf_uuid and bd.root_wf_uuid != bd.wf_uuid):
        return None  # a sub-workflow: its root workflow's follower takes care of it
    done = os.path.join(run_dir, "monitord.done")
    recover = os.path.join(run_dir, "monitord.recover")
    try:
        finished = os.stat(done).st_mtime_ns >= os.stat(dagman_out).st_mtime_ns
    except OSError:
        finished = False
    if finished and not os.path.exists(recover):
        return None
    pid_path = os.path.join(run_dir, "monitord.pid")
    if other_instance_running(pid_path):
        return None  # a per-workflow daemon (or the service's own follower) is on it
    return watched_config(dagman_out, cfg)


def watched_config(dagman_out: str, cfg: ServiceConfig) -> MonitorConfig:
    """The options the per-workflow daemon would use, with the service's ``[defaults]`` as argv."""
    d = cfg.defaults
    props = load_properties(None, {}, os.path.dirname(dagman_out)) if d.use_properties else {}
    options = Options(
        dagman_out=dagman_out,
        dests=tuple(d.dests),
        no_events=d.no_events,
        default_encoding=d.encoding,
        no_recursive=d.no_recursive,
        skip_stdout=d.skip_stdout,
        keep_state=d.keep_state,
        no_dashboard=not (d.dashboard and bool(d.dashboard_url)),
        dashboard_url=d.dashboard_url,
        dashboard_url_from_properties=False,
        no_notifications=d.no_notifications,
        notifications_max=d.notifications_max,
        notifications_timeout=d.notifications_timeout,
        strict_notifications=False,
    )
    return monitor_config(options, props)


def file_stamp(path: str) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1)
    return (st.st_size, st.st_mtime_ns)
