"""DAGMan 10 running the DAG, as a discrete-event simulation that writes dagman.out.

The simulation keeps DAGMan's timing (5-second event cycles, submit and idle limits,
category throttles, a pool of execute slots, one retry) because the daemon's
behaviour depends on how lines interleave; each attempt's files are written at
submit time so nothing about a 100k-job run needs to be held in memory.
"""

from __future__ import annotations

import heapq
import math
from typing import TextIO

from monitord.tools.synthetic.clock import dagman_time
from monitord.tools.synthetic.context import Ctx
from monitord.tools.synthetic.dag import AUX_SECONDS, COMPUTE, THROTTLES, Node
from monitord.tools.synthetic.dagman_output import (
    DEFERRAL_NOTES,
    MAX_JOBS_IDLE,
    MAX_SUBMITS_PER_CYCLE,
    MYSIN,
    SCAN_INTERVAL,
    failed_node_report,
    runtime_stats,
    startup_lines,
    status_table,
    write_metrics,
    write_rescue,
)
from monitord.tools.synthetic.job_outputs import Attempt, err_text, kickstart_record


class DagmanSim:
    """Discrete-event model of DAGMan 10 running the DAG, writing dagman.out as it goes."""

    def __init__(self, ctx: Ctx, nodes: list[Node], start: int, slots: int, out: TextIO) -> None:
        self.ctx = ctx
        self.rng = ctx.rng
        self.nodes = nodes
        self.total = len(nodes)
        self.out = out
        self.t = start
        self.dagman_cluster = self.rng.randint(1, 5000)
        self.next_cluster = self.dagman_cluster + 1
        self.pid = self.rng.randint(10_000, 4_000_000)
        self.events: list[tuple[int, int, int, Node, Attempt]] = []
        self.seq = 0
        self.ready: dict[str | None, list[tuple[int, int, Node]]] = {None: []}
        for cat in THROTTLES:
            self.ready[cat] = []
        self.in_cat = dict.fromkeys(THROTTLES, 0)
        self.slots = [(start, i) for i in range(slots)]
        self.idle_seen = 0  # SUBMIT seen, EXECUTE not yet: DAGMan's idle count
        self.unseen = 0  # submitted, SUBMIT event not read yet
        self.counts = {"done": 0, "queued": 0, "post": 0, "ready": 0, "failed": 0, "futile": 0}
        self.pending_writers: list[tuple[int, int]] = []
        self.cycles = 0
        self.dag_status = 0
        self.attempts = 0
        self.retried = 0
        self.failed_nodes: list[Node] = []
        self.last_cluster: dict[int, int] = {}

    # -- output helpers
    def log(self, msg: str, t: int | None = None) -> None:
        self.out.write(f"{dagman_time(self.t if t is None else t)} {msg}\n")

    def table(self) -> None:
        self.out.write(
            status_table(
                dagman_time(self.t), self.total, self.counts, self.dag_status, self.runtime_stats()
            )
        )

    def runtime_stats(self) -> str:
        return runtime_stats(self.rng, self.cycles)

    # -- scheduling helpers
    def push_event(self, t: int, kind: int, node: Node, a: Attempt) -> None:
        self.seq += 1
        heapq.heappush(self.events, (t, self.seq, kind, node, a))

    def make_ready(self, node: Node) -> None:
        node.state = "ready"
        self.counts["ready"] += 1
        self.seq += 1
        heapq.heappush(self.ready[node.category], (-node.priority, self.seq, node))

    def submittable(self) -> bool:
        if self.idle_seen + self.unseen >= MAX_JOBS_IDLE:
            return False
        for cat, heap in self.ready.items():
            if heap and (cat is None or self.in_cat[cat] < THROTTLES[cat]):
                return True
        return False

    def pick(self) -> Node | None:
        best: tuple[int, int, Node] | None = None
        best_cat: str | None = None
        for cat, heap in self.ready.items():
            if heap and (cat is None or self.in_cat[cat] < THROTTLES[cat]):
                if best is None or heap[0][:2] < best[:2]:
                    best, best_cat = heap[0], cat
        if best is None:
            return None
        heapq.heappop(self.ready[best_cat])
        return best[2]

    # -- the run
    def header(self) -> None:
        for line in startup_lines(self.ctx, self.dagman_cluster, self.pid, self.nodes):
            self.log(line)
        for node in self.nodes:
            node.waiting = len(node.parents)
            if not node.parents:
                self.make_ready(node)
        self.table()
        self.log("Registering condor_event_timer...")

    def new_attempt(self, node: Node) -> Attempt:
        rng, ctx, t = self.rng, self.ctx, self.t
        node.attempt += 1
        node.cluster = self.next_cluster
        self.next_cluster += 1
        success = not (node.fate == 2 or (node.fate == 1 and node.attempt == 0))
        if node.kind == COMPUTE:
            free_at, slot = heapq.heappop(self.slots)
            exec_at = max(t + rng.randint(2, 20), free_at)
            dur = min(3600.0, rng.lognormvariate(4.0, 0.9)) if success else rng.uniform(0.05, 5.0)
            host, ip, machine = ctx.worker_machines[slot % len(ctx.worker_machines)]
        else:
            exec_at = t + rng.choice((0, 0, 1, 1, 2, 4))
            dur = AUX_SECONDS[node.kind] * rng.uniform(0.6, 3.0)
            host, ip, machine = ctx.submit_host, ctx.submit_ip, ctx.submit_machine
        ks_start = exec_at + rng.uniform(0.1, 1.2)
        term_at = math.ceil(ks_start + dur + rng.uniform(0.1, 1.0))
        if node.kind == COMPUTE:
            heapq.heappush(self.slots, (term_at + rng.randint(0, 3), slot))
        return Attempt(
            node,
            node.attempt,
            node.cluster,
            exec_at,
            ks_start,
            dur,
            term_at,
            success,
            host,
            ip,
            machine,
        )

    def write_attempt(self, a: Attempt) -> None:
        base = f"{self.ctx.submit_dir}/{a.node.subdir}/{a.node.name}"
        self.ctx.sink(f"{base}.out.{a.number:03d}", kickstart_record(self.ctx, a))
        self.ctx.sink(f"{base}.err.{a.number:03d}", err_text(self.ctx, a))

    def submit_phase(self) -> int:
        submitted = 0
        while submitted < MAX_SUBMITS_PER_CYCLE and self.idle_seen + self.unseen < MAX_JOBS_IDLE:
            node = self.pick()
            if node is None:
                break
            name = node.name
            if node.attempt >= 0:
                self.log(
                    f"Reassigning the id of job {name} from ({node.cluster}.0.0) to (-1.-1.-1)"
                )
            a = self.new_attempt(node)
            self.write_attempt(a)
            self.attempts += 1
            self.log(f"Submitting HTCondor Node {name} job(s)...")
            self.log(
                f"Submitting node {name} from file {node.subdir}/{name}.sub using direct job submission"
            )
            self.log(f"\tassigned HTCondor ID ({a.cluster}.0.0)")
            node.state = "queued"
            self.counts["ready"] -= 1
            self.counts["queued"] += 1
            if node.category:
                self.in_cat[node.category] += 1
            self.push_event(self.t, 0, node, a)
            self.push_event(a.exec_at, 1, node, a)
            self.push_event(a.term_at, 2, node, a)
            submitted += 1
            self.unseen += 1
        if submitted:
            self.log(f"Just submitted {submitted} job{'s' if submitted > 1 else ''} this cycle...")
            self.table()
        return submitted

    def event_phase(self) -> int:
        events, t, processed, changed = self.events, self.t, 0, False
        while events and events[0][0] <= t - 1:
            at, _, kind, node, a = heapq.heappop(events)
            if not processed:
                self.log("Currently monitoring 1 HTCondor log file(s)")
            processed += 1
            cid = f"({a.cluster}.0.0)"
            brace = "{" + dagman_time(at) + "}"
            name = node.name
            if kind == 0:
                self.unseen -= 1
                self.idle_seen += 1
                self.log(f"Reassigning the id of job {name} from {cid} to {cid}")
                self.log(f"Event: ULOG_SUBMIT for HTCondor Node {name} {cid} {brace}")
                self.log(f"Number of idle job procs: {self.idle_seen}")
            elif kind == 1:
                self.idle_seen -= 1
                self.log(f"Event: ULOG_EXECUTE for HTCondor Node {name} {cid} {brace}")
                self.log(f"Number of idle job procs: {self.idle_seen}")
            elif kind == 2:
                self._terminated(node, a, cid, brace, t)
                changed = True
            else:
                self._post_ended(node, a, cid, brace)
                changed = True
        if changed:
            self.table()
        if processed:
            for at, cluster in sorted(self.pending_writers):
                self.log(
                    f"Initializing user log writer for {self.ctx.submit_dir}/./{self.ctx.dag}.nodes.log, "
                    f"({cluster}.0.0)",
                    at,
                )
            self.pending_writers.clear()
        return processed

    def _terminated(self, node: Node, a: Attempt, cid: str, brace: str, t: int) -> None:
        """A job ended: its result, then its POST script runs (ending a second or so later)."""
        name = node.name
        self.log(f"Event: ULOG_JOB_TERMINATED for HTCondor Node {name} {cid} {brace}")
        self.log(f"Number of idle job procs: {self.idle_seen}")
        if a.success:
            self.log(f"Node {name} job proc {cid} completed successfully.")
        else:
            self.log(f"Node {name} job proc {cid} failed with status 1.")
        self.log(f"Node {name} job completed")
        self.log(f"Running POST script of Node {name}...")
        self.log(MYSIN)
        self.counts["queued"] -= 1
        self.counts["post"] += 1
        done_at = t + self.rng.choice((0, 1, 1))
        self.pending_writers.append((done_at, a.cluster))
        self.push_event(done_at, 3, node, a)

    def _post_ended(self, node: Node, a: Attempt, cid: str, brace: str) -> None:
        """A POST script ended: the node is done (its children may be ready), retried once,
        or failed (its descendants futile)."""
        name = node.name
        self.log(f"Event: ULOG_POST_SCRIPT_TERMINATED for HTCondor Node {name} {cid} {brace}")
        self.counts["post"] -= 1
        if node.category:
            self.in_cat[node.category] -= 1
        if a.success:
            self.log(f"POST Script of node {name} completed successfully.")
            self.counts["done"] += 1
            node.state = "done"
            for child in node.children:
                child.waiting -= 1
                if child.waiting == 0:
                    self.make_ready(child)
            return
        self.log(f"POST Script of node {name} failed with status 1")
        self.log(f"POST for Node {name} returned 1")
        if node.attempt == 0:
            self.log(f"Retrying node {name} (retry #1 of 1)...")
            self.retried += 1
            self.make_ready(node)
        else:
            node.state = "failed"
            self.counts["failed"] += 1
            self.failed_nodes.append(node)
            self.dag_status = 2
            self.mark_futile(node)

    def mark_futile(self, node: Node) -> None:
        stack = list(node.children)
        while stack:
            child = stack.pop()
            if child.state == "unready":
                child.state = "futile"
                self.counts["futile"] += 1
                stack.extend(child.children)

    def run(self) -> int:
        self.header()
        self.t += 1
        while True:
            self.cycles += 1
            self.submit_phase()
            self.event_phase()
            if not self.events and not self.submittable():
                break
            step = SCAN_INTERVAL + (1 if self.rng.random() < 0.1 else 0)
            if self.submittable() or not self.events:
                self.t += step
            else:
                gap = self.events[0][0] + 1 - self.t
                self.t += max(step, SCAN_INTERVAL * math.ceil(gap / SCAN_INTERVAL))
        return self.finish()

    def finish(self) -> int:
        ctx, log = self.ctx, self.log
        exit_code = 1 if self.failed_nodes else 0
        if exit_code:
            log("ERROR: the following job(s) failed:")
            for node in self.failed_nodes:
                for line in failed_node_report(ctx, node):
                    log(line)
            log("Aborting DAG...")
            log(f"Writing Rescue DAG to {ctx.dag}.rescue001...")
            log("Removing submitted jobs...")
            log("Removing any/all submitted HTCondor jobs...")
            log(f"Running: /usr/bin/condor_rm -const DAGManJobId=={self.dagman_cluster}")
            write_rescue(ctx, self.t, self.nodes, self.failed_nodes, self.counts["done"])
        else:
            log("All jobs Completed!")
        for line in DEFERRAL_NOTES:
            log(line)
        self.table()
        log(f"Wrote metrics file {ctx.dag}.metrics.")
        log(self.runtime_stats())
        log(
            f"**** condor_scheduniv_exec.{self.dagman_cluster}.0 (condor_DAGMAN) pid {self.pid} "
            f"EXITING WITH STATUS {exit_code}"
        )
        write_metrics(
            ctx, self.t, self.dagman_cluster, exit_code, self.total, self.counts, self.dag_status
        )
        return exit_code
