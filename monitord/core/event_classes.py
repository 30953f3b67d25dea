"""The Stampede event classes, one per kind of the catalogue.  GENERATED: do not edit.

Written by ``python -m monitord.core.eventgen`` from ``monitord/core/catalogue.py`` (see
there for the kinds and ``core/eventbase.py`` for what every event has); import them from
``monitord.core.events``.  An optional attribute the event does not carry is ``UNSET``.
"""

# fmt: off
# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from monitord.core.catalogue import BY_NAME, EventSpec
from monitord.core.eventbase import (
    EMPTY,
    FIXED_KEYS,
    UNSET,
    Fixed,
    StampedeEvent,
    missing,
    slot_setters,
    split_rest,
)

_new = object.__new__


class WithFixed(StampedeEvent):
    """A kind carrying the workflow's fixed attributes (doc §5.1), read through ``fixed``."""

    __slots__ = ()

    @property
    def root_xwf_id(self) -> str | None:
        fx = self.fixed
        return UNSET if fx is None else fx.root_xwf_id

    @property
    def dax(self) -> str | int | float | bool | None:
        fx = self.fixed
        return UNSET if fx is None else fx.dax

    @property
    def dag(self) -> str | int | float | bool | None:
        fx = self.fixed
        return UNSET if fx is None else fx.dag

    @property
    def wf_ts(self) -> int | None:
        fx = self.fixed
        return UNSET if fx is None else fx.wf_ts

    @property
    def submit_dir(self) -> str | int | float | bool | None:
        fx = self.fixed
        return UNSET if fx is None else fx.submit_dir

    @property
    def pegasus_version(self) -> str | int | float | bool | None:
        fx = self.fixed
        return UNSET if fx is None else fx.pegasus_version

    @property
    def submit_hostname(self) -> str | int | float | bool | None:
        fx = self.fixed
        return UNSET if fx is None else fx.submit_hostname

    @property
    def wf_user(self) -> str | int | float | bool | None:
        fx = self.fixed
        return UNSET if fx is None else fx.wf_user


