"""The planned DAG: which jobs, in which pipelines, and which of them fail.

The shape follows what the Pegasus planner makes of a typical workflow (one
create-dir, then stage-in -> parallel computes -> merge -> stage-out -> register and
cleanup), so that replays meet every job class and the planner's category throttles.
Nodes also carry their simulated run state, which keeps the simulation's hot loop
to attribute look-ups.
"""

from __future__ import annotations

import random

# Pegasus job classes (pegasus_job_class / job.info type).
COMPUTE, STAGE_IN, STAGE_OUT, REGISTER, CREATE_DIR, CLEANUP = 1, 2, 3, 4, 6, 8
TYPE_DESC = {
    COMPUTE: "compute",
    STAGE_IN: "stage-in-tx",
    STAGE_OUT: "stage-out-tx",
    REGISTER: "registration",
    CREATE_DIR: "create-dir",
    CLEANUP: "cleanup",
}
# The planner's default category throttles (MAXJOBS lines); honoured by the simulation.
THROTTLES = {"registration": 1, "stagein": 10, "cleanup": 4, "stageout": 10}
# Typical run time of the jobs that run on the submit host (seconds, scaled by 0.6-3).
AUX_SECONDS = {CREATE_DIR: 2.0, STAGE_IN: 8.0, STAGE_OUT: 6.0, REGISTER: 2.5, CLEANUP: 1.5}
# Jobs whose .sub reads their .in file (or its stand-in) as stdin.
STDIN_FED = (CREATE_DIR, CLEANUP, STAGE_IN, STAGE_OUT)
MIN_GROUP_JOBS = 6  # stage-in, compute, merge, stage-out, register, cleanup

_PARALLEL_XFORMS = ("findrange", "preprocess", "keg", "transform", "filter")


class Node:
    """One DAG node plus its simulated run state."""

    __slots__ = (
        "idx",
        "name",
        "kind",
        "xform",
        "task",
        "argv",
        "priority",
        "category",
        "children",
        "parents",
        "waiting",
        "fate",
        "attempt",
        "cluster",
        "inputs",
        "outputs",
        "state",
        "subdir",
    )

    def __init__(self, idx: int, name: str, kind: int, xform: str, priority: int) -> None:
        self.idx = idx
        self.name = name
        self.kind = kind
        self.xform = xform
        self.task = ""  # task id ("ID0000001") for compute jobs
        self.argv = ""  # task argv for compute jobs
        self.priority = priority
        self.category: str | None = None
        self.children: list[Node] = []
        self.parents: list[Node] = []
        self.waiting = 0
        self.fate = 0  # 0 succeeds, 1 fails once then succeeds, 2 always fails
        self.attempt = -1  # index of the current attempt (output counter)
        self.cluster = 0  # HTCondor cluster id of the current attempt
        self.inputs: list[tuple[str, int]] = []  # (lfn, size)
        self.outputs: list[tuple[str, int]] = []
        self.state = "unready"
        self.subdir = "00/00"  # submit-dir bucket, see _assign_subdirs


def _edge(parent: Node, child: Node) -> None:
    parent.children.append(child)
    child.parents.append(parent)


def _assign_subdirs(nodes: list[Node]) -> list[Node]:
    """Bucket jobs like the planner's Hashed submit mapper.

    Its documented defaults are two directory levels, 5 files per job and 256
    files per directory, so 51 jobs share a leaf: ``00/00``, ``00/01``, ...
    Small workflows all land in ``00/00`` like the samples.  (It also matters for
    speed: creating files in one directory of 300k entries is ~8x slower.)
    """
    per_dir = 256 // 5
    for node in nodes:
        bucket = node.idx // per_dir
        node.subdir = f"{bucket // 256:02x}/{bucket % 256:02x}"
    return nodes


def plan_dag(rng: random.Random, jobs: int, label: str) -> list[Node]:
    """Lay out ``jobs`` nodes: one create-dir, then pipelines of
    stage-in -> k parallel computes -> merge compute -> stage-out -> (register, cleanup).
    """
    if jobs < 1:
        raise ValueError("a workflow needs at least one job")
    layout = _Layout(rng)
    create = layout.add(f"create_dir_{label}_0_local", CREATE_DIR, "pegasus::dirmanager", 800)
    if jobs <= MIN_GROUP_JOBS:  # too small for a pipeline: a chain of computes
        layout.chain(create, jobs - 1)
        return _assign_subdirs(layout.nodes)
    remaining, group = jobs - 1, 0
    while remaining > 0:
        k = rng.randint(3, 8)
        if remaining - (k + 5) < MIN_GROUP_JOBS:
            k = remaining - 5
        remaining -= k + 5
        layout.pipeline(create, group, k)
        group += 1
    return _assign_subdirs(layout.nodes)


