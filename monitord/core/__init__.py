"""Layer 1, the pure core: dagman.out lines in, Stampede events and jobstate.log lines out.

The DAGMan line classifier (``dagman``), the job state table (``jobmachine``), the
workflow machine (``workflow``), job-output parsing (``jobout``, ``jobtext``), the typed
events (``events``), the planner-file readers (``readers``), time parsing and quoting.
No sockets, no threads, no writes: files are read through what the caller passes in.
Imports nothing else of monitord, sinks or notifications (pyproject's import-linter
contracts check it).
"""
