"""Synthetic submit directories of a *finished* Pegasus 5.x / HTCondor 10 workflow.

Real submit directories are small or private; benchmarks and demos need big,
reproducible ones.  This package plans a DAG of create-dir, stage-in, compute,
stage-out, register and cleanup jobs, then simulates DAGMan 10.2.5 running it
(5-second event cycles, a pool of execute slots, category throttles, retries)
and writes every file pegasus-monitord reads, in the shapes the real tools
write them: braindump, ``.dag``, ``static.bp``, job ``.sub`` files, the
``dagman.out``, kickstart YAML ``.out.NNN`` records, PegasusLite ``.err.NNN``
files and register ``.in`` files.

Everything is derived from one ``random.Random(seed)``, so a seed gives the
same directory byte for byte (apart from the absolute submit-dir path).
Writes stream: per-attempt files are written when the attempt is simulated and
``dagman.out`` goes through a buffered file, so 100k jobs need neither the log
nor the records in memory.

Times are written for America/Los_Angeles in winter (fixed -08:00, start dates
in January/February so no DST change falls inside a run): replay with
``TZ=America/Los_Angeles`` to get the epochs the kickstart records carry.

Modules, in the order ``generate`` uses them: ``clock`` (time stamps), ``context``
(the workflow's fixed identity and random stream), ``dag`` (the planned DAG),
``planner_files`` (braindump, .dag, static.bp, .sub), ``dagman`` (the simulation,
rendered by ``dagman_output``), ``job_outputs`` (kickstart records, stderr),
``filewriter`` (putting files on disk); ``cli`` is ``python -m`` of this package.
"""

from monitord.tools.synthetic.cli import main
from monitord.tools.synthetic.clock import UTC_OFFSET, dagman_time
from monitord.tools.synthetic.generator import Expected, Generated, generate, generate_example

__all__ = [
    "UTC_OFFSET",
    "Expected",
    "Generated",
    "dagman_time",
    "generate",
    "generate_example",
    "main",
]
