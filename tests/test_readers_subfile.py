"""Submit-file reader (spec 1.5, 5.1-branch rules)."""

from __future__ import annotations

import os
import pickle
import random
from dataclasses import asdict
from pathlib import Path

import pytest

from monitord.core.readers.braindump import read_braindump
from monitord.core.readers.dagfile import read_dag
from monitord.core.readers.subfile import (
    SubmitInfo,
    _apply_classads,
    _normpath,
    max_rsl_minutes,
    parse_environment,
    parse_submit_file,
)

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"

SUB = """\
# a comment = ignored
environment = "LANG=C _CONDOR_DAGMAN_LOG=/r/sub/inner.dag.dagman.out"
arguments = "pegasus-kickstart  -n ls -N ID1 "
executable = "/r/run0001/00/00/ls.sh"
input = /r/run0001//00/00/./ls.in
output = "/r/run0001//00/00/ls.out"
error = /r/run0001//00/00/ls.err
ERROR = /ignored
globusrsl = (maxwalltime=3)(max_time=7)(MAX-CPU-TIME=5)(count=99)
+pegasus_site = "condorpool"
+pegasus_wf_xformation = "ls"
+pegasus_wf_dax_job_id = "ID0000001"
+pegasus_job_class = 1
pegasus_cores=  2
+pegasus_gpus = 1
+pegasus_memory_mb = "512"
queue
"""


def test_fields_and_paths() -> None:
    info = parse_submit_file(SUB, job_name="ls_ID0000001", orig_submit_dir="/r/run0001")
    assert info.site == "condorpool" and info.site_known
    assert info.transformation == "ls" and info.dax_job_id == "ID0000001"
    assert info.job_class == 1 and info.cores == 2
    assert info.executable == "/r/run0001/00/00/ls.sh"
    assert info.arguments == "pegasus-kickstart  -n ls -N ID1 "
    assert (info.stdin, info.stdout, info.stderr) == (
        "00/00/ls.in",
        "00/00/ls.out",
        "00/00/ls.err",
    )
    assert info.time_requirement_minutes == 7 and info.time_requirement_seconds == 420
    assert info.classads["pegasus_site"] == '"condorpool"'
    assert info.requirements == {"req_cpus": "2", "req_gpus": "1", "req_memory_mb": '"512"'}
    assert info.environment is None and info.dagman_log is None  # not a pegasus-plan job


def test_environment_only_for_plan_and_subdax_jobs() -> None:
    for name in ("pegasus-plan_x", "subdax_y"):
        info = parse_submit_file(SUB, job_name=name, orig_submit_dir=None)
        assert info.dagman_log == "/r/sub/inner.dag.dagman.out"
        assert info.stdout == "/r/run0001/00/00/ls.out"  # normalised, prefix kept


def test_environment_syntaxes() -> None:
    assert parse_environment('"A=1 B:2 C=x:y"') == {"A": "1", "B": "2", "C": "x:y"}
    assert parse_environment("A=1;_CONDOR_DAGMAN_LOG:/p/x.out;junk") == {
        "A": "1",
        "_CONDOR_DAGMAN_LOG": "/p/x.out",
    }


def test_non_integer_cores_and_null_dax_id_and_unknown_site() -> None:
    text = '+pegasus_cores = "two"\n+pegasus_wf_dax_job_id = "null"\n+pegasus_site = "!!SITE!!"\n'
    info = parse_submit_file(text, job_name="j", orig_submit_dir=None)
    assert info.cores is None
    spaced = parse_submit_file("pegasus_cores=  4 \t\n", job_name="j", orig_submit_dir=None)
    assert spaced.cores == 4 and spaced.requirements == {"req_cpus": "4"}
    assert info.requirements == {"req_cpus": '"two"'}
    assert info.dax_job_id is None
    assert info.site == "!!SITE!!" and not info.site_known


def test_arguments_only_double_quoted_and_paths_outside_submit_dir() -> None:
    text = "arguments = -a b\noutput = /else//where/./x.out\n"
    info = parse_submit_file(text, job_name="j", orig_submit_dir="/r/run0001")
    assert info.arguments is None
    assert info.stdout == "/else/where/x.out"


