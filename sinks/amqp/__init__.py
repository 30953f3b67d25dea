"""AMQP (RabbitMQ) event sink, behaviour doc §6.5, with a durable on-disk spool.

``config`` (URL + endpoint properties), ``event_filter`` (which events),
``encoder`` (routing key + JSON body), ``spool`` (append-only segments + cursor),
``hub`` (one connection per broker on its own thread: confirms, reconnects,
fair turns between spools), ``sink`` (the runner-facing ``Sink``), ``factory`` (its
entry point: light, so a daemon without an AMQP destination never imports aio-pika).
"""
