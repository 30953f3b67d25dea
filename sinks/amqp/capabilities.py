"""What the AMQP sink is, as data (sinks/runtime/capabilities.py): its own module, so that the
factory declares it without importing the sink (and aio-pika) and the sink carries the same."""

from __future__ import annotations

from sinks.runtime.capabilities import Capabilities

#: in the service, one lane and one broker connection per broker for every workflow
#: (``shares_connection``); a resumed daemon's events are published again, numbered as before,
#: so the ingest loads them once (``resumes``: at least once on the wire)
AMQP_CAPABILITIES = Capabilities(shares_connection=True, resumes=True, durable_writes=True)
