"""AMQP (RabbitMQ) event sink, behaviour doc §6.5, with a durable on-disk spool.

``config`` (URL + endpoint properties), ``event_filter`` (which events),
``encoder`` (routing key + JSON body), ``spool`` (append-only segments + cursor),
``hub`` (one connection per broker on its own thread: confirms, reconnects,
fair turns between spools), ``sink`` (the runner-facing ``Sink``).
"""

from sinks.amqp.sink import AMQPSink, build_amqp_sink

__all__ = ["AMQPSink", "build_amqp_sink"]
