"""Event plugins: third-party packages written for Pegasus's monitord, run unchanged.

Discovery by the entry-point group ``pegasus.monitord.plugins``; settings under
``pegasus.monitord.plugins.<name>.*`` (:mod:`.config`); the upstream hooks and
payload (:mod:`.contract`); one thread per plugin (:mod:`.worker`) or one
process (:mod:`.isolated`); delivery through the sinks' runtime with a durable
spool (:mod:`.sink`, :mod:`.host`); ``monitord plugins`` (:mod:`.listing`).
"""
