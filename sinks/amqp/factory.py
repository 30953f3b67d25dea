"""The ``amqp`` sink factory (entry point in pyproject.toml): ``amqp://``, ``amqps://``.

Every daemon loads every factory (sinks/registry.py), so this module imports nothing of the
sink: aio-pika is imported when an AMQP destination is built.
"""

from __future__ import annotations

from sinks.amqp.capabilities import AMQP_CAPABILITIES
from sinks.runtime.base import Sink
from sinks.runtime.factory import SinkRequest


class AMQPFactory:
    """An AMQP (RabbitMQ) exchange, published with confirms."""

    name = "amqp"
    schemes = ("amqp", "amqps")
    capabilities = AMQP_CAPABILITIES

    def check(self, request: SinkRequest) -> None:
        """The URL and endpoint properties are checked as the sink is built."""

    def build(self, request: SinkRequest) -> Sink:
        from sinks.amqp.sink import AMQPSink  # aio-pika only when an AMQP URL is asked

        return AMQPSink.from_request(request)


AMQP = AMQPFactory()
