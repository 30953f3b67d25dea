"""The service's TOML configuration: parsed once at start, every key checked.

Configuration is data: each section is a table of known keys with a type and a
check, so a typo or a wrong type stops the service at start with one line that
names the bad key (``[limits] sink_thread: unknown key``), never later.
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

DEFAULT_CONFIG = "/etc/monitord/service.toml"
CONFIG_ENV = "MONITORD_SERVICE_CONFIG"
DEFAULT_LISTEN = "127.0.0.1:9175"


class ConfigError(Exception):
    """A configuration problem, worded to name the file and the key."""


@dataclass(frozen=True)
class Defaults:
    """Per-workflow options for workflows the service picks up itself (watch roots, restarts).

    Attached workflows bring their own options (those of the client's command line).
    """

    dests: tuple[str, ...] = ()
    encoding: str = "bp"
    no_events: bool = False
    no_notifications: bool = False
    notifications_max: int | None = None
    notifications_timeout: int | None = None
    skip_stdout: bool = False
    keep_state: bool = False
    no_recursive: bool = False
    dashboard: bool = False
    dashboard_url: str | None = None
    use_properties: bool = True


@dataclass(frozen=True)
class WatchRoot:
    root: str
    pattern: str = "*.dag.dagman.out"
    max_depth: int = 6


@dataclass(frozen=True)
class Limits:
    sink_threads: int = 4
    worker_threads: int = 8
    idle_check_seconds: float = 30.0
    poll_seconds: float = 1.0
    scan_interval_seconds: float = 10.0
    max_workflows: int = 5000


@dataclass(frozen=True)
class ServiceConfig:
    path: str | None = None
    socket: str = "/run/monitord/monitord.sock"
    socket_mode: int = 0o666
    state_dir: str = "/var/lib/monitord"
    log_format: str = "json"
    log_level: str = "info"
    http_listen: str = DEFAULT_LISTEN
    defaults: Defaults = field(default_factory=Defaults)
    watch: tuple[WatchRoot, ...] = ()
    limits: Limits = field(default_factory=Limits)


# --- key checks ------------------------------------------------------------------

Check = Callable[[Any], Any]


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"must be a string, not {type(value).__name__}")
    return value


def _path(value: Any) -> str:
    text = _str(value)
    if not text:
        raise ValueError("must not be empty")
    return os.path.expanduser(text)


def _opt_str(value: Any) -> str | None:
    return _str(value) or None


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, not {value!r}")
    return value


def _int(lo: int, hi: int | None = None) -> Check:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"must be an integer, not {value!r}")
        if value < lo or (hi is not None and value > hi):
            raise ValueError(f"must be between {lo} and {hi}" if hi else f"must be >= {lo}")
        return value

    return check


def _seconds(lo: float) -> Check:
    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"must be a number of seconds, not {value!r}")
        if value < lo:
            raise ValueError(f"must be >= {lo}")
        return float(value)

    return check


def _choice(*allowed: str) -> Check:
    def check(value: Any) -> str:
        if value not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}, not {value!r}")
        return str(value)

    return check


def _str_list(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError("must be a list of non-empty strings")
    return tuple(value)


def _listen(value: Any) -> str:
    text = _str(value)
    if text and (":" not in text or not text.rsplit(":", 1)[1].isdigit()):
        raise ValueError(f"must be HOST:PORT (or empty to disable), not {text!r}")
    return text


def _pattern(value: Any) -> str:
    text = _str(value)
    if not text or "/" in text:
        raise ValueError("must be a file-name pattern such as *.dag.dagman.out")
    if not fnmatch.fnmatch("x.dag.dagman.out", text) and not text.endswith(".dagman.out"):
        raise ValueError("must match DAGMan output files (*.dagman.out)")
    return text


SERVICE_KEYS: dict[str, Check] = {
    "socket": _path,
    "socket_mode": _int(0, 0o777),
    "state_dir": _path,
    "log_format": _choice("json", "console"),
    "log_level": _choice("debug", "info", "warning", "error"),
}
HTTP_KEYS: dict[str, Check] = {"listen": _listen}
DEFAULT_KEYS: dict[str, Check] = {
    "dests": _str_list,
    "encoding": _choice("bp", "json"),
    "no_events": _bool,
    "no_notifications": _bool,
    "notifications_max": _int(0),
    "notifications_timeout": _int(0),
    "skip_stdout": _bool,
    "keep_state": _bool,
    "no_recursive": _bool,
    "dashboard": _bool,
    "dashboard_url": _opt_str,
    "use_properties": _bool,
}
WATCH_KEYS: dict[str, Check] = {"root": _path, "pattern": _pattern, "max_depth": _int(0, 64)}
LIMIT_KEYS: dict[str, Check] = {
    "sink_threads": _int(1, 256),
    "worker_threads": _int(2, 256),
    "idle_check_seconds": _seconds(1.0),
    "poll_seconds": _seconds(0.05),
    "scan_interval_seconds": _seconds(0.1),
    "max_workflows": _int(1),
}


def _section(where: str, table: Any, keys: dict[str, Check]) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    out: dict[str, Any] = {}
    for key, value in table.items():
        check = keys.get(key)
        if check is None:
            raise ConfigError(f"{where} {key}: unknown key (known: {', '.join(sorted(keys))})")
        try:
            out[key] = check(value)
        except ValueError as exc:
            raise ConfigError(f"{where} {key}: {exc}") from None
    return out


def parse_config(data: dict[str, Any], path: str | None = None) -> ServiceConfig:
    """Validate an already-parsed TOML document."""
    name = path or "<config>"
    known = {"service", "http", "defaults", "watch", "limits"}
    for key in data:
        if key not in known:
            raise ConfigError(
                f"{name}: [{key}]: unknown section (known: {', '.join(sorted(known))})"
            )
    service = _section(f"{name}: [service]", data.get("service", {}), SERVICE_KEYS)
    http = _section(f"{name}: [http]", data.get("http", {}), HTTP_KEYS)
    defaults = _section(f"{name}: [defaults]", data.get("defaults", {}), DEFAULT_KEYS)
    limits = _section(f"{name}: [limits]", data.get("limits", {}), LIMIT_KEYS)
    raw_watch = data.get("watch", [])
    if not isinstance(raw_watch, list):
        raise ConfigError(f"{name}: [[watch]]: must be an array of tables ([[watch]])")
    watch = []
    for i, item in enumerate(raw_watch):
        where = f"{name}: [[watch]] #{i + 1}"
        entry = _section(where, item, WATCH_KEYS)
        if "root" not in entry:
            raise ConfigError(f"{where} root: missing (the directory to watch)")
        watch.append(WatchRoot(**entry))
    return ServiceConfig(
        path=path,
        http_listen=http.get("listen", DEFAULT_LISTEN),
        defaults=Defaults(**defaults),
        watch=tuple(watch),
        limits=Limits(**limits),
        **service,
    )


def load_config(path: str) -> ServiceConfig:
    """Read and validate ``path``; any problem raises :class:`ConfigError` naming the key."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    return parse_config(data, path)


def configured_path(explicit: str | None = None) -> str | None:
    """Where the service configuration is: ``explicit``, ``$MONITORD_SERVICE_CONFIG``, or /etc."""
    if explicit:
        return explicit
    env = os.environ.get(CONFIG_ENV)
    if env:
        return env
    return DEFAULT_CONFIG if os.path.exists(DEFAULT_CONFIG) else None
