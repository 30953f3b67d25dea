"""What the one table per node (core/nodetable) keeps after a DAGMan restart (review30m)."""

from __future__ import annotations

from tests.test_state_machine import START, _many_jobs, feed, make


def test_a_dagman_restart_keeps_no_side_table_of_the_finished_nodes() -> None:
    """A restarted DAGMan (rescue DAG, recovery) drops its finished nodes' records
    (Workflow._drop_finished_jobs).  Were each node looked up by name, a succeeded record's
    node would make ``_find`` hold every node to the end of the run: ``_held`` would be the
    name -> DagNode dict the table saves."""
    n = 200
    dag, files, lines = _many_jobs(n)
    wf = make(files, dag)
    feed(wf, START + lines)
    assert len(wf.latest._held) == 0 and wf.latest._evict
    feed(wf, START.replace("00:00:00", "00:10:00"))  # DAGMan restarted: the records dropped
    assert len(wf.latest) == 0
    feed(wf, lines.replace("00:00:", "00:11:"))  # the nodes run again after the restart
    assert len(wf.latest) == n
    # every node ran to success again: its record's node need not be held (as before it)
    assert len(wf.latest._held) == 0, f"{len(wf.latest._held)} of {n} nodes held"
