"""What DAGMan prints and writes that does not steer its run: banner, tables, reports, files.

The simulation (dagman.py) decides what happens; this module only renders it the way
DAGMan 10.2.5 does, including the noise (configuration echo, runtime statistics) the
daemon must read past, and writes the rescue DAG and metrics file DAGMan leaves behind.
"""

from __future__ import annotations

import json
import random
import time

from monitord.tools.synthetic.context import Ctx
from monitord.tools.synthetic.dag import THROTTLES, Node
from monitord.tools.synthetic.filewriter import write_text
from monitord.tools.synthetic.planner_files import post_cmd

CONDOR_VERSION = "$CondorVersion: 10.2.5 2023-02-27 BuildID: 631644 PackageID: 10.2.5-1 $"
SCAN_INTERVAL = 5  # DAGMAN_USER_LOG_SCAN_INTERVAL
MAX_SUBMITS_PER_CYCLE = 100  # DAGMAN_MAX_SUBMITS_PER_INTERVAL
MAX_JOBS_IDLE = 1000  # DAGMAN_MAX_JOBS_IDLE

MYSIN = "Warning: mysin has length 0 (ignore if produced by DAGMan; see gittrac #4987, #5031)"
_TABLE_HEAD = " Done     Pre   Queued    Post   Ready   Un-Ready   Failed   Futile"
_TABLE_RULE = "  ===     ===      ===     ===     ===        ===      ===      ==="

# What DAGMan 10.2 echoes of its configuration at start-up (noise monitord must skip).
_DAGMAN_CONFIG_ECHO = """\
Using config source: /etc/condor/condor_config
Using local config sources:
   /etc/condor/config.d/00-htcondor-9.0.config
   /etc/condor/condor_config.local
config Macros = 75, Sorted = 74, StringBytes = 2233, TablesBytes = 2748
CLASSAD_CACHING is ENABLED
Daemon Log is logging: D_ALWAYS D_ERROR D_STATUS
DaemonCore: No command port requested.
DAGMAN_USE_STRICT setting: 1
DAGMAN_VERBOSITY setting: 3
DAGMAN_DEBUG_CACHE_SIZE setting: 5242880
DAGMAN_DEBUG_CACHE_ENABLE setting: False
DAGMAN_SUBMIT_DELAY setting: 0
DAGMAN_MAX_SUBMIT_ATTEMPTS setting: 6
DAGMAN_STARTUP_CYCLE_DETECT setting: False
DAGMAN_MAX_SUBMITS_PER_INTERVAL setting: {submits}
DAGMAN_AGGRESSIVE_SUBMIT setting: False
DAGMAN_USER_LOG_SCAN_INTERVAL setting: {scan}
DAGMAN_QUEUE_UPDATE_INTERVAL setting: 300
DAGMAN_DEFAULT_PRIORITY setting: 0
DAGMAN_SUPPRESS_NOTIFICATION setting: True
allow_events (DAGMAN_ALLOW_EVENTS) setting: 114
DAGMAN_RETRY_SUBMIT_FIRST setting: True
DAGMAN_RETRY_NODE_FIRST setting: False
DAGMAN_MAX_JOBS_IDLE setting: {idle}
DAGMAN_MAX_JOBS_SUBMITTED setting: 0
DAGMAN_MAX_PRE_SCRIPTS setting: 20
DAGMAN_MAX_POST_SCRIPTS setting: 20
DAGMAN_MAX_HOLD_SCRIPTS setting: 20
DAGMAN_MUNGE_NODE_NAMES setting: True
DAGMAN_PROHIBIT_MULTI_JOBS setting: False
DAGMAN_SUBMIT_DEPTH_FIRST setting: False
DAGMAN_ALWAYS_RUN_POST setting: False
DAGMAN_CONDOR_SUBMIT_EXE setting: /usr/bin/condor_submit
DAGMAN_USE_DIRECT_SUBMIT setting: True
DAGMAN_DEFAULT_APPEND_VARS setting: False
DAGMAN_ABORT_DUPLICATES setting: True
DAGMAN_ABORT_ON_SCARY_SUBMIT setting: True
DAGMAN_PENDING_REPORT_INTERVAL setting: 600
DAGMAN_AUTO_RESCUE setting: True
DAGMAN_MAX_RESCUE_NUM setting: 100
DAGMAN_WRITE_PARTIAL_RESCUE setting: True
DAGMAN_DEFAULT_NODE_LOG setting: @(DAG_DIR)/@(DAG_FILE).nodes.log
DAGMAN_GENERATE_SUBDAG_SUBMITS setting: True
DAGMAN_MAX_JOB_HOLDS setting: 100
DAGMAN_HOLD_CLAIM_TIME setting: 20
ALL_DEBUG setting:
DAGMAN_DEBUG setting:
DAGMAN_SUPPRESS_JOB_LOGS setting: False
DAGMAN_REMOVE_NODE_JOBS setting: True
DAGMAN will adjust edges after parsing
"""


