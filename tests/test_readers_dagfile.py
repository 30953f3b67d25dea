""".dag reader (spec 1.3)."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from monitord.core.readers.dagfile import DagScript, parse_dag, read_dag, read_dag_by_hash

T = TypeVar("T")

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"

DAG = """\
# comment JOB not_a_job x.sub
JOB ls_ID0000001 00/00/ls_ID0000001.sub
  job lower_case 00/00/lower.sub
JOB finished 00/00/finished.sub DONE
SCRIPT POST ls_ID0000001 /opt/bin/pegasus-exitcode  -r $RETURN -l x.log
script pre pegasus-plan_x 00/00/pegasus-plan_x.pre.sh  -Dpegasus.log.*=/abs/pegasus-plan_x.pre.log --conf p
SCRIPT POST no_args /bin/true
SUBDAG EXTERNAL sub1 inner/a.dag
SUBDAG EXTERNAL sub2 b.dag DIR elsewhere
RETRY ls_ID0000001 3
PARENT ls_ID0000001 CHILD lower_case
"""


def test_jobs_scripts_and_subdags() -> None:
    info = parse_dag(DAG)
    assert not info.is_pmc
    assert info.nodes["ls_ID0000001"].submit_file == "00/00/ls_ID0000001.sub"
    assert info.nodes["lower_case"].submit_file == "00/00/lower.sub"
    assert "finished" not in info.nodes and "not_a_job" not in info.nodes
    post = info.nodes["ls_ID0000001"].post_script
    assert post is not None and post.executable == "/opt/bin/pegasus-exitcode"
    assert post.arguments == " -r $RETURN -l x.log"
    plan = info.nodes["pegasus-plan_x"]
    assert plan.pre_script is not None
    assert plan.pre_script.arguments.startswith(" -Dpegasus.log.*=/abs/")
    assert plan.pre_script_log == "/abs/pegasus-plan_x.pre.log"
    assert info.nodes["sub1"].is_subdag and info.nodes["sub1"].subdag_dir == "inner"
    assert info.nodes["sub2"].subdag_file == "b.dag"
    assert info.nodes["sub2"].subdag_dir == "elsewhere"
    assert info.submit_path("ls_ID0000001", "/run") == "/run/00/00/ls_ID0000001.sub"
    assert info.submit_path("sub1", "/run") is None


def test_a_keyword_in_any_case_is_read_and_the_other_lines_skipped() -> None:
    """Each keyword read in every case its first letter can take (``ſ`` upper-cases to
    ``S``); lines of the keywords not read, whatever they hold, add nothing."""
    text = (
        "job a a.sub\nJoB b b.sub\n\tsCRIPT post a /bin/x y z\nſcript PRE b /bin/p q\n"
        "Subdag external c c.dag\ntask t1 t.sub\nsubdag EXTERNAL d d.dag\nTASK t2 u.sub\n"
        "PARENT a CHILD b\nVARS e job=x\nRETRY f 3\nCATEGORY g c\nMAXJOBS c 1\nPRIORITY h 1\n"
    )
    info = parse_dag(text)
    assert sorted(info.nodes) == ["a", "b", "c", "d", "t1", "t2"] and info.is_pmc
    assert info.nodes["a"].submit_file == "a.sub" and info.nodes["b"].submit_file == "b.sub"
    post, pre = info.nodes["a"].post_script, info.nodes["b"].pre_script
    assert post is not None and (post.executable, post.arguments) == ("/bin/x", "y z")
    assert pre is not None and (pre.executable, pre.arguments) == ("/bin/p", "q")
    assert info.nodes["c"].subdag_file == "c.dag" and info.nodes["d"].subdag_file == "d.dag"


def test_script_without_arguments_has_empty_arguments() -> None:
    """The line break is the whitespace after the executable (as in the reference)."""
    info = parse_dag(DAG + "SCRIPT PRE bare /bin/pre.sh\n")
    post = info.nodes["no_args"].post_script
    assert post is not None and (post.executable, post.arguments) == ("/bin/true", "")
    pre = info.nodes["bare"].pre_script
    assert pre is not None and (pre.executable, pre.arguments) == ("/bin/pre.sh", "")


def test_script_arguments_keep_trailing_whitespace() -> None:
    info = parse_dag("SCRIPT PRE j /bin/pre.sh  --site  local \t \nJOB j j.sub\n")
    pre = info.nodes["j"].pre_script
    assert pre is not None and pre.arguments == " --site  local \t "


def test_script_without_arguments_on_unterminated_last_line_is_no_script() -> None:
    info = parse_dag("JOB j j.sub\nSCRIPT PRE j /bin/pre.sh")
    assert info.nodes["j"].pre_script is None


def test_pre_log_needs_following_whitespace() -> None:
    info = parse_dag("SCRIPT PRE j pre.sh -Dpegasus.log.*=/at/the/end\n")
    assert info.nodes["j"].pre_script is not None
    assert info.nodes["j"].pre_script_log is None


def test_pre_and_post_fill_their_own_slots_and_only_pre_has_a_log() -> None:
    text = (
        "SCRIPT POST j post.sh -Dpegasus.log.*=/post.log x\n"
        "SCRIPT PRE j pre.sh -Dpegasus.log.*=/pre.log y\n"
    )
    node = parse_dag(text).nodes["j"]
    assert node.pre_script == DagScript("pre.sh", "-Dpegasus.log.*=/pre.log y")
    assert node.post_script == DagScript("post.sh", "-Dpegasus.log.*=/post.log x")
    assert node.pre_script_log == "/pre.log"
    post_only = parse_dag("SCRIPT POST k post.sh -Dpegasus.log.*=/post.log x\n").nodes["k"]
    assert post_only.pre_script is None and post_only.pre_script_log is None


def test_pmc_task_lines() -> None:
    info = parse_dag("TASK t1 -a x\nTASK t2 -a y\nEDGE t1 t2\n")
    assert info.is_pmc
    assert info.nodes["t1"].is_task and info.nodes["t1"].submit_file is None


def test_unreadable_dag_is_none(tmp_path: Path) -> None:
    assert read_dag(str(tmp_path / "missing.dag")) is None


def test_every_corpus_dag_parses() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not available at {CORPUS}")
    dags = sorted(CORPUS.glob("*/input/**/*.dag"))
    assert dags
    for path in dags:
        info = read_dag(str(path))
        assert info is not None and info.nodes
        for node in info.nodes.values():
            assert node.submit_file and (path.parent / node.submit_file).exists()
            assert node.has_post_script or node.pre_script is not None


def test_nodes_share_one_copy_of_their_script_path():
    """The parsed .dag lives as long as the workflow: the POST script every node runs is one
    text, not one per node (issue 30: memory per job)."""
    info = parse_dag(
        "JOB a a.sub\nSCRIPT POST a /usr/bin/pegasus-exitcode -r $RETURN a.out\n"
        "JOB b b.sub\nSCRIPT POST b /usr/bin/pegasus-exitcode -r $RETURN b.out\n"
    )
    a, b = (info.nodes[n].post_script for n in ("a", "b"))
    assert a is not None and b is not None
    assert a.executable == "/usr/bin/pegasus-exitcode"
    assert a.executable is b.executable
    assert (a.arguments, b.arguments) == ("-r $RETURN a.out", "-r $RETURN b.out")


def _pegasus_dag(n: int) -> str:
    """A .dag as Pegasus writes it: per node a JOB, its POST script, PRIORITY, RETRY, VARS."""
    out = []
    for i in range(n):
        name, sub_dir = f"preprocess_ID{i:07d}", f"00/{i // 100:02d}"
        out.append(
            f"JOB {name} {sub_dir}/{name}.sub\n"
            f"SCRIPT POST {name} /usr/bin/pegasus-exitcode  -r $RETURN -l wf-0.exitcode.log"
            f" -M wf-0.cache.meta   .//{sub_dir}/{name}.out\n"
            f'PRIORITY {name} 700\nRETRY {name} 1\nVARS {name} +DAGNodeRetry="$(RETRY)"\n\n'
        )
    return "".join(out)


def test_the_parsed_dag_costs_little_per_node():
    """The parsed .dag is kept to the workflow's end: per node its name and a small record
    sharing its texts with the nodes alike (issue 30: ~480 B per node when each node kept
    its own texts and script)."""
    import gc
    import tracemalloc

    n = 2000
    text = _pegasus_dag(n)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        info = parse_dag(text)
        gc.collect()
        per_node = (tracemalloc.get_traced_memory()[0] - before) / n
    finally:
        tracemalloc.stop()
    assert len(info.nodes) == n
    node = info.nodes["preprocess_ID0001234"]
    assert node.submit_file == "00/12/preprocess_ID0001234.sub"
    assert node.post_script is not None
    assert node.post_script.arguments.endswith(" .//00/12/preprocess_ID0001234.out")
    assert per_node < 250, per_node


@pytest.mark.parametrize(
    "name",
    ["a", "00", "e", "sub", "x\x00y"],  # names found inside the other texts, or holding \x00
)
def test_a_node_gives_back_its_values_whole(name):
    text = (
        f"JOB {name} 00/00/{name}.sub\n"
        f"SCRIPT PRE {name} /bin/pre.sh -Dpegasus.log.*=/r/{name}.pre.log a {name}\x00 \n"
        f"SCRIPT POST {name} /usr/bin/pegasus-exitcode -r $RETURN {name}{name}.out\n"
        f"SUBDAG EXTERNAL s{name} {name}/inner-{name}.dag DIR {name}/dir\n"
    )
    info = parse_dag(text)
    node, sub = info.nodes[name], info.nodes[f"s{name}"]
    assert node.name == name and node.submit_file == f"00/00/{name}.sub"
    assert node.pre_script is not None and node.post_script is not None
    assert node.pre_script.executable == "/bin/pre.sh"
    assert node.pre_script.arguments == f"-Dpegasus.log.*=/r/{name}.pre.log a {name}\x00 "
    assert node.pre_script_log == f"/r/{name}.pre.log"
    assert node.post_script.arguments == f"-r $RETURN {name}{name}.out"
    assert (node.is_subdag, node.is_task, sub.is_subdag) == (False, False, True)
    assert (sub.subdag_file, sub.subdag_dir) == (f"{name}/inner-{name}.dag", f"{name}/dir")
    assert sub.submit_file is None and sub.post_script is None


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("last_break", [True, False])
def test_a_dag_read_from_its_file_is_parsed_as_its_text(tmp_path, newline, last_break):
    """read_dag (the daemon's reader) takes the file line by line; the nodes are those of
    the whole text (a last line without a break, CRLF line ends)."""
    text = DAG + "SCRIPT POST last /bin/post.sh"
    text = text + "\n" if last_break else text
    path = tmp_path / "wf.dag"
    path.write_bytes(text.replace("\n", newline).encode())
    read = read_dag(str(path))
    assert read is not None
    whole = parse_dag(text)
    assert read.is_pmc == whole.is_pmc
    assert sorted(read.nodes) == sorted(whole.nodes)
    for name, node in whole.nodes.items():
        assert repr(read.nodes[name]) == repr(node), name
    assert ("last" in read.nodes) is last_break  # the script needs its line break


def test_reading_a_dag_never_holds_its_text_whole(tmp_path):
    """Issue 30: reading the .dag whole (its text, then its list of lines) was the peak of a
    100,000-job replay (~200 MB above the run's course for a moment).  Line by line, what is
    allocated for a moment beyond the parsed nodes is their values while reading (~450 B a
    node here); the whole text and its lines were ~1,400 B a node."""
    n = 5000
    path = tmp_path / "wf.dag"
    path.write_text(_pegasus_dag(n))
    info, transient_per_node = _above_what_is_kept(lambda: read_dag(str(path)), n)
    assert info is not None and len(info.nodes) == n
    assert transient_per_node < 800, transient_per_node


def test_a_node_is_the_same_whichever_order_its_lines_come_in() -> None:
    """Each line re-shapes its node: a script before its JOB line, or a text that holds the
    shapes' name marker (then the node keeps its texts whole), give what one pass would."""
    job = "JOB a_1 00/a_1.sub\n"
    post = "SCRIPT POST a_1 /bin/exitcode -r $RETURN .//00/a_1.out\n"
    pre = "SCRIPT PRE a_1 /bin/pre \x00 a_1.in\n"
    for text in (job + post + pre, pre + post + job, post + job + pre):
        node = parse_dag(text).nodes["a_1"]
        assert node.submit_file == "00/a_1.sub"
        assert node.post_script == DagScript("/bin/exitcode", "-r $RETURN .//00/a_1.out")
        assert node.pre_script == DagScript("/bin/pre", "\x00 a_1.in")


def test_parsing_holds_no_more_than_the_nodes_it_keeps() -> None:
    """A node's values are shaped as its lines come, not held to the end: on a .dag of 100,000
    nodes, holding them (~400 B a node more than the nodes kept) was a replay's peak memory."""
    n = 5000
    lines = []
    for i in range(n):
        name = f"keg_ID{i:07d}"
        lines += [
            f"JOB {name} 00/00/{name}.sub\n",
            f"SCRIPT POST {name} /usr/bin/pegasus-exitcode -r $RETURN .//00/00/{name}.out\n",
            f'VARS {name} +DAGNodeRetry="$(RETRY)"\n',
        ]
    info, per_node = _above_what_is_kept(lambda: parse_dag(iter(lines)), n)
    assert len(info.nodes) == n
    assert per_node < 40, f"{per_node:.0f} B per node above what is kept"


def _above_what_is_kept(parse: Callable[[], T], nodes: int) -> tuple[T, float]:
    """What ``parse`` returns, and its peak allocation above what it keeps, per node."""
    gc.collect()
    tracemalloc.start()
    try:
        info = parse()
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return info, (peak - kept) / nodes


def test_nodes_by_hash_give_every_corpus_node_as_parsed() -> None:
    """The read-ahead worker's nodes (by the hash of their names) are the daemon's."""
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not available at {CORPUS}")
    for path in sorted(CORPUS.glob("*/input/**/*.dag")):
        info, by_hash = read_dag(str(path)), read_dag_by_hash(str(path))
        assert info is not None and by_hash is not None
        nodes, is_pmc = by_hash
        assert (len(nodes), is_pmc) == (len(info.nodes), info.is_pmc), path
        for name, node in info.nodes.items():
            assert repr(nodes.get(name)) == repr(node), (path, name)
        assert nodes.get("not-a-node") is None


def test_nodes_by_hash_keep_no_name_nor_node(tmp_path: Path) -> None:
    """The worker's .dag is ~66 B a node here, names and nodes not kept (``read_dag``: 132 B,
    fails; with a planner's longer names ~170 B: the worker's peak grew 35 -> 62 MB from
    20,000 to 100,000 jobs)."""
    n = 5000
    dag = tmp_path / "w.dag"
    with dag.open("w") as fh:
        for i in range(n):
            name = f"keg_ID{i:07d}"
            fh.write(f"JOB {name} 00/00/{name}.sub\n")
            fh.write(f"SCRIPT POST {name} /usr/bin/pegasus-exitcode -r $RETURN {name}.out\n")
    gc.collect()
    tracemalloc.start()
    try:
        found = read_dag_by_hash(str(dag))
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found is not None and len(found[0]) == n
    assert kept / n < 90 and peak / n < 100, f"{kept / n:.0f} B kept, {peak / n:.0f} B peak"
    node = found[0].get("keg_ID0000007")
    assert node is not None and node.submit_file == "00/00/keg_ID0000007.sub"
