"""AMQP endpoint settings: the URL (behaviour doc §6.5) plus the endpoint's properties (§6.4, §10).

``amqp[s]://user:pass@host:port/[vhost/]exchange``: the last path element is the
exchange, the one before it the virtual host (empty means ``/``).  Unlike the
reference's splitter, credentials and port are parsed properly (no port: 5672,
or 5671 for ``amqps``; no credentials: the broker default ``guest``).

The password lives only in :class:`AMQPConfig`; everything that may be shown
(``safe_url``, the sink name, the producer directory name) is derived without it,
and :func:`scrub` removes it from any library message before it is logged.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, unquote, urlsplit

from monitord.core.readers.workflow_properties import PropertyError, float_property
from monitord.system.secrets import mask_secret
from sinks.amqp.event_filter import EventFilter
from sinks.runtime.base import SinkError

WORKFLOW_PREFIX = "pegasus.catalog.workflow."
ANY_CATALOG_PREFIX = "pegasus.catalog.*."

DEFAULT_DRAIN_TIMEOUT = 15.0  # the old endpoint property; the runtime's spool.drain_timeout rules
DEFAULT_HEARTBEAT = 30  # seconds; proposed to the broker, which may negotiate it down


@dataclass(frozen=True)
class AMQPConfig:
    """Everything needed to connect and publish; ``password`` never leaves this object."""

    scheme: str
    host: str
    port: int
    user: str
    password: str = field(repr=False)
    vhost: str
    exchange: str
    events: EventFilter
    timeout: float | None = None  # connect / blocked-publish timeout (property ``timeout``)
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT
    spool_dir: str | None = None  # property ``spool``: where the producer state lives (run dir)
    heartbeat: int = DEFAULT_HEARTBEAT
    # amqps only: verify the broker's certificate and host name (property ``tls_verify``; the
    # reference never verifies, so a site that relied on that must opt out explicitly) against
    # the system's CAs or ``tls_ca_file``
    tls_verify: bool = True
    tls_ca_file: str | None = None
    # ``ingest = true``: the ingest's topology (sinks/amqp/topology.py) is declared by the
    # producer too, with these (the ingest's own defaults), if it does not exist yet
    ingest: bool = False
    ingest_prefix: str = "monitord-ingest"
    ingest_partitions: int = 8
    ingest_quorum: bool = True

    @property
    def tls(self) -> bool:
        return self.scheme == "amqps"

    @property
    def safe_url(self) -> str:
        """The URL without its password: fit for logs, errors and names."""
        vhost = "" if self.vhost == "/" else quote(self.vhost, safe="") + "/"
        user = quote(self.user, safe="") + "@" if self.user else ""
        return f"{self.scheme}://{user}{self.host}:{self.port}/{vhost}{self.exchange}"

    @property
    def endpoint_key(self) -> str:
        """A stable directory name for this endpoint (same URL -> same producer)."""
        return hashlib.sha256(self.safe_url.encode("utf-8")).hexdigest()[:16]

    def producer_path(self, run_dir: str) -> str:
        """Where the endpoint's producer id and sequence high-water are kept
        (:mod:`sinks.amqp.producer`)."""
        root = self.spool_dir or os.path.join(run_dir, "monitord.amqp-producer")
        if not os.path.isabs(root):
            root = os.path.join(run_dir, root)
        return os.path.join(root, self.endpoint_key)

    def scrub(self, message: str) -> str:
        return scrub(message, self.password)


def scrub(message: str, password: str) -> str:
    """``message`` with every spelling of ``password`` (raw or URL-quoted) masked."""
    return mask_secret(message, password)


def is_amqp_url(dest: str) -> bool:
    return dest.split("://", 1)[0].lower() in ("amqp", "amqps") and "://" in dest


def _float_prop(props: Mapping[str, str], key: str, default: float | None) -> float | None:
    try:
        return float_property(props, key, default)
    except PropertyError as exc:
        raise SinkError(f"AMQP property {exc}") from None


def parse_amqp_url(url: str, props: Mapping[str, str] | None = None) -> AMQPConfig:
    """Parse the URL and the endpoint's own properties (``events``, ``timeout``, ...).

    Errors never quote the URL itself (it holds the password).
    """
    props = props or {}
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise SinkError(
            "AMQP URL is malformed (expected amqp://user:pass@host:port/vhost/exchange)"
        ) from None
    scheme = parts.scheme.lower()
    if scheme not in ("amqp", "amqps"):
        raise SinkError(f"not an AMQP URL (scheme {scheme!r})")
    if not parts.hostname:
        raise SinkError("AMQP URL has no host (expected amqp://user:pass@host:port/vhost/exchange)")
    elements = parts.path.split("/")
    exchange = unquote(elements[-1]) if elements else ""
    if not exchange:
        raise SinkError(
            "AMQP URL names no exchange (expected amqp://user:pass@host:port/vhost/exchange)"
        )
    vhost = unquote(elements[-2]) if len(elements) >= 2 else ""
    ca_file = props.get("tls_ca_file") or None
    if ca_file is not None and not os.path.isfile(ca_file):
        raise SinkError(f"AMQP property tls_ca_file: no such file {ca_file!r}")
    return AMQPConfig(
        scheme=scheme,
        host=parts.hostname,
        port=port or (5671 if scheme == "amqps" else 5672),
        user=unquote(parts.username) if parts.username else "guest",
        password=unquote(parts.password) if parts.password is not None else "guest",
        vhost=vhost or "/",
        exchange=exchange,
        events=_events(props),
        timeout=_float_prop(props, "timeout", None),
        drain_timeout=_float_prop(props, "drain_timeout", DEFAULT_DRAIN_TIMEOUT) or 0.0,
        spool_dir=props.get("spool") or None,
        heartbeat=int(_float_prop(props, "heartbeat", DEFAULT_HEARTBEAT) or 0),
        tls_verify=_bool_prop(props, "tls_verify", True),
        tls_ca_file=ca_file,
        ingest=_bool_prop(props, "ingest", False),
        ingest_prefix=props.get("ingest_prefix") or "monitord-ingest",
        ingest_partitions=_partitions(props),
        ingest_quorum=_bool_prop(props, "ingest_quorum", True),
    )


def _partitions(props: Mapping[str, str]) -> int:
    value = props.get("ingest_partitions") or "8"
    if not value.strip().isdigit() or not 1 <= int(value) <= 64:
        raise SinkError(f"AMQP property ingest_partitions: {value!r} is not 1 to 64")
    return int(value)


def _events(props: Mapping[str, str]) -> EventFilter:
    """The endpoint's event filter.  ``ingest = true`` (the one setting a producer for
    ``monitord ingest`` needs, docs/ingest.md) means every event: a central Stampede database
    needs them all, and a narrower ``events`` beside it would silently lose rows, so that
    combination is refused rather than guessed."""
    events = props.get("events")
    if _bool_prop(props, "ingest", False):
        if events is not None and events.strip() not in ("", "*"):
            raise SinkError("AMQP property ingest = true needs every event (events = * or unset)")
        return EventFilter.from_property("*")
    return EventFilter.from_property(events)


_TRUE = ("true", "yes", "1", "on")
_FALSE = ("false", "no", "0", "off")


def _bool_prop(props: Mapping[str, str], key: str, default: bool) -> bool:
    value = props.get(key)
    if value is None or not value.strip():
        return default
    word = value.strip().lower()
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    raise SinkError(f"AMQP property {key}: {value!r} is not true or false")


def endpoint_properties(props: Mapping[str, str], dest: str) -> dict[str, str]:
    """The properties of the endpoint whose URL is ``dest`` (doc §6.4 multiplexing).

    ``pegasus.catalog.*.<prop>`` are defaults for every endpoint.  An endpoint named by
    ``pegasus.catalog.workflow.<name>.url`` gets its ``pegasus.catalog.workflow.<name>.<prop>``
    keys; the default endpoint (``-d`` or ``pegasus.catalog.workflow.url``) gets the dot-less
    ``pegasus.catalog.workflow.<prop>`` keys.
    """
    out = {
        key[len(ANY_CATALOG_PREFIX) :]: value
        for key, value in props.items()
        if key.startswith(ANY_CATALOG_PREFIX)
    }
    names = [
        name
        for key, value in props.items()
        if key.startswith(WORKFLOW_PREFIX) and key.endswith(".url") and value == dest
        for name in (key[len(WORKFLOW_PREFIX) : -len(".url")],)
        if name and "." not in name
    ]
    if names:
        prefix = WORKFLOW_PREFIX + names[0] + "."
        own = {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}
    else:
        own = {
            k[len(WORKFLOW_PREFIX) :]: v
            for k, v in props.items()
            if k.startswith(WORKFLOW_PREFIX) and "." not in k[len(WORKFLOW_PREFIX) :]
        }
    out.update(own)
    out.pop("url", None)
    return out
