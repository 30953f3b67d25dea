"""Layer 2, the delivery runtime every sink and plugin shares.

``base`` (what a sink is), ``delivery`` (one sink's queue, spool and retries),
``policy`` (the pure retry/state policy), ``spool`` (the on-disk segment log), ``codec``
(a batch as bytes), and the executors: ``runner`` (a thread), ``process_worker`` (a
child process), ``sinkset`` (the daemon's sinks, one executor each).  Imports only the
core and ``monitord.system``; the sinks (``sinks.sql``, ``sinks.file_sink``,
``sinks.amqp``, ``sinks.plugins``) sit above it.
"""