def startup_lines(ctx: Ctx, dagman_cluster: int, pid: int, nodes: list[Node]) -> list[str]:
    """DAGMan's banner, configuration echo, argv and DAG parsing, up to the bootstrap."""
    dag = ctx.dag
    stars = "*" * 54
    exe = f"condor_scheduniv_exec.{dagman_cluster}.0"
    lines = [
        stars,
        f"** {exe} (CONDOR_DAGMAN) STARTING UP",
        "** /usr/bin/condor_dagman",
        "** SubsystemInfo: name=DAGMAN type=DAGMAN(9) class=CLIENT(2)",
        "** Configuration: subsystem:DAGMAN local:<NONE> class:CLIENT",
        f"** {CONDOR_VERSION}",
        "** $CondorPlatform: x86_64_AlmaLinux8 $",
        f"** PID = {pid}",
        "** Log last touched time unavailable (No such file or directory)",
        stars,
        *_DAGMAN_CONFIG_ECHO.format(
            submits=MAX_SUBMITS_PER_CYCLE, scan=SCAN_INTERVAL, idle=MAX_JOBS_IDLE
        ).splitlines(),
    ]
    argv = [exe, "-Lockfile", f"{dag}.lock", "-AutoRescue", "1", "-DoRescueFrom", "0",
            "-Dag", dag, "-MaxPost", "20", "-Suppress_notification", "-CsdVersion",
            CONDOR_VERSION, "-Dagman", "/usr/bin/condor_dagman"]  # fmt: skip
    lines += [f'argv[{i}] == "{arg}"' for i, arg in enumerate(argv)]
    lines += [
        f"Workflow batch-id: <{dagman_cluster}.0>",
        f"Workflow batch-name: <{dag}+{dagman_cluster}>",
        "Workflow accounting_group: <>",
        "Workflow accounting_group_user: <>",
        "Warning: failed to get attribute DAGNodeName",
        "DAGMAN_LOG_ON_NFS_IS_ERROR setting: False",
        f"Default node log file is: <{ctx.submit_dir}/./{dag}.nodes.log>",
        f"DAG Lockfile will be written to {dag}.lock",
        f"DAG Input file is {dag}",
        "Parsing 1 dagfiles",
        f"Parsing {dag} ...",
        "Adjusting edges",
    ]
    used = {n.category for n in nodes}
    for cat, n in THROTTLES.items():
        if cat not in used:
            lines.append(
                f"Warning: category {cat} has no assigned nodes, so the throttle setting ({n}) will have no effect"
            )
    lines += [
        f"Dag contains {len(nodes)} total jobs",
        "Bootstrapping...",
        "Number of pre-completed nodes: 0",
        f"MultiLogFiles: truncating log file {ctx.submit_dir}/./{dag}.nodes.log",
    ]
    return lines


def status_table(
    ts: str, total: int, counts: dict[str, int], dag_status: int, runtime_stats: str
) -> str:
    """The node-status table DAGMan prints after each change (``ts`` already formatted)."""
    c = counts
    unready = total - sum(c.values())
    status = "0 (DAG_STATUS_OK)" if dag_status == 0 else "2 (DAG_STATUS_NODE_FAILED)"
    return (
        f"{ts} DAG status: {status}\n"
        f"{ts} Of {total} nodes total:\n"
        f"{ts} {_TABLE_HEAD}\n"
        f"{ts} {_TABLE_RULE}\n"
        f"{ts} {c['done']:5d}{0:8d}{c['queued']:9d}{c['post']:8d}{c['ready']:8d}"
        f"{unready:11d}{c['failed']:9d}{c['futile']:9d}\n"
        f"{ts} 0 job proc(s) currently held\n"
        f"{ts} {runtime_stats}\n"
    )


