"""The Pegasus Stampede schema, DB version 14, as SQLAlchemy Core tables.

A fresh SQLite database created from this metadata must carry the same DDL as
one created by the reference (tools and users compare them), so declaration
order, type lengths, constraint and index names all follow that DDL.  Tables are
declared in the order the reference emits them; ``create_all`` sorts by foreign
key layers, which then reproduces the reference's ``.schema`` order.

Portability: surrogate keys are BIGINT (INTEGER on SQLite so that they are rowid
aliases), enums are native types on PostgreSQL/MySQL and VARCHAR + named CHECK
elsewhere, MySQL tables use InnoDB with utf8mb4.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Enum,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.util import OrderedSet

DB_VERSION = 14

metadata = MetaData()

#: Surrogate keys and the columns that reference them.
KeyInt = BigInteger().with_variant(Integer(), "sqlite")
Stamp = Numeric(16, 6)
Duration = Numeric(10, 3)

_MYSQL: dict[str, Any] = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4"}

WORKFLOW_STATES = ("WORKFLOW_STARTED", "WORKFLOW_TERMINATED")
JOB_TYPE_DESCS = (
    "unknown",
    "compute",
    "stage-in-tx",
    "stage-out-tx",
    "registration",
    "inter-site-tx",
    "create-dir",
    "staged-compute",
    "cleanup",
    "chmod",
    "dax",
    "dag",
)


def _fk(target: str, ondelete: str | None = "CASCADE") -> ForeignKey:
    return ForeignKey(target, ondelete=ondelete)


def _table(
    name: str,
    *columns: Any,
    unique: tuple[str, ...] | None = None,
    indexes: tuple[tuple[str, str], ...] = (),
    **kw: Any,
) -> Table:
    """Declare a table the way the reference DDL lays it out.

    ``unique`` is ``(constraint name, *columns)``; it is appended after the
    columns so that it is emitted after the foreign keys and CHECKs.  ``indexes``
    are ``(name, column)`` pairs, kept in declaration order (SQLAlchemy keeps
    them in a plain set, which would make the DDL order vary from run to run).
    """
    table = Table(name, metadata, *columns, **_MYSQL, **kw)
    if unique:
        table.append_constraint(UniqueConstraint(*unique[1:], name=unique[0]))
    table.indexes = OrderedSet()
    for index_name, column in indexes:
        Index(index_name, table.c[column])
    return table


def _enum(name: str, *values: str) -> Enum:
    return Enum(*values, name=name, create_constraint=True)


dbversion = _table(
    "dbversion",
    Column("id", KeyInt, primary_key=True, autoincrement=True),
    Column("version_number", Integer, default=5),
    Column("version", String(50), nullable=False),
    Column("version_timestamp", Integer, nullable=False),
    sqlite_autoincrement=True,
)

workflow = _table(
    "workflow",
    Column("wf_id", KeyInt, primary_key=True),
    Column("wf_uuid", String(255), nullable=False),
    Column("dag_file_name", String(255)),
    Column("timestamp", Stamp),
    Column("submit_hostname", String(255)),
    Column("submit_dir", Text),
    Column("planner_arguments", Text),
    Column("user", String(255)),
    Column("grid_dn", String(255)),
    Column("planner_version", String(255)),
    Column("dax_label", String(255)),
    Column("dax_version", String(255)),
    Column("dax_file", String(255)),
    Column("db_url", Text),
    Column("parent_wf_id", KeyInt, _fk("workflow.wf_id")),
    Column("root_wf_id", KeyInt),
    unique=("UNIQUE_WF_UUID", "wf_uuid"),
)

rc_lfn = _table(
    "rc_lfn",
    Column("lfn_id", KeyInt, primary_key=True),
    Column("lfn", String(245), nullable=False),
    unique=("UNIQUE_LFN", "lfn"),
)

master_workflow = _table(
    "master_workflow",
    Column("wf_id", KeyInt, primary_key=True),
    Column("wf_uuid", String(255), nullable=False),
    Column("dax_label", String(255)),
    Column("dax_version", String(255)),
    Column("dax_file", String(255)),
    Column("dag_file_name", String(255)),
    Column("timestamp", Stamp),
    Column("submit_hostname", String(255)),
    Column("submit_dir", Text),
    Column("planner_arguments", Text),
    Column("user", String(255)),
    Column("grid_dn", String(255)),
    Column("planner_version", String(255)),
    Column("db_url", Text),
    Column("archived", Boolean(create_constraint=True), nullable=False, default=False),
    unique=("UNIQUE_MASTER_WF_UUID", "wf_uuid"),
)

ensemble = _table(
    "ensemble",
    Column("id", KeyInt, primary_key=True),
    Column("name", String(100), nullable=False),
    Column("created", DateTime, nullable=False),
    Column("updated", DateTime, nullable=False),
    Column("state", _enum("ensemble_state", "PAUSED", "ACTIVE", "HELD"), nullable=False),
    Column("max_running", Integer, nullable=False),
    Column("max_planning", Integer, nullable=False),
    Column("username", String(100), nullable=False),
    unique=("UNIQUE_ENSEMBLE", "name", "username"),
)

workflowstate = _table(
    "workflowstate",
    Column("wf_id", KeyInt, _fk("workflow.wf_id"), primary_key=True),
    Column("state", _enum("workflow_state", *WORKFLOW_STATES), primary_key=True),
    Column("timestamp", Stamp, primary_key=True),
    Column("restart_count", Integer, nullable=False),
    Column("status", Integer),
    Column("reason", Text),
    indexes=(("workflowstate_timestamp_COL", "timestamp"),),
)

workflow_meta = _table(
    "workflow_meta",
    Column("wf_id", KeyInt, _fk("workflow.wf_id"), primary_key=True),
    Column("key", String(255), primary_key=True),
    Column("value", String(255), nullable=False),
)

host = _table(
    "host",
    Column("host_id", KeyInt, primary_key=True),
    Column("wf_id", KeyInt, _fk("workflow.wf_id"), nullable=False),
    Column("site", String(255), nullable=False),
    Column("hostname", String(255), nullable=False),
    Column("ip", String(255), nullable=False),
    Column("uname", String(255)),
    Column("total_memory", Integer),
    unique=("UNIQUE_HOST", "wf_id", "site", "hostname", "ip"),
)

job = _table(
    "job",
    Column("job_id", KeyInt, primary_key=True),
    Column("wf_id", KeyInt, _fk("workflow.wf_id"), nullable=False),
    Column("exec_job_id", String(255), nullable=False),
    Column("submit_file", String(255), nullable=False),
    Column("type_desc", _enum("job_type_desc", *JOB_TYPE_DESCS), nullable=False),
    Column("clustered", Boolean(create_constraint=True), nullable=False),
    Column("max_retries", Integer, nullable=False),
    Column("executable", Text, nullable=False),
    Column("argv", Text),
    Column("task_count", Integer, nullable=False),
    unique=("UNIQUE_JOB", "wf_id", "exec_job_id"),
    indexes=(
        ("job_exec_job_id_COL", "exec_job_id"),
        ("job_type_desc_COL", "type_desc"),
    ),
)

job_edge = _table(
    "job_edge",
    Column("wf_id", KeyInt, _fk("workflow.wf_id"), primary_key=True),
    Column("parent_exec_job_id", String(255), primary_key=True),
    Column("child_exec_job_id", String(255), primary_key=True),
)

task_edge = _table(
    "task_edge",
    Column("wf_id", KeyInt, _fk("workflow.wf_id"), primary_key=True),
    Column("parent_abs_task_id", String(255), primary_key=True),
    Column("child_abs_task_id", String(255), primary_key=True),
)

rc_pfn = _table(
    "rc_pfn",
    Column("pfn_id", KeyInt, primary_key=True),
    Column("lfn_id", KeyInt, _fk("rc_lfn.lfn_id"), nullable=False),
    Column("pfn", String(245), nullable=False),
    Column("site", String(245)),
    unique=("UNIQUE_PFN", "lfn_id", "pfn", "site"),
)

rc_meta = _table(
    "rc_meta",
    Column("lfn_id", KeyInt, _fk("rc_lfn.lfn_id"), primary_key=True),
    Column("key", String(245), primary_key=True),
    Column("value", String(245), nullable=False),
)

master_workflowstate = _table(
    "master_workflowstate",
    Column("wf_id", KeyInt, _fk("master_workflow.wf_id"), primary_key=True),
    Column("state", _enum("master_workflow_state", *WORKFLOW_STATES), primary_key=True),
    Column("timestamp", Stamp, primary_key=True),
    Column("restart_count", Integer, nullable=False),
    Column("status", Integer),
    Column("reason", Text),
)

ensemble_workflow = _table(
    "ensemble_workflow",
    Column("id", KeyInt, primary_key=True),
    Column("ensemble_id", KeyInt, ForeignKey("ensemble.id"), nullable=False),
    Column("name", String(100), nullable=False),
    Column("basedir", String(512), nullable=False),
    Column("created", DateTime, nullable=False),
    Column("updated", DateTime, nullable=False),
    Column(
        "state",
        _enum(
            "ensemble_wf_state",
            "PLANNING",
            "QUEUED",
            "RUNNING",
            "FAILED",
            "ABORTED",
            "PLAN_FAILED",
            "READY",
            "RUN_FAILED",
            "SUCCESSFUL",
        ),
        nullable=False,
    ),
    Column("priority", Integer, nullable=False),
    Column("wf_uuid", String(36)),
    Column("submitdir", String(512)),
    Column("plan_command", String(1024), nullable=False),
    unique=("UNIQUE_ENSEMBLE_WORKFLOW", "ensemble_id", "name"),
)

trigger = _table(
    "trigger",
    Column("id", KeyInt, primary_key=True),
    Column("ensemble_id", KeyInt, ForeignKey("ensemble.id"), nullable=False),
    Column("name", String(100), nullable=False),
    Column(
        "state",
        _enum("trigger_state", "READY", "STOPPED", "FAILED", "RUNNING"),
        nullable=False,
    ),
    Column("workflow", Text, nullable=False),
    Column("args", Text),
    Column("type", _enum("trigger_type", "CRON", "FILE_PATTERN"), nullable=False),
    unique=("UNIQUE_TRIGGER", "ensemble_id", "name"),
)

job_instance = _table(
    "job_instance",
    Column("job_instance_id", KeyInt, primary_key=True),
    Column("job_id", KeyInt, _fk("job.job_id"), nullable=False),
    Column("host_id", KeyInt, _fk("host.host_id", "SET NULL")),
    Column("job_submit_seq", Integer, nullable=False),
    Column("sched_id", String(255)),
    Column("site", String(255)),
    Column("user", String(255)),
    Column("work_dir", Text),
    Column("cluster_start", Stamp),
    Column("cluster_duration", Duration),
    Column("local_duration", Duration),
    Column("subwf_id", KeyInt, _fk("workflow.wf_id", "SET NULL")),
    Column("stdout_file", String(255)),
    Column("stdout_text", Text),
    Column("stderr_file", String(255)),
    Column("stderr_text", Text),
    Column("stdin_file", String(255)),
    Column("multiplier_factor", Integer, nullable=False, default=1),
    Column("exitcode", Integer),
    unique=("UNIQUE_JOB_INSTANCE", "job_id", "job_submit_seq"),
)

task = _table(
    "task",
    Column("task_id", KeyInt, primary_key=True),
    Column("wf_id", KeyInt, _fk("workflow.wf_id"), nullable=False),
    Column("job_id", KeyInt, _fk("job.job_id", "SET NULL")),
    Column("abs_task_id", String(255), nullable=False),
    Column("transformation", Text, nullable=False),
    Column("argv", Text),
    Column("type_desc", String(255), nullable=False),
    unique=("UNIQUE_TASK", "wf_id", "abs_task_id"),
    indexes=(
        ("task_wf_id_COL", "wf_id"),
        ("task_abs_task_id_COL", "abs_task_id"),
    ),
)

jobstate = _table(
    "jobstate",
    Column("job_instance_id", KeyInt, _fk("job_instance.job_instance_id"), primary_key=True),
    Column("state", String(255), primary_key=True),
    Column("timestamp", Stamp, primary_key=True),
    Column("jobstate_submit_seq", Integer, primary_key=True),
    Column("reason", Text),
    indexes=(("jobstate_jobstate_submit_seq_COL", "jobstate_submit_seq"),),
)

tag = _table(
    "tag",
    Column("tag_id", KeyInt, primary_key=True),
    Column("wf_id", KeyInt, _fk("workflow.wf_id"), nullable=False),
    Column("job_instance_id", KeyInt, _fk("job_instance.job_instance_id"), nullable=False),
    Column("name", String(255), nullable=False),
    Column("count", Integer, nullable=False),
    unique=("UNIQUE_TAG", "wf_id", "job_instance_id"),
)

task_meta = _table(
    "task_meta",
    Column("task_id", KeyInt, _fk("task.task_id"), primary_key=True),
    Column("key", String(255), primary_key=True),
    Column("value", String(255), nullable=False),
)

invocation = _table(
    "invocation",
    Column("invocation_id", KeyInt, primary_key=True),
    Column("wf_id", KeyInt, _fk("workflow.wf_id"), nullable=False),
    Column("job_instance_id", KeyInt, _fk("job_instance.job_instance_id"), nullable=False),
    Column("task_submit_seq", Integer, nullable=False),
    Column("start_time", Stamp, nullable=False),
    Column("remote_duration", Duration, nullable=False),
    Column("remote_cpu_time", Duration),
    Column("exitcode", Integer, nullable=False),
    Column("transformation", Text, nullable=False),
    Column("executable", Text, nullable=False),
    Column("argv", Text),
    Column("abs_task_id", String(255)),
    Column("maxrss", Integer),
    Column("avg_cpu", Stamp),
    unique=("UNIQUE_INVOCATION", "job_instance_id", "task_submit_seq"),
    indexes=(
        ("invoc_abs_task_id_COL", "abs_task_id"),
        ("invoc_wf_id_COL", "wf_id"),
    ),
)

integrity = _table(
    "integrity",
    Column("integrity_id", KeyInt, primary_key=True),
    Column("wf_id", KeyInt, _fk("workflow.wf_id"), nullable=False),
    Column("job_instance_id", KeyInt, _fk("job_instance.job_instance_id"), nullable=False),
    Column("type", _enum("integrity_type_desc", "check", "compute"), nullable=False),
    Column("file_type", _enum("integrity_file_type_desc", "input", "output")),
    Column("count", Integer, nullable=False),
    Column("duration", Duration, nullable=False),
    unique=("UNIQUE_INTEGRITY", "job_instance_id", "type", "file_type"),
)

workflow_files = _table(
    "workflow_files",
    Column("wf_id", KeyInt, _fk("workflow.wf_id"), primary_key=True),
    Column("task_id", KeyInt, _fk("task.task_id"), primary_key=True),
    Column("lfn_id", KeyInt, _fk("rc_lfn.lfn_id"), primary_key=True),
    Column("file_type", String(255)),
)