class WfPlan(WithFixed):
    """``stampede.wf.plan``."""

    __slots__ = ("xwf_id", "dax_label", "dax_version", "dax_index", "dax_file", "dag_file_name", "ts", "submit_hostname", "submit_dir", "argv", "user", "grid_dn", "planner_version", "parent_xwf_id", "root_xwf_id", "db_url")
    name: ClassVar[str] = "wf.plan"
    spec: ClassVar[EventSpec | None] = BY_NAME["wf.plan"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id",)
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "dax_label", "dax_version", "dax_index", "dax_file", "dag_file_name", "ts", "submit_hostname", "submit_dir", "argv", "user", "grid_dn", "planner_version", "parent_xwf_id", "root_xwf_id", "db_url")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "dax.label": "dax_label", "dax.version": "dax_version", "dax.index": "dax_index", "dax.file": "dax_file", "dag.file.name": "dag_file_name", "ts": "ts", "submit.hostname": "submit_hostname", "submit.dir": "submit_dir", "argv": "argv", "user": "user", "grid_dn": "grid_dn", "planner.version": "planner_version", "parent.xwf.id": "parent_xwf_id", "root.xwf.id": "root_xwf_id", "db_url": "db_url"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "dax.label", "dax.version", "dax.index", "dax.file", "dag.file.name", "ts", "submit.hostname", "submit.dir", "argv", "user", "grid_dn", "planner.version", "parent.xwf.id", "root.xwf.id", "db_url"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    dax_label: str | int | float | bool | None
    dax_version: str | int | float | bool | None
    dax_index: str | int | float | bool | None
    dax_file: str | int | float | bool | None
    dag_file_name: str | int | float | bool | None
    ts: int | None
    submit_hostname: str | int | float | bool | None
    submit_dir: str | int | float | bool | None
    argv: str | int | float | bool | None
    user: str | int | float | bool | None
    grid_dn: str | int | float | bool | None
    planner_version: str | int | float | bool | None
    parent_xwf_id: str
    root_xwf_id: str | None
    db_url: str

    def __init__(
        self,
        *,
        xwf_id: str,
        dax_label: str | int | float | bool | None = UNSET,
        dax_version: str | int | float | bool | None = UNSET,
        dax_index: str | int | float | bool | None = UNSET,
        dax_file: str | int | float | bool | None = UNSET,
        dag_file_name: str | int | float | bool | None = UNSET,
        ts: int | None = UNSET,
        submit_hostname: str | int | float | bool | None = UNSET,
        submit_dir: str | int | float | bool | None = UNSET,
        argv: str | int | float | bool | None = UNSET,
        user: str | int | float | bool | None = UNSET,
        grid_dn: str | int | float | bool | None = UNSET,
        planner_version: str | int | float | bool | None = UNSET,
        parent_xwf_id: str = UNSET,
        root_xwf_id: str | None = UNSET,
        db_url: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _WfPlan_xwf_id(self, xwf_id)
        _WfPlan_dax_label(self, dax_label)
        _WfPlan_dax_version(self, dax_version)
        _WfPlan_dax_index(self, dax_index)
        _WfPlan_dax_file(self, dax_file)
        _WfPlan_dag_file_name(self, dag_file_name)
        _WfPlan_ts(self, ts)
        _WfPlan_submit_hostname(self, submit_hostname)
        _WfPlan_submit_dir(self, submit_dir)
        _WfPlan_argv(self, argv)
        _WfPlan_user(self, user)
        _WfPlan_grid_dn(self, grid_dn)
        _WfPlan_planner_version(self, planner_version)
        _WfPlan_parent_xwf_id(self, parent_xwf_id)
        _WfPlan_root_xwf_id(self, root_xwf_id)
        _WfPlan_db_url(self, db_url)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        dax_label: str | int | float | bool | None,
        dax_version: str | int | float | bool | None,
        dax_index: str | int | float | bool | None,
        dax_file: str | int | float | bool | None,
        dag_file_name: str | int | float | bool | None,
        ts: int | None,
        submit_hostname: str | int | float | bool | None,
        submit_dir: str | int | float | bool | None,
        argv: str | int | float | bool | None,
        user: str | int | float | bool | None,
        grid_dn: str | int | float | bool | None,
        planner_version: str | int | float | bool | None,
        parent_xwf_id: str,
        root_xwf_id: str | None,
        db_url: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> WfPlan:
        self = _new(cls)
        _WfPlan_xwf_id(self, xwf_id)
        _WfPlan_dax_label(self, dax_label)
        _WfPlan_dax_version(self, dax_version)
        _WfPlan_dax_index(self, dax_index)
        _WfPlan_dax_file(self, dax_file)
        _WfPlan_dag_file_name(self, dag_file_name)
        _WfPlan_ts(self, ts)
        _WfPlan_submit_hostname(self, submit_hostname)
        _WfPlan_submit_dir(self, submit_dir)
        _WfPlan_argv(self, argv)
        _WfPlan_user(self, user)
        _WfPlan_grid_dn(self, grid_dn)
        _WfPlan_planner_version(self, planner_version)
        _WfPlan_parent_xwf_id(self, parent_xwf_id)
        _WfPlan_root_xwf_id(self, root_xwf_id)
        _WfPlan_db_url(self, db_url)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> WfPlan:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _WfPlan_xwf_id(self, attrs["xwf.id"])
        _WfPlan_dax_label(self, get("dax.label", UNSET))
        _WfPlan_dax_version(self, get("dax.version", UNSET))
        _WfPlan_dax_index(self, get("dax.index", UNSET))
        _WfPlan_dax_file(self, get("dax.file", UNSET))
        _WfPlan_dag_file_name(self, get("dag.file.name", UNSET))
        _WfPlan_ts(self, get("ts", UNSET))
        _WfPlan_submit_hostname(self, get("submit.hostname", UNSET))
        _WfPlan_submit_dir(self, get("submit.dir", UNSET))
        _WfPlan_argv(self, get("argv", UNSET))
        _WfPlan_user(self, get("user", UNSET))
        _WfPlan_grid_dn(self, get("grid_dn", UNSET))
        _WfPlan_planner_version(self, get("planner.version", UNSET))
        _WfPlan_parent_xwf_id(self, get("parent.xwf.id", UNSET))
        _WfPlan_root_xwf_id(self, get("root.xwf.id", UNSET))
        _WfPlan_db_url(self, get("db_url", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.dax_label
        if v is not UNSET:
            add(("dax.label", v))
        v = self.dax_version
        if v is not UNSET:
            add(("dax.version", v))
        v = self.dax_index
        if v is not UNSET:
            add(("dax.index", v))
        v = self.dax_file
        if v is not UNSET:
            add(("dax.file", v))
        v = self.dag_file_name
        if v is not UNSET:
            add(("dag.file.name", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.submit_hostname
        if v is not UNSET:
            add(("submit.hostname", v))
        v = self.submit_dir
        if v is not UNSET:
            add(("submit.dir", v))
        v = self.argv
        if v is not UNSET:
            add(("argv", v))
        v = self.user
        if v is not UNSET:
            add(("user", v))
        v = self.grid_dn
        if v is not UNSET:
            add(("grid_dn", v))
        v = self.planner_version
        if v is not UNSET:
            add(("planner.version", v))
        v = self.parent_xwf_id
        if v is not UNSET:
            add(("parent.xwf.id", v))
        v = self.root_xwf_id
        if v is not UNSET:
            add(("root.xwf.id", v))
        v = self.db_url
        if v is not UNSET:
            add(("db_url", v))
        fx = self.fixed
        if fx is not None:
            v = fx.xwf_id
            if self.xwf_id is UNSET and v is not UNSET:
                add(("xwf.id", v))
            v = fx.root_xwf_id
            if self.root_xwf_id is UNSET and v is not UNSET:
                add(("root.xwf.id", v))
            v = fx.dax
            if v is not UNSET:
                add(("dax", v))
            v = fx.dag
            if v is not UNSET:
                add(("dag", v))
            v = fx.wf_ts
            if v is not UNSET:
                add(("wf.ts", v))
            v = fx.submit_dir
            if self.submit_dir is UNSET and v is not UNSET:
                add(("submit.dir", v))
            v = fx.pegasus_version
            if v is not UNSET:
                add(("pegasus.version", v))
            v = fx.submit_hostname
            if self.submit_hostname is UNSET and v is not UNSET:
                add(("submit.hostname", v))
            v = fx.wf_user
            if v is not UNSET:
                add(("wf.user", v))
        if self.extra:
            out.extend(self.extra.items())
        return out


_WfPlan_xwf_id, _WfPlan_dax_label, _WfPlan_dax_version, _WfPlan_dax_index, _WfPlan_dax_file, _WfPlan_dag_file_name, _WfPlan_ts, _WfPlan_submit_hostname, _WfPlan_submit_dir, _WfPlan_argv, _WfPlan_user, _WfPlan_grid_dn, _WfPlan_planner_version, _WfPlan_parent_xwf_id, _WfPlan_root_xwf_id, _WfPlan_db_url = slot_setters(WfPlan)


class WfMapTaskJob(WithFixed):
    """``stampede.wf.map.task_job``."""

    __slots__ = ("xwf_id", "job_id", "task_id", "ts")
    name: ClassVar[str] = "wf.map.task_job"
    spec: ClassVar[EventSpec | None] = BY_NAME["wf.map.task_job"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "task.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "task_id", "ts")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "task.id": "task_id", "ts": "ts"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "task.id", "ts"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    task_id: str
    ts: int | str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        task_id: str,
        ts: int | str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _WfMapTaskJob_xwf_id(self, xwf_id)
        _WfMapTaskJob_job_id(self, job_id)
        _WfMapTaskJob_task_id(self, task_id)
        _WfMapTaskJob_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        task_id: str,
        ts: int | str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> WfMapTaskJob:
        self = _new(cls)
        _WfMapTaskJob_xwf_id(self, xwf_id)
        _WfMapTaskJob_job_id(self, job_id)
        _WfMapTaskJob_task_id(self, task_id)
        _WfMapTaskJob_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> WfMapTaskJob:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "task.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _WfMapTaskJob_xwf_id(self, attrs["xwf.id"])
        _WfMapTaskJob_job_id(self, attrs["job.id"])
        _WfMapTaskJob_task_id(self, attrs["task.id"])
        _WfMapTaskJob_ts(self, get("ts", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.task_id
        if v is not UNSET:
            add(("task.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_WfMapTaskJob_xwf_id, _WfMapTaskJob_job_id, _WfMapTaskJob_task_id, _WfMapTaskJob_ts = slot_setters(WfMapTaskJob)


class StaticStart(WithFixed):
    """``stampede.static.start``."""

    __slots__ = ("xwf_id",)
    name: ClassVar[str] = "static.start"
    spec: ClassVar[EventSpec | None] = BY_NAME["static.start"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id",)
    fields: ClassVar[tuple[str, ...]] = ("xwf_id",)
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id",))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str

    def __init__(
        self,
        *,
        xwf_id: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _StaticStart_xwf_id(self, xwf_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> StaticStart:
        self = _new(cls)
        _StaticStart_xwf_id(self, xwf_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> StaticStart:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        _StaticStart_xwf_id(self, attrs["xwf.id"])
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_StaticStart_xwf_id, = slot_setters(StaticStart)


class StaticEnd(WithFixed):
    """``stampede.static.end``."""

    __slots__ = ("xwf_id",)
    name: ClassVar[str] = "static.end"
    spec: ClassVar[EventSpec | None] = BY_NAME["static.end"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id",)
    fields: ClassVar[tuple[str, ...]] = ("xwf_id",)
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id",))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str

    def __init__(
        self,
        *,
        xwf_id: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _StaticEnd_xwf_id(self, xwf_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> StaticEnd:
        self = _new(cls)
        _StaticEnd_xwf_id(self, xwf_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> StaticEnd:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        _StaticEnd_xwf_id(self, attrs["xwf.id"])
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_StaticEnd_xwf_id, = slot_setters(StaticEnd)


class XwfStart(WithFixed):
    """``stampede.xwf.start``."""

    __slots__ = ("xwf_id", "ts", "reason", "restart_count")
    name: ClassVar[str] = "xwf.start"
    spec: ClassVar[EventSpec | None] = BY_NAME["xwf.start"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "ts", "restart_count")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "ts", "reason", "restart_count")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "ts": "ts", "reason": "reason", "restart_count": "restart_count"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "ts", "reason", "restart_count"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    ts: int | float
    reason: str | None
    restart_count: int

    def __init__(
        self,
        *,
        xwf_id: str,
        ts: int | float,
        reason: str | None = UNSET,
        restart_count: int,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _XwfStart_xwf_id(self, xwf_id)
        _XwfStart_ts(self, ts)
        _XwfStart_reason(self, reason)
        _XwfStart_restart_count(self, restart_count)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        ts: int | float,
        reason: str | None,
        restart_count: int,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> XwfStart:
        self = _new(cls)
        _XwfStart_xwf_id(self, xwf_id)
        _XwfStart_ts(self, ts)
        _XwfStart_reason(self, reason)
        _XwfStart_restart_count(self, restart_count)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> XwfStart:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "ts" not in attrs or "restart_count" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _XwfStart_xwf_id(self, attrs["xwf.id"])
        _XwfStart_ts(self, attrs["ts"])
        _XwfStart_reason(self, get("reason", UNSET))
        _XwfStart_restart_count(self, attrs["restart_count"])
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.restart_count
        if v is not UNSET:
            add(("restart_count", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_XwfStart_xwf_id, _XwfStart_ts, _XwfStart_reason, _XwfStart_restart_count = slot_setters(XwfStart)


class XwfEnd(WithFixed):
    """``stampede.xwf.end``."""

    __slots__ = ("xwf_id", "ts", "reason", "restart_count", "status", "level")
    name: ClassVar[str] = "xwf.end"
    spec: ClassVar[EventSpec | None] = BY_NAME["xwf.end"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "ts", "restart_count", "status")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "ts", "reason", "restart_count", "status", "level")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "ts": "ts", "reason": "reason", "restart_count": "restart_count", "status": "status", "level": "level"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "ts", "reason", "restart_count", "status", "level"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    ts: int | float
    reason: str | None
    restart_count: int
    status: int
    level: str

    def __init__(
        self,
        *,
        xwf_id: str,
        ts: int | float,
        reason: str | None = UNSET,
        restart_count: int,
        status: int,
        level: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _XwfEnd_xwf_id(self, xwf_id)
        _XwfEnd_ts(self, ts)
        _XwfEnd_reason(self, reason)
        _XwfEnd_restart_count(self, restart_count)
        _XwfEnd_status(self, status)
        _XwfEnd_level(self, level)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        ts: int | float,
        reason: str | None,
        restart_count: int,
        status: int,
        level: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> XwfEnd:
        self = _new(cls)
        _XwfEnd_xwf_id(self, xwf_id)
        _XwfEnd_ts(self, ts)
        _XwfEnd_reason(self, reason)
        _XwfEnd_restart_count(self, restart_count)
        _XwfEnd_status(self, status)
        _XwfEnd_level(self, level)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> XwfEnd:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "ts" not in attrs or "restart_count" not in attrs or "status" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _XwfEnd_xwf_id(self, attrs["xwf.id"])
        _XwfEnd_ts(self, attrs["ts"])
        _XwfEnd_reason(self, get("reason", UNSET))
        _XwfEnd_restart_count(self, attrs["restart_count"])
        _XwfEnd_status(self, attrs["status"])
        _XwfEnd_level(self, get("level", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.restart_count
        if v is not UNSET:
            add(("restart_count", v))
        v = self.status
        if v is not UNSET:
            add(("status", v))
        v = self.level
        if v is not UNSET:
            add(("level", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_XwfEnd_xwf_id, _XwfEnd_ts, _XwfEnd_reason, _XwfEnd_restart_count, _XwfEnd_status, _XwfEnd_level = slot_setters(XwfEnd)


class XwfMapSubwfJob(StampedeEvent):
    """``stampede.xwf.map.subwf_job``."""

    __slots__ = ("xwf_id", "ts", "subwf_id", "job_id", "job_inst_id")
    name: ClassVar[str] = "xwf.map.subwf_job"
    spec: ClassVar[EventSpec | None] = BY_NAME["xwf.map.subwf_job"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "subwf.id", "job.id", "job_inst.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "ts", "subwf_id", "job_id", "job_inst_id")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "ts": "ts", "subwf.id": "subwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "ts", "subwf.id", "job.id", "job_inst.id"))

    xwf_id: str
    ts: int | None
    subwf_id: str
    job_id: str
    job_inst_id: int

    def __init__(
        self,
        *,
        xwf_id: str,
        ts: int | None = UNSET,
        subwf_id: str,
        job_id: str,
        job_inst_id: int,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _XwfMapSubwfJob_xwf_id(self, xwf_id)
        _XwfMapSubwfJob_ts(self, ts)
        _XwfMapSubwfJob_subwf_id(self, subwf_id)
        _XwfMapSubwfJob_job_id(self, job_id)
        _XwfMapSubwfJob_job_inst_id(self, job_inst_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        ts: int | None,
        subwf_id: str,
        job_id: str,
        job_inst_id: int,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> XwfMapSubwfJob:
        self = _new(cls)
        _XwfMapSubwfJob_xwf_id(self, xwf_id)
        _XwfMapSubwfJob_ts(self, ts)
        _XwfMapSubwfJob_subwf_id(self, subwf_id)
        _XwfMapSubwfJob_job_id(self, job_id)
        _XwfMapSubwfJob_job_inst_id(self, job_inst_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> XwfMapSubwfJob:
        if fixed is not None:
            attrs.update(fixed.mapping)
        known = cls._keys
        usual = attrs.keys() <= known
        if "xwf.id" not in attrs or "subwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _XwfMapSubwfJob_xwf_id(self, attrs["xwf.id"])
        _XwfMapSubwfJob_ts(self, get("ts", UNSET))
        _XwfMapSubwfJob_subwf_id(self, attrs["subwf.id"])
        _XwfMapSubwfJob_job_id(self, attrs["job.id"])
        _XwfMapSubwfJob_job_inst_id(self, attrs["job_inst.id"])
        if usual:
            fixed, extra = None, EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, False)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.subwf_id
        if v is not UNSET:
            add(("subwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        if self.extra:
            out.extend(self.extra.items())
        return out


_XwfMapSubwfJob_xwf_id, _XwfMapSubwfJob_ts, _XwfMapSubwfJob_subwf_id, _XwfMapSubwfJob_job_id, _XwfMapSubwfJob_job_inst_id = slot_setters(XwfMapSubwfJob)


class TaskInfo(WithFixed):
    """``stampede.task.info``."""

    __slots__ = ("xwf_id", "task_id", "ts", "type", "type_desc", "transformation", "argv")
    name: ClassVar[str] = "task.info"
    spec: ClassVar[EventSpec | None] = BY_NAME["task.info"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "task.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "task_id", "ts", "type", "type_desc", "transformation", "argv")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "task.id": "task_id", "ts": "ts", "type": "type", "type_desc": "type_desc", "transformation": "transformation", "argv": "argv"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "task.id", "ts", "type", "type_desc", "transformation", "argv"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    task_id: str
    ts: int | str
    type: str
    type_desc: str
    transformation: str
    argv: str

    def __init__(
        self,
        *,
        xwf_id: str,
        task_id: str,
        ts: int | str = UNSET,
        type: str = UNSET,
        type_desc: str = UNSET,
        transformation: str = UNSET,
        argv: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _TaskInfo_xwf_id(self, xwf_id)
        _TaskInfo_task_id(self, task_id)
        _TaskInfo_ts(self, ts)
        _TaskInfo_type(self, type)
        _TaskInfo_type_desc(self, type_desc)
        _TaskInfo_transformation(self, transformation)
        _TaskInfo_argv(self, argv)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        task_id: str,
        ts: int | str,
        type: str,
        type_desc: str,
        transformation: str,
        argv: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> TaskInfo:
        self = _new(cls)
        _TaskInfo_xwf_id(self, xwf_id)
        _TaskInfo_task_id(self, task_id)
        _TaskInfo_ts(self, ts)
        _TaskInfo_type(self, type)
        _TaskInfo_type_desc(self, type_desc)
        _TaskInfo_transformation(self, transformation)
        _TaskInfo_argv(self, argv)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> TaskInfo:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "task.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _TaskInfo_xwf_id(self, attrs["xwf.id"])
        _TaskInfo_task_id(self, attrs["task.id"])
        _TaskInfo_ts(self, get("ts", UNSET))
        _TaskInfo_type(self, get("type", UNSET))
        _TaskInfo_type_desc(self, get("type_desc", UNSET))
        _TaskInfo_transformation(self, get("transformation", UNSET))
        _TaskInfo_argv(self, get("argv", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.task_id
        if v is not UNSET:
            add(("task.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.type
        if v is not UNSET:
            add(("type", v))
        v = self.type_desc
        if v is not UNSET:
            add(("type_desc", v))
        v = self.transformation
        if v is not UNSET:
            add(("transformation", v))
        v = self.argv
        if v is not UNSET:
            add(("argv", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_TaskInfo_xwf_id, _TaskInfo_task_id, _TaskInfo_ts, _TaskInfo_type, _TaskInfo_type_desc, _TaskInfo_transformation, _TaskInfo_argv = slot_setters(TaskInfo)


class TaskEdge(WithFixed):
    """``stampede.task.edge``."""

    __slots__ = ("xwf_id", "parent_task_id", "child_task_id", "ts")
    name: ClassVar[str] = "task.edge"
    spec: ClassVar[EventSpec | None] = BY_NAME["task.edge"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "parent.task.id", "child.task.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "parent_task_id", "child_task_id", "ts")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "parent.task.id": "parent_task_id", "child.task.id": "child_task_id", "ts": "ts"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "parent.task.id", "child.task.id", "ts"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    parent_task_id: str
    child_task_id: str
    ts: int | str

    def __init__(
        self,
        *,
        xwf_id: str,
        parent_task_id: str,
        child_task_id: str,
        ts: int | str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _TaskEdge_xwf_id(self, xwf_id)
        _TaskEdge_parent_task_id(self, parent_task_id)
        _TaskEdge_child_task_id(self, child_task_id)
        _TaskEdge_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        parent_task_id: str,
        child_task_id: str,
        ts: int | str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> TaskEdge:
        self = _new(cls)
        _TaskEdge_xwf_id(self, xwf_id)
        _TaskEdge_parent_task_id(self, parent_task_id)
        _TaskEdge_child_task_id(self, child_task_id)
        _TaskEdge_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> TaskEdge:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "parent.task.id" not in attrs or "child.task.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _TaskEdge_xwf_id(self, attrs["xwf.id"])
        _TaskEdge_parent_task_id(self, attrs["parent.task.id"])
        _TaskEdge_child_task_id(self, attrs["child.task.id"])
        _TaskEdge_ts(self, get("ts", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.parent_task_id
        if v is not UNSET:
            add(("parent.task.id", v))
        v = self.child_task_id
        if v is not UNSET:
            add(("child.task.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_TaskEdge_xwf_id, _TaskEdge_parent_task_id, _TaskEdge_child_task_id, _TaskEdge_ts = slot_setters(TaskEdge)


class JobInfo(WithFixed):
    """``stampede.job.info``."""

    __slots__ = ("xwf_id", "job_id", "ts", "submit_file", "type", "type_desc", "clustered", "max_retries", "executable", "argv", "task_count")
    name: ClassVar[str] = "job.info"
    spec: ClassVar[EventSpec | None] = BY_NAME["job.info"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "ts", "submit_file", "type", "type_desc", "clustered", "max_retries", "executable", "argv", "task_count")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "ts": "ts", "submit_file": "submit_file", "type": "type", "type_desc": "type_desc", "clustered": "clustered", "max_retries": "max_retries", "executable": "executable", "argv": "argv", "task_count": "task_count"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "ts", "submit_file", "type", "type_desc", "clustered", "max_retries", "executable", "argv", "task_count"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    ts: int | str
    submit_file: str
    type: str
    type_desc: str
    clustered: str
    max_retries: str
    executable: str
    argv: str
    task_count: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        ts: int | str = UNSET,
        submit_file: str = UNSET,
        type: str = UNSET,
        type_desc: str = UNSET,
        clustered: str = UNSET,
        max_retries: str = UNSET,
        executable: str = UNSET,
        argv: str = UNSET,
        task_count: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInfo_xwf_id(self, xwf_id)
        _JobInfo_job_id(self, job_id)
        _JobInfo_ts(self, ts)
        _JobInfo_submit_file(self, submit_file)
        _JobInfo_type(self, type)
        _JobInfo_type_desc(self, type_desc)
        _JobInfo_clustered(self, clustered)
        _JobInfo_max_retries(self, max_retries)
        _JobInfo_executable(self, executable)
        _JobInfo_argv(self, argv)
        _JobInfo_task_count(self, task_count)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        ts: int | str,
        submit_file: str,
        type: str,
        type_desc: str,
        clustered: str,
        max_retries: str,
        executable: str,
        argv: str,
        task_count: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInfo:
        self = _new(cls)
        _JobInfo_xwf_id(self, xwf_id)
        _JobInfo_job_id(self, job_id)
        _JobInfo_ts(self, ts)
        _JobInfo_submit_file(self, submit_file)
        _JobInfo_type(self, type)
        _JobInfo_type_desc(self, type_desc)
        _JobInfo_clustered(self, clustered)
        _JobInfo_max_retries(self, max_retries)
        _JobInfo_executable(self, executable)
        _JobInfo_argv(self, argv)
        _JobInfo_task_count(self, task_count)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInfo:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInfo_xwf_id(self, attrs["xwf.id"])
        _JobInfo_job_id(self, attrs["job.id"])
        _JobInfo_ts(self, get("ts", UNSET))
        _JobInfo_submit_file(self, get("submit_file", UNSET))
        _JobInfo_type(self, get("type", UNSET))
        _JobInfo_type_desc(self, get("type_desc", UNSET))
        _JobInfo_clustered(self, get("clustered", UNSET))
        _JobInfo_max_retries(self, get("max_retries", UNSET))
        _JobInfo_executable(self, get("executable", UNSET))
        _JobInfo_argv(self, get("argv", UNSET))
        _JobInfo_task_count(self, get("task_count", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.submit_file
        if v is not UNSET:
            add(("submit_file", v))
        v = self.type
        if v is not UNSET:
            add(("type", v))
        v = self.type_desc
        if v is not UNSET:
            add(("type_desc", v))
        v = self.clustered
        if v is not UNSET:
            add(("clustered", v))
        v = self.max_retries
        if v is not UNSET:
            add(("max_retries", v))
        v = self.executable
        if v is not UNSET:
            add(("executable", v))
        v = self.argv
        if v is not UNSET:
            add(("argv", v))
        v = self.task_count
        if v is not UNSET:
            add(("task_count", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInfo_xwf_id, _JobInfo_job_id, _JobInfo_ts, _JobInfo_submit_file, _JobInfo_type, _JobInfo_type_desc, _JobInfo_clustered, _JobInfo_max_retries, _JobInfo_executable, _JobInfo_argv, _JobInfo_task_count = slot_setters(JobInfo)


class JobEdge(WithFixed):
    """``stampede.job.edge``."""

    __slots__ = ("xwf_id", "parent_job_id", "child_job_id", "ts")
    name: ClassVar[str] = "job.edge"
    spec: ClassVar[EventSpec | None] = BY_NAME["job.edge"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "parent.job.id", "child.job.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "parent_job_id", "child_job_id", "ts")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "parent.job.id": "parent_job_id", "child.job.id": "child_job_id", "ts": "ts"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "parent.job.id", "child.job.id", "ts"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    parent_job_id: str
    child_job_id: str
    ts: int | str

    def __init__(
        self,
        *,
        xwf_id: str,
        parent_job_id: str,
        child_job_id: str,
        ts: int | str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobEdge_xwf_id(self, xwf_id)
        _JobEdge_parent_job_id(self, parent_job_id)
        _JobEdge_child_job_id(self, child_job_id)
        _JobEdge_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        parent_job_id: str,
        child_job_id: str,
        ts: int | str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobEdge:
        self = _new(cls)
        _JobEdge_xwf_id(self, xwf_id)
        _JobEdge_parent_job_id(self, parent_job_id)
        _JobEdge_child_job_id(self, child_job_id)
        _JobEdge_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobEdge:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "parent.job.id" not in attrs or "child.job.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobEdge_xwf_id(self, attrs["xwf.id"])
        _JobEdge_parent_job_id(self, attrs["parent.job.id"])
        _JobEdge_child_job_id(self, attrs["child.job.id"])
        _JobEdge_ts(self, get("ts", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.parent_job_id
        if v is not UNSET:
            add(("parent.job.id", v))
        v = self.child_job_id
        if v is not UNSET:
            add(("child.job.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobEdge_xwf_id, _JobEdge_parent_job_id, _JobEdge_child_job_id, _JobEdge_ts = slot_setters(JobEdge)


class JobInstPreStart(WithFixed):
    """``stampede.job_inst.pre.start``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    name: ClassVar[str] = "job_inst.pre.start"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.pre.start"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstPreStart_xwf_id(self, xwf_id)
        _JobInstPreStart_job_id(self, job_id)
        _JobInstPreStart_job_inst_id(self, job_inst_id)
        _JobInstPreStart_ts(self, ts)
        _JobInstPreStart_js_id(self, js_id)
        _JobInstPreStart_reason(self, reason)
        _JobInstPreStart_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstPreStart:
        self = _new(cls)
        _JobInstPreStart_xwf_id(self, xwf_id)
        _JobInstPreStart_job_id(self, job_id)
        _JobInstPreStart_job_inst_id(self, job_inst_id)
        _JobInstPreStart_ts(self, ts)
        _JobInstPreStart_js_id(self, js_id)
        _JobInstPreStart_reason(self, reason)
        _JobInstPreStart_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstPreStart:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstPreStart_xwf_id(self, attrs["xwf.id"])
        _JobInstPreStart_job_id(self, attrs["job.id"])
        _JobInstPreStart_job_inst_id(self, attrs["job_inst.id"])
        _JobInstPreStart_ts(self, attrs["ts"])
        _JobInstPreStart_js_id(self, attrs["js.id"])
        _JobInstPreStart_reason(self, get("reason", UNSET))
        _JobInstPreStart_sched_id(self, get("sched.id", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstPreStart_xwf_id, _JobInstPreStart_job_id, _JobInstPreStart_job_inst_id, _JobInstPreStart_ts, _JobInstPreStart_js_id, _JobInstPreStart_reason, _JobInstPreStart_sched_id = slot_setters(JobInstPreStart)


class JobInstPreTerm(WithFixed):
    """``stampede.job_inst.pre.term``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    name: ClassVar[str] = "job_inst.pre.term"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.pre.term"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstPreTerm_xwf_id(self, xwf_id)
        _JobInstPreTerm_job_id(self, job_id)
        _JobInstPreTerm_job_inst_id(self, job_inst_id)
        _JobInstPreTerm_ts(self, ts)
        _JobInstPreTerm_js_id(self, js_id)
        _JobInstPreTerm_reason(self, reason)
        _JobInstPreTerm_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstPreTerm:
        self = _new(cls)
        _JobInstPreTerm_xwf_id(self, xwf_id)
        _JobInstPreTerm_job_id(self, job_id)
        _JobInstPreTerm_job_inst_id(self, job_inst_id)
        _JobInstPreTerm_ts(self, ts)
        _JobInstPreTerm_js_id(self, js_id)
        _JobInstPreTerm_reason(self, reason)
        _JobInstPreTerm_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstPreTerm:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstPreTerm_xwf_id(self, attrs["xwf.id"])
        _JobInstPreTerm_job_id(self, attrs["job.id"])
        _JobInstPreTerm_job_inst_id(self, attrs["job_inst.id"])
        _JobInstPreTerm_ts(self, attrs["ts"])
        _JobInstPreTerm_js_id(self, attrs["js.id"])
        _JobInstPreTerm_reason(self, get("reason", UNSET))
        _JobInstPreTerm_sched_id(self, get("sched.id", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstPreTerm_xwf_id, _JobInstPreTerm_job_id, _JobInstPreTerm_job_inst_id, _JobInstPreTerm_ts, _JobInstPreTerm_js_id, _JobInstPreTerm_reason, _JobInstPreTerm_sched_id = slot_setters(JobInstPreTerm)


class JobInstPreEnd(WithFixed):
    """``stampede.job_inst.pre.end``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id", "status", "level", "exitcode")
    name: ClassVar[str] = "job_inst.pre.end"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.pre.end"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "status")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id", "status", "level", "exitcode")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id", "status": "status", "level": "level", "exitcode": "exitcode"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id", "status", "level", "exitcode"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str
    status: int
    level: str
    exitcode: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        status: int,
        level: str = UNSET,
        exitcode: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstPreEnd_xwf_id(self, xwf_id)
        _JobInstPreEnd_job_id(self, job_id)
        _JobInstPreEnd_job_inst_id(self, job_inst_id)
        _JobInstPreEnd_ts(self, ts)
        _JobInstPreEnd_js_id(self, js_id)
        _JobInstPreEnd_reason(self, reason)
        _JobInstPreEnd_sched_id(self, sched_id)
        _JobInstPreEnd_status(self, status)
        _JobInstPreEnd_level(self, level)
        _JobInstPreEnd_exitcode(self, exitcode)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        status: int,
        level: str,
        exitcode: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstPreEnd:
        self = _new(cls)
        _JobInstPreEnd_xwf_id(self, xwf_id)
        _JobInstPreEnd_job_id(self, job_id)
        _JobInstPreEnd_job_inst_id(self, job_inst_id)
        _JobInstPreEnd_ts(self, ts)
        _JobInstPreEnd_js_id(self, js_id)
        _JobInstPreEnd_reason(self, reason)
        _JobInstPreEnd_sched_id(self, sched_id)
        _JobInstPreEnd_status(self, status)
        _JobInstPreEnd_level(self, level)
        _JobInstPreEnd_exitcode(self, exitcode)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstPreEnd:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs or "status" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstPreEnd_xwf_id(self, attrs["xwf.id"])
        _JobInstPreEnd_job_id(self, attrs["job.id"])
        _JobInstPreEnd_job_inst_id(self, attrs["job_inst.id"])
        _JobInstPreEnd_ts(self, attrs["ts"])
        _JobInstPreEnd_js_id(self, attrs["js.id"])
        _JobInstPreEnd_reason(self, get("reason", UNSET))
        _JobInstPreEnd_sched_id(self, get("sched.id", UNSET))
        _JobInstPreEnd_status(self, attrs["status"])
        _JobInstPreEnd_level(self, get("level", UNSET))
        _JobInstPreEnd_exitcode(self, get("exitcode", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        v = self.status
        if v is not UNSET:
            add(("status", v))
        v = self.level
        if v is not UNSET:
            add(("level", v))
        v = self.exitcode
        if v is not UNSET:
            add(("exitcode", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstPreEnd_xwf_id, _JobInstPreEnd_job_id, _JobInstPreEnd_job_inst_id, _JobInstPreEnd_ts, _JobInstPreEnd_js_id, _JobInstPreEnd_reason, _JobInstPreEnd_sched_id, _JobInstPreEnd_status, _JobInstPreEnd_level, _JobInstPreEnd_exitcode = slot_setters(JobInstPreEnd)


class JobInstSubmitStart(WithFixed):
    """``stampede.job_inst.submit.start``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id", "site")
    name: ClassVar[str] = "job_inst.submit.start"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.submit.start"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id", "site")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id", "site": "site"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id", "site"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str
    site: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        site: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstSubmitStart_xwf_id(self, xwf_id)
        _JobInstSubmitStart_job_id(self, job_id)
        _JobInstSubmitStart_job_inst_id(self, job_inst_id)
        _JobInstSubmitStart_ts(self, ts)
        _JobInstSubmitStart_js_id(self, js_id)
        _JobInstSubmitStart_reason(self, reason)
        _JobInstSubmitStart_sched_id(self, sched_id)
        _JobInstSubmitStart_site(self, site)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        site: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstSubmitStart:
        self = _new(cls)
        _JobInstSubmitStart_xwf_id(self, xwf_id)
        _JobInstSubmitStart_job_id(self, job_id)
        _JobInstSubmitStart_job_inst_id(self, job_inst_id)
        _JobInstSubmitStart_ts(self, ts)
        _JobInstSubmitStart_js_id(self, js_id)
        _JobInstSubmitStart_reason(self, reason)
        _JobInstSubmitStart_sched_id(self, sched_id)
        _JobInstSubmitStart_site(self, site)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstSubmitStart:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstSubmitStart_xwf_id(self, attrs["xwf.id"])
        _JobInstSubmitStart_job_id(self, attrs["job.id"])
        _JobInstSubmitStart_job_inst_id(self, attrs["job_inst.id"])
        _JobInstSubmitStart_ts(self, attrs["ts"])
        _JobInstSubmitStart_js_id(self, attrs["js.id"])
        _JobInstSubmitStart_reason(self, get("reason", UNSET))
        _JobInstSubmitStart_sched_id(self, get("sched.id", UNSET))
        _JobInstSubmitStart_site(self, get("site", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        v = self.site
        if v is not UNSET:
            add(("site", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstSubmitStart_xwf_id, _JobInstSubmitStart_job_id, _JobInstSubmitStart_job_inst_id, _JobInstSubmitStart_ts, _JobInstSubmitStart_js_id, _JobInstSubmitStart_reason, _JobInstSubmitStart_sched_id, _JobInstSubmitStart_site = slot_setters(JobInstSubmitStart)


class JobInstSubmitEnd(WithFixed):
    """``stampede.job_inst.submit.end``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id", "status", "level")
    name: ClassVar[str] = "job_inst.submit.end"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.submit.end"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "status")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id", "status", "level")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id", "status": "status", "level": "level"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id", "status", "level"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str
    status: int
    level: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        status: int,
        level: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstSubmitEnd_xwf_id(self, xwf_id)
        _JobInstSubmitEnd_job_id(self, job_id)
        _JobInstSubmitEnd_job_inst_id(self, job_inst_id)
        _JobInstSubmitEnd_ts(self, ts)
        _JobInstSubmitEnd_js_id(self, js_id)
        _JobInstSubmitEnd_reason(self, reason)
        _JobInstSubmitEnd_sched_id(self, sched_id)
        _JobInstSubmitEnd_status(self, status)
        _JobInstSubmitEnd_level(self, level)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        status: int,
        level: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstSubmitEnd:
        self = _new(cls)
        _JobInstSubmitEnd_xwf_id(self, xwf_id)
        _JobInstSubmitEnd_job_id(self, job_id)
        _JobInstSubmitEnd_job_inst_id(self, job_inst_id)
        _JobInstSubmitEnd_ts(self, ts)
        _JobInstSubmitEnd_js_id(self, js_id)
        _JobInstSubmitEnd_reason(self, reason)
        _JobInstSubmitEnd_sched_id(self, sched_id)
        _JobInstSubmitEnd_status(self, status)
        _JobInstSubmitEnd_level(self, level)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstSubmitEnd:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs or "status" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstSubmitEnd_xwf_id(self, attrs["xwf.id"])
        _JobInstSubmitEnd_job_id(self, attrs["job.id"])
        _JobInstSubmitEnd_job_inst_id(self, attrs["job_inst.id"])
        _JobInstSubmitEnd_ts(self, attrs["ts"])
        _JobInstSubmitEnd_js_id(self, attrs["js.id"])
        _JobInstSubmitEnd_reason(self, get("reason", UNSET))
        _JobInstSubmitEnd_sched_id(self, get("sched.id", UNSET))
        _JobInstSubmitEnd_status(self, attrs["status"])
        _JobInstSubmitEnd_level(self, get("level", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        v = self.status
        if v is not UNSET:
            add(("status", v))
        v = self.level
        if v is not UNSET:
            add(("level", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstSubmitEnd_xwf_id, _JobInstSubmitEnd_job_id, _JobInstSubmitEnd_job_inst_id, _JobInstSubmitEnd_ts, _JobInstSubmitEnd_js_id, _JobInstSubmitEnd_reason, _JobInstSubmitEnd_sched_id, _JobInstSubmitEnd_status, _JobInstSubmitEnd_level = slot_setters(JobInstSubmitEnd)


class JobInstHeldStart(WithFixed):
    """``stampede.job_inst.held.start``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    name: ClassVar[str] = "job_inst.held.start"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.held.start"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstHeldStart_xwf_id(self, xwf_id)
        _JobInstHeldStart_job_id(self, job_id)
        _JobInstHeldStart_job_inst_id(self, job_inst_id)
        _JobInstHeldStart_ts(self, ts)
        _JobInstHeldStart_js_id(self, js_id)
        _JobInstHeldStart_reason(self, reason)
        _JobInstHeldStart_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstHeldStart:
        self = _new(cls)
        _JobInstHeldStart_xwf_id(self, xwf_id)
        _JobInstHeldStart_job_id(self, job_id)
        _JobInstHeldStart_job_inst_id(self, job_inst_id)
        _JobInstHeldStart_ts(self, ts)
        _JobInstHeldStart_js_id(self, js_id)
        _JobInstHeldStart_reason(self, reason)
        _JobInstHeldStart_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstHeldStart:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstHeldStart_xwf_id(self, attrs["xwf.id"])
        _JobInstHeldStart_job_id(self, attrs["job.id"])
        _JobInstHeldStart_job_inst_id(self, attrs["job_inst.id"])
        _JobInstHeldStart_ts(self, attrs["ts"])
        _JobInstHeldStart_js_id(self, attrs["js.id"])
        _JobInstHeldStart_reason(self, get("reason", UNSET))
        _JobInstHeldStart_sched_id(self, get("sched.id", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstHeldStart_xwf_id, _JobInstHeldStart_job_id, _JobInstHeldStart_job_inst_id, _JobInstHeldStart_ts, _JobInstHeldStart_js_id, _JobInstHeldStart_reason, _JobInstHeldStart_sched_id = slot_setters(JobInstHeldStart)


class JobInstHeldEnd(WithFixed):
    """``stampede.job_inst.held.end``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id", "status", "level")
    name: ClassVar[str] = "job_inst.held.end"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.held.end"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "status")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id", "status", "level")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id", "status": "status", "level": "level"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id", "status", "level"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str
    status: int
    level: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        status: int,
        level: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstHeldEnd_xwf_id(self, xwf_id)
        _JobInstHeldEnd_job_id(self, job_id)
        _JobInstHeldEnd_job_inst_id(self, job_inst_id)
        _JobInstHeldEnd_ts(self, ts)
        _JobInstHeldEnd_js_id(self, js_id)
        _JobInstHeldEnd_reason(self, reason)
        _JobInstHeldEnd_sched_id(self, sched_id)
        _JobInstHeldEnd_status(self, status)
        _JobInstHeldEnd_level(self, level)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        status: int,
        level: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstHeldEnd:
        self = _new(cls)
        _JobInstHeldEnd_xwf_id(self, xwf_id)
        _JobInstHeldEnd_job_id(self, job_id)
        _JobInstHeldEnd_job_inst_id(self, job_inst_id)
        _JobInstHeldEnd_ts(self, ts)
        _JobInstHeldEnd_js_id(self, js_id)
        _JobInstHeldEnd_reason(self, reason)
        _JobInstHeldEnd_sched_id(self, sched_id)
        _JobInstHeldEnd_status(self, status)
        _JobInstHeldEnd_level(self, level)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstHeldEnd:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs or "status" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstHeldEnd_xwf_id(self, attrs["xwf.id"])
        _JobInstHeldEnd_job_id(self, attrs["job.id"])
        _JobInstHeldEnd_job_inst_id(self, attrs["job_inst.id"])
        _JobInstHeldEnd_ts(self, attrs["ts"])
        _JobInstHeldEnd_js_id(self, attrs["js.id"])
        _JobInstHeldEnd_reason(self, get("reason", UNSET))
        _JobInstHeldEnd_sched_id(self, get("sched.id", UNSET))
        _JobInstHeldEnd_status(self, attrs["status"])
        _JobInstHeldEnd_level(self, get("level", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        v = self.status
        if v is not UNSET:
            add(("status", v))
        v = self.level
        if v is not UNSET:
            add(("level", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstHeldEnd_xwf_id, _JobInstHeldEnd_job_id, _JobInstHeldEnd_job_inst_id, _JobInstHeldEnd_ts, _JobInstHeldEnd_js_id, _JobInstHeldEnd_reason, _JobInstHeldEnd_sched_id, _JobInstHeldEnd_status, _JobInstHeldEnd_level = slot_setters(JobInstHeldEnd)


class JobInstMainStart(WithFixed):
    """``stampede.job_inst.main.start``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "stdin_file", "stdout_file", "stderr_file", "sched_id")
    name: ClassVar[str] = "job_inst.main.start"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.main.start"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "stdin_file", "stdout_file", "stderr_file", "sched_id")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "stdin.file": "stdin_file", "stdout.file": "stdout_file", "stderr.file": "stderr_file", "sched.id": "sched_id"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "stdin.file", "stdout.file", "stderr.file", "sched.id"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    stdin_file: str
    stdout_file: str
    stderr_file: str
    sched_id: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        stdin_file: str = UNSET,
        stdout_file: str = UNSET,
        stderr_file: str = UNSET,
        sched_id: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstMainStart_xwf_id(self, xwf_id)
        _JobInstMainStart_job_id(self, job_id)
        _JobInstMainStart_job_inst_id(self, job_inst_id)
        _JobInstMainStart_ts(self, ts)
        _JobInstMainStart_js_id(self, js_id)
        _JobInstMainStart_stdin_file(self, stdin_file)
        _JobInstMainStart_stdout_file(self, stdout_file)
        _JobInstMainStart_stderr_file(self, stderr_file)
        _JobInstMainStart_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        stdin_file: str,
        stdout_file: str,
        stderr_file: str,
        sched_id: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstMainStart:
        self = _new(cls)
        _JobInstMainStart_xwf_id(self, xwf_id)
        _JobInstMainStart_job_id(self, job_id)
        _JobInstMainStart_job_inst_id(self, job_inst_id)
        _JobInstMainStart_ts(self, ts)
        _JobInstMainStart_js_id(self, js_id)
        _JobInstMainStart_stdin_file(self, stdin_file)
        _JobInstMainStart_stdout_file(self, stdout_file)
        _JobInstMainStart_stderr_file(self, stderr_file)
        _JobInstMainStart_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstMainStart:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstMainStart_xwf_id(self, attrs["xwf.id"])
        _JobInstMainStart_job_id(self, attrs["job.id"])
        _JobInstMainStart_job_inst_id(self, attrs["job_inst.id"])
        _JobInstMainStart_ts(self, attrs["ts"])
        _JobInstMainStart_js_id(self, attrs["js.id"])
        _JobInstMainStart_stdin_file(self, get("stdin.file", UNSET))
        _JobInstMainStart_stdout_file(self, get("stdout.file", UNSET))
        _JobInstMainStart_stderr_file(self, get("stderr.file", UNSET))
        _JobInstMainStart_sched_id(self, get("sched.id", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.stdin_file
        if v is not UNSET:
            add(("stdin.file", v))
        v = self.stdout_file
        if v is not UNSET:
            add(("stdout.file", v))
        v = self.stderr_file
        if v is not UNSET:
            add(("stderr.file", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstMainStart_xwf_id, _JobInstMainStart_job_id, _JobInstMainStart_job_inst_id, _JobInstMainStart_ts, _JobInstMainStart_js_id, _JobInstMainStart_stdin_file, _JobInstMainStart_stdout_file, _JobInstMainStart_stderr_file, _JobInstMainStart_sched_id = slot_setters(JobInstMainStart)


class JobInstMainTerm(WithFixed):
    """``stampede.job_inst.main.term``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id", "status", "level")
    name: ClassVar[str] = "job_inst.main.term"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.main.term"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "status")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id", "status", "level")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id", "status": "status", "level": "level"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id", "status", "level"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str
    status: int
    level: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        status: int,
        level: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstMainTerm_xwf_id(self, xwf_id)
        _JobInstMainTerm_job_id(self, job_id)
        _JobInstMainTerm_job_inst_id(self, job_inst_id)
        _JobInstMainTerm_ts(self, ts)
        _JobInstMainTerm_js_id(self, js_id)
        _JobInstMainTerm_reason(self, reason)
        _JobInstMainTerm_sched_id(self, sched_id)
        _JobInstMainTerm_status(self, status)
        _JobInstMainTerm_level(self, level)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        status: int,
        level: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstMainTerm:
        self = _new(cls)
        _JobInstMainTerm_xwf_id(self, xwf_id)
        _JobInstMainTerm_job_id(self, job_id)
        _JobInstMainTerm_job_inst_id(self, job_inst_id)
        _JobInstMainTerm_ts(self, ts)
        _JobInstMainTerm_js_id(self, js_id)
        _JobInstMainTerm_reason(self, reason)
        _JobInstMainTerm_sched_id(self, sched_id)
        _JobInstMainTerm_status(self, status)
        _JobInstMainTerm_level(self, level)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstMainTerm:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs or "status" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstMainTerm_xwf_id(self, attrs["xwf.id"])
        _JobInstMainTerm_job_id(self, attrs["job.id"])
        _JobInstMainTerm_job_inst_id(self, attrs["job_inst.id"])
        _JobInstMainTerm_ts(self, attrs["ts"])
        _JobInstMainTerm_js_id(self, attrs["js.id"])
        _JobInstMainTerm_reason(self, get("reason", UNSET))
        _JobInstMainTerm_sched_id(self, get("sched.id", UNSET))
        _JobInstMainTerm_status(self, attrs["status"])
        _JobInstMainTerm_level(self, get("level", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        v = self.status
        if v is not UNSET:
            add(("status", v))
        v = self.level
        if v is not UNSET:
            add(("level", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstMainTerm_xwf_id, _JobInstMainTerm_job_id, _JobInstMainTerm_job_inst_id, _JobInstMainTerm_ts, _JobInstMainTerm_js_id, _JobInstMainTerm_reason, _JobInstMainTerm_sched_id, _JobInstMainTerm_status, _JobInstMainTerm_level = slot_setters(JobInstMainTerm)


class JobInstMainEnd(WithFixed):
    """``stampede.job_inst.main.end``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "site", "user", "local_dur", "stdin_file", "multiplier_factor", "exitcode", "sched_id", "status", "level", "work_dir", "cluster_start", "cluster_dur", "stdout_file", "stderr_file", "stdout_text", "stderr_text")
    name: ClassVar[str] = "job_inst.main.end"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.main.end"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "status")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "site", "user", "local_dur", "stdin_file", "multiplier_factor", "exitcode", "sched_id", "status", "level", "work_dir", "cluster_start", "cluster_dur", "stdout_file", "stderr_file", "stdout_text", "stderr_text")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "site": "site", "user": "user", "local.dur": "local_dur", "stdin_file": "stdin_file", "multiplier_factor": "multiplier_factor", "exitcode": "exitcode", "sched.id": "sched_id", "status": "status", "level": "level", "work_dir": "work_dir", "cluster.start": "cluster_start", "cluster.dur": "cluster_dur", "stdout.file": "stdout_file", "stderr.file": "stderr_file", "stdout.text": "stdout_text", "stderr.text": "stderr_text"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "site", "user", "local.dur", "stdin_file", "multiplier_factor", "exitcode", "sched.id", "status", "level", "work_dir", "cluster.start", "cluster.dur", "stdout.file", "stderr.file", "stdout.text", "stderr.text"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    site: str
    user: str | int | float | bool | None
    local_dur: int
    stdin_file: str
    multiplier_factor: str
    exitcode: str
    sched_id: str
    status: int
    level: str
    work_dir: str | None
    cluster_start: int
    cluster_dur: str | int | float
    stdout_file: str
    stderr_file: str
    stdout_text: str
    stderr_text: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        site: str = UNSET,
        user: str | int | float | bool | None = UNSET,
        local_dur: int = UNSET,
        stdin_file: str = UNSET,
        multiplier_factor: str = UNSET,
        exitcode: str = UNSET,
        sched_id: str = UNSET,
        status: int,
        level: str = UNSET,
        work_dir: str | None = UNSET,
        cluster_start: int = UNSET,
        cluster_dur: str | int | float = UNSET,
        stdout_file: str = UNSET,
        stderr_file: str = UNSET,
        stdout_text: str = UNSET,
        stderr_text: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstMainEnd_xwf_id(self, xwf_id)
        _JobInstMainEnd_job_id(self, job_id)
        _JobInstMainEnd_job_inst_id(self, job_inst_id)
        _JobInstMainEnd_ts(self, ts)
        _JobInstMainEnd_js_id(self, js_id)
        _JobInstMainEnd_site(self, site)
        _JobInstMainEnd_user(self, user)
        _JobInstMainEnd_local_dur(self, local_dur)
        _JobInstMainEnd_stdin_file(self, stdin_file)
        _JobInstMainEnd_multiplier_factor(self, multiplier_factor)
        _JobInstMainEnd_exitcode(self, exitcode)
        _JobInstMainEnd_sched_id(self, sched_id)
        _JobInstMainEnd_status(self, status)
        _JobInstMainEnd_level(self, level)
        _JobInstMainEnd_work_dir(self, work_dir)
        _JobInstMainEnd_cluster_start(self, cluster_start)
        _JobInstMainEnd_cluster_dur(self, cluster_dur)
        _JobInstMainEnd_stdout_file(self, stdout_file)
        _JobInstMainEnd_stderr_file(self, stderr_file)
        _JobInstMainEnd_stdout_text(self, stdout_text)
        _JobInstMainEnd_stderr_text(self, stderr_text)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        site: str,
        user: str | int | float | bool | None,
        local_dur: int,
        stdin_file: str,
        multiplier_factor: str,
        exitcode: str,
        sched_id: str,
        status: int,
        level: str,
        work_dir: str | None,
        cluster_start: int,
        cluster_dur: str | int | float,
        stdout_file: str,
        stderr_file: str,
        stdout_text: str,
        stderr_text: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstMainEnd:
        self = _new(cls)
        _JobInstMainEnd_xwf_id(self, xwf_id)
        _JobInstMainEnd_job_id(self, job_id)
        _JobInstMainEnd_job_inst_id(self, job_inst_id)
        _JobInstMainEnd_ts(self, ts)
        _JobInstMainEnd_js_id(self, js_id)
        _JobInstMainEnd_site(self, site)
        _JobInstMainEnd_user(self, user)
        _JobInstMainEnd_local_dur(self, local_dur)
        _JobInstMainEnd_stdin_file(self, stdin_file)
        _JobInstMainEnd_multiplier_factor(self, multiplier_factor)
        _JobInstMainEnd_exitcode(self, exitcode)
        _JobInstMainEnd_sched_id(self, sched_id)
        _JobInstMainEnd_status(self, status)
        _JobInstMainEnd_level(self, level)
        _JobInstMainEnd_work_dir(self, work_dir)
        _JobInstMainEnd_cluster_start(self, cluster_start)
        _JobInstMainEnd_cluster_dur(self, cluster_dur)
        _JobInstMainEnd_stdout_file(self, stdout_file)
        _JobInstMainEnd_stderr_file(self, stderr_file)
        _JobInstMainEnd_stdout_text(self, stdout_text)
        _JobInstMainEnd_stderr_text(self, stderr_text)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstMainEnd:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs or "status" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstMainEnd_xwf_id(self, attrs["xwf.id"])
        _JobInstMainEnd_job_id(self, attrs["job.id"])
        _JobInstMainEnd_job_inst_id(self, attrs["job_inst.id"])
        _JobInstMainEnd_ts(self, attrs["ts"])
        _JobInstMainEnd_js_id(self, attrs["js.id"])
        _JobInstMainEnd_site(self, get("site", UNSET))
        _JobInstMainEnd_user(self, get("user", UNSET))
        _JobInstMainEnd_local_dur(self, get("local.dur", UNSET))
        _JobInstMainEnd_stdin_file(self, get("stdin_file", UNSET))
        _JobInstMainEnd_multiplier_factor(self, get("multiplier_factor", UNSET))
        _JobInstMainEnd_exitcode(self, get("exitcode", UNSET))
        _JobInstMainEnd_sched_id(self, get("sched.id", UNSET))
        _JobInstMainEnd_status(self, attrs["status"])
        _JobInstMainEnd_level(self, get("level", UNSET))
        _JobInstMainEnd_work_dir(self, get("work_dir", UNSET))
        _JobInstMainEnd_cluster_start(self, get("cluster.start", UNSET))
        _JobInstMainEnd_cluster_dur(self, get("cluster.dur", UNSET))
        _JobInstMainEnd_stdout_file(self, get("stdout.file", UNSET))
        _JobInstMainEnd_stderr_file(self, get("stderr.file", UNSET))
        _JobInstMainEnd_stdout_text(self, get("stdout.text", UNSET))
        _JobInstMainEnd_stderr_text(self, get("stderr.text", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.site
        if v is not UNSET:
            add(("site", v))
        v = self.user
        if v is not UNSET:
            add(("user", v))
        v = self.local_dur
        if v is not UNSET:
            add(("local.dur", v))
        v = self.stdin_file
        if v is not UNSET:
            add(("stdin_file", v))
        v = self.multiplier_factor
        if v is not UNSET:
            add(("multiplier_factor", v))
        v = self.exitcode
        if v is not UNSET:
            add(("exitcode", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        v = self.status
        if v is not UNSET:
            add(("status", v))
        v = self.level
        if v is not UNSET:
            add(("level", v))
        v = self.work_dir
        if v is not UNSET:
            add(("work_dir", v))
        v = self.cluster_start
        if v is not UNSET:
            add(("cluster.start", v))
        v = self.cluster_dur
        if v is not UNSET:
            add(("cluster.dur", v))
        v = self.stdout_file
        if v is not UNSET:
            add(("stdout.file", v))
        v = self.stderr_file
        if v is not UNSET:
            add(("stderr.file", v))
        v = self.stdout_text
        if v is not UNSET:
            add(("stdout.text", v))
        v = self.stderr_text
        if v is not UNSET:
            add(("stderr.text", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstMainEnd_xwf_id, _JobInstMainEnd_job_id, _JobInstMainEnd_job_inst_id, _JobInstMainEnd_ts, _JobInstMainEnd_js_id, _JobInstMainEnd_site, _JobInstMainEnd_user, _JobInstMainEnd_local_dur, _JobInstMainEnd_stdin_file, _JobInstMainEnd_multiplier_factor, _JobInstMainEnd_exitcode, _JobInstMainEnd_sched_id, _JobInstMainEnd_status, _JobInstMainEnd_level, _JobInstMainEnd_work_dir, _JobInstMainEnd_cluster_start, _JobInstMainEnd_cluster_dur, _JobInstMainEnd_stdout_file, _JobInstMainEnd_stderr_file, _JobInstMainEnd_stdout_text, _JobInstMainEnd_stderr_text = slot_setters(JobInstMainEnd)


class JobInstPostStart(WithFixed):
    """``stampede.job_inst.post.start``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    name: ClassVar[str] = "job_inst.post.start"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.post.start"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstPostStart_xwf_id(self, xwf_id)
        _JobInstPostStart_job_id(self, job_id)
        _JobInstPostStart_job_inst_id(self, job_inst_id)
        _JobInstPostStart_ts(self, ts)
        _JobInstPostStart_js_id(self, js_id)
        _JobInstPostStart_reason(self, reason)
        _JobInstPostStart_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstPostStart:
        self = _new(cls)
        _JobInstPostStart_xwf_id(self, xwf_id)
        _JobInstPostStart_job_id(self, job_id)
        _JobInstPostStart_job_inst_id(self, job_inst_id)
        _JobInstPostStart_ts(self, ts)
        _JobInstPostStart_js_id(self, js_id)
        _JobInstPostStart_reason(self, reason)
        _JobInstPostStart_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstPostStart:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstPostStart_xwf_id(self, attrs["xwf.id"])
        _JobInstPostStart_job_id(self, attrs["job.id"])
        _JobInstPostStart_job_inst_id(self, attrs["job_inst.id"])
        _JobInstPostStart_ts(self, attrs["ts"])
        _JobInstPostStart_js_id(self, attrs["js.id"])
        _JobInstPostStart_reason(self, get("reason", UNSET))
        _JobInstPostStart_sched_id(self, get("sched.id", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstPostStart_xwf_id, _JobInstPostStart_job_id, _JobInstPostStart_job_inst_id, _JobInstPostStart_ts, _JobInstPostStart_js_id, _JobInstPostStart_reason, _JobInstPostStart_sched_id = slot_setters(JobInstPostStart)


class JobInstPostTerm(WithFixed):
    """``stampede.job_inst.post.term``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    name: ClassVar[str] = "job_inst.post.term"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.post.term"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstPostTerm_xwf_id(self, xwf_id)
        _JobInstPostTerm_job_id(self, job_id)
        _JobInstPostTerm_job_inst_id(self, job_inst_id)
        _JobInstPostTerm_ts(self, ts)
        _JobInstPostTerm_js_id(self, js_id)
        _JobInstPostTerm_reason(self, reason)
        _JobInstPostTerm_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstPostTerm:
        self = _new(cls)
        _JobInstPostTerm_xwf_id(self, xwf_id)
        _JobInstPostTerm_job_id(self, job_id)
        _JobInstPostTerm_job_inst_id(self, job_inst_id)
        _JobInstPostTerm_ts(self, ts)
        _JobInstPostTerm_js_id(self, js_id)
        _JobInstPostTerm_reason(self, reason)
        _JobInstPostTerm_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstPostTerm:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstPostTerm_xwf_id(self, attrs["xwf.id"])
        _JobInstPostTerm_job_id(self, attrs["job.id"])
        _JobInstPostTerm_job_inst_id(self, attrs["job_inst.id"])
        _JobInstPostTerm_ts(self, attrs["ts"])
        _JobInstPostTerm_js_id(self, attrs["js.id"])
        _JobInstPostTerm_reason(self, get("reason", UNSET))
        _JobInstPostTerm_sched_id(self, get("sched.id", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstPostTerm_xwf_id, _JobInstPostTerm_job_id, _JobInstPostTerm_job_inst_id, _JobInstPostTerm_ts, _JobInstPostTerm_js_id, _JobInstPostTerm_reason, _JobInstPostTerm_sched_id = slot_setters(JobInstPostTerm)


class JobInstPostEnd(WithFixed):
    """``stampede.job_inst.post.end``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id", "status", "level", "exitcode")
    name: ClassVar[str] = "job_inst.post.end"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.post.end"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "status")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id", "status", "level", "exitcode")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id", "status": "status", "level": "level", "exitcode": "exitcode"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id", "status", "level", "exitcode"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str
    status: int
    level: str
    exitcode: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        status: int,
        level: str = UNSET,
        exitcode: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstPostEnd_xwf_id(self, xwf_id)
        _JobInstPostEnd_job_id(self, job_id)
        _JobInstPostEnd_job_inst_id(self, job_inst_id)
        _JobInstPostEnd_ts(self, ts)
        _JobInstPostEnd_js_id(self, js_id)
        _JobInstPostEnd_reason(self, reason)
        _JobInstPostEnd_sched_id(self, sched_id)
        _JobInstPostEnd_status(self, status)
        _JobInstPostEnd_level(self, level)
        _JobInstPostEnd_exitcode(self, exitcode)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        status: int,
        level: str,
        exitcode: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstPostEnd:
        self = _new(cls)
        _JobInstPostEnd_xwf_id(self, xwf_id)
        _JobInstPostEnd_job_id(self, job_id)
        _JobInstPostEnd_job_inst_id(self, job_inst_id)
        _JobInstPostEnd_ts(self, ts)
        _JobInstPostEnd_js_id(self, js_id)
        _JobInstPostEnd_reason(self, reason)
        _JobInstPostEnd_sched_id(self, sched_id)
        _JobInstPostEnd_status(self, status)
        _JobInstPostEnd_level(self, level)
        _JobInstPostEnd_exitcode(self, exitcode)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstPostEnd:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs or "status" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstPostEnd_xwf_id(self, attrs["xwf.id"])
        _JobInstPostEnd_job_id(self, attrs["job.id"])
        _JobInstPostEnd_job_inst_id(self, attrs["job_inst.id"])
        _JobInstPostEnd_ts(self, attrs["ts"])
        _JobInstPostEnd_js_id(self, attrs["js.id"])
        _JobInstPostEnd_reason(self, get("reason", UNSET))
        _JobInstPostEnd_sched_id(self, get("sched.id", UNSET))
        _JobInstPostEnd_status(self, attrs["status"])
        _JobInstPostEnd_level(self, get("level", UNSET))
        _JobInstPostEnd_exitcode(self, get("exitcode", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        v = self.status
        if v is not UNSET:
            add(("status", v))
        v = self.level
        if v is not UNSET:
            add(("level", v))
        v = self.exitcode
        if v is not UNSET:
            add(("exitcode", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstPostEnd_xwf_id, _JobInstPostEnd_job_id, _JobInstPostEnd_job_inst_id, _JobInstPostEnd_ts, _JobInstPostEnd_js_id, _JobInstPostEnd_reason, _JobInstPostEnd_sched_id, _JobInstPostEnd_status, _JobInstPostEnd_level, _JobInstPostEnd_exitcode = slot_setters(JobInstPostEnd)


class JobInstHostInfo(WithFixed):
    """``stampede.job_inst.host.info``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "hostname", "ip", "site", "total_memory", "uname", "ts")
    name: ClassVar[str] = "job_inst.host.info"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.host.info"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "hostname", "ip", "site")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "hostname", "ip", "site", "total_memory", "uname", "ts")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "hostname": "hostname", "ip": "ip", "site": "site", "total_memory": "total_memory", "uname": "uname", "ts": "ts"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "hostname", "ip", "site", "total_memory", "uname", "ts"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    hostname: str
    ip: str
    site: str
    total_memory: int | float | str
    uname: str
    ts: int | float

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        hostname: str,
        ip: str,
        site: str,
        total_memory: int | float | str = UNSET,
        uname: str = UNSET,
        ts: int | float = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstHostInfo_xwf_id(self, xwf_id)
        _JobInstHostInfo_job_id(self, job_id)
        _JobInstHostInfo_job_inst_id(self, job_inst_id)
        _JobInstHostInfo_hostname(self, hostname)
        _JobInstHostInfo_ip(self, ip)
        _JobInstHostInfo_site(self, site)
        _JobInstHostInfo_total_memory(self, total_memory)
        _JobInstHostInfo_uname(self, uname)
        _JobInstHostInfo_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        hostname: str,
        ip: str,
        site: str,
        total_memory: int | float | str,
        uname: str,
        ts: int | float,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstHostInfo:
        self = _new(cls)
        _JobInstHostInfo_xwf_id(self, xwf_id)
        _JobInstHostInfo_job_id(self, job_id)
        _JobInstHostInfo_job_inst_id(self, job_inst_id)
        _JobInstHostInfo_hostname(self, hostname)
        _JobInstHostInfo_ip(self, ip)
        _JobInstHostInfo_site(self, site)
        _JobInstHostInfo_total_memory(self, total_memory)
        _JobInstHostInfo_uname(self, uname)
        _JobInstHostInfo_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstHostInfo:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "hostname" not in attrs or "ip" not in attrs or "site" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstHostInfo_xwf_id(self, attrs["xwf.id"])
        _JobInstHostInfo_job_id(self, attrs["job.id"])
        _JobInstHostInfo_job_inst_id(self, attrs["job_inst.id"])
        _JobInstHostInfo_hostname(self, attrs["hostname"])
        _JobInstHostInfo_ip(self, attrs["ip"])
        _JobInstHostInfo_site(self, attrs["site"])
        _JobInstHostInfo_total_memory(self, get("total_memory", UNSET))
        _JobInstHostInfo_uname(self, get("uname", UNSET))
        _JobInstHostInfo_ts(self, get("ts", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.hostname
        if v is not UNSET:
            add(("hostname", v))
        v = self.ip
        if v is not UNSET:
            add(("ip", v))
        v = self.site
        if v is not UNSET:
            add(("site", v))
        v = self.total_memory
        if v is not UNSET:
            add(("total_memory", v))
        v = self.uname
        if v is not UNSET:
            add(("uname", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstHostInfo_xwf_id, _JobInstHostInfo_job_id, _JobInstHostInfo_job_inst_id, _JobInstHostInfo_hostname, _JobInstHostInfo_ip, _JobInstHostInfo_site, _JobInstHostInfo_total_memory, _JobInstHostInfo_uname, _JobInstHostInfo_ts = slot_setters(JobInstHostInfo)


class JobInstImageInfo(WithFixed):
    """``stampede.job_inst.image.info``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    name: ClassVar[str] = "job_inst.image.info"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.image.info"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstImageInfo_xwf_id(self, xwf_id)
        _JobInstImageInfo_job_id(self, job_id)
        _JobInstImageInfo_job_inst_id(self, job_inst_id)
        _JobInstImageInfo_ts(self, ts)
        _JobInstImageInfo_js_id(self, js_id)
        _JobInstImageInfo_reason(self, reason)
        _JobInstImageInfo_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstImageInfo:
        self = _new(cls)
        _JobInstImageInfo_xwf_id(self, xwf_id)
        _JobInstImageInfo_job_id(self, job_id)
        _JobInstImageInfo_job_inst_id(self, job_inst_id)
        _JobInstImageInfo_ts(self, ts)
        _JobInstImageInfo_js_id(self, js_id)
        _JobInstImageInfo_reason(self, reason)
        _JobInstImageInfo_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstImageInfo:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstImageInfo_xwf_id(self, attrs["xwf.id"])
        _JobInstImageInfo_job_id(self, attrs["job.id"])
        _JobInstImageInfo_job_inst_id(self, attrs["job_inst.id"])
        _JobInstImageInfo_ts(self, attrs["ts"])
        _JobInstImageInfo_js_id(self, attrs["js.id"])
        _JobInstImageInfo_reason(self, get("reason", UNSET))
        _JobInstImageInfo_sched_id(self, get("sched.id", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstImageInfo_xwf_id, _JobInstImageInfo_job_id, _JobInstImageInfo_job_inst_id, _JobInstImageInfo_ts, _JobInstImageInfo_js_id, _JobInstImageInfo_reason, _JobInstImageInfo_sched_id = slot_setters(JobInstImageInfo)


class JobInstAbortInfo(WithFixed):
    """``stampede.job_inst.abort.info``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    name: ClassVar[str] = "job_inst.abort.info"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.abort.info"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstAbortInfo_xwf_id(self, xwf_id)
        _JobInstAbortInfo_job_id(self, job_id)
        _JobInstAbortInfo_job_inst_id(self, job_inst_id)
        _JobInstAbortInfo_ts(self, ts)
        _JobInstAbortInfo_js_id(self, js_id)
        _JobInstAbortInfo_reason(self, reason)
        _JobInstAbortInfo_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstAbortInfo:
        self = _new(cls)
        _JobInstAbortInfo_xwf_id(self, xwf_id)
        _JobInstAbortInfo_job_id(self, job_id)
        _JobInstAbortInfo_job_inst_id(self, job_inst_id)
        _JobInstAbortInfo_ts(self, ts)
        _JobInstAbortInfo_js_id(self, js_id)
        _JobInstAbortInfo_reason(self, reason)
        _JobInstAbortInfo_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstAbortInfo:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstAbortInfo_xwf_id(self, attrs["xwf.id"])
        _JobInstAbortInfo_job_id(self, attrs["job.id"])
        _JobInstAbortInfo_job_inst_id(self, attrs["job_inst.id"])
        _JobInstAbortInfo_ts(self, attrs["ts"])
        _JobInstAbortInfo_js_id(self, attrs["js.id"])
        _JobInstAbortInfo_reason(self, get("reason", UNSET))
        _JobInstAbortInfo_sched_id(self, get("sched.id", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstAbortInfo_xwf_id, _JobInstAbortInfo_job_id, _JobInstAbortInfo_job_inst_id, _JobInstAbortInfo_ts, _JobInstAbortInfo_js_id, _JobInstAbortInfo_reason, _JobInstAbortInfo_sched_id = slot_setters(JobInstAbortInfo)


class JobInstRemoteError(WithFixed):
    """``stampede.job_inst.remote_error``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    name: ClassVar[str] = "job_inst.remote_error"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.remote_error"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstRemoteError_xwf_id(self, xwf_id)
        _JobInstRemoteError_job_id(self, job_id)
        _JobInstRemoteError_job_inst_id(self, job_inst_id)
        _JobInstRemoteError_ts(self, ts)
        _JobInstRemoteError_js_id(self, js_id)
        _JobInstRemoteError_reason(self, reason)
        _JobInstRemoteError_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstRemoteError:
        self = _new(cls)
        _JobInstRemoteError_xwf_id(self, xwf_id)
        _JobInstRemoteError_job_id(self, job_id)
        _JobInstRemoteError_job_inst_id(self, job_inst_id)
        _JobInstRemoteError_ts(self, ts)
        _JobInstRemoteError_js_id(self, js_id)
        _JobInstRemoteError_reason(self, reason)
        _JobInstRemoteError_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstRemoteError:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstRemoteError_xwf_id(self, attrs["xwf.id"])
        _JobInstRemoteError_job_id(self, attrs["job.id"])
        _JobInstRemoteError_job_inst_id(self, attrs["job_inst.id"])
        _JobInstRemoteError_ts(self, attrs["ts"])
        _JobInstRemoteError_js_id(self, attrs["js.id"])
        _JobInstRemoteError_reason(self, get("reason", UNSET))
        _JobInstRemoteError_sched_id(self, get("sched.id", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstRemoteError_xwf_id, _JobInstRemoteError_job_id, _JobInstRemoteError_job_inst_id, _JobInstRemoteError_ts, _JobInstRemoteError_js_id, _JobInstRemoteError_reason, _JobInstRemoteError_sched_id = slot_setters(JobInstRemoteError)


class JobInstGridSubmitStart(WithFixed):
    """``stampede.job_inst.grid.submit.start``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    name: ClassVar[str] = "job_inst.grid.submit.start"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.grid.submit.start"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstGridSubmitStart_xwf_id(self, xwf_id)
        _JobInstGridSubmitStart_job_id(self, job_id)
        _JobInstGridSubmitStart_job_inst_id(self, job_inst_id)
        _JobInstGridSubmitStart_ts(self, ts)
        _JobInstGridSubmitStart_js_id(self, js_id)
        _JobInstGridSubmitStart_reason(self, reason)
        _JobInstGridSubmitStart_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstGridSubmitStart:
        self = _new(cls)
        _JobInstGridSubmitStart_xwf_id(self, xwf_id)
        _JobInstGridSubmitStart_job_id(self, job_id)
        _JobInstGridSubmitStart_job_inst_id(self, job_inst_id)
        _JobInstGridSubmitStart_ts(self, ts)
        _JobInstGridSubmitStart_js_id(self, js_id)
        _JobInstGridSubmitStart_reason(self, reason)
        _JobInstGridSubmitStart_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstGridSubmitStart:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstGridSubmitStart_xwf_id(self, attrs["xwf.id"])
        _JobInstGridSubmitStart_job_id(self, attrs["job.id"])
        _JobInstGridSubmitStart_job_inst_id(self, attrs["job_inst.id"])
        _JobInstGridSubmitStart_ts(self, attrs["ts"])
        _JobInstGridSubmitStart_js_id(self, attrs["js.id"])
        _JobInstGridSubmitStart_reason(self, get("reason", UNSET))
        _JobInstGridSubmitStart_sched_id(self, get("sched.id", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstGridSubmitStart_xwf_id, _JobInstGridSubmitStart_job_id, _JobInstGridSubmitStart_job_inst_id, _JobInstGridSubmitStart_ts, _JobInstGridSubmitStart_js_id, _JobInstGridSubmitStart_reason, _JobInstGridSubmitStart_sched_id = slot_setters(JobInstGridSubmitStart)


class JobInstGridSubmitEnd(WithFixed):
    """``stampede.job_inst.grid.submit.end``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id", "status", "level")
    name: ClassVar[str] = "job_inst.grid.submit.end"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.grid.submit.end"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "status")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id", "status", "level")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id", "status": "status", "level": "level"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id", "status", "level"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str
    status: int
    level: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        status: int,
        level: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstGridSubmitEnd_xwf_id(self, xwf_id)
        _JobInstGridSubmitEnd_job_id(self, job_id)
        _JobInstGridSubmitEnd_job_inst_id(self, job_inst_id)
        _JobInstGridSubmitEnd_ts(self, ts)
        _JobInstGridSubmitEnd_js_id(self, js_id)
        _JobInstGridSubmitEnd_reason(self, reason)
        _JobInstGridSubmitEnd_sched_id(self, sched_id)
        _JobInstGridSubmitEnd_status(self, status)
        _JobInstGridSubmitEnd_level(self, level)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        status: int,
        level: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstGridSubmitEnd:
        self = _new(cls)
        _JobInstGridSubmitEnd_xwf_id(self, xwf_id)
        _JobInstGridSubmitEnd_job_id(self, job_id)
        _JobInstGridSubmitEnd_job_inst_id(self, job_inst_id)
        _JobInstGridSubmitEnd_ts(self, ts)
        _JobInstGridSubmitEnd_js_id(self, js_id)
        _JobInstGridSubmitEnd_reason(self, reason)
        _JobInstGridSubmitEnd_sched_id(self, sched_id)
        _JobInstGridSubmitEnd_status(self, status)
        _JobInstGridSubmitEnd_level(self, level)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstGridSubmitEnd:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs or "status" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstGridSubmitEnd_xwf_id(self, attrs["xwf.id"])
        _JobInstGridSubmitEnd_job_id(self, attrs["job.id"])
        _JobInstGridSubmitEnd_job_inst_id(self, attrs["job_inst.id"])
        _JobInstGridSubmitEnd_ts(self, attrs["ts"])
        _JobInstGridSubmitEnd_js_id(self, attrs["js.id"])
        _JobInstGridSubmitEnd_reason(self, get("reason", UNSET))
        _JobInstGridSubmitEnd_sched_id(self, get("sched.id", UNSET))
        _JobInstGridSubmitEnd_status(self, attrs["status"])
        _JobInstGridSubmitEnd_level(self, get("level", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        v = self.status
        if v is not UNSET:
            add(("status", v))
        v = self.level
        if v is not UNSET:
            add(("level", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstGridSubmitEnd_xwf_id, _JobInstGridSubmitEnd_job_id, _JobInstGridSubmitEnd_job_inst_id, _JobInstGridSubmitEnd_ts, _JobInstGridSubmitEnd_js_id, _JobInstGridSubmitEnd_reason, _JobInstGridSubmitEnd_sched_id, _JobInstGridSubmitEnd_status, _JobInstGridSubmitEnd_level = slot_setters(JobInstGridSubmitEnd)


class JobInstGlobusSubmitStart(WithFixed):
    """``stampede.job_inst.globus.submit.start``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    name: ClassVar[str] = "job_inst.globus.submit.start"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.globus.submit.start"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstGlobusSubmitStart_xwf_id(self, xwf_id)
        _JobInstGlobusSubmitStart_job_id(self, job_id)
        _JobInstGlobusSubmitStart_job_inst_id(self, job_inst_id)
        _JobInstGlobusSubmitStart_ts(self, ts)
        _JobInstGlobusSubmitStart_js_id(self, js_id)
        _JobInstGlobusSubmitStart_reason(self, reason)
        _JobInstGlobusSubmitStart_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstGlobusSubmitStart:
        self = _new(cls)
        _JobInstGlobusSubmitStart_xwf_id(self, xwf_id)
        _JobInstGlobusSubmitStart_job_id(self, job_id)
        _JobInstGlobusSubmitStart_job_inst_id(self, job_inst_id)
        _JobInstGlobusSubmitStart_ts(self, ts)
        _JobInstGlobusSubmitStart_js_id(self, js_id)
        _JobInstGlobusSubmitStart_reason(self, reason)
        _JobInstGlobusSubmitStart_sched_id(self, sched_id)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstGlobusSubmitStart:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstGlobusSubmitStart_xwf_id(self, attrs["xwf.id"])
        _JobInstGlobusSubmitStart_job_id(self, attrs["job.id"])
        _JobInstGlobusSubmitStart_job_inst_id(self, attrs["job_inst.id"])
        _JobInstGlobusSubmitStart_ts(self, attrs["ts"])
        _JobInstGlobusSubmitStart_js_id(self, attrs["js.id"])
        _JobInstGlobusSubmitStart_reason(self, get("reason", UNSET))
        _JobInstGlobusSubmitStart_sched_id(self, get("sched.id", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstGlobusSubmitStart_xwf_id, _JobInstGlobusSubmitStart_job_id, _JobInstGlobusSubmitStart_job_inst_id, _JobInstGlobusSubmitStart_ts, _JobInstGlobusSubmitStart_js_id, _JobInstGlobusSubmitStart_reason, _JobInstGlobusSubmitStart_sched_id = slot_setters(JobInstGlobusSubmitStart)


class JobInstGlobusSubmitEnd(WithFixed):
    """``stampede.job_inst.globus.submit.end``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id", "status", "level")
    name: ClassVar[str] = "job_inst.globus.submit.end"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.globus.submit.end"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "status")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id", "status", "level")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "reason": "reason", "sched.id": "sched_id", "status": "status", "level": "level"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "sched.id", "status", "level"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    reason: str | None
    sched_id: str
    status: int
    level: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None = UNSET,
        sched_id: str = UNSET,
        status: int,
        level: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstGlobusSubmitEnd_xwf_id(self, xwf_id)
        _JobInstGlobusSubmitEnd_job_id(self, job_id)
        _JobInstGlobusSubmitEnd_job_inst_id(self, job_inst_id)
        _JobInstGlobusSubmitEnd_ts(self, ts)
        _JobInstGlobusSubmitEnd_js_id(self, js_id)
        _JobInstGlobusSubmitEnd_reason(self, reason)
        _JobInstGlobusSubmitEnd_sched_id(self, sched_id)
        _JobInstGlobusSubmitEnd_status(self, status)
        _JobInstGlobusSubmitEnd_level(self, level)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        reason: str | None,
        sched_id: str,
        status: int,
        level: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstGlobusSubmitEnd:
        self = _new(cls)
        _JobInstGlobusSubmitEnd_xwf_id(self, xwf_id)
        _JobInstGlobusSubmitEnd_job_id(self, job_id)
        _JobInstGlobusSubmitEnd_job_inst_id(self, job_inst_id)
        _JobInstGlobusSubmitEnd_ts(self, ts)
        _JobInstGlobusSubmitEnd_js_id(self, js_id)
        _JobInstGlobusSubmitEnd_reason(self, reason)
        _JobInstGlobusSubmitEnd_sched_id(self, sched_id)
        _JobInstGlobusSubmitEnd_status(self, status)
        _JobInstGlobusSubmitEnd_level(self, level)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstGlobusSubmitEnd:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs or "status" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstGlobusSubmitEnd_xwf_id(self, attrs["xwf.id"])
        _JobInstGlobusSubmitEnd_job_id(self, attrs["job.id"])
        _JobInstGlobusSubmitEnd_job_inst_id(self, attrs["job_inst.id"])
        _JobInstGlobusSubmitEnd_ts(self, attrs["ts"])
        _JobInstGlobusSubmitEnd_js_id(self, attrs["js.id"])
        _JobInstGlobusSubmitEnd_reason(self, get("reason", UNSET))
        _JobInstGlobusSubmitEnd_sched_id(self, get("sched.id", UNSET))
        _JobInstGlobusSubmitEnd_status(self, attrs["status"])
        _JobInstGlobusSubmitEnd_level(self, get("level", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.reason
        if v is not UNSET:
            add(("reason", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        v = self.status
        if v is not UNSET:
            add(("status", v))
        v = self.level
        if v is not UNSET:
            add(("level", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstGlobusSubmitEnd_xwf_id, _JobInstGlobusSubmitEnd_job_id, _JobInstGlobusSubmitEnd_job_inst_id, _JobInstGlobusSubmitEnd_ts, _JobInstGlobusSubmitEnd_js_id, _JobInstGlobusSubmitEnd_reason, _JobInstGlobusSubmitEnd_sched_id, _JobInstGlobusSubmitEnd_status, _JobInstGlobusSubmitEnd_level = slot_setters(JobInstGlobusSubmitEnd)


class JobInstTag(WithFixed):
    """``stampede.job_inst.tag``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "count", "ts", "name_")
    name: ClassVar[str] = "job_inst.tag"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.tag"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "count", "name")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "count", "ts", "name_")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "count": "count", "ts": "ts", "name": "name_"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "count", "ts", "name"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    count: int
    ts: int | float
    name_: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        count: int,
        ts: int | float = UNSET,
        name_: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstTag_xwf_id(self, xwf_id)
        _JobInstTag_job_id(self, job_id)
        _JobInstTag_job_inst_id(self, job_inst_id)
        _JobInstTag_count(self, count)
        _JobInstTag_ts(self, ts)
        _JobInstTag_name_(self, name_)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        count: int,
        ts: int | float,
        name_: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstTag:
        self = _new(cls)
        _JobInstTag_xwf_id(self, xwf_id)
        _JobInstTag_job_id(self, job_id)
        _JobInstTag_job_inst_id(self, job_inst_id)
        _JobInstTag_count(self, count)
        _JobInstTag_ts(self, ts)
        _JobInstTag_name_(self, name_)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstTag:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "count" not in attrs or "name" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstTag_xwf_id(self, attrs["xwf.id"])
        _JobInstTag_job_id(self, attrs["job.id"])
        _JobInstTag_job_inst_id(self, attrs["job_inst.id"])
        _JobInstTag_count(self, attrs["count"])
        _JobInstTag_ts(self, get("ts", UNSET))
        _JobInstTag_name_(self, attrs["name"])
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.count
        if v is not UNSET:
            add(("count", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.name_
        if v is not UNSET:
            add(("name", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_JobInstTag_xwf_id, _JobInstTag_job_id, _JobInstTag_job_inst_id, _JobInstTag_count, _JobInstTag_ts, _JobInstTag_name_ = slot_setters(JobInstTag)


class JobInstComposite(WithFixed):
    """``stampede.job_inst.composite``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "site", "user", "local_dur", "stdin_file", "multiplier_factor", "exitcode", "sched_id", "status", "level", "work_dir", "cluster_start", "cluster_dur", "stdout_file", "stderr_file", "stdout_text", "stderr_text", "int_error_count", "hostname", "jobtype", "cpu_count", "cpu_speed", "cpu_vendor", "cpu_model", "ram", "system", "release", "machine", "req_cpus", "req_gpus", "req_memory_mb", "req_diskspace_mb", "invocations", "app", "wf")
    name: ClassVar[str] = "job_inst.composite"
    spec: ClassVar[EventSpec | None] = BY_NAME["job_inst.composite"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "status")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "site", "user", "local_dur", "stdin_file", "multiplier_factor", "exitcode", "sched_id", "status", "level", "work_dir", "cluster_start", "cluster_dur", "stdout_file", "stderr_file", "stdout_text", "stderr_text", "int_error_count", "hostname", "jobtype", "cpu_count", "cpu_speed", "cpu_vendor", "cpu_model", "ram", "system", "release", "machine", "req_cpus", "req_gpus", "req_memory_mb", "req_diskspace_mb", "invocations", "app", "wf")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "ts": "ts", "js.id": "js_id", "site": "site", "user": "user", "local.dur": "local_dur", "stdin_file": "stdin_file", "multiplier_factor": "multiplier_factor", "exitcode": "exitcode", "sched.id": "sched_id", "status": "status", "level": "level", "work_dir": "work_dir", "cluster.start": "cluster_start", "cluster.dur": "cluster_dur", "stdout.file": "stdout_file", "stderr.file": "stderr_file", "stdout.text": "stdout_text", "stderr.text": "stderr_text", "int_error_count": "int_error_count", "hostname": "hostname", "jobtype": "jobtype", "cpu_count": "cpu_count", "cpu_speed": "cpu_speed", "cpu_vendor": "cpu_vendor", "cpu_model": "cpu_model", "ram": "ram", "system": "system", "release": "release", "machine": "machine", "req_cpus": "req_cpus", "req_gpus": "req_gpus", "req_memory_mb": "req_memory_mb", "req_diskspace_mb": "req_diskspace_mb", "invocations": "invocations", "app": "app", "wf": "wf"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "ts", "js.id", "site", "user", "local.dur", "stdin_file", "multiplier_factor", "exitcode", "sched.id", "status", "level", "work_dir", "cluster.start", "cluster.dur", "stdout.file", "stderr.file", "stdout.text", "stderr.text", "int_error_count", "hostname", "jobtype", "cpu_count", "cpu_speed", "cpu_vendor", "cpu_model", "ram", "system", "release", "machine", "req_cpus", "req_gpus", "req_memory_mb", "req_diskspace_mb", "invocations", "app", "wf"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    ts: int
    js_id: int
    site: str
    user: str | int | float | bool | None
    local_dur: int
    stdin_file: str
    multiplier_factor: str
    exitcode: str
    sched_id: str
    status: int
    level: str
    work_dir: str | None
    cluster_start: int
    cluster_dur: str | int | float
    stdout_file: str
    stderr_file: str
    stdout_text: str
    stderr_text: str
    int_error_count: int
    hostname: str
    jobtype: str
    cpu_count: int | float | str
    cpu_speed: int | float | str
    cpu_vendor: str | int | float
    cpu_model: str | int | float
    ram: int | float | str
    system: str | int | float
    release: str | int | float
    machine: str | int | float
    req_cpus: str
    req_gpus: str
    req_memory_mb: str
    req_diskspace_mb: str
    invocations: list[Any]
    app: str | int | float | bool | None
    wf: str | int | float | bool | None

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        site: str = UNSET,
        user: str | int | float | bool | None = UNSET,
        local_dur: int = UNSET,
        stdin_file: str = UNSET,
        multiplier_factor: str = UNSET,
        exitcode: str = UNSET,
        sched_id: str = UNSET,
        status: int,
        level: str = UNSET,
        work_dir: str | None = UNSET,
        cluster_start: int = UNSET,
        cluster_dur: str | int | float = UNSET,
        stdout_file: str = UNSET,
        stderr_file: str = UNSET,
        stdout_text: str = UNSET,
        stderr_text: str = UNSET,
        int_error_count: int = UNSET,
        hostname: str = UNSET,
        jobtype: str = UNSET,
        cpu_count: int | float | str = UNSET,
        cpu_speed: int | float | str = UNSET,
        cpu_vendor: str | int | float = UNSET,
        cpu_model: str | int | float = UNSET,
        ram: int | float | str = UNSET,
        system: str | int | float = UNSET,
        release: str | int | float = UNSET,
        machine: str | int | float = UNSET,
        req_cpus: str = UNSET,
        req_gpus: str = UNSET,
        req_memory_mb: str = UNSET,
        req_diskspace_mb: str = UNSET,
        invocations: list[Any] = UNSET,
        app: str | int | float | bool | None = UNSET,
        wf: str | int | float | bool | None = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _JobInstComposite_xwf_id(self, xwf_id)
        _JobInstComposite_job_id(self, job_id)
        _JobInstComposite_job_inst_id(self, job_inst_id)
        _JobInstComposite_ts(self, ts)
        _JobInstComposite_js_id(self, js_id)
        _JobInstComposite_site(self, site)
        _JobInstComposite_user(self, user)
        _JobInstComposite_local_dur(self, local_dur)
        _JobInstComposite_stdin_file(self, stdin_file)
        _JobInstComposite_multiplier_factor(self, multiplier_factor)
        _JobInstComposite_exitcode(self, exitcode)
        _JobInstComposite_sched_id(self, sched_id)
        _JobInstComposite_status(self, status)
        _JobInstComposite_level(self, level)
        _JobInstComposite_work_dir(self, work_dir)
        _JobInstComposite_cluster_start(self, cluster_start)
        _JobInstComposite_cluster_dur(self, cluster_dur)
        _JobInstComposite_stdout_file(self, stdout_file)
        _JobInstComposite_stderr_file(self, stderr_file)
        _JobInstComposite_stdout_text(self, stdout_text)
        _JobInstComposite_stderr_text(self, stderr_text)
        _JobInstComposite_int_error_count(self, int_error_count)
        _JobInstComposite_hostname(self, hostname)
        _JobInstComposite_jobtype(self, jobtype)
        _JobInstComposite_cpu_count(self, cpu_count)
        _JobInstComposite_cpu_speed(self, cpu_speed)
        _JobInstComposite_cpu_vendor(self, cpu_vendor)
        _JobInstComposite_cpu_model(self, cpu_model)
        _JobInstComposite_ram(self, ram)
        _JobInstComposite_system(self, system)
        _JobInstComposite_release(self, release)
        _JobInstComposite_machine(self, machine)
        _JobInstComposite_req_cpus(self, req_cpus)
        _JobInstComposite_req_gpus(self, req_gpus)
        _JobInstComposite_req_memory_mb(self, req_memory_mb)
        _JobInstComposite_req_diskspace_mb(self, req_diskspace_mb)
        _JobInstComposite_invocations(self, invocations)
        _JobInstComposite_app(self, app)
        _JobInstComposite_wf(self, wf)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        ts: int,
        js_id: int,
        site: str,
        user: str | int | float | bool | None,
        local_dur: int,
        stdin_file: str,
        multiplier_factor: str,
        exitcode: str,
        sched_id: str,
        status: int,
        level: str,
        work_dir: str | None,
        cluster_start: int,
        cluster_dur: str | int | float,
        stdout_file: str,
        stderr_file: str,
        stdout_text: str,
        stderr_text: str,
        int_error_count: int,
        hostname: str,
        jobtype: str,
        cpu_count: int | float | str,
        cpu_speed: int | float | str,
        cpu_vendor: str | int | float,
        cpu_model: str | int | float,
        ram: int | float | str,
        system: str | int | float,
        release: str | int | float,
        machine: str | int | float,
        req_cpus: str,
        req_gpus: str,
        req_memory_mb: str,
        req_diskspace_mb: str,
        invocations: list[Any],
        app: str | int | float | bool | None,
        wf: str | int | float | bool | None,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> JobInstComposite:
        self = _new(cls)
        _JobInstComposite_xwf_id(self, xwf_id)
        _JobInstComposite_job_id(self, job_id)
        _JobInstComposite_job_inst_id(self, job_inst_id)
        _JobInstComposite_ts(self, ts)
        _JobInstComposite_js_id(self, js_id)
        _JobInstComposite_site(self, site)
        _JobInstComposite_user(self, user)
        _JobInstComposite_local_dur(self, local_dur)
        _JobInstComposite_stdin_file(self, stdin_file)
        _JobInstComposite_multiplier_factor(self, multiplier_factor)
        _JobInstComposite_exitcode(self, exitcode)
        _JobInstComposite_sched_id(self, sched_id)
        _JobInstComposite_status(self, status)
        _JobInstComposite_level(self, level)
        _JobInstComposite_work_dir(self, work_dir)
        _JobInstComposite_cluster_start(self, cluster_start)
        _JobInstComposite_cluster_dur(self, cluster_dur)
        _JobInstComposite_stdout_file(self, stdout_file)
        _JobInstComposite_stderr_file(self, stderr_file)
        _JobInstComposite_stdout_text(self, stdout_text)
        _JobInstComposite_stderr_text(self, stderr_text)
        _JobInstComposite_int_error_count(self, int_error_count)
        _JobInstComposite_hostname(self, hostname)
        _JobInstComposite_jobtype(self, jobtype)
        _JobInstComposite_cpu_count(self, cpu_count)
        _JobInstComposite_cpu_speed(self, cpu_speed)
        _JobInstComposite_cpu_vendor(self, cpu_vendor)
        _JobInstComposite_cpu_model(self, cpu_model)
        _JobInstComposite_ram(self, ram)
        _JobInstComposite_system(self, system)
        _JobInstComposite_release(self, release)
        _JobInstComposite_machine(self, machine)
        _JobInstComposite_req_cpus(self, req_cpus)
        _JobInstComposite_req_gpus(self, req_gpus)
        _JobInstComposite_req_memory_mb(self, req_memory_mb)
        _JobInstComposite_req_diskspace_mb(self, req_diskspace_mb)
        _JobInstComposite_invocations(self, invocations)
        _JobInstComposite_app(self, app)
        _JobInstComposite_wf(self, wf)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> JobInstComposite:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "ts" not in attrs or "js.id" not in attrs or "status" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _JobInstComposite_xwf_id(self, attrs["xwf.id"])
        _JobInstComposite_job_id(self, attrs["job.id"])
        _JobInstComposite_job_inst_id(self, attrs["job_inst.id"])
        _JobInstComposite_ts(self, attrs["ts"])
        _JobInstComposite_js_id(self, attrs["js.id"])
        _JobInstComposite_site(self, get("site", UNSET))
        _JobInstComposite_user(self, get("user", UNSET))
        _JobInstComposite_local_dur(self, get("local.dur", UNSET))
        _JobInstComposite_stdin_file(self, get("stdin_file", UNSET))
        _JobInstComposite_multiplier_factor(self, get("multiplier_factor", UNSET))
        _JobInstComposite_exitcode(self, get("exitcode", UNSET))
        _JobInstComposite_sched_id(self, get("sched.id", UNSET))
        _JobInstComposite_status(self, attrs["status"])
        _JobInstComposite_level(self, get("level", UNSET))
        _JobInstComposite_work_dir(self, get("work_dir", UNSET))
        _JobInstComposite_cluster_start(self, get("cluster.start", UNSET))
        _JobInstComposite_cluster_dur(self, get("cluster.dur", UNSET))
        _JobInstComposite_stdout_file(self, get("stdout.file", UNSET))
        _JobInstComposite_stderr_file(self, get("stderr.file", UNSET))
        _JobInstComposite_stdout_text(self, get("stdout.text", UNSET))
        _JobInstComposite_stderr_text(self, get("stderr.text", UNSET))
        _JobInstComposite_int_error_count(self, get("int_error_count", UNSET))
        _JobInstComposite_hostname(self, get("hostname", UNSET))
        _JobInstComposite_jobtype(self, get("jobtype", UNSET))
        _JobInstComposite_cpu_count(self, get("cpu_count", UNSET))
        _JobInstComposite_cpu_speed(self, get("cpu_speed", UNSET))
        _JobInstComposite_cpu_vendor(self, get("cpu_vendor", UNSET))
        _JobInstComposite_cpu_model(self, get("cpu_model", UNSET))
        _JobInstComposite_ram(self, get("ram", UNSET))
        _JobInstComposite_system(self, get("system", UNSET))
        _JobInstComposite_release(self, get("release", UNSET))
        _JobInstComposite_machine(self, get("machine", UNSET))
        _JobInstComposite_req_cpus(self, get("req_cpus", UNSET))
        _JobInstComposite_req_gpus(self, get("req_gpus", UNSET))
        _JobInstComposite_req_memory_mb(self, get("req_memory_mb", UNSET))
        _JobInstComposite_req_diskspace_mb(self, get("req_diskspace_mb", UNSET))
        _JobInstComposite_invocations(self, get("invocations", UNSET))
        _JobInstComposite_app(self, get("app", UNSET))
        _JobInstComposite_wf(self, get("wf", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.js_id
        if v is not UNSET:
            add(("js.id", v))
        v = self.site
        if v is not UNSET:
            add(("site", v))
        v = self.user
        if v is not UNSET:
            add(("user", v))
        v = self.local_dur
        if v is not UNSET:
            add(("local.dur", v))
        v = self.stdin_file
        if v is not UNSET:
            add(("stdin_file", v))
        v = self.multiplier_factor
        if v is not UNSET:
            add(("multiplier_factor", v))
        v = self.exitcode
        if v is not UNSET:
            add(("exitcode", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        v = self.status
        if v is not UNSET:
            add(("status", v))
        v = self.level
        if v is not UNSET:
            add(("level", v))
        v = self.work_dir
        if v is not UNSET:
            add(("work_dir", v))
        v = self.cluster_start
        if v is not UNSET:
            add(("cluster.start", v))
        v = self.cluster_dur
        if v is not UNSET:
            add(("cluster.dur", v))
        v = self.stdout_file
        if v is not UNSET:
            add(("stdout.file", v))
        v = self.stderr_file
        if v is not UNSET:
            add(("stderr.file", v))
        v = self.stdout_text
        if v is not UNSET:
            add(("stdout.text", v))
        v = self.stderr_text
        if v is not UNSET:
            add(("stderr.text", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        v = self.int_error_count
        if v is not UNSET:
            add(("int_error_count", v))
        v = self.hostname
        if v is not UNSET:
            add(("hostname", v))
        v = self.jobtype
        if v is not UNSET:
            add(("jobtype", v))
        v = self.cpu_count
        if v is not UNSET:
            add(("cpu_count", v))
        v = self.cpu_speed
        if v is not UNSET:
            add(("cpu_speed", v))
        v = self.cpu_vendor
        if v is not UNSET:
            add(("cpu_vendor", v))
        v = self.cpu_model
        if v is not UNSET:
            add(("cpu_model", v))
        v = self.ram
        if v is not UNSET:
            add(("ram", v))
        v = self.system
        if v is not UNSET:
            add(("system", v))
        v = self.release
        if v is not UNSET:
            add(("release", v))
        v = self.machine
        if v is not UNSET:
            add(("machine", v))
        v = self.req_cpus
        if v is not UNSET:
            add(("req_cpus", v))
        v = self.req_gpus
        if v is not UNSET:
            add(("req_gpus", v))
        v = self.req_memory_mb
        if v is not UNSET:
            add(("req_memory_mb", v))
        v = self.req_diskspace_mb
        if v is not UNSET:
            add(("req_diskspace_mb", v))
        if self.extra:
            out.extend(self.extra.items())
        v = self.invocations
        if v is not UNSET:
            add(("invocations", v))
        v = self.app
        if v is not UNSET:
            add(("app", v))
        v = self.wf
        if v is not UNSET:
            add(("wf", v))
        return out


_JobInstComposite_xwf_id, _JobInstComposite_job_id, _JobInstComposite_job_inst_id, _JobInstComposite_ts, _JobInstComposite_js_id, _JobInstComposite_site, _JobInstComposite_user, _JobInstComposite_local_dur, _JobInstComposite_stdin_file, _JobInstComposite_multiplier_factor, _JobInstComposite_exitcode, _JobInstComposite_sched_id, _JobInstComposite_status, _JobInstComposite_level, _JobInstComposite_work_dir, _JobInstComposite_cluster_start, _JobInstComposite_cluster_dur, _JobInstComposite_stdout_file, _JobInstComposite_stderr_file, _JobInstComposite_stdout_text, _JobInstComposite_stderr_text, _JobInstComposite_int_error_count, _JobInstComposite_hostname, _JobInstComposite_jobtype, _JobInstComposite_cpu_count, _JobInstComposite_cpu_speed, _JobInstComposite_cpu_vendor, _JobInstComposite_cpu_model, _JobInstComposite_ram, _JobInstComposite_system, _JobInstComposite_release, _JobInstComposite_machine, _JobInstComposite_req_cpus, _JobInstComposite_req_gpus, _JobInstComposite_req_memory_mb, _JobInstComposite_req_diskspace_mb, _JobInstComposite_invocations, _JobInstComposite_app, _JobInstComposite_wf = slot_setters(JobInstComposite)


class InvStart(WithFixed):
    """``stampede.inv.start``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "inv_id", "ts")
    name: ClassVar[str] = "inv.start"
    spec: ClassVar[EventSpec | None] = BY_NAME["inv.start"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "inv.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "inv_id", "ts")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "inv.id": "inv_id", "ts": "ts"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "inv.id", "ts"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    inv_id: int
    ts: int

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        inv_id: int,
        ts: int = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _InvStart_xwf_id(self, xwf_id)
        _InvStart_job_id(self, job_id)
        _InvStart_job_inst_id(self, job_inst_id)
        _InvStart_inv_id(self, inv_id)
        _InvStart_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        inv_id: int,
        ts: int,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> InvStart:
        self = _new(cls)
        _InvStart_xwf_id(self, xwf_id)
        _InvStart_job_id(self, job_id)
        _InvStart_job_inst_id(self, job_inst_id)
        _InvStart_inv_id(self, inv_id)
        _InvStart_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> InvStart:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "inv.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _InvStart_xwf_id(self, attrs["xwf.id"])
        _InvStart_job_id(self, attrs["job.id"])
        _InvStart_job_inst_id(self, attrs["job_inst.id"])
        _InvStart_inv_id(self, attrs["inv.id"])
        _InvStart_ts(self, get("ts", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.inv_id
        if v is not UNSET:
            add(("inv.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_InvStart_xwf_id, _InvStart_job_id, _InvStart_job_inst_id, _InvStart_inv_id, _InvStart_ts = slot_setters(InvStart)


class InvEnd(WithFixed):
    """``stampede.inv.end``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "inv_id", "transformation", "task_id", "start_time", "dur", "remote_cpu_time", "avg_cpu", "maxrss", "ts", "exitcode", "executable", "argv", "level")
    name: ClassVar[str] = "inv.end"
    spec: ClassVar[EventSpec | None] = BY_NAME["inv.end"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "inv.id", "exitcode")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "inv_id", "transformation", "task_id", "start_time", "dur", "remote_cpu_time", "avg_cpu", "maxrss", "ts", "exitcode", "executable", "argv", "level")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "inv.id": "inv_id", "transformation": "transformation", "task.id": "task_id", "start_time": "start_time", "dur": "dur", "remote_cpu_time": "remote_cpu_time", "avg_cpu": "avg_cpu", "maxrss": "maxrss", "ts": "ts", "exitcode": "exitcode", "executable": "executable", "argv": "argv", "level": "level"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "inv.id", "transformation", "task.id", "start_time", "dur", "remote_cpu_time", "avg_cpu", "maxrss", "ts", "exitcode", "executable", "argv", "level"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    inv_id: int
    transformation: str
    task_id: str
    start_time: int | float | None
    dur: int | float | str
    remote_cpu_time: int | float
    avg_cpu: float
    maxrss: int | float | str
    ts: int
    exitcode: int | str
    executable: str
    argv: str
    level: str

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        inv_id: int,
        transformation: str = UNSET,
        task_id: str = UNSET,
        start_time: int | float | None = UNSET,
        dur: int | float | str = UNSET,
        remote_cpu_time: int | float = UNSET,
        avg_cpu: float = UNSET,
        maxrss: int | float | str = UNSET,
        ts: int = UNSET,
        exitcode: int | str,
        executable: str = UNSET,
        argv: str = UNSET,
        level: str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _InvEnd_xwf_id(self, xwf_id)
        _InvEnd_job_id(self, job_id)
        _InvEnd_job_inst_id(self, job_inst_id)
        _InvEnd_inv_id(self, inv_id)
        _InvEnd_transformation(self, transformation)
        _InvEnd_task_id(self, task_id)
        _InvEnd_start_time(self, start_time)
        _InvEnd_dur(self, dur)
        _InvEnd_remote_cpu_time(self, remote_cpu_time)
        _InvEnd_avg_cpu(self, avg_cpu)
        _InvEnd_maxrss(self, maxrss)
        _InvEnd_ts(self, ts)
        _InvEnd_exitcode(self, exitcode)
        _InvEnd_executable(self, executable)
        _InvEnd_argv(self, argv)
        _InvEnd_level(self, level)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        inv_id: int,
        transformation: str,
        task_id: str,
        start_time: int | float | None,
        dur: int | float | str,
        remote_cpu_time: int | float,
        avg_cpu: float,
        maxrss: int | float | str,
        ts: int,
        exitcode: int | str,
        executable: str,
        argv: str,
        level: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> InvEnd:
        self = _new(cls)
        _InvEnd_xwf_id(self, xwf_id)
        _InvEnd_job_id(self, job_id)
        _InvEnd_job_inst_id(self, job_inst_id)
        _InvEnd_inv_id(self, inv_id)
        _InvEnd_transformation(self, transformation)
        _InvEnd_task_id(self, task_id)
        _InvEnd_start_time(self, start_time)
        _InvEnd_dur(self, dur)
        _InvEnd_remote_cpu_time(self, remote_cpu_time)
        _InvEnd_avg_cpu(self, avg_cpu)
        _InvEnd_maxrss(self, maxrss)
        _InvEnd_ts(self, ts)
        _InvEnd_exitcode(self, exitcode)
        _InvEnd_executable(self, executable)
        _InvEnd_argv(self, argv)
        _InvEnd_level(self, level)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> InvEnd:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "inv.id" not in attrs or "exitcode" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _InvEnd_xwf_id(self, attrs["xwf.id"])
        _InvEnd_job_id(self, attrs["job.id"])
        _InvEnd_job_inst_id(self, attrs["job_inst.id"])
        _InvEnd_inv_id(self, attrs["inv.id"])
        _InvEnd_transformation(self, get("transformation", UNSET))
        _InvEnd_task_id(self, get("task.id", UNSET))
        _InvEnd_start_time(self, get("start_time", UNSET))
        _InvEnd_dur(self, get("dur", UNSET))
        _InvEnd_remote_cpu_time(self, get("remote_cpu_time", UNSET))
        _InvEnd_avg_cpu(self, get("avg_cpu", UNSET))
        _InvEnd_maxrss(self, get("maxrss", UNSET))
        _InvEnd_ts(self, get("ts", UNSET))
        _InvEnd_exitcode(self, attrs["exitcode"])
        _InvEnd_executable(self, get("executable", UNSET))
        _InvEnd_argv(self, get("argv", UNSET))
        _InvEnd_level(self, get("level", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.inv_id
        if v is not UNSET:
            add(("inv.id", v))
        v = self.transformation
        if v is not UNSET:
            add(("transformation", v))
        v = self.task_id
        if v is not UNSET:
            add(("task.id", v))
        v = self.start_time
        if v is not UNSET:
            add(("start_time", v))
        v = self.dur
        if v is not UNSET:
            add(("dur", v))
        v = self.remote_cpu_time
        if v is not UNSET:
            add(("remote_cpu_time", v))
        v = self.avg_cpu
        if v is not UNSET:
            add(("avg_cpu", v))
        v = self.maxrss
        if v is not UNSET:
            add(("maxrss", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.exitcode
        if v is not UNSET:
            add(("exitcode", v))
        v = self.executable
        if v is not UNSET:
            add(("executable", v))
        v = self.argv
        if v is not UNSET:
            add(("argv", v))
        v = self.level
        if v is not UNSET:
            add(("level", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_InvEnd_xwf_id, _InvEnd_job_id, _InvEnd_job_inst_id, _InvEnd_inv_id, _InvEnd_transformation, _InvEnd_task_id, _InvEnd_start_time, _InvEnd_dur, _InvEnd_remote_cpu_time, _InvEnd_avg_cpu, _InvEnd_maxrss, _InvEnd_ts, _InvEnd_exitcode, _InvEnd_executable, _InvEnd_argv, _InvEnd_level = slot_setters(InvEnd)


class StaticMetaStart(WithFixed):
    """``stampede.static.meta.start``."""

    __slots__ = ("xwf_id", "ts")
    name: ClassVar[str] = "static.meta.start"
    spec: ClassVar[EventSpec | None] = BY_NAME["static.meta.start"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id",)
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "ts")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "ts": "ts"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "ts"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    ts: int | str

    def __init__(
        self,
        *,
        xwf_id: str,
        ts: int | str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _StaticMetaStart_xwf_id(self, xwf_id)
        _StaticMetaStart_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        ts: int | str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> StaticMetaStart:
        self = _new(cls)
        _StaticMetaStart_xwf_id(self, xwf_id)
        _StaticMetaStart_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> StaticMetaStart:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _StaticMetaStart_xwf_id(self, attrs["xwf.id"])
        _StaticMetaStart_ts(self, get("ts", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_StaticMetaStart_xwf_id, _StaticMetaStart_ts = slot_setters(StaticMetaStart)


class XwfMeta(WithFixed):
    """``stampede.xwf.meta``."""

    __slots__ = ("xwf_id", "key", "value", "ts")
    name: ClassVar[str] = "xwf.meta"
    spec: ClassVar[EventSpec | None] = BY_NAME["xwf.meta"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "key", "value")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "key", "value", "ts")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "key": "key", "value": "value", "ts": "ts"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "key", "value", "ts"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    key: str
    value: str
    ts: int | str

    def __init__(
        self,
        *,
        xwf_id: str,
        key: str,
        value: str,
        ts: int | str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _XwfMeta_xwf_id(self, xwf_id)
        _XwfMeta_key(self, key)
        _XwfMeta_value(self, value)
        _XwfMeta_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        key: str,
        value: str,
        ts: int | str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> XwfMeta:
        self = _new(cls)
        _XwfMeta_xwf_id(self, xwf_id)
        _XwfMeta_key(self, key)
        _XwfMeta_value(self, value)
        _XwfMeta_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> XwfMeta:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "key" not in attrs or "value" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _XwfMeta_xwf_id(self, attrs["xwf.id"])
        _XwfMeta_key(self, attrs["key"])
        _XwfMeta_value(self, attrs["value"])
        _XwfMeta_ts(self, get("ts", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.key
        if v is not UNSET:
            add(("key", v))
        v = self.value
        if v is not UNSET:
            add(("value", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_XwfMeta_xwf_id, _XwfMeta_key, _XwfMeta_value, _XwfMeta_ts = slot_setters(XwfMeta)


class TaskMeta(WithFixed):
    """``stampede.task.meta``."""

    __slots__ = ("xwf_id", "task_id", "key", "value", "ts")
    name: ClassVar[str] = "task.meta"
    spec: ClassVar[EventSpec | None] = BY_NAME["task.meta"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "task.id", "key", "value")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "task_id", "key", "value", "ts")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "task.id": "task_id", "key": "key", "value": "value", "ts": "ts"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "task.id", "key", "value", "ts"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    task_id: str
    key: str
    value: str
    ts: int | str

    def __init__(
        self,
        *,
        xwf_id: str,
        task_id: str,
        key: str,
        value: str,
        ts: int | str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _TaskMeta_xwf_id(self, xwf_id)
        _TaskMeta_task_id(self, task_id)
        _TaskMeta_key(self, key)
        _TaskMeta_value(self, value)
        _TaskMeta_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        task_id: str,
        key: str,
        value: str,
        ts: int | str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> TaskMeta:
        self = _new(cls)
        _TaskMeta_xwf_id(self, xwf_id)
        _TaskMeta_task_id(self, task_id)
        _TaskMeta_key(self, key)
        _TaskMeta_value(self, value)
        _TaskMeta_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> TaskMeta:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "task.id" not in attrs or "key" not in attrs or "value" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _TaskMeta_xwf_id(self, attrs["xwf.id"])
        _TaskMeta_task_id(self, attrs["task.id"])
        _TaskMeta_key(self, attrs["key"])
        _TaskMeta_value(self, attrs["value"])
        _TaskMeta_ts(self, get("ts", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.task_id
        if v is not UNSET:
            add(("task.id", v))
        v = self.key
        if v is not UNSET:
            add(("key", v))
        v = self.value
        if v is not UNSET:
            add(("value", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_TaskMeta_xwf_id, _TaskMeta_task_id, _TaskMeta_key, _TaskMeta_value, _TaskMeta_ts = slot_setters(TaskMeta)


class RcMeta(WithFixed):
    """``stampede.rc.meta``."""

    __slots__ = ("xwf_id", "lfn_id", "ts", "key", "value")
    name: ClassVar[str] = "rc.meta"
    spec: ClassVar[EventSpec | None] = BY_NAME["rc.meta"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "lfn.id", "key", "value")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "lfn_id", "ts", "key", "value")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "lfn.id": "lfn_id", "ts": "ts", "key": "key", "value": "value"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "lfn.id", "ts", "key", "value"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    lfn_id: str
    ts: int | float | str
    key: str
    value: str

    def __init__(
        self,
        *,
        xwf_id: str,
        lfn_id: str,
        ts: int | float | str = UNSET,
        key: str,
        value: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _RcMeta_xwf_id(self, xwf_id)
        _RcMeta_lfn_id(self, lfn_id)
        _RcMeta_ts(self, ts)
        _RcMeta_key(self, key)
        _RcMeta_value(self, value)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        lfn_id: str,
        ts: int | float | str,
        key: str,
        value: str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> RcMeta:
        self = _new(cls)
        _RcMeta_xwf_id(self, xwf_id)
        _RcMeta_lfn_id(self, lfn_id)
        _RcMeta_ts(self, ts)
        _RcMeta_key(self, key)
        _RcMeta_value(self, value)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> RcMeta:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "lfn.id" not in attrs or "key" not in attrs or "value" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _RcMeta_xwf_id(self, attrs["xwf.id"])
        _RcMeta_lfn_id(self, attrs["lfn.id"])
        _RcMeta_ts(self, get("ts", UNSET))
        _RcMeta_key(self, attrs["key"])
        _RcMeta_value(self, attrs["value"])
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.lfn_id
        if v is not UNSET:
            add(("lfn.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        v = self.key
        if v is not UNSET:
            add(("key", v))
        v = self.value
        if v is not UNSET:
            add(("value", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_RcMeta_xwf_id, _RcMeta_lfn_id, _RcMeta_ts, _RcMeta_key, _RcMeta_value = slot_setters(RcMeta)


class IntMetric(WithFixed):
    """``stampede.int.metric``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "type", "file_type", "count", "duration", "ts")
    name: ClassVar[str] = "int.metric"
    spec: ClassVar[EventSpec | None] = BY_NAME["int.metric"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "type", "file_type", "count", "duration")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "type", "file_type", "count", "duration", "ts")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "type": "type", "file_type": "file_type", "count": "count", "duration": "duration", "ts": "ts"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "type", "file_type", "count", "duration", "ts"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    type: str
    file_type: str
    count: int
    duration: int | float | str
    ts: int | float

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        type: str,
        file_type: str,
        count: int,
        duration: int | float | str,
        ts: int | float = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _IntMetric_xwf_id(self, xwf_id)
        _IntMetric_job_id(self, job_id)
        _IntMetric_job_inst_id(self, job_inst_id)
        _IntMetric_type(self, type)
        _IntMetric_file_type(self, file_type)
        _IntMetric_count(self, count)
        _IntMetric_duration(self, duration)
        _IntMetric_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        type: str,
        file_type: str,
        count: int,
        duration: int | float | str,
        ts: int | float,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> IntMetric:
        self = _new(cls)
        _IntMetric_xwf_id(self, xwf_id)
        _IntMetric_job_id(self, job_id)
        _IntMetric_job_inst_id(self, job_inst_id)
        _IntMetric_type(self, type)
        _IntMetric_file_type(self, file_type)
        _IntMetric_count(self, count)
        _IntMetric_duration(self, duration)
        _IntMetric_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> IntMetric:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "type" not in attrs or "file_type" not in attrs or "count" not in attrs or "duration" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _IntMetric_xwf_id(self, attrs["xwf.id"])
        _IntMetric_job_id(self, attrs["job.id"])
        _IntMetric_job_inst_id(self, attrs["job_inst.id"])
        _IntMetric_type(self, attrs["type"])
        _IntMetric_file_type(self, attrs["file_type"])
        _IntMetric_count(self, attrs["count"])
        _IntMetric_duration(self, attrs["duration"])
        _IntMetric_ts(self, get("ts", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.type
        if v is not UNSET:
            add(("type", v))
        v = self.file_type
        if v is not UNSET:
            add(("file_type", v))
        v = self.count
        if v is not UNSET:
            add(("count", v))
        v = self.duration
        if v is not UNSET:
            add(("duration", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_IntMetric_xwf_id, _IntMetric_job_id, _IntMetric_job_inst_id, _IntMetric_type, _IntMetric_file_type, _IntMetric_count, _IntMetric_duration, _IntMetric_ts = slot_setters(IntMetric)


class RcPfn(WithFixed):
    """``stampede.rc.pfn``."""

    __slots__ = ("xwf_id", "lfn_id", "pfn", "site")
    name: ClassVar[str] = "rc.pfn"
    spec: ClassVar[EventSpec | None] = BY_NAME["rc.pfn"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "lfn.id", "pfn")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "lfn_id", "pfn", "site")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "lfn.id": "lfn_id", "pfn": "pfn", "site": "site"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "lfn.id", "pfn", "site"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    lfn_id: str
    pfn: str
    site: str | None

    def __init__(
        self,
        *,
        xwf_id: str,
        lfn_id: str,
        pfn: str,
        site: str | None = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _RcPfn_xwf_id(self, xwf_id)
        _RcPfn_lfn_id(self, lfn_id)
        _RcPfn_pfn(self, pfn)
        _RcPfn_site(self, site)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        lfn_id: str,
        pfn: str,
        site: str | None,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> RcPfn:
        self = _new(cls)
        _RcPfn_xwf_id(self, xwf_id)
        _RcPfn_lfn_id(self, lfn_id)
        _RcPfn_pfn(self, pfn)
        _RcPfn_site(self, site)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> RcPfn:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "lfn.id" not in attrs or "pfn" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _RcPfn_xwf_id(self, attrs["xwf.id"])
        _RcPfn_lfn_id(self, attrs["lfn.id"])
        _RcPfn_pfn(self, attrs["pfn"])
        _RcPfn_site(self, get("site", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.lfn_id
        if v is not UNSET:
            add(("lfn.id", v))
        v = self.pfn
        if v is not UNSET:
            add(("pfn", v))
        v = self.site
        if v is not UNSET:
            add(("site", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_RcPfn_xwf_id, _RcPfn_lfn_id, _RcPfn_pfn, _RcPfn_site = slot_setters(RcPfn)


class WfMapFile(WithFixed):
    """``stampede.wf.map.file``."""

    __slots__ = ("xwf_id", "task_id", "lfn_id", "ts")
    name: ClassVar[str] = "wf.map.file"
    spec: ClassVar[EventSpec | None] = BY_NAME["wf.map.file"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "task.id", "lfn.id")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "task_id", "lfn_id", "ts")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "task.id": "task_id", "lfn.id": "lfn_id", "ts": "ts"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "task.id", "lfn.id", "ts"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    task_id: str
    lfn_id: str
    ts: int | str

    def __init__(
        self,
        *,
        xwf_id: str,
        task_id: str,
        lfn_id: str,
        ts: int | str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _WfMapFile_xwf_id(self, xwf_id)
        _WfMapFile_task_id(self, task_id)
        _WfMapFile_lfn_id(self, lfn_id)
        _WfMapFile_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        task_id: str,
        lfn_id: str,
        ts: int | str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> WfMapFile:
        self = _new(cls)
        _WfMapFile_xwf_id(self, xwf_id)
        _WfMapFile_task_id(self, task_id)
        _WfMapFile_lfn_id(self, lfn_id)
        _WfMapFile_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> WfMapFile:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "task.id" not in attrs or "lfn.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _WfMapFile_xwf_id(self, attrs["xwf.id"])
        _WfMapFile_task_id(self, attrs["task.id"])
        _WfMapFile_lfn_id(self, attrs["lfn.id"])
        _WfMapFile_ts(self, get("ts", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.task_id
        if v is not UNSET:
            add(("task.id", v))
        v = self.lfn_id
        if v is not UNSET:
            add(("lfn.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_WfMapFile_xwf_id, _WfMapFile_task_id, _WfMapFile_lfn_id, _WfMapFile_ts = slot_setters(WfMapFile)


class StaticMetaEnd(WithFixed):
    """``stampede.static.meta.end``."""

    __slots__ = ("xwf_id", "ts")
    name: ClassVar[str] = "static.meta.end"
    spec: ClassVar[EventSpec | None] = BY_NAME["static.meta.end"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id",)
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "ts")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "ts": "ts"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "ts"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    ts: int | str

    def __init__(
        self,
        *,
        xwf_id: str,
        ts: int | str = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _StaticMetaEnd_xwf_id(self, xwf_id)
        _StaticMetaEnd_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        ts: int | str,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> StaticMetaEnd:
        self = _new(cls)
        _StaticMetaEnd_xwf_id(self, xwf_id)
        _StaticMetaEnd_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> StaticMetaEnd:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _StaticMetaEnd_xwf_id(self, attrs["xwf.id"])
        _StaticMetaEnd_ts(self, get("ts", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_StaticMetaEnd_xwf_id, _StaticMetaEnd_ts = slot_setters(StaticMetaEnd)


class TaskMonitoring(WithFixed):
    """``stampede.task.monitoring``."""

    __slots__ = ("xwf_id", "job_id", "job_inst_id", "sched_id", "monitoring_event", "ts")
    name: ClassVar[str] = "task.monitoring"
    spec: ClassVar[EventSpec | None] = BY_NAME["task.monitoring"]
    required: ClassVar[tuple[str, ...]] = ("xwf.id", "job.id", "job_inst.id", "monitoring_event")
    fields: ClassVar[tuple[str, ...]] = ("xwf_id", "job_id", "job_inst_id", "sched_id", "monitoring_event", "ts")
    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({"xwf.id": "xwf_id", "job.id": "job_id", "job_inst.id": "job_inst_id", "sched.id": "sched_id", "monitoring_event": "monitoring_event", "ts": "ts"})
    _keys: ClassVar[frozenset[str]] = frozenset(("xwf.id", "job.id", "job_inst.id", "sched.id", "monitoring_event", "ts"))
    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS

    xwf_id: str
    job_id: str
    job_inst_id: int
    sched_id: str
    monitoring_event: str
    ts: str | int | float | bool | None

    def __init__(
        self,
        *,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        sched_id: str = UNSET,
        monitoring_event: str,
        ts: str | int | float | bool | None = UNSET,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> None:
        _TaskMonitoring_xwf_id(self, xwf_id)
        _TaskMonitoring_job_id(self, job_id)
        _TaskMonitoring_job_inst_id(self, job_inst_id)
        _TaskMonitoring_sched_id(self, sched_id)
        _TaskMonitoring_monitoring_event(self, monitoring_event)
        _TaskMonitoring_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)

    @classmethod
    def of(
        cls,
        xwf_id: str,
        job_id: str,
        job_inst_id: int,
        sched_id: str,
        monitoring_event: str,
        ts: str | int | float | bool | None,
        fixed: Fixed | None = None,
        extra: Mapping[str, Any] = EMPTY,
    ) -> TaskMonitoring:
        self = _new(cls)
        _TaskMonitoring_xwf_id(self, xwf_id)
        _TaskMonitoring_job_id(self, job_id)
        _TaskMonitoring_job_inst_id(self, job_inst_id)
        _TaskMonitoring_sched_id(self, sched_id)
        _TaskMonitoring_monitoring_event(self, monitoring_event)
        _TaskMonitoring_ts(self, ts)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, None)
        return self

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> TaskMonitoring:
        known = cls._keys_fixed if fixed is not None else cls._keys
        usual = attrs.keys() <= known  # no set built for the usual event
        if fixed is not None:
            attrs.update(fixed.mapping)
        if "xwf.id" not in attrs or "job.id" not in attrs or "job_inst.id" not in attrs or "monitoring_event" not in attrs:
            raise missing(cls, attrs)
        self = _new(cls)
        get = attrs.get
        _TaskMonitoring_xwf_id(self, attrs["xwf.id"])
        _TaskMonitoring_job_id(self, attrs["job.id"])
        _TaskMonitoring_job_inst_id(self, attrs["job_inst.id"])
        _TaskMonitoring_sched_id(self, get("sched.id", UNSET))
        _TaskMonitoring_monitoring_event(self, attrs["monitoring_event"])
        _TaskMonitoring_ts(self, get("ts", UNSET))
        if usual:
            extra = EMPTY
        else:
            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, True)
        _set_fixed(self, fixed)
        _set_extra(self, extra)
        _set_wire(self, attrs)
        return self

    def wire_items(self) -> list[tuple[str, Any]]:
        wire = self._wire
        if wire is not None:
            return list(wire.items())
        out: list[tuple[str, Any]] = []
        v: Any
        add = out.append
        v = self.xwf_id
        if v is not UNSET:
            add(("xwf.id", v))
        v = self.job_id
        if v is not UNSET:
            add(("job.id", v))
        v = self.job_inst_id
        if v is not UNSET:
            add(("job_inst.id", v))
        v = self.sched_id
        if v is not UNSET:
            add(("sched.id", v))
        v = self.monitoring_event
        if v is not UNSET:
            add(("monitoring_event", v))
        v = self.ts
        if v is not UNSET:
            add(("ts", v))
        fx = self.fixed
        if fx is not None:
            out.extend(fx.tail)
        if self.extra:
            out.extend(self.extra.items())
        return out


_TaskMonitoring_xwf_id, _TaskMonitoring_job_id, _TaskMonitoring_job_inst_id, _TaskMonitoring_sched_id, _TaskMonitoring_monitoring_event, _TaskMonitoring_ts = slot_setters(TaskMonitoring)


_set_fixed, _set_extra, _set_wire = slot_setters(StampedeEvent)

#: Every kind's class, in catalogue order.
CLASSES: tuple[type[StampedeEvent], ...] = (
    WfPlan,
    WfMapTaskJob,
    StaticStart,
    StaticEnd,
    XwfStart,
    XwfEnd,
    XwfMapSubwfJob,
    TaskInfo,
    TaskEdge,
    JobInfo,
    JobEdge,
    JobInstPreStart,
    JobInstPreTerm,
    JobInstPreEnd,
    JobInstSubmitStart,
    JobInstSubmitEnd,
    JobInstHeldStart,
    JobInstHeldEnd,
    JobInstMainStart,
    JobInstMainTerm,
    JobInstMainEnd,
    JobInstPostStart,
    JobInstPostTerm,
    JobInstPostEnd,
    JobInstHostInfo,
    JobInstImageInfo,
    JobInstAbortInfo,
    JobInstRemoteError,
    JobInstGridSubmitStart,
    JobInstGridSubmitEnd,
    JobInstGlobusSubmitStart,
    JobInstGlobusSubmitEnd,
    JobInstTag,
    JobInstComposite,
    InvStart,
    InvEnd,
    StaticMetaStart,
    XwfMeta,
    TaskMeta,
    RcMeta,
    IntMetric,
    RcPfn,
    WfMapFile,
    StaticMetaEnd,
    TaskMonitoring,
)

__all__ = [
    "CLASSES",
    "WithFixed",
    "WfPlan",
    "WfMapTaskJob",
    "StaticStart",
    "StaticEnd",
    "XwfStart",
    "XwfEnd",
    "XwfMapSubwfJob",
    "TaskInfo",
    "TaskEdge",
    "JobInfo",
    "JobEdge",
    "JobInstPreStart",
    "JobInstPreTerm",
    "JobInstPreEnd",
    "JobInstSubmitStart",
    "JobInstSubmitEnd",
    "JobInstHeldStart",
    "JobInstHeldEnd",
    "JobInstMainStart",
    "JobInstMainTerm",
    "JobInstMainEnd",
    "JobInstPostStart",
    "JobInstPostTerm",
    "JobInstPostEnd",
    "JobInstHostInfo",
    "JobInstImageInfo",
    "JobInstAbortInfo",
    "JobInstRemoteError",
    "JobInstGridSubmitStart",
    "JobInstGridSubmitEnd",
    "JobInstGlobusSubmitStart",
    "JobInstGlobusSubmitEnd",
    "JobInstTag",
    "JobInstComposite",
    "InvStart",
    "InvEnd",
    "StaticMetaStart",
    "XwfMeta",
    "TaskMeta",
    "RcMeta",
    "IntMetric",
    "RcPfn",
    "WfMapFile",
    "StaticMetaEnd",
    "TaskMonitoring",
]
