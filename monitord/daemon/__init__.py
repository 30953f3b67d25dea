"""Layer 4, the daemon for one workflow: it tails dagman.out and drives the core.

``monitor`` (the Monitor: follow, replay, sub-workflows, sinks from the registry),
``config`` (one MonitorConfig from the command line, properties and service defaults),
``tail``, ``checkpoint``, ``statefiles`` (pid, done, recover), ``jobstate_log`` (the
jobstate.log writer) and ``proctitle``.  Imports the layers below
(core, system, sinks, notifications), never the service or the command line.
"""
