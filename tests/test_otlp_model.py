"""The trace model (sinks/otlp/model.py) on hand-made event streams: when a span is emitted,
its parent, trace and ids, and what a restart, a sub-workflow or a late POST script does."""

from __future__ import annotations

from typing import Any

from monitord.core.events import StampedeEvent, make_event
from sinks.otlp.model import TraceModel, ns
from sinks.otlp.spans import (
    Span,
    canonical_trace,
    invocation_span_id,
    job_span_id,
    trace_id,
    workflow_span_id,
)

ROOT = "11111111-1111-1111-1111-111111111111"
SUB = "22222222-2222-2222-2222-222222222222"


def ev(name: str, wf: str = ROOT, root: str = ROOT, **attrs: Any) -> StampedeEvent:
    base: dict[str, Any] = {"xwf.id": wf}
    if name != "xwf.map.subwf_job":
        base["root.xwf.id"] = root
        base["dag"] = "demo-0.dag"
    return make_event(name, {**base, **{k.replace("__", "."): v for k, v in attrs.items()}})


def job(name: str, node: str, seq: int, ts: int, wf: str = ROOT, **attrs: Any) -> StampedeEvent:
    return ev(f"job_inst.{name}", wf, job__id=node, job_inst__id=seq, ts=ts, js__id=1, **attrs)


def start(wf: str = ROOT, restart: int = 0, ts: float = 100.0, root: str = ROOT) -> StampedeEvent:
    return ev("xwf.start", wf, root, ts=ts, restart_count=restart, reason=None)


def end(wf: str = ROOT, restart: int = 0, ts: float = 200.0, status: int = 0, root: str = ROOT):
    return ev("xwf.end", wf, root, ts=ts, restart_count=restart, status=status, reason=None)


def one_job(node: str = "a", seq: int = 1, post: bool = True, status: int = 0) -> list:
    out = [
        job("submit.start", node, seq, 110, sched__id="1.0", site="condorpool", reason=None),
        job("submit.end", node, seq, 110, status=0, reason=None),
        job("main.start", node, seq, 120),
        job("main.term", node, seq, 130, status=0, reason=None, sched__id="1.0"),
    ]
    if post:
        out += [job("post.start", node, seq, 131, reason=None), job("post.term", node, seq, 132)]
    out += [
        ev("inv.start", job__id=node, job_inst__id=seq, inv__id=1, ts=120),
        ev(
            "inv.end",
            job__id=node,
            job_inst__id=seq,
            inv__id=1,
            ts=128,
            start_time=120,
            dur=8.5,
            exitcode=status,
            transformation="keg",
            executable="/bin/keg",
        ),
        ev("job_inst.host.info", job__id=node, job_inst__id=seq, hostname="n1", ip="1", site="cp"),
        job("main.end", node, seq, 131, status=-1 if status else 0, exitcode=str(status * 256)),
    ]
    if post:
        out.append(job("post.end", node, seq, 133, status=-1 if status else 0, exitcode="0"))
    return out


def names(spans: list[Span]) -> list[str]:
    return [s.name for s in spans]


def test_ids_are_hashes_of_stampede_keys() -> None:
    assert trace_id(ROOT, 0) == trace_id(ROOT, 0) != trace_id(ROOT, 1)
    assert len(trace_id(ROOT, 0)) == 16 and len(job_span_id(ROOT, "a", 1)) == 8
    assert job_span_id(ROOT, "a", 1) != job_span_id(ROOT, "a", 2) != job_span_id(SUB, "a", 2)
    assert job_span_id(ROOT, "ab", 1) != job_span_id(ROOT, "a", 11)  # no concatenation clash
    assert invocation_span_id(ROOT, "a", 1, 1) != invocation_span_id(ROOT, "a", 1, -2)


def test_a_job_with_a_post_script_ends_at_post_end() -> None:
    model = TraceModel()
    stream = [start(), *one_job(post=True)]
    main_end = next(i for i, e in enumerate(stream) if e.name == "job_inst.main.end")
    first = model.feed(stream[: main_end + 1])
    assert names(first) == ["keg"]  # the invocation; the job waits for its POST script
    done = model.feed(stream[main_end + 1 :])
    assert names(done) == ["a"]
    span = done[0]
    assert span.span_id == job_span_id(ROOT, "a", 1)
    assert span.parent_span_id == workflow_span_id(ROOT, 0)
    assert span.trace_id == trace_id(ROOT, 0)
    assert (span.start_ns, span.end_ns) == (ns(110), ns(133))
    assert span.attributes["cicd.pipeline.task.run.result"] == "success"
    assert span.attributes["pegasus.job.host"] == "n1"
    assert span.attributes["pegasus.job.site"] == "condorpool"
    assert span.attributes["pegasus.job.transformation"] == "keg"
    assert [e.name for e in span.events][-1] == "post_script.end"
    assert model.feed([end()])[0].name == "RUN demo"  # label from the dag name


def test_a_job_without_post_script_ends_at_main_end() -> None:
    model = TraceModel()
    spans = model.feed([start(), *one_job(post=False)])
    assert names(spans) == ["keg", "a"]
    assert spans[1].end_ns == ns(131)