def test_rsl_max_and_bad_values() -> None:
    assert max_rsl_minutes("(maxWallTime=10)(maxtime=abc)(max_cpu_time=4)") == 10
    assert max_rsl_minutes("(queue=short)") is None


def test_corpus_submit_files_match_reference_main_start() -> None:
    """Every corpus .sub parses; stdin/stdout/stderr equal what main.start carried."""
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not available at {CORPUS}")
    from monitord.core.readers.bp import parse_bp_line

    checked = 0
    for sample in sorted(p for p in CORPUS.iterdir() if (p / "input").is_dir()):
        run = sample / "input"
        bd = read_braindump(str(run))
        dag = read_dag(str(run / bd.dag))
        assert dag is not None
        subs = {}
        for name in dag.nodes:
            path = dag.submit_path(name, str(run))
            assert path is not None
            subs[name] = parse_submit_file(
                Path(path).read_text(), job_name=name, orig_submit_dir=bd.orig_submit_dir
            )
            assert subs[name].site
        for line in (sample / "expected" / "events.bp").read_text().splitlines():
            ev = parse_bp_line(line)
            if ev.get("xwf.id") != bd.wf_uuid or ev.get("job.id") not in subs:
                continue
            info = subs[ev["job.id"]]
            if ev["event"] == "stampede.job_inst.main.start":
                assert (ev.get("stdin.file"), ev["stdout.file"], ev["stderr.file"]) == (
                    info.stdin,
                    info.stdout,
                    info.stderr,
                )
                checked += 1
            elif ev["event"] == "stampede.job_inst.composite":
                assert ev["multiplier_factor"] == str(info.cores)
                assert {k: ev[k] for k in ("req_cpus", "req_gpus") if k in ev} == info.requirements
                checked += 1
    assert checked > 20


def _plain_rules(text: str, job_name: str) -> SubmitInfo:
    """The .sub rules written plainly, one test per line (what the reader must agree with)."""
    info = SubmitInfo()
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = (part.strip() for part in line.split("=", 1))
        if key.startswith(("pegasus_", "+pegasus_")):
            info.classads[key.lstrip("+")] = value
        elif key.lower() == "globusrsl":
            minutes = max_rsl_minutes(value)
            if minutes is not None:
                info.time_requirement_minutes = minutes
        elif key == "executable":
            info.executable = value.replace('"', "")
        elif key == "arguments":
            if value.startswith('"') and value.rfind('"') > 0:
                info.arguments = value[1 : value.rfind('"')]
        elif key in ("input", "output", "error"):
            path = value.replace('"', "")
            path = os.path.normpath(path) if path else path
            setattr(info, {"input": "stdin", "output": "stdout", "error": "stderr"}[key], path)
        elif key == "environment" and job_name.startswith(("pegasus-plan", "subdax_")):
            info.environment = parse_environment(value)
            info.dagman_log = info.environment.get("_CONDOR_DAGMAN_LOG")
    _apply_classads(info, job_name)
    return info


_LINES = (
    "# input = /commented",
    "#pegasus_site = x",
    " = orphan value",
    "",
    "   ",
    "queue",
    "executable = /bin/x",
    'Executable = "/bin/other"',
    '  arguments =  "-a  b"  ',
    "arguments = unquoted",
    "input = a//b/./c",
    'output= "x y"',
    "error =",
    "ERROR = /ignored",
    "GlobusRSL = (maxwalltime=4)(maxtime=9)",
    "globusrsl=(count=1)",
    '+pegasus_site = "condorpool"',
    "pegasus_cores=3",
    "++pegasus_gpus = 1",
    "+pegasus_job_class = 2\r",
    "+pegasus_wf_dax_job_id = null",
    'environment = "A=1 _CONDOR_DAGMAN_LOG=/d.out"',
    "environment = B=2;C=3",
    "priority = 30",
    "a = b = c",
    "input = a/../b",
    "output = /x/.h//y/",
    "error = ./e",
    "\tpegasus_memory_mb\t= 2",
    "xpegasus_cores = 9",
    "globusrsl_x = (maxwalltime=1)",
    "GLOBUSrsl = (maxtime=8)",
)