def runtime_stats(rng: random.Random, cycles: int) -> str:
    """DAGMan's runtime statistics line after ``cycles`` event cycles (values drawn)."""
    n = cycles
    if n == 0:
        return (
            "DAGMan Runtime Statistics: [ EventCycleTimeCount = 0.0; EventCycleTimeSum = 0.0; "
            "LogProcessCycleTimeCount = 0.0; LogProcessCycleTimeSum = 0.0; SleepCycleTimeCount = 0.0; "
            "SleepCycleTimeSum = 0.0; SubmitCycleTimeCount = 0.0; SubmitCycleTimeSum = 0.0; ]"
        )
    r = rng
    parts = []
    for name, avg in (
        ("EventCycleTime", 0.004),
        ("LogProcessCycleTime", 0.002),
        ("SleepCycleTime", 5.0),
        ("SubmitCycleTime", 0.003),
    ):
        a = avg * r.uniform(0.9, 1.1)
        parts.append(
            f"{name}Avg = {a!r}; {name}Count = {float(n)!r}; {name}Max = {a * 2.7!r}; "
            f"{name}Min = {a / 40!r}; {name}Std = {a * 0.6!r}; {name}Sum = {a * n!r}"
        )
    return "DAGMan Runtime Statistics: [ " + "; ".join(parts) + "; ]"


def failed_node_report(ctx: Ctx, node: Node) -> list[str]:
    """The block DAGMan prints for each failed node before it aborts the DAG."""
    parents = ",".join(p.name for p in node.parents)
    children = ",".join(c.name for c in node.children)
    return [
        "---------------------- Job ----------------------",
        f"      Node Name: {node.name}",
        "           Noop: false",
        f"         NodeID: {node.idx}",
        "    Node Status: STATUS_ERROR",
        "Node return val: 1",
        "          Error: Job exited with status 1 and POST Script failed with status 1 (after 1 node retries)",
        f"Job Submit File: {node.subdir}/{node.name}.sub",
        f"    POST Script: {post_cmd(ctx, node)}",
        "          Retry: 1",
        f" HTCondor Job ID: ({node.cluster}.0.0)",
        f"PARENTS: {parents} WAITING: 0 CHILDREN: {children}",
        "---------------------------------------\t<END>",
    ]


DEFERRAL_NOTES = (
    "Note: 0 total job deferrals because of -MaxJobs limit (0)",
    f"Note: 0 total job deferrals because of -MaxIdle limit ({MAX_JOBS_IDLE})",
    "Note: 0 total job deferrals because of node category throttles",
    "Note: 0 total PRE script deferrals because of -MaxPre limit (20) or DEFER",
    "Note: 0 total POST script deferrals because of -MaxPost limit (20) or DEFER",
    "Note: 0 total HOLD script deferrals because of -MaxHold limit (20) or DEFER",
)


def write_rescue(ctx: Ctx, t: int, nodes: list[Node], failed_nodes: list[Node], done: int) -> None:
    """The partial rescue DAG DAGMan writes when it aborts (``t``: the abort time)."""
    g = time.gmtime(t)
    failed = ",".join(n.name for n in failed_nodes)
    lines = [
        "# Rescue DAG file, created after running",
        f"#   the {ctx.dag} DAG file",
        f"# Created {g.tm_mon}/{g.tm_mday}/{g.tm_year} {g.tm_hour:02d}:{g.tm_min:02d}:{g.tm_sec:02d} UTC",
        "# Rescue DAG version: 2.0.1 (partial)",
        "#",
        f"# Total number of Nodes: {len(nodes)}",
        f"# Nodes premarked DONE: {done}",
        f"# Nodes that failed: {len(failed_nodes)}",
        f"#   {failed},<ENDLIST>",
        "",
    ]
    lines += [f"DONE {n.name}" for n in nodes if n.state == "done"]
    lines += [f"RETRY {n.name} 1" for n in nodes]
    write_text(f"{ctx.submit_dir}/{ctx.dag}.rescue001", "\n".join(lines) + "\n")


def write_metrics(
    ctx: Ctx,
    t: int,
    dagman_cluster: int,
    exit_code: int,
    total: int,
    counts: dict[str, int],
    dag_status: int,
) -> None:
    """The ``.dag.metrics`` JSON DAGMan writes at exit."""
    c = counts
    metrics = {
        "client": "condor_dagman",
        "version": "10.2.5",
        "planner": "",
        "planner_version": "",
        "type": "metrics",
        "wf_uuid": "",
        "root_wf_uuid": "",
        "start_time": float(ctx.planned_at),
        "end_time": float(t),
        "duration": float(t - ctx.planned_at),
        "exitcode": exit_code,
        "dagman_id": str(dagman_cluster),
        "parent_dagman_id": "",
        "rescue_dag_number": 0,
        "jobs": total,
        "jobs_failed": c["failed"],
        "jobs_succeeded": c["done"],
        "dag_jobs": 0,
        "dag_jobs_failed": 0,
        "dag_jobs_succeeded": 0,
        "total_jobs": total,
        "total_jobs_run": c["done"] + c["failed"],
        "DagStatus": dag_status,
    }
    write_text(f"{ctx.submit_dir}/{ctx.dag}.metrics", json.dumps(metrics, indent=4) + "\n")