def test_an_invocation_is_a_child_span_with_its_own_times() -> None:
    spans = TraceModel().feed([start(), *one_job(status=1)])
    inv = spans[0]
    assert inv.parent_span_id == job_span_id(ROOT, "a", 1)
    assert (inv.start_ns, inv.end_ns) == (ns(120), ns(128.5))
    assert inv.status == "ERROR" and inv.attributes["pegasus.inv.exitcode"] == 1
    failed = spans[1]
    assert failed.attributes["cicd.pipeline.task.run.result"] == "failure"
    assert failed.attributes["error.type"] == "post_script_failure"
    assert failed.status == "ERROR" and failed.attributes["pegasus.job.exitcode"] == 256


def test_late_post_events_of_an_ended_instance_make_no_second_span() -> None:
    """JOB_ABORTED sends main.end at once, then DAGMan may run the POST script (doc §5.4)."""
    model = TraceModel()
    spans = model.feed(
        [
            start(),
            job("submit.start", "a", 1, 110, reason=None),
            job("abort.info", "a", 1, 115, reason=None),
            job("main.end", "a", 1, 115, status=-1, exitcode="256"),
            job("post.start", "a", 1, 116, reason=None),
            job("post.end", "a", 1, 117, status=-1, exitcode="256"),
        ]
    )
    assert names(spans) == ["a"]
    assert spans[0].attributes["cicd.pipeline.task.run.result"] == "cancellation"


def test_the_workflow_end_closes_instances_that_never_ended() -> None:
    spans = TraceModel().feed([start(), job("submit.start", "a", 1, 110, reason=None), end(ts=150)])
    assert names(spans) == ["a", "RUN demo"]
    assert spans[0].attributes["cicd.pipeline.task.run.result"] == "cancellation"
    assert spans[0].attributes["error.type"] == "unfinished"


def test_retries_are_counted_per_node() -> None:
    spans = TraceModel().feed([start(), *one_job(seq=1, status=1), *one_job(seq=2)])
    jobs = [s for s in spans if s.name == "a"]
    assert [s.attributes["pegasus.job.retry"] for s in jobs] == [0, 1]
    assert [s.attributes["cicd.pipeline.task.run.id"] for s in jobs] == ["1", "2"]


def test_a_rescue_run_is_a_new_trace_linked_to_the_previous_run() -> None:
    model = TraceModel()
    first = model.feed([start(restart=0), end(restart=0, status=1)])
    second = model.feed([start(restart=1, ts=300.0), *one_job(), end(restart=1, ts=400.0)])
    assert first[0].trace_id == trace_id(ROOT, 0)
    assert {s.trace_id for s in second} == {trace_id(ROOT, 1)}
    wf = second[-1]
    assert wf.attributes["cicd.pipeline.run.id"] == f"{ROOT}/1"
    assert [(lk.trace_id, lk.span_id) for lk in wf.links] == [
        (trace_id(ROOT, 0), workflow_span_id(ROOT, 0))
    ]
    assert first[0].attributes["cicd.pipeline.result"] == "failure"


def test_a_sub_workflow_hangs_under_the_job_that_ran_it_in_the_root_trace() -> None:
    model = TraceModel()
    spans = model.feed(
        [
            start(),
            job("submit.start", "plan_x", 3, 110, reason=None),
            ev("xwf.map.subwf_job", subwf__id=SUB, job__id="plan_x", job_inst__id=3, ts=111),
            start(SUB, restart=0, ts=112.0),
            *one_job(),  # the root's job a
            job("submit.start", "b", 1, 113, wf=SUB, root=ROOT, reason=None),
            job("main.end", "b", 1, 114, wf=SUB, root=ROOT, status=0, exitcode="0"),
            end(SUB, ts=115.0),
            job("main.end", "plan_x", 3, 116, status=0, exitcode="0"),
            end(),
        ]
    )
    by_name = {s.name: s for s in spans}
    assert {s.trace_id for s in spans} == {trace_id(ROOT, 0)}
    assert by_name["RUN demo"].parent_span_id is None
    sub = [s for s in spans if s.span_id == workflow_span_id(SUB, 0)][0]
    assert sub.parent_span_id == job_span_id(ROOT, "plan_x", 3)
    assert by_name["b"].parent_span_id == workflow_span_id(SUB, 0)


def test_held_and_evicted_are_span_events() -> None:
    spans = TraceModel().feed(
        [
            start(),
            job("submit.start", "a", 1, 110, reason=None),
            job("main.start", "a", 1, 111),
            job("held.start", "a", 1, 112, reason=" over quota"),
            job("held.end", "a", 1, 113, status=0, reason=None),
            job("main.term", "a", 1, 114, status=-1, reason=None),
            job("main.end", "a", 1, 120, status=0, exitcode="0"),
        ]
    )
    events = spans[0].events
    assert [e.name for e in events] == [
        "submit.start",
        "execute",
        "held",
        "released",
        "evicted",
        "main.end",
    ]
    assert events[2].attributes["pegasus.reason"] == "over quota"
    assert events[2].time_ns == ns(112)


def test_feeding_again_in_a_fresh_model_gives_the_same_spans() -> None:
    stream = [start(), *one_job(), *one_job("b", 2, post=False), end()]
    assert canonical_trace(TraceModel().feed(stream)) == canonical_trace(TraceModel().feed(stream))
