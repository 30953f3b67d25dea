"""The ``amqp`` sink factory (entry point in pyproject.toml): ``amqp://``, ``amqps://``."""

from __future__ import annotations

from sinks.amqp.sink import AMQP_CAPABILITIES, build_amqp_sink
from sinks.runtime.base import Sink
from sinks.runtime.factory import SinkRequest


class AMQPFactory:
    """An AMQP (RabbitMQ) exchange, spooled on disk by the sink itself."""

    name = "amqp"
    schemes = ("amqp", "amqps")
    capabilities = AMQP_CAPABILITIES

    def check(self, request: SinkRequest) -> None:
        """The URL and endpoint properties are checked as the sink is built."""

    def build(self, request: SinkRequest) -> Sink:
        return build_amqp_sink(
            request.dest,
            run_dir=request.run_dir,
            properties=request.properties,
            restart=request.restart,
            root_wf_uuid=request.root_wf_uuid,
        )


AMQP = AMQPFactory()
