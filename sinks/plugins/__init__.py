"""Event plugins: third-party packages written for Pegasus's monitord, run unchanged.

Discovery by the entry-point group ``pegasus.monitord.plugins``; settings under
``pegasus.monitord.plugins.<name>.*`` (:mod:`.config`); the upstream hooks and
payload (:mod:`.contract`); the hooks called on the plugin's delivery thread
(:mod:`.calls`) or in a child process (:mod:`.isolated`); each plugin a sink of the
sinks' runtime, its queue, spool, retries and health theirs (:mod:`.sink`, :mod:`.host`);
``monitord plugins`` (:mod:`.listing`).
"""
