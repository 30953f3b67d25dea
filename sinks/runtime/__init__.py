"""Layer 2, the delivery runtime every sink and plugin shares.

``base`` (what a sink is), ``runner`` (batches, retries, health), ``policy`` (the pure
retry/state policy), ``spool`` (the on-disk segment log), ``process_worker`` (a sink in
its own process).  Imports only the core and ``monitord.system``; the sinks
(``sinks.sql``, ``sinks.file_sink``, ``sinks.amqp``, ``sinks.plugins``) sit above it.
"""
