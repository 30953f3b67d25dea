"""What the SQL sinks declare to the runtime (capabilities, the kinds the loader reads), as data
importing no SQLAlchemy: the daemon of a ``--sql-process`` replay settles its sinks and sends the
child its recipe without loading it (``sinks/sql/recipe.py``; bench/README.md, "Issue 30,
thirteenth session: lazysql30k")."""

from __future__ import annotations

from monitord.core.catalogue import CATALOGUE, NO_ROWS
from monitord.core.events import EVENT_CLASSES, GenericEvent
from sinks.runtime.capabilities import Capabilities, Reads

SQL_CAPABILITIES = Capabilities(
    shares_engine=True, keeps_marks=True, tallies=True, resumes=True, durable_writes=True
)

#: What the loader reads: the kinds it has rows for (the loader's ``DISPATCH``, from the same
#: catalogue; a generic event: a ``job_inst.*`` one's jobstate row), by field; an event of
#: another kind (``job_inst.composite``, ``inv.start``: no rows in the reference either) is not
#: sent to a ``--sql-process`` child, which reads the others as views of their values (the
#: loader keys its tables by those too).
SQL_READS = Reads(
    kinds=frozenset(EVENT_CLASSES[spec.name] for spec in CATALOGUE if spec.loader != NO_ROWS)
    | {GenericEvent},
    views=True,
)

DASHBOARD_CAPABILITIES = Capabilities(dashboard=True, resumes=True, durable_writes=True)
