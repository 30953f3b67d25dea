"""Layer 4, the daemon for one workflow: it tails dagman.out and drives the core.

``monitor`` (the Monitor: start-up, replay, outputs, sub-workflows, sinks from the
registry), ``following`` (live mode's loop), ``run`` (the two modes, signals), ``config``
(one MonitorConfig from the command line, properties and service defaults), ``tail``,
``checkpoint``, ``statefiles`` (pid, done, recover), ``jobstate_log`` (the jobstate.log
writer), ``jobfiles``, ``tracked``, ``errors`` and ``proctitle``.  Imports the layers
below (core, system, sinks, notifications), never the service or the command line.
"""