@pytest.mark.parametrize("job_name", ["ls_ID1", "pegasus-plan_x", "subdax_y"])
def test_reader_agrees_with_the_plain_rules_on_random_files(job_name: str) -> None:
    rnd = random.Random(30)
    for _ in range(3_000):
        text = "\n".join(rnd.choice(_LINES) for _ in range(rnd.randint(0, 10)))
        got = parse_submit_file(text, job_name=job_name, orig_submit_dir=None)
        assert asdict(got) == asdict(_plain_rules(text, job_name)), text


def test_normpath_shortcut_agrees_with_os_path_normpath() -> None:
    """The shortcut returns a path unchanged only where normpath would (fails when one of its
    guards is dropped: each was tried)."""
    rnd = random.Random(30)
    parts = ["/", ".", "..", "//", "./", "/.", "a", "b.", ".c", "d/"]
    for _ in range(50_000):
        path = "".join(rnd.choice(parts) for _ in range(rnd.randint(0, 6)))
        assert _normpath(path) == os.path.normpath(path), path


def test_classad_names_are_shared_strings_so_a_batch_pickles_each_once() -> None:
    """The read-ahead worker pickles results in batches (issue 30): a name shared by every
    file's result is one string, pickled once a batch and loaded as one object."""
    infos = [parse_submit_file(SUB, job_name=f"ls_ID{i}", orig_submit_dir=None) for i in range(2)]
    first, second = (list(info.classads) for info in infos)
    assert first == second and all(a is b for a, b in zip(first, second, strict=True))
    back = pickle.loads(pickle.dumps(infos))
    assert back == infos
    assert all(a is b for a, b in zip(back[0].classads, back[1].classads, strict=True))


def test_classad_values_alike_are_shared_strings_so_a_batch_pickles_each_once() -> None:
    """A value every job's file repeats (the workflow's uuid, its site, transformation) is one
    string in each result, and once in a batch's pickle (issue 30, worker30j)."""
    texts = [SUB.replace("\n", f"\n+pegasus_wf_dag_job_id = job{i}\n", 1) for i in range(2)]
    infos = [parse_submit_file(t, job_name="ls", orig_submit_dir=None) for t in texts]
    first, second = (info.classads for info in infos)
    assert first["pegasus_wf_dag_job_id"] != second["pegasus_wf_dag_job_id"]
    same = [k for k in first if k != "pegasus_wf_dag_job_id"]
    assert same and all(first[k] is second[k] for k in same), same
    assert infos[0].site == "condorpool" and infos[0].site is infos[1].site
    assert infos[0].transformation is infos[1].transformation
    back = pickle.loads(pickle.dumps(infos))
    assert back == infos and back[0].site is back[1].site


def test_the_key_table_bounded_and_the_same_results_when_cleared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The lines' keys are looked up in a table (``_KEYS``, workerio30k): cleared when full,
    the results are the plain rules' all the same."""
    from monitord.core.readers import subfile

    monkeypatch.setattr(subfile, "_KEYS", {})
    monkeypatch.setattr(subfile, "_KEYS_MAX", 3)
    rnd = random.Random(31)
    for _ in range(1_000):
        text = "\n".join(rnd.choice(_LINES) for _ in range(rnd.randint(0, 10)))
        got = parse_submit_file(text, job_name="subdax_y", orig_submit_dir=None)
        assert asdict(got) == asdict(_plain_rules(text, "subdax_y")), text
        assert len(subfile._KEYS) <= 3


def test_the_value_table_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared values' table (``_VALUES``) is emptied once full: a workflow's every job id
    does not stay in it (a file adds its few values after the check)."""
    from monitord.core.readers import subfile

    monkeypatch.setattr(subfile, "_VALUES", {})
    monkeypatch.setattr(subfile, "_VALUES_MAX", 4)
    for i in range(50):
        text = SUB.replace("\n", f"\n+pegasus_wf_dag_job_id = job{i}\n", 1)
        parse_submit_file(text, job_name="ls", orig_submit_dir=None)
        assert len(subfile._VALUES) < 4 + text.count("+pegasus_") + 2
