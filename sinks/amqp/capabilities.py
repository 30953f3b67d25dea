"""What the AMQP sink is, as data (sinks/runtime/capabilities.py): its own module, so that the
factory declares it without importing the sink (and aio-pika) and the sink carries the same."""

from __future__ import annotations

from sinks.runtime.capabilities import Capabilities

AMQP_CAPABILITIES = Capabilities(shares_hub=True, spools_itself=True, resumes=True)
