"""AMQP (RabbitMQ) event sink, behaviour doc §6.5, on the one delivery runtime.

``config`` (URL + endpoint properties), ``event_filter`` (which events),
``encoder`` (routing key + JSON body; ``decoder``: a valid body's one-pass decode for an
ingest), ``stream`` (the identity headers), ``producer`` (the
producer id and sequence numbers), ``connection`` (one broker connection on its own thread,
publisher confirms), ``sink`` (the runtime-facing ``Sink``: a batch is written once
confirmed), ``factory`` (its entry point: light, so a daemon without an AMQP destination never
imports aio-pika).  Retries, the spool and health are the runtime's (sinks/runtime/).
"""
