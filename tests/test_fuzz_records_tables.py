"""Random round trips (review30m): a finished job's record (core/jobinstance), the one table
per node against two dicts (core/nodetable), and static.bp's head cut against its regex."""

from __future__ import annotations

import pickle
import random

import pytest

from monitord.core.jobinstance import (
    JobInstance,
    TextTable,
    finished,
    record_out_num,
    record_sched_id,
    record_seq,
    record_state,
    revive,
)
from monitord.core.nodetable import NodeTable
from monitord.core.readers.dagfile import parse_dag
from tests.test_nodetable import _latest

_TEXTS = ["", "a", "sité ✓", "/x/dir_12", "12.0", "3842.7", "/a/b/c", "0042", "x" * 300]


def _value(rng: random.Random, kind: str):
    pick = rng.randrange(12)
    if pick == 0:
        return None
    if pick == 1:
        return 0
    if pick == 2:
        return rng.choice([-1, -128, -(2**70), 2**64 + 3, 2**31, 127, 128, -129])
    if pick == 3:
        return rng.choice([True, False])
    if pick == 4:
        return rng.choice([0.0, -0.0, 0.25, 1675534791.0, 2.0**40, -3.5, 1e300])
    if pick == 5:
        return rng.choice(_TEXTS)
    if kind == "time":
        return rng.choice([None, 1675534791.0, 1675534700.0, 0.0, 4294967295.0, 1675534791])
    if kind == "int":
        return rng.randrange(-(2**40), 2**40)
    if kind == "bool":
        return rng.choice([True, False])
    return rng.choice(_TEXTS + [None, 5])


_KIND = {
    "seq": "int",
    "js_seq": "int",
    "out_num": "int",
    "time_req": "int",
    "pre_exitcode": "int",
    "post_exitcode": "int",
    "cluster_start": "int",
    "pre_start": "time",
    "pre_end": "time",
    "main_start": "time",
    "main_end": "time",
    "post_start": "time",
    "post_end": "time",
    "kickstart_parsed": "bool",
    "rotated": "bool",
}
_FIELDS = [
    "seq", "submit_dir", "js_seq", "sched_id", "site", "out_num", "time_req", "pre_start",
    "pre_end", "pre_exitcode", "main_start", "main_end", "main_exitcode", "post_start",
    "post_end", "post_exitcode", "user", "work_dir", "cluster_start", "cluster_dur",
    "stdout_file", "kickstart_parsed", "rotated",
]  # fmt: skip


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and (a == b or (a != a and b != b))


@pytest.mark.parametrize("seed", range(20))
def test_finished_job_round_trips_random_values(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(500):
        inst = JobInstance("n", 1, "/run", state=rng.choice(["JOB_SUCCESS", "odd state", None]))
        for name in _FIELDS:
            if rng.random() < 0.4:
                value = _value(rng, _KIND.get(name, "text"))
                if name == "out_num" and type(value) is not int:
                    value = None
                setattr(inst, name, value)
        inst.prev_state = rng.choice([None, "SUBMIT", "weird"])
        inst.retire()
        texts = rng.choice([TextTable(), None])
        record = finished(inst, rng.choice(["/run", None]), texts)
        if type(record) is not bytes:
            continue
        back2 = revive(record, "n", "/run", texts)
        for name in _FIELDS:
            a, b = getattr(inst, name), getattr(back2, name)
            if name == "submit_dir":
                continue
            assert _same(a, b) or (
                a == b
                and isinstance(a, (int, float))
                and name
                in ("pre_start", "pre_end", "main_start", "main_end", "post_start", "post_end")
            ), (seed, name, a, b, bytes(record).hex())
        assert record_state(record) == inst.state and record_seq(record) == inst.seq
        assert record_out_num(record) == inst.out_num
        assert record_sched_id(record) == inst.sched_id


_DAG = "".join(f"JOB n{i} 00/n{i}.sub\n" for i in range(12))


@pytest.mark.parametrize("seed", range(30))
def test_node_table_against_two_dicts_rare_lookups(seed: int) -> None:
    """As the author's test, but node() asked rarely (so _evict stays True for long), and a
    pickle/restore of the table at random points."""
    rng = random.Random(seed)
    parsed = parse_dag(_DAG).nodes
    table = NodeTable(parse_dag(_DAG).nodes)
    model: dict[str, object] = {}
    names = [f"n{i}" for i in range(12)] + ["x1", "x2", "x3"]
    for step in range(1500):
        name = rng.choice(names)
        r = rng.random()
        if name in model and r < 0.2:
            del model[name]
            del table[name]
        elif r < 0.25:
            assert repr(table.node(name)) == repr(parsed.get(name)), (seed, step, name)
        elif r < 0.26:
            restored = NodeTable(dict(pickle.loads(pickle.dumps(table.nodes))))
            for k, v in pickle.loads(pickle.dumps(table)).items():
                restored[k] = v
            table = restored
        else:
            kind = rng.choice(("live", "JOB_FAILURE", "JOB_SUCCESS", "POST_SCRIPT_SUCCESS"))
            value = _latest(name, kind)
            model[name] = value
            table[name] = value
        assert list(table.keys()) == list(model.keys()), (seed, step)
        assert len(table) == len(model)
    assert list(table.items()) == list(model.items())
    for name in names:
        assert repr(table.node(name)) == repr(parsed.get(name))
        assert (name in table.nodes) == (name in parsed)
    assert repr(table.nodes) == repr(parsed) and list(table.nodes) == list(parsed)


def test_staticbp_head_cut_agrees_with_regex_on_random_lines() -> None:
    from monitord.core.readers import staticbp
    from monitord.core.readers.staticbp import tokenize, tokenize_regex

    rng = random.Random(3)
    alphabet = [
        "t",
        "s",
        "=",
        " ",
        "a",
        "1",
        "\t",
        "\xa0",
        "\x1c",
        "é",
        "k",
        ".",
        "_",
        "\u2003",
        "x",
    ]
    rests = [
        " event=a xwf.id=b k=",
        " k=",
        "  e=a\tk=",
        " =x k=",
        " ts=2 k=",
        " k=x k=",
        " a=b=c k=",
    ]
    for _ in range(200):
        rests.append("".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 12))) + "=")
    staticbp._HEAD_OF.clear()
    for _ in range(60000):
        word = (
            rng.choice(["ts=1", "ts=", "ts==", "ts=a=b"])
            if rng.random() < 0.5
            else ("".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 8))))
        )
        rest = rng.choice(rests)
        line = f'{word}{rest}"v{rng.randrange(3)}"' + rng.choice(
            ["", ' type="t"', " tail=x", ' t="u" =z']
        )
        assert list(tokenize(line).items()) == list(tokenize_regex(line).items()), repr(line)
