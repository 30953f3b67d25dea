"""The attach protocol: JSON lines over the service's Unix socket.

Client → service (one request per connection)::

    {"op": "attach", "dagman_out": "/abs/wf.dag.dagman.out", "config": {...}, "wait": true}
    {"op": "interrupt"}          # later on the same connection: end it as SIGINT would

Service → client::

    {"event": "accepted", "wf_uuid": "...", "existing": false}
    {"event": "refused", "message": "...", "exit_code": 1}
    {"event": "ended", "exit_code": 0}
    {"event": "stopping"}        # the service shuts down; the workflow resumes after its restart

``config`` holds the :class:`~monitord.daemon.monitor.MonitorConfig` fields the client
computed from its command line and properties, exactly as the per-workflow
daemon would have used them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson

from monitord.daemon.config import MonitorConfig

MAX_LINE = 1 << 20

# MonitorConfig fields a client may set, with their JSON types.
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "dagman_out": (str,),
    "dests": (list, type(None)),
    "events": (bool,),
    "encoding": (str,),
    "jobstate_name": (str, type(None)),
    "output_dir": (str, type(None)),
    "follow_subworkflows": (bool,),
    "store_stdout": (bool,),
    "keep_state": (bool,),
    "adjust": (float, int),
    "force": (bool,),
    "properties": (dict,),
    "dashboard": (bool,),
    "dashboard_url": (str, type(None)),
}


_PLAIN: tuple[type, ...] = (str, int, float, bool, type(None))


class ProtocolError(Exception):
    """A malformed message."""


def encode(message: dict[str, Any]) -> bytes:
    return orjson.dumps(message) + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    try:
        doc = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise ProtocolError(f"not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ProtocolError("not a JSON object")
    return doc


def config_to_dict(config: MonitorConfig) -> dict[str, Any]:
    """Every field but ``replay`` (the service follows live)."""
    data = dataclasses.asdict(config)
    data.pop("replay", None)
    return data


def config_from_dict(data: Any) -> MonitorConfig:
    """Validate a client's config; live following only (``replay`` is never taken)."""
    if not isinstance(data, dict):
        raise ProtocolError("config: not an object")
    known = {f.name for f in dataclasses.fields(MonitorConfig)}
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known or key == "replay":
            raise ProtocolError(f"config: unknown field {key!r}")
        # Fields added to MonitorConfig later (notification options...) are plain values.
        types = _FIELD_TYPES.get(key, _PLAIN)
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise ProtocolError(f"config: {key}: wrong type {type(value).__name__}")
        kwargs[key] = value
    if "dagman_out" not in kwargs:
        raise ProtocolError("config: dagman_out missing")
    dests = kwargs.get("dests")
    if dests is not None and not all(d is None or isinstance(d, str) for d in dests):
        raise ProtocolError("config: dests: not a list of strings")
    props = kwargs.get("properties", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in props.items()):
        raise ProtocolError("config: properties: not a string map")
    if kwargs.get("encoding", "bp") not in ("bp", "json"):
        raise ProtocolError("config: encoding: must be bp or json")
    kwargs["adjust"] = float(kwargs.get("adjust", 0.0))
    return MonitorConfig(replay=False, **kwargs)
