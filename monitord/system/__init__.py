"""Layer 1, beside the core: helpers for the operating system, no workflow knowledge.

``ownership`` (files created by a service running as root go to the workflow's owner),
``loglevel`` (the process-wide log threshold SIGUSR1/2 move) and ``logs`` (structlog set-up
for a process: the daemon, a sink's worker process).
They do I/O, so they are not the pure core; every layer above (the delivery runtime's
spool, the sinks, notifications, the daemon) needs them, so they sit at the bottom.
"""
