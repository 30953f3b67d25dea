"""Where and how the OTLP sink exports: the ``-d`` URL, the endpoint's Pegasus properties and
OpenTelemetry's own environment variables (docs/traces.md, "Configuration").

``otlp+http://host:4318`` and ``otlp+https://host:4318`` name a receiver; with no path the
traces path ``/v1/traces`` is added (as OpenTelemetry does for ``OTEL_EXPORTER_OTLP_ENDPOINT``),
a path given is used as it is.  ``otlp://`` alone takes the endpoint from
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (as is) or ``OTEL_EXPORTER_OTLP_ENDPOINT`` (+ the path).

Header values (tokens) live only in :class:`OTLPConfig`; :attr:`OTLPConfig.safe_url` and
:meth:`OTLPConfig.mask` are what may be shown.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from urllib.parse import unquote, urlsplit

from monitord.system.secrets import mask_secret
from sinks.runtime.base import SinkError
from sinks.runtime.factory import endpoint_property

TRACES_PATH = "/v1/traces"
DEFAULT_TIMEOUT = 10.0  # seconds, OpenTelemetry's default
DEFAULT_SERVICE_NAME = "pegasus"
USAGE = "expected otlp+http://host:4318, otlp+https://host:4318[/path] or otlp://"


@dataclass(frozen=True)
class OTLPConfig:
    """Everything needed to export; ``headers`` values never leave this object."""

    url: str  # http(s)://host:port/path, without credentials
    headers: dict[str, str] = field(repr=False, default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    tls_verify: bool = True
    tls_ca_file: str | None = None
    compression: str | None = None  # "gzip" or None
    resource: dict[str, str] = field(default_factory=dict)

    @property
    def safe_url(self) -> str:
        """The endpoint, fit for logs, errors and names (it never holds a credential)."""
        return self.url

    def mask(self, text: str) -> str:
        """``text`` with every header value (token) masked."""
        for value in self.headers.values():
            text = mask_secret(text, value)
            for word in value.split():  # "Bearer <token>": the token alone too
                if len(word) >= 6:
                    text = mask_secret(text, word)
        return text


def parse_headers(text: str | None) -> dict[str, str]:
    """``key1=value1,key2=value2`` (values URL-encoded), OpenTelemetry's header list."""
    headers: dict[str, str] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SinkError("OTLP headers: expected key=value pairs separated by commas")
        headers[unquote(key.strip())] = unquote(value.strip())
    return headers


def parse_resource(text: str | None) -> dict[str, str]:
    """``OTEL_RESOURCE_ATTRIBUTES``: ``key=value,...``, values URL-encoded; bad items skipped."""
    out: dict[str, str] = {}
    for item in (text or "").split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            out[unquote(key.strip())] = unquote(value.strip())
    return out


def _bool(value: str, name: str) -> bool:
    low = value.strip().lower()
    if low in ("true", "yes", "1", "on"):
        return True
    if low in ("false", "no", "0", "off"):
        return False
    raise SinkError(f"OTLP property {name}: {value!r} is not true or false")


def _endpoint(dest: str, env: Mapping[str, str]) -> str:
    try:
        parts = urlsplit(dest)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise SinkError(f"OTLP URL is malformed ({USAGE})") from None
    scheme = parts.scheme.lower()
    if scheme == "otlp" and not parts.netloc:
        if env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
            return env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
        base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        if not base:
            raise SinkError(
                "otlp:// takes its endpoint from OTEL_EXPORTER_OTLP_ENDPOINT or"
                " OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, and neither is set"
            )
        return base.rstrip("/") + TRACES_PATH
    if scheme not in ("otlp+http", "otlp+https"):
        raise SinkError(f"not an OTLP URL: scheme {scheme!r} ({USAGE})")
    if not parts.hostname:
        raise SinkError(f"OTLP URL has no host ({USAGE})")
    path = parts.path if parts.path not in ("", "/") else TRACES_PATH
    return f"{scheme.removeprefix('otlp+')}://{parts.netloc}{path}"


def parse_otlp(
    dest: str, props: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None
) -> OTLPConfig:
    """The sink's settings: the endpoint's property first, then the OTEL_* variable."""
    props = props or {}
    env = os.environ if env is None else env
    setting = partial(_setting, props, dest, env)
    url = _endpoint(dest, env)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SinkError(f"OTLP endpoint must be an http:// or https:// URL ({USAGE})")
    headers = parse_headers(
        setting("headers", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")
    )
    if parts.username is not None:  # user:password@ in the URL: basic auth, never shown
        url = _basic_auth(url, headers)
    timeout = _timeout(setting("timeout"), env)
    compression = setting(
        "compression", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"
    )
    if compression not in (None, "none", "gzip"):
        raise SinkError(f"OTLP compression {compression!r}: use gzip or none")
    ca_file = setting(
        "tls_ca_file", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE"
    )
    if ca_file and not os.path.isfile(ca_file):
        raise SinkError(f"OTLP tls_ca_file: no such file {ca_file!r}")
    verify_text = setting("tls_verify")
    resource = parse_resource(env.get("OTEL_RESOURCE_ATTRIBUTES"))
    resource["service.name"] = (
        setting("service_name", "OTEL_SERVICE_NAME")
        or resource.get("service.name")
        or DEFAULT_SERVICE_NAME
    )
    return OTLPConfig(
        url=url,
        headers=headers,
        timeout=timeout,
        tls_verify=_bool(verify_text, "tls_verify") if verify_text else True,
        tls_ca_file=ca_file or None,
        compression="gzip" if compression == "gzip" else None,
        resource=resource,
    )


def _setting(
    props: Mapping[str, str], dest: str, env: Mapping[str, str], prop: str, *variables: str
) -> str | None:
    """The endpoint's property ``prop``, else the first of ``variables`` set, else None."""
    value = endpoint_property(props, dest, prop)
    if value:
        return value
    for var in variables:
        if env.get(var):
            return env[var]
    return None


def _basic_auth(url: str, headers: dict[str, str]) -> str:
    """The URL without its user:password, which becomes a basic Authorization header (unless
    the headers name one already)."""
    import base64

    parts = urlsplit(url)
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    headers.setdefault("Authorization", "Basic " + base64.b64encode(pair.encode()).decode())
    host = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
    return parts._replace(netloc=host).geturl()


def _timeout(text: str | None, env: Mapping[str, str]) -> float:
    """Seconds: the ``timeout`` property, else OTEL_*_TIMEOUT (milliseconds), else the default."""
    if text:
        try:
            return float(text)
        except ValueError:
            raise SinkError(f"OTLP property timeout: {text!r} is not seconds") from None
    ms = env.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") or env.get("OTEL_EXPORTER_OTLP_TIMEOUT")
    if not ms:
        return DEFAULT_TIMEOUT
    try:
        return float(ms) / 1000.0
    except ValueError:
        raise SinkError(f"OTEL_EXPORTER_OTLP_TIMEOUT: {ms!r} is not milliseconds") from None
