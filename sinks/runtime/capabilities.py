"""What a sink is, as data: the runtime and the service read these flags, never probe the sink.

A sink's factory (sinks/registry.py) declares them; :func:`declare` stamps them on every sink
the registry builds, and the built-in sink classes carry their own so a sink made directly
(tests, tools) behaves the same.  This module is the one place that reads (or sets) what a
sink declares about itself beyond the :class:`~sinks.runtime.base.Sink` protocol: its
capabilities, its ``destination`` and its ``display_url``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Capabilities:
    shares_engine: bool = False
    """Takes the service's shared SQL engine pool (:class:`SharingSink`.``use_shared``)."""
    shares_connection: bool = False
    """Takes the service's shared client per server (``use_shared``:
    ``SharedResources.clients``: the OTLP sink's HTTP connection per endpoint, the AMQP
    sink's broker connection)."""
    dashboard: bool = False
    """The user's dashboard master database: one lane per master DB in the service."""
    keeps_marks: bool = False
    """Stores each batch's delivery marks with its data (``write_marked``/``read_marks``,
    :mod:`sinks.runtime.marks`): after a crash, the events it already holds are skipped."""
    tallies: bool = False
    """Keeps tallies of its own (``counters``: ``row_by_row_batches``, ``rows_rejected``) that
    its health record shows (SQL)."""
    ticks: float = 0.0
    """Seconds between calls of the sink's ``tick()`` while it has nothing to write (0: none;
    an event plugin's ``tick_interval``)."""
    durable_writes: bool = False
    """A batch is durable when ``write_batch`` returns (the sink commits, or the broker or
    plugin has taken it): the runtime calls no ``flush``, and a flush step, which then does
    nothing, is no sign that a down sink answers again."""
    resumes: bool = False
    """A crash resume from a snapshot (instead of a full re-read into fresh outputs) keeps its
    output right: exactly (``keeps_marks``) or at least once (a broker's consumers)."""

    @property
    def takes_shared(self) -> bool:
        """Takes something of the service's through ``use_shared`` before ``open``."""
        return self.shares_engine or self.shares_connection

    @property
    def shared(self) -> bool:
        """Talks to a server (or master file) many workflows share: the sink is a
        :class:`SharingSink`, whose ``lane_key`` names it (None: per-workflow files)."""
        return self.takes_shared or self.dashboard


@dataclass(frozen=True)
class SharedResources:
    """What the service shares among the sinks of every workflow (the per-workflow daemon:
    none; a sink then makes its own)."""

    engines: Any = None  # SQL engine (connection pool) per server URL: ``engines(url)``
    clients: Any = None  # other clients per server (``sinks.runtime.clients.SharedClients``)


@runtime_checkable
class SharingSink(Protocol):
    """The declared side of ``Capabilities.shared``: the runtime reads these, never probes."""

    @property
    def lane_key(self) -> str | None:
        """The shared server (password-free, e.g. ``sql:postgresql://u@host/db``), or None
        when this one writes per-workflow files (SQLite)."""
        ...

    def use_shared(self, shared: SharedResources) -> None:
        """Take the service's shared engines / connections / clients (before ``open``)."""
        ...


@dataclass(frozen=True)
class Reads:
    """What of the events a sink reads, when it writes nothing for some kinds: what a sink in
    a child process (:mod:`sinks.runtime.process_sink`) is sent of each batch.  The SQL
    loader has no rows for a third of a replay's bytes (``job_inst.composite``,
    ``inv.start``) and reads fields only, never an event's wire order or its extra
    attributes (bench/README.md "Issue 30, eleventh session: child30h")."""

    kinds: frozenset[type]
    """The event classes it writes anything for; an event of another class is a no-op."""
    wire: bool = False
    """It reads an event's wire order and extra attributes (``wire_items``, ``extra``)."""
    views: bool = False
    """It reads an event's fields and class attributes by name only, and keys by
    :data:`~sinks.runtime.views.VIEWS` what it keys by event class: a child serving it
    reads the batch as views of the crossing's values, builds no event
    (:func:`~sinks.runtime.crossing.decode_views`).  A view has no event's methods and is no
    instance of its event class: a sink built on one that declares this (a subclass of the SQL
    sink) declares its own ``Reads`` unless it reads as the one it extends."""


NONE = Capabilities()


def capabilities_of(sink: Any) -> Capabilities:
    """The capabilities a sink carries (none declared: a plain thread-driven sink)."""
    caps = getattr(sink, "capabilities", None)
    return caps if isinstance(caps, Capabilities) else NONE


def reads_of(sink: Any) -> Reads | None:
    """What ``sink`` declares it reads (``reads``: :class:`Reads`), None: every event, whole."""
    reads = getattr(sink, "reads", None)
    return reads if isinstance(reads, Reads) else None


def declare(sink: Any, caps: Capabilities) -> None:
    """Stamp its factory's capabilities on ``sink`` (the registry, for a sink class that does
    not carry them): they travel with the sink, into a loader process too."""
    if capabilities_of(sink) != caps:
        sink.capabilities = caps


def destination_of(sink: Any) -> str:
    """Where ``sink`` writes, for the lines that name it: the ``destination`` it declares (the
    built-in sinks: a database or broker URL, a file path, ``stdout``), else its ``name``."""
    declared = getattr(sink, "destination", None)
    return declared if isinstance(declared, str) and declared else str(sink.name)


def display_url_of(sink: Any) -> str | None:
    """The password-free URL a sink declares as ``display_url`` (SQL), else None."""
    display = getattr(sink, "display_url", None)
    return display if isinstance(display, str) else None


def unread_of(sink: Any) -> int | None:
    """Events a sink could not write because its reader went away (``-d - | head``: the
    file sink's ``reader_gone``/``unread``); None when its reader did not go."""
    if not getattr(sink, "reader_gone", False):
        return None
    return int(getattr(sink, "unread", 0) or 0)
