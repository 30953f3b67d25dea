"""One table per .dag node (monitord/core/nodetable.py, issue 30 memory30m): ``Workflow.latest``
and ``DagInfo.nodes`` read off one dict; each behaves as the dict it replaced, in order, and
both pickle as those dicts (a crash-resume snapshot's format)."""

from __future__ import annotations

import pickle
import random

from monitord.core.jobinstance import JobInstance, finished
from monitord.core.nodetable import NodeTable
from monitord.core.readers.dagfile import DagInfo, parse_dag
from monitord.core.workflow import Workflow
from tests.test_state_machine import START, _many_jobs, feed, make

DAG = "".join(f"JOB n{i} 00/n{i}.sub\nSCRIPT POST n{i} /bin/post -j n{i}\n" for i in range(8))


def _record(name: str, state: str) -> bytes:
    inst = JobInstance(name=name, seq=1, submit_dir="/run/00")
    inst.state = state
    inst.retire()
    record = finished(inst)
    assert type(record) is bytes
    return record


def _latest(name: str, kind: str) -> JobInstance | bytes:
    """A node's latest of ``kind``: "live" (an instance) or a record's state."""
    return (
        JobInstance(name=name, seq=1, submit_dir="/run") if kind == "live" else _record(name, kind)
    )


def test_the_table_is_a_dict_of_the_latest_in_order_whatever_is_set_and_deleted() -> None:
    """Random sets (live instances, failed and succeeded records) and deletions of .dag nodes
    and of names the .dag has not: the table's items equal a dict's, in its order, and every
    .dag node stays found by name as parsed."""
    parsed = parse_dag(DAG).nodes
    table = NodeTable(parse_dag(DAG).nodes)
    model: dict[str, JobInstance | bytes] = {}
    rng = random.Random(7)
    names = [f"n{i}" for i in range(8)] + ["extra_a", "extra_b"]
    for _ in range(2000):
        name = rng.choice(names)
        if name in model and rng.random() < 0.25:
            del model[name]
            del table[name]
        else:
            kind = rng.choice(("live", "JOB_FAILURE", "POST_SCRIPT_SUCCESS"))
            value = _latest(name, kind)
            model[name] = value
            table[name] = value
        assert list(table.items()) == list(model.items())
        assert len(table) == len(model) and bool(table) == bool(model)
        for other in names:
            assert table.get(other) is model.get(other) and (other in table) == (other in model)
            node = table.node(other)
            assert repr(node) == repr(parsed.get(other))
    assert list(table.nodes) == list(parsed) and repr(table.nodes) == repr(parsed)


def test_both_pickle_as_the_dicts_they_replaced() -> None:
    table = NodeTable(parse_dag(DAG).nodes)
    table["n3"] = _record("n3", "POST_SCRIPT_SUCCESS")
    table["extra"] = JobInstance(name="extra", seq=2, submit_dir="/run")
    table["n1"] = _record("n1", "JOB_FAILURE")
    latest = pickle.loads(pickle.dumps(table))
    nodes = pickle.loads(pickle.dumps(table.nodes))
    assert type(latest) is dict and list(latest) == ["n3", "extra", "n1"]
    assert type(nodes) is dict and repr(nodes) == repr(parse_dag(DAG).nodes)


def test_a_snapshot_of_the_two_dicts_restores_the_same_machine() -> None:
    """A state as the previous version pickled it (the .dag's dict of nodes, ``latest`` a dict)
    restores into the one table, which goes on as the machine it was taken of."""
    dag, files, lines = _many_jobs(6)
    wf = make(files, dag)
    cut = lines.splitlines()
    feed(wf, START + "\n".join(cut[:17]))
    state = wf.__getstate__()
    state["latest"] = dict(state["latest"].items())
    state["dag"] = DagInfo(dict(state["dag"].nodes.items()), state["dag"].is_pmc)
    restored = Workflow.__new__(Workflow)
    restored.__setstate__(pickle.loads(pickle.dumps(state)))
    assert list(restored.latest.items()) == list(wf.latest.items())
    assert repr(restored.dag) == repr(wf.dag) == repr(parse_dag(dag))
    restored.attach(wf.ctx)
    for line in cut[17:]:
        wf.feed(line)
        restored.feed(line)
    assert list(restored.latest.items()) == list(wf.latest.items())
    assert all(type(v) is bytes for v in wf.latest.values()) and len(wf.latest) == 6
