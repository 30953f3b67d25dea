"""The ingest's TOML configuration (conf/monitord-ingest.toml), every key checked by pydantic
at start: an unknown key, a wrong type or a bad value stops the ingest with one line naming
the file, the line when known, and the key (:mod:`monitord.system.tomlconfig`, as the
service's).  Passwords (in the URLs) never appear in errors."""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from monitord.system.tomlconfig import ConfigError, line_of, read_toml, where
from sinks.amqp.config import AMQPConfig, parse_amqp_url
from sinks.amqp.stream import SLOTS
from sinks.runtime.base import SinkError
from sinks.sql.database import safe_url

DEFAULT_LISTEN = "127.0.0.1:9176"
_SECTION = ConfigDict(extra="forbid")


@dataclass(config=_SECTION)
class _Ingest:
    database: str = ""  # SQLAlchemy URL of the central Stampede database (required)
    master_db_url: str = ""  # what master_workflow.db_url says (default: database, no password)
    batch: Annotated[int, Field(ge=1, le=100_000)] = 1000
    batch_wait: Annotated[float, Field(gt=0, le=60)] = 0.2
    prefetch: Annotated[int, Field(ge=1, le=1_000_000)] = 4000
    max_body: Annotated[int, Field(ge=1024)] = 1 << 20
    member: Annotated[str, Field(pattern=r"^[1-9][0-9]*/[1-9][0-9]*$")] = "1/1"
    standby_delay: Annotated[float, Field(ge=0, le=3600)] = 5.0
    log_format: Literal["json", "console"] = "json"
    log_level: Literal["debug", "info", "warning", "error"] = "info"


@dataclass(config=_SECTION)
class _Amqp:
    url: str = ""  # amqp[s]://user:pass@host:port/vhost/exchange (the producers' exchange)
    prefix: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.:-]+$")] = "monitord-ingest"
    partitions: Annotated[int, Field(ge=1, le=SLOTS)] = 8
    quorum: bool = True
    tls_verify: bool = True
    tls_ca_file: str = ""
    heartbeat: Annotated[int, Field(ge=0, le=3600)] = 30


@dataclass(config=_SECTION)
class _Http:
    listen: str = DEFAULT_LISTEN


@dataclass(config=_SECTION)
class _Document:
    ingest: _Ingest = field(default_factory=_Ingest)
    amqp: _Amqp = field(default_factory=_Amqp)
    http: _Http = field(default_factory=_Http)


_DOCUMENT = TypeAdapter(_Document)


@dataclasses.dataclass(frozen=True)
class IngestConfig:
    path: str | None
    database: str
    master_db_url: str
    broker: AMQPConfig
    prefix: str
    partitions: int
    quorum: bool
    batch: int
    batch_wait: float
    prefetch: int
    max_body: int
    member: int  # this process's number, 1..members
    members: int
    standby_delay: float
    http_listen: str
    log_format: str
    log_level: str

    def preferred(self, partition: int) -> bool:
        """Partitions this member subscribes to at once; the others after standby_delay."""
        return partition % self.members == self.member - 1


def parse_config(data: dict[str, Any], path: str | None = None, text: str = "") -> IngestConfig:

    def fail(section: str, key: str | None, message: str) -> ConfigError:
        line = line_of(text, (section, key) if key else (section,))
        return ConfigError(f"{where(path, line)}: [{section}] {key + ': ' if key else ''}{message}")

    try:
        doc = _DOCUMENT.validate_python(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [str(p) for p in err["loc"]]
        unknown = err["type"] in ("extra_forbidden", "unexpected_keyword_argument")
        message = "unknown key" if unknown else err["msg"]
        raise fail(loc[0], loc[1] if len(loc) > 1 else None, message) from None
    if not doc.ingest.database:
        raise fail("ingest", "database", "required (the central database's URL)")
    if not doc.amqp.url:
        raise fail("amqp", "url", "required (amqp[s]://user:pass@host:port/vhost/exchange)")
    props = {"tls_verify": str(doc.amqp.tls_verify).lower(), "heartbeat": str(doc.amqp.heartbeat)}
    if doc.amqp.tls_ca_file:
        props["tls_ca_file"] = doc.amqp.tls_ca_file
    try:
        broker = parse_amqp_url(doc.amqp.url, props)
    except SinkError as exc:
        raise fail("amqp", "url", str(exc)) from None
    member, members = (int(n) for n in doc.ingest.member.split("/"))
    if member > members:
        raise fail("ingest", "member", f"{doc.ingest.member}: the number is past the count")
    return IngestConfig(
        path=path,
        database=doc.ingest.database,
        master_db_url=doc.ingest.master_db_url or safe_url(doc.ingest.database),
        broker=broker,
        prefix=doc.amqp.prefix,
        partitions=doc.amqp.partitions,
        quorum=doc.amqp.quorum,
        batch=doc.ingest.batch,
        batch_wait=doc.ingest.batch_wait,
        prefetch=doc.ingest.prefetch,
        max_body=doc.ingest.max_body,
        member=member,
        members=members,
        standby_delay=doc.ingest.standby_delay,
        http_listen=doc.http.listen,
        log_format=doc.ingest.log_format,
        log_level=doc.ingest.log_level,
    )


def load_config(path: str) -> IngestConfig:
    data, text = read_toml(path)
    return parse_config(data, path, text)