class _Layout:
    """The nodes laid out so far (in the order of their ids), and the compute tasks' count."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.nodes: list[Node] = []
        self.task_no = 0

    def add(
        self, name: str, kind: int, xform: str, priority: int, category: str | None = None
    ) -> Node:
        node = Node(len(self.nodes), name, kind, xform, priority)
        node.category = category
        self.nodes.append(node)
        return node

    def compute(self, xform: str, priority: int) -> Node:
        self.task_no += 1
        node = self.add(f"{xform}_ID{self.task_no:07d}", COMPUTE, xform, priority)
        node.task = f"ID{self.task_no:07d}"
        return node

    def chain(self, create: Node, count: int) -> None:
        """``count`` computes one after the other, each reading what the last one wrote."""
        rng, prev = self.rng, create
        for i in range(count):
            node = self.compute("keg", 10)
            node.inputs = [(f"f.chain.{i}", rng.randint(200, 50_000))]
            node.outputs = [(f"f.chain.{i + 1}", rng.randint(200, 50_000))]
            node.argv = f"-a keg -T 30 -i f.chain.{i} -o f.chain.{i + 1}"
            _edge(prev, node)
            prev = node

    def pipeline(self, create: Node, g: int, k: int) -> None:
        """Group ``g``: stage-in, ``k`` parallel computes, their merge, stage-out, register
        and cleanup (``k`` + 5 jobs)."""
        rng = self.rng
        xform = rng.choice(_PARALLEL_XFORMS)
        infile = (f"f.{g}.in", rng.randint(10_000, 50_000_000))
        stage_in = self.add(
            f"stage_in_local_local_{g}_0", STAGE_IN, "pegasus::transfer", 700, "stagein"
        )
        stage_in.outputs = [infile]
        _edge(create, stage_in)
        merge_inputs = []
        parallel = []
        for j in range(k):
            node = self.compute(xform, 10)
            out = (f"f.{g}.{j}", rng.randint(1_000, 20_000_000))
            node.inputs, node.outputs = [infile], [out]
            node.argv = f"-a {xform} -T {rng.randint(10, 300)} -i {infile[0]} -o {out[0]}"
            merge_inputs.append(out)
            parallel.append(node)
            _edge(stage_in, node)
        merge = self.compute("analyze", 20)
        merge.inputs = merge_inputs
        merge.outputs = [(f"f.{g}.out", rng.randint(1_000, 5_000_000))]
        if rng.random() < 0.5:
            merge.outputs.append((f"f.{g}.summary", rng.randint(100, 20_000)))
        outs = " ".join(lfn for lfn, _ in merge.outputs)
        ins = " ".join(lfn for lfn, _ in merge_inputs)
        merge.argv = f"-a analyze -T {rng.randint(10, 300)} -i {ins} -o {outs}"
        for node in parallel:
            _edge(node, merge)
        stage_out = self.add(
            f"stage_out_local_local_{g}_0", STAGE_OUT, "pegasus::transfer", 900, "stageout"
        )
        stage_out.inputs = list(merge.outputs)
        _edge(merge, stage_out)
        register = self.add(
            f"register_local_{g}_0", REGISTER, "pegasus::rc-client", 30, "registration"
        )
        register.inputs = list(merge.outputs)
        _edge(stage_out, register)
        cleanup = self.add(
            f"clean_up_local_level_4_{g}", CLEANUP, "pegasus::cleanup", 1000, "cleanup"
        )
        _edge(stage_out, cleanup)


def assign_fates(rng: random.Random, nodes: list[Node], retry: float, fail: float) -> None:
    """Mark compute jobs to fail once (``retry``) or for good (``fail``), as fractions."""
    computes = [n for n in nodes if n.kind == COMPUTE]

    def count(fraction: float) -> int:
        if fraction <= 0 or not computes:
            return 0
        return min(len(computes), max(1, round(fraction * len(computes))))

    n_fail, n_retry = count(fail), count(retry)
    chosen = rng.sample(computes, min(len(computes), n_fail + n_retry))
    for node in chosen[:n_fail]:
        node.fate = 2
    for node in chosen[n_fail:]:
        node.fate = 1
