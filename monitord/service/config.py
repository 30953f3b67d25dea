"""The service's TOML configuration: parsed once at start, every key checked by pydantic.

The sections are (pydantic) dataclasses whose fields say type and range; unknown keys are
refused.  A typo or a wrong type stops the service at start with one line that names the file,
the line when known, and the key (``svc.toml:12: [limits] sink_thread: unknown key``), never later.
pydantic's error types are worded here once (:func:`_wording`) in the configuration's terms.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
from dataclasses import field
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, Strict, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass
from pydantic_core import ErrorDetails

from monitord.system.tomlconfig import ConfigError, line_of, read_toml, where

DEFAULT_CONFIG = "/etc/monitord/service.toml"
CONFIG_ENV = "MONITORD_SERVICE_CONFIG"
DEFAULT_LISTEN = "127.0.0.1:9175"
KEEP_FINISHED_SECONDS = 86400.0  # a finished workflow stays listed in the status for a day


# --- value types -------------------------------------------------------------------


def _non_empty(text: str) -> str:
    if not text:
        raise ValueError("must not be empty")
    return text


def _listen(text: str) -> str:
    if text and (":" not in text or not text.rsplit(":", 1)[1].isdigit()):
        raise ValueError(f"must be HOST:PORT (or empty to disable), not {text!r}")
    return text


def _pattern(text: str) -> str:
    if not text or "/" in text:
        raise ValueError("must be a file-name pattern such as *.dag.dagman.out")
    if not fnmatch.fnmatch("x.dag.dagman.out", text) and not text.endswith(".dagman.out"):
        raise ValueError("must match DAGMan output files (*.dagman.out)")
    return text


Str = Annotated[str, Strict()]
Bool = Annotated[bool, Strict()]
Path = Annotated[str, Strict(), AfterValidator(_non_empty), AfterValidator(os.path.expanduser)]
OptionalStr = Annotated[str, Strict(), AfterValidator(lambda text: text or None)]
Seconds = Annotated[float, Strict()]  # an integer is accepted as well


def _int(lo: int, hi: int | None = None) -> Any:
    return Annotated[int, Strict(), Field(ge=lo, le=hi)]


_SECTION = ConfigDict(extra="forbid", frozen=True)


# --- sections ----------------------------------------------------------------------


@dataclass(config=_SECTION)
class Defaults:
    """Per-workflow options for workflows the service picks up itself (watch roots, restarts).

    Attached workflows bring their own options (those of the client's command line).
    """

    dests: tuple[Annotated[str, Strict(), AfterValidator(_non_empty)], ...] = ()
    encoding: Literal["bp", "json"] = "bp"
    no_events: Bool = False
    no_notifications: Bool = False
    notifications_max: _int(0) | None = None  # type: ignore[valid-type]
    notifications_timeout: _int(0) | None = None  # type: ignore[valid-type]
    skip_stdout: Bool = False
    keep_state: Bool = False
    no_recursive: Bool = False
    dashboard: Bool = False
    dashboard_url: OptionalStr | None = None
    use_properties: Bool = True


@dataclass(config=_SECTION)
class WatchRoot:
    root: Path
    pattern: Annotated[str, Strict(), AfterValidator(_pattern)] = "*.dag.dagman.out"
    max_depth: _int(0, 64) = 6  # type: ignore[valid-type]


@dataclass(config=_SECTION)
class Limits:
    sink_threads: _int(1, 256) = 4  # type: ignore[valid-type]
    worker_threads: _int(2, 256) = 8  # type: ignore[valid-type]
    idle_check_seconds: Annotated[Seconds, Field(ge=1.0)] = 30.0
    poll_seconds: Annotated[Seconds, Field(ge=0.05)] = 1.0
    scan_interval_seconds: Annotated[Seconds, Field(ge=0.1)] = 10.0
    max_workflows: _int(1) = 5000  # type: ignore[valid-type]


@dataclass(config=_SECTION)
class _Service:
    socket: Path = "/run/monitord/monitord.sock"
    socket_mode: _int(0, 0o777) = 0o666  # type: ignore[valid-type]
    state_dir: Path = "/var/lib/monitord"
    log_format: Literal["json", "console"] = "json"
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    keep_finished_seconds: Annotated[Seconds, Field(ge=0.0)] = KEEP_FINISHED_SECONDS


@dataclass(config=_SECTION)
class _Http:
    listen: Annotated[str, Strict(), AfterValidator(_listen)] = DEFAULT_LISTEN


@dataclass(config=_SECTION)
class _Document:
    """The file as written: its sections."""

    service: _Service = field(default_factory=_Service)
    http: _Http = field(default_factory=_Http)
    defaults: Defaults = field(default_factory=Defaults)
    watch: list[WatchRoot] = field(default_factory=list)
    limits: Limits = field(default_factory=Limits)


_DOCUMENT = TypeAdapter(_Document)


@dataclasses.dataclass(frozen=True)
class ServiceConfig:
    """What the service runs with (the sections of the file, [service] and [http] flattened)."""

    path: str | None = None
    socket: str = "/run/monitord/monitord.sock"
    socket_mode: int = 0o666
    state_dir: str = "/var/lib/monitord"
    log_format: str = "json"
    log_level: str = "info"
    keep_finished_seconds: float = KEEP_FINISHED_SECONDS
    http_listen: str = DEFAULT_LISTEN
    defaults: Defaults = field(default_factory=Defaults)
    watch: tuple[WatchRoot, ...] = ()
    limits: Limits = field(default_factory=Limits)


# --- errors in the configuration's words ---------------------------------------------


def _fields(section: Any) -> dict[str, Any]:
    return dict(getattr(section, "__pydantic_fields__", {}))


def _where(loc: tuple[int | str, ...]) -> tuple[str, str | None, Any]:
    """``("watch", 0, "depth")`` -> ("[[watch]] #1", "depth", the section's class)."""
    section = str(loc[0])
    doc_field = _fields(_Document).get(section)
    cls = doc_field.annotation if doc_field is not None else None
    rest = list(loc[1:])
    if section == "watch":
        cls = WatchRoot
        label = "[[watch]]"
        if rest and isinstance(rest[0], int):
            label += f" #{int(rest.pop(0)) + 1}"
    else:
        label = f"[{section}]"
    key = str(rest[0]) if rest else None
    return label, key, cls


def _bounds(cls: Any, key: str, ctx: dict[str, Any]) -> tuple[Any, Any]:
    """The field's lower and upper bound (pydantic names only the one that failed)."""
    lo, hi = ctx.get("ge"), ctx.get("le")
    info = _fields(cls).get(key)
    for item in getattr(info, "metadata", []):
        lo = getattr(item, "ge", lo)
        hi = getattr(item, "le", hi)
    return lo, hi


def _wording(err: ErrorDetails) -> str:
    """One pydantic error as ``[section] key: what is wrong``."""
    loc = tuple(err["loc"])
    kind, value, ctx = err["type"], err.get("input"), err.get("ctx") or {}
    if (
        len(loc) == 1
        and kind == "unexpected_keyword_argument"
        or (len(loc) == 1 and kind == "extra_forbidden")
    ):
        known = ", ".join(sorted(_fields(_Document)))
        return f"[{loc[0]}]: unknown section (known: {known})"
    label, key, cls = _where(loc)
    if key is None:
        if loc[0] == "watch" and kind == "list_type":
            return f"{label}: must be an array of tables ([[watch]])"
        return f"{label}: must be a table"
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        return f"{label} {key}: unknown key (known: {', '.join(sorted(_fields(cls)))})"
    if kind in ("missing", "missing_argument"):
        return (
            f"{label} {key}: missing (the directory to watch)"
            if key == "root"
            else (f"{label} {key}: missing")
        )
    if kind in ("greater_than_equal", "less_than_equal"):
        lo, hi = _bounds(cls, key, ctx)
        what = f"between {lo} and {hi}" if hi is not None else f">= {lo}"
        return f"{label} {key}: must be {what}, not {value!r}"
    if kind == "literal_error":
        allowed = ctx.get("expected", "").replace("'", "").replace(" or ", ", ")
        return f"{label} {key}: must be one of {allowed}, not {value!r}"
    if kind == "bool_type":
        return f"{label} {key}: must be true or false, not {value!r}"
    if kind in ("int_type", "int_from_float"):
        return f"{label} {key}: must be an integer, not {value!r}"
    if kind in ("float_type", "float_parsing"):
        return f"{label} {key}: must be a number of seconds, not {value!r}"
    if kind in ("tuple_type", "list_type") or len(loc) > 2 + (loc[0] == "watch"):
        return f"{label} {key}: must be a list of non-empty strings"
    if kind == "string_type":
        return f"{label} {key}: must be a string, not {type(value).__name__}"
    if kind == "value_error":
        return f"{label} {key}: {ctx.get('error', err['msg'])}"
    return f"{label} {key}: {err['msg']}"


def parse_config(
    data: dict[str, Any], path: str | None = None, text: str | None = None
) -> ServiceConfig:
    """Validate an already-parsed TOML document (``text``: its source, for line numbers)."""
    try:
        doc = _DOCUMENT.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        line = line_of(text, tuple(first["loc"])) if text is not None else None
        raise ConfigError(f"{where(path, line)}: {_wording(first)}") from None
    return ServiceConfig(
        path=path,
        socket=doc.service.socket,
        socket_mode=doc.service.socket_mode,
        state_dir=doc.service.state_dir,
        log_format=doc.service.log_format,
        log_level=doc.service.log_level,
        keep_finished_seconds=doc.service.keep_finished_seconds,
        http_listen=doc.http.listen,
        defaults=doc.defaults,
        watch=tuple(doc.watch),
        limits=doc.limits,
    )


def load_config(path: str) -> ServiceConfig:
    """Read and validate ``path``; any problem raises :class:`ConfigError` naming the key."""
    data, text = read_toml(path)
    return parse_config(data, path, text)


def configured_path(explicit: str | None = None) -> str | None:
    """Where the service configuration is: ``explicit``, ``$MONITORD_SERVICE_CONFIG``, or /etc."""
    if explicit:
        return explicit
    env = os.environ.get(CONFIG_ENV)
    if env:
        return env
    return DEFAULT_CONFIG if os.path.exists(DEFAULT_CONFIG) else None
