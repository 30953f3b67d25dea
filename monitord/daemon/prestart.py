"""A replay's helper processes (the SQL loader's child, the read-ahead worker), decided once
and started before the daemon loads its own modules.

A helper's start-up (its interpreter, then its modules: SQLAlchemy and the schema for the SQL
child) took ~0.1–0.3 s that the daemon spent waiting, the worker's before the replay began and
the SQL child's with the parser stopped on a full queue.  Started as soon as the command line
is read, the helpers load their modules on the second core while the daemon loads its own
(bench/README.md, "Issue 30, eleventh session: small30h"); :class:`ReadAhead` and the SQL
destinations' :class:`ProcessSink` then take them (``sinks/runtime/child.py`` ``prestart``).
The read-ahead worker's plan is known from the command line: it is sent at once, and the
worker scans dagman.out while the daemon loads its sinks and opens the workflow
(bench/README.md, "Issue 30, thirteenth session: startup30j").
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

from monitord.daemon.config import MonitorConfig
from monitord.daemon.outputs import core_to_spare, helper_processes, loader_in_process
from sinks.runtime.child import prestart
from sinks.runtime.factory import scheme_of
from sinks.sql.schemes import SQL_SCHEMES

if TYPE_CHECKING:
    from monitord.daemon.readahead import Plan

#: what the SQL child's payload (the unopened SQL sink) loads as it is unpickled
SQL_MODULES = ("sinks.sql.sink",)
#: what the helpers serve (``sinks/runtime/process_sink.py``, ``monitord/daemon/readahead.py``
#: ``SERVE``: modules a replay without helpers does not load), pinned by tests/test_prestart.py
SQL_SERVE = "sinks.runtime.process_sink:serve_sink"
READ_AHEAD_SERVE = "monitord.daemon.readahead:serve_read_ahead"
#: the niceness the helpers add to theirs on a quiet machine (:func:`helper_nice`)
HELPER_NICE = 5


def helper_nice() -> int:
    """:data:`HELPER_NICE` on two cores or more with half a core to spare (the rule of
    :func:`~monitord.daemon.outputs.helper_processes`), else 0.

    Made when the daemon's parser was the replay's critical path: three processes on two
    cores, and niced, the helpers took what it left, ahead of it by their queues (20,000 jobs
    under load: the wall −9.5 %; bench/README.md, "Issue 30, twelfth session: pipeline30i").
    The read-ahead worker is now the critical path, niced too; at 20,000 jobs on a machine
    quiet as the replay sees it, un-nicing it (or both helpers) made no difference beyond the
    noise, so the rule stayed.  On a busy machine (helpers forced by ``--sql-process``,
    ``--read-ahead``) a niced helper yields to everyone else's processes and the daemon waits
    on it: beside three busy loops the replay took 2.3 times as long niced (bench/README.md,
    "Issue 30, fourteenth session: mend30l"), hence 0 there.
    """
    return HELPER_NICE if core_to_spare()[0] else 0


def prestart_helpers(cfg: MonitorConfig) -> MonitorConfig:
    """Decide which helpers a replay gets (the options, else ``helper_processes``), start them,
    and return ``cfg`` with the decision in it (``read_ahead``, ``sql_process``), so the
    replay takes it as made, not again at a later load average."""
    if not cfg.replay:
        return cfg
    ahead = cfg.read_ahead
    if ahead is None:
        ahead = helper_processes(cfg, "read-ahead")
    sql = loader_in_process(cfg)
    nice = helper_nice() if ahead or sql else 0
    if sql and writes_sql(cfg):
        prestart(SQL_SERVE, SQL_MODULES, nice)
    if ahead:
        # its plan is known now: it scans while this process loads its sinks
        from monitord.daemon.readahead import worker
        from monitord.system import loglevel

        first = worker(read_ahead_plan(cfg), loglevel.level()).first
        prestart(READ_AHEAD_SERVE, nice=nice, first=first)
    return replace(cfg, read_ahead=ahead, sql_process=sql)


def writes_sql(cfg: MonitorConfig) -> bool:
    """Whether some destination of ``cfg`` is a SQL database (none given: the default one)."""
    return any(d is None or scheme_of(d) in SQL_SCHEMES for d in cfg.dests or [None])


def sql_in_daemon(cfg: MonitorConfig) -> bool:
    """Whether the daemon itself will build a SQL sink (SQLAlchemy, the schema): a SQL
    destination not written by a loader child, or the dashboard's; a ``--sql-process``
    replay's child builds its own from a recipe (``sinks/sql/recipe.py``)."""
    return cfg.dashboard or (writes_sql(cfg) and not cfg.sql_process)


def read_ahead_plan(cfg: MonitorConfig) -> Plan:
    """What the read-ahead worker of the replay ``cfg`` needs (the same at its prestart and
    when the replay takes it)."""
    from monitord.daemon.readahead import Plan, zone

    return Plan(
        os.path.abspath(cfg.dagman_out),
        store_stdout=cfg.store_stdout,
        adjust=cfg.adjust,
        zone=zone(),
    )
