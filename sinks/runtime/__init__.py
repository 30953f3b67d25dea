"""Layer 2, the delivery runtime every sink and plugin shares.

``base`` (what a sink is), ``capabilities`` (what it declares), ``delivery`` (one sink's
queue, spool and retries), ``policy`` (the pure retry/state policy), ``health`` (the one
typed health record), ``spool`` (the on-disk segment log), ``codec`` (a batch as bytes),
``executor`` (the one executor interface) and the executors: ``runner`` (a thread),
``lanes`` (the service's shared threads);
``sinkset`` (a workflow's sinks).  Imports only the core and ``monitord.system``; the sinks
(``sinks.sql``, ``sinks.file_sink``, ``sinks.amqp``, ``sinks.plugins``) sit above it.
"""
