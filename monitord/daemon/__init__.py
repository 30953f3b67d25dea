"""Layer 4, the daemon for one workflow: it tails dagman.out and drives the core.

``monitor`` (the Monitor: start-up, replay, sub-workflows, shutdown), ``parts`` (what its
users hand it: outputs, waiter, observers), ``outputs`` (destinations, the daemon's own
executors), ``registry`` (its workflows), ``following`` (live mode's loop), ``resuming`` and
``resume`` (crash resume), ``notifying``, ``run`` (the two modes, signals), ``config``
(one MonitorConfig from the command line, properties and service defaults), ``tail``,
``checkpoint``, ``statefiles`` (pid, done, recover), ``jobstate_log`` (the jobstate.log
writer), ``jobfiles``, ``tracked``, ``errors`` and ``proctitle``.  Imports the layers
below (core, system, sinks, notifications), never the service or the command line.
"""
