"""Kickstart output parsing: fast YAML path == PyYAML, record mapping, formats."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from monitord.core.readers import kickstart as ks
from monitord.core.readers.kickstart import parse_cluster_line, parse_kickstart, yaml_file
from monitord.core.readers.kickstart.yaml_load import Unsupported, fast_load, load_yaml, pyyaml_load

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def _corpus_out_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.glob("*/input/**/*.out*") if "dagman" not in p.name)


def _same(a, b) -> bool:
    """Deep equality that also compares types (1 != True, 1.0 != 1) and NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def _record_bodies(text: str, monkeypatch) -> list[str]:
    bodies: list[str] = []
    real = yaml_file.load_yaml

    def capture(body: str):
        bodies.append(body)
        return real(body)

    monkeypatch.setattr(yaml_file, "load_yaml", capture)
    ks.parse_kickstart_generic(text)  # the record extractor would skip load_yaml
    monkeypatch.setattr(yaml_file, "load_yaml", real)
    return bodies


# --- fast path == PyYAML -----------------------------------------------------------


def test_fast_path_equals_pyyaml_on_every_corpus_record(monkeypatch):
    files = _corpus_out_files()
    if not files:
        pytest.skip("corpus not available at ../shared/corpus")
    bodies = [b for f in files for b in _record_bodies(f.read_text(), monkeypatch)]
    assert len(bodies) >= len(files)
    for body in bodies:
        fast = fast_load(body)  # must not need the fallback for real kickstart output
        assert _same(fast, pyyaml_load(body))


EDGE_CASES = [
    # scalars of every implicit type
    "- a: 1\n  b: -2\n  c: +3\n  d: 0o0022\n  e: 0755\n  f: 0x1F\n  g: 0b101\n  h: 1_000\n",
    "- a: 1.5\n  b: 0.00\n  c: 1e3\n  d: 1.0e+3\n  e: .inf\n  f: -.INF\n  g: .nan\n  h: 1:30\n  i: 1:30.5\n",
    "- a: True\n  b: false\n  c: yes\n  d: No\n  e: on\n  f: OFF\n  g: y\n  h: TRUE\n",
    "- a: null\n  b: ~\n  c:\n  d: Null\n  e: NULL\n  f: nul\n",
    "- t: 2023-03-03T22:24:20.615-08:00\n  d: 2023-03-03\n  s: 2023-03-03 22:24:20\n",
    "- v: 3.0\n  w: 3.0.1\n  x: 128.9.46.53\n  y: 4.18.0-425.10.1.el8_7.x86_64\n",
    # quoted scalars and escapes
    '- a: "x\\"y\\\\z\\tq\\n"\n  b: "\\x41\\u00e9\\U0001F600"\n  c: ""\n  d: "True"\n  e: "12"\n',
    "- a: 'it''s'\n  b: ''\n  c: '1.5'\n",
    '- "quoted key": 1\n  \'single key\': 2\n  "empty":\n    x: 1\n',
    # plain scalars with odd characters
    "- cpu_model: Intel(R) Xeon(R) CPU E5-2620 0 @ 2.00GHz\n  url: http://a/b?c=d#frag\n  d: a-b\n  e: -x\n",
    "- key:with:colons: v\n  k: a:b\n  trailing: spaces   \n",
    # nesting, indentless sequences, lists of mappings, nested lists
    "- a:\n  - 1\n  - two\n  b:\n    - x: 1\n      y: 2\n    - x: 3\n  c:\n  - - 1\n",
    "- a:\n    - - 1\n      - 2\n    - [1, 2]\n",
    '- integrity_verification_attempts:\n  - lfn: "f"\n    success: True\n- integrity_summary:\n    succeeded: 2\n    failed: 0\n    duration: 0.043\n',
    "location:\n  site: local\n  path: /x\n",
    "- a:\n  -\n  - 2\n  -\n    k: v\n",
    # literal block scalars and chomping
    "- data: |\n    line 1\n\n      indented\n    last\n\n  after: 1\n",
    "- data: |\n    x\n",
    "- data: |\n    x",
    "- data: |-\n    x\n\n\n  b: 1\n",
    "- data: |+\n    x\n\n\n  b: 1\n",
    "- data: |+\n    x\n\n",
    "- data: |\n      deeper first\n    shallower\n",
    "- data: |\n    tab\there\n    \tleading tab\n    # not a comment\n",
    "- data: >\n    folded\n    text\n",
    "- data: |2\n     x\n",
    "- data: |\n\n    leading blank\n",
    # things that must go to PyYAML (and may be errors there)
    "- a: 1 # comment\n",
    "# comment\n- a: 1\n",
    "- a: &anchor 1\n  b: *anchor\n",
    "- a: !!str 1\n",
    "- a: {x: 1}\n",
    "- a: plain\n    continued\n",
    '- a: "multi\n    line"\n',
    "---\n- a: 1\n",
    "- a: 1\n  b: 2\n - c: 3\n",
    "- a: b: c\n",
    "- a: x\r\n",
    "- a: \x01\n",
    "- a:\tb\n",
    "- <<: {a: 1}\n",
    "- a: =\n",
    "- a: 1\n  a: 2\n",
    "",
    "\n\n",
    "- just a scalar\n",
    "- é: ü\n  k: 'ß'\n",
    "- a: m\u2028z\n  b: 1\n",  # PyYAML breaks lines at U+2028/U+2029
    "- a: m\u2029z\n",
]


@pytest.mark.parametrize("text", EDGE_CASES)
def test_fast_path_agrees_with_pyyaml_or_defers(text):
    try:
        expected = ("ok", pyyaml_load(text))
    except yaml.YAMLError:
        expected = ("error", None)
    try:
        got = ("ok", fast_load(text))
    except Unsupported:
        got = None
    if got is not None:
        assert expected[0] == "ok", "fast path accepted what PyYAML rejects"
        assert _same(got[1], expected[1])
    try:
        combined = ("ok", load_yaml(text))
    except yaml.YAMLError:
        combined = ("error", None)
    assert combined[0] == expected[0]
    assert _same(combined[1], expected[1])


def test_fast_path_handles_the_common_kickstart_constructs():
    # these must not fall back: they are on the hot path
    for text in EDGE_CASES[:11] + EDGE_CASES[13:22] + EDGE_CASES[23:24]:
        fast_load(text)


# --- record mapping -----------------------------------------------------------------

YAML_RECORD = """\
- invocation: True
  version: 3.0
  start: 2023-03-03T22:24:20.615-08:00
  duration: 0.099
  transformation: "ls"
  derivation: "ID0000001"
  resource: "condorpool"
  hostaddr: 128.9.46.53
  hostname: workflow.isi.edu
  user: mzalam
  umask: 0o0022
  mainjob:
    start: 2023-03-03T22:24:20.709-08:00
    duration: 0.005
    usage:
      utime: 0.001
      stime: 0.004
      maxrss: 2980
    status:
      raw: 0
      regular_exitcode: 0
    executable:
      file_name: /usr/bin/ls
    argument_vector:
      - "-l"
    procs:
  cwd: /home/x/dir_1
  machine:
    uname_system: linux
    uname_release: 4.18.0
    uname_machine: x86_64
    ram_total: 65653728
    cpu_count: 24
    cpu_speed: 2500
    cpu_vendor: GenuineIntel
    cpu_name: Fancy CPU
  files:
    listing.txt:
      lfn: "listing.txt"
      size: 1779
      ctime: 2023-03-03T22:24:20-08:00
      user: mzalam
      output: True
      sha256: 891b2d
      checksum_timing: 0.00
    input.dat:
      lfn: "input.dat"
      size: 2097152
    stdin:
      size: 5
    stdout:
      size: 12
      data: |
        hello world
    stderr:
      size: 0
    metadata:
      size: 9
"""


def test_yaml_invocation_mapping_and_types():
    (record,) = parse_kickstart(YAML_RECORD)
    assert record.kind == "invocation"
    d = record.data
    assert d["hostname"] == "workflow.isi.edu"
    assert d["resource"] == "condorpool"
    assert d["transformation"] == "ls"
    assert d["derivation"] == "ID0000001"
    assert d["cwd"] == "/home/x/dir_1"
    assert d["start"] == "2023-03-03T22:24:20.709-08:00"  # mainjob start, a string
    assert d["duration"] == 0.005
    assert (d["utime"], d["stime"], d["maxrss"]) == (0.001, 0.004, 2980)
    assert d["raw"] == 0 and type(d["raw"]) is int
    assert d["exitcode"] == 0
    assert d["name"] == "/usr/bin/ls"
    assert (d["ram"], d["system"], d["release"], d["machine"]) == (
        65653728,
        "linux",
        "4.18.0",
        "x86_64",
    )
    assert (d["cpu_count"], d["cpu_speed"], d["cpu_vendor"]) == (24, 2500, "GenuineIntel")
    assert d["cpu_model"] == "Fancy CPU"  # cpu_name maps to cpu_model
    assert d["stdout"] == "hello world\n"
    assert "stderr" not in d  # no data key
    assert d["outputs"] == {
        "listing.txt": {
            "user": "mzalam",
            "size": "1779",
            "ctime": "2023-03-03T22:24:20-08:00",
            "checksum.type": "sha256",
            "checksum.value": "891b2d",
            "checksum.timing": "0.0",
        }
    }
    assert d["tot_op_size_mb"] == 0.001697
    assert d["tot_ip_size_mb"] == 2.0
    for absent in ("argument-vector", "total", "signal", "action", "version", "umask"):
        assert absent not in d


def test_corpus_rc_meta_and_types_match_reference_events():
    out = CORPUS / "process_wf_success/input/00/00/ls_ID0000001.out.000"
    if not out.is_file():
        pytest.skip("corpus not available at ../shared/corpus")
    (record,) = parse_kickstart(out.read_text())
    # values printed by the reference in rc.meta / inv.end / composite for this job
    meta = record.data["outputs"]["listing.txt"]
    assert [(k, str(v)) for k, v in meta.items()] == [
        ("user", "mzalam"),
        ("size", "1779"),
        ("ctime", "2023-03-03T22:24:20-08:00"),
        ("checksum.type", "sha256"),
        ("checksum.value", "891b2d4096cb77b3f99d029183053cacd5121c8c0a4902a5d06105b42d59236b"),
        ("checksum.timing", "0.0"),
    ]
    assert record.data["tot_op_size_mb"] == 0.001697
    assert record.data["tot_ip_size_mb"] == 0.0


def test_bad_yaml_gives_empty_invocation_record():
    text = "- invocation: True\n  a: [unclosed\n  b: 2\n"
    (record,) = parse_kickstart(text)
    assert record.kind == "invocation"
    assert record.data == {}


def test_epilogue_lines_are_dropped():
    text = YAML_RECORD.replace("  cwd: /home/x/dir_1\n", "  cwd: /home/x/dir_1\nEPILOGUE: x y\n")
    (record,) = parse_kickstart(text)
    assert record.data["cwd"] == "/home/x/dir_1"
    assert record.data["name"] == "/usr/bin/ls"


def test_consecutive_records_without_cluster_lines_are_one_record():
    # observed with the reference: a "- invocation:" line continues the open record
    second = YAML_RECORD.replace('"ls"', '"other"')
    records = parse_kickstart(YAML_RECORD + second)
    assert [r.kind for r in records] == ["invocation"]
    assert records[0].data["transformation"] == "ls"


TASK = '[cluster-task id=1, start="2023-03-03T22:24:20.615-08:00", duration=0.521, status=0, line=1, pid=7, app="/bin/x"]'
SUMMARY = '[cluster-summary stat="ok", lines=2, tasks=2, succeeded=2, failed=0, extra=0, duration=1.143, start="2023-03-03T22:24:20.000-08:00", pid=5, app="/bin/c"]'


def test_clustered_file():
    second = YAML_RECORD.replace('"ls"', '"other"')
    text = YAML_RECORD + TASK + "\n" + second + TASK.replace("id=1", "id=2") + "\n" + SUMMARY + "\n"
    records = parse_kickstart(text)
    assert [r.kind for r in records] == ["invocation", "task", "invocation", "task", "clustered"]
    assert records[0].data["transformation"] == "ls"
    assert records[2].data["transformation"] == "other"
    assert records[1].data == {
        "id": "1",
        "start": "2023-03-03T22:24:20.615-08:00",
        "duration": "0.521",
        "status": "0",
        "line": "1",
        "pid": "7",
        "app": "/bin/x",
    }
    assert records[4].data["stat"] == "ok"
    assert records[4].data["duration"] == "1.143"


def test_seqexec_prefixes_and_bad_cluster_lines():
    assert parse_cluster_line("[seqexec-task id=3, status=1]").data == {"id": "3", "status": "1"}
    assert parse_cluster_line("[seqexec-summary tasks=1]").kind == "clustered"
    assert parse_cluster_line("[cluster-task id=1, status=0") is None  # no "]"
    assert parse_cluster_line("[cluster-other x=1]") is None
    records = parse_kickstart("[cluster-task id=1, status=0\n" + SUMMARY + "\n")
    assert [r.kind for r in records] == ["clustered"]


def test_multipart_blocks():
    text = (
        YAML_RECORD
        + "---------------pegasus-multipart\n"
        + "- integrity_verification_attempts:\n"
        + '  - lfn: "f.b1"\n'
        + "    success: True\n"
        + "- integrity_summary:\n"
        + "    succeeded: 2\n"
        + "    failed: 0\n"
        + "    duration: 0.043\n"
        + "---------------pegasus-multipart\n"
        + "location:\n"
        + "  site: local\n"
        + "---------------pegasus-multipart\n"
        + "\n"
        + "---------------pegasus-multipart\n"
        + "- a: [unclosed\n"
    )
    records = parse_kickstart(text)
    assert [r.kind for r in records] == ["invocation", "multipart", "multipart", "multipart"]
    assert records[1].data == {
        "integrity_verification_attempts": [{"lfn": "f.b1", "success": True}]
    }
    assert records[2].data == {
        "integrity_summary": {"succeeded": 2, "failed": 0, "duration": 0.043}
    }
    assert records[3].data == {"location": {"site": "local"}}


def test_not_kickstart_gives_no_records():
    assert parse_kickstart("just some job output\nwith lines\n") == []
    assert parse_kickstart("") == []


XML_RECORD = """\
<?xml version="1.0" encoding="ISO-8859-1"?>
<invocation xmlns="http://pegasus.isi.edu/schema/invocation" version="2.1" start="2012-01-01T10:00:00.000-08:00" duration="1.500" transformation="diamond::preprocess:4.0" derivation="ID000001" resource="local" wf-label="blackdiamond" hostaddr="10.0.0.1" hostname="node1.example.org" pid="1" uid="1" user="alice" gid="1" group="g" umask="0022">
<prejob start="2012-01-01T10:00:00.000-08:00" duration="0.1" pid="2"><usage utime="0.1" stime="0.1" maxrss="1"/><status raw="0"><regular exitcode="0"/></status><statcall error="0"><file name="/bin/pre"/></statcall><argument-vector/></prejob>
<mainjob start="2012-01-01T10:00:00.100-08:00" duration="1.200" pid="3">
<usage utime="0.500" stime="0.250" maxrss="2048" minflt="1"/>
<status raw="2304"><signalled signal="9" corefile="false">killed</signalled></status>
<statcall error="0"><file name="/usr/bin/keg">7F454C46</file><statinfo mode="0100755" size="1" user="alice"/></statcall>
<argument-vector><arg nr="1"> -a </arg><arg nr="2">b</arg></argument-vector>
</mainjob>
<cwd>/scratch/run</cwd>
<usage utime="9.0" stime="9.0" maxrss="9"/>
<machine page-size="4096"><stamp>2012-01-01T10:00:00.000-08:00</stamp><uname system="linux" nodename="node1" release="2.6.32" machine="x86_64"/><linux><ram total="8388608" free="1"/><cpu count="4" speed="2400" vendor="GenuineIntel">Intel(R) Xeon(R)</cpu></linux></machine>
<statcall error="0" id="stdout"><temporary name="/tmp/x" descriptor="3"/><statinfo size="12"/><data>hello
world
</data></statcall>
<statcall error="0" id="stderr"><temporary name="/tmp/y" descriptor="4"/><statinfo size="4"/><data>oops</data></statcall>
<statcall error="0" id="final" lfn="f.b"><file name="/scratch/run/f.b"/><checksum type="sha256" value="abc" timing="0.010"/><statinfo mode="0100644" size="42" ctime="2012-01-01T10:00:01-08:00" user="alice"/></statcall>
</invocation>
"""


def test_xml_record():
    (record,) = parse_kickstart(XML_RECORD)
    d = record.data
    assert record.kind == "invocation"
    assert d["hostname"] == "node1.example.org"
    assert d["resource"] == "local"
    assert d["user"] == "alice"
    assert d["transformation"] == "diamond::preprocess:4.0"
    assert d["derivation"] == "ID000001"
    assert (d["start"], d["duration"]) == ("2012-01-01T10:00:00.100-08:00", "1.200")
    assert (d["utime"], d["stime"], d["maxrss"]) == (0.5, 0.25, 2048.0)
    assert d["name"] == "/usr/bin/keg"
    assert d["raw"] == "2304"
    assert d["signalled"] == {"signal": "9", "corefile": "false", "action": "killed"}
    assert d["total"] == "8388608"
    assert (d["system"], d["release"], d["machine"]) == ("linux", "2.6.32", "x86_64")
    assert (d["cpu_count"], d["cpu_speed"], d["cpu_vendor"], d["cpu_model"]) == (
        "4",
        "2400",
        "GenuineIntel",
        "Intel(R) Xeon(R)",
    )
    assert d["argument-vector"] == "-a b"
    assert d["cwd"] == "/scratch/run"
    assert d["stdout"] == "hello\nworld\n"
    assert d["stderr"] == "oops"
    assert d["outputs"] == {
        "f.b": {
            "user": "alice",
            "size": "42",
            "ctime": "2012-01-01T10:00:01-08:00",
            "checksum.type": "sha256",
            "checksum.value": "abc",
            "checksum.timing": "0.010",
        }
    }


def test_xml_parse_error_drops_all_records():
    broken = XML_RECORD.replace("</mainjob>", "</mainjobX>")
    assert parse_kickstart(XML_RECORD + broken) == []


def test_xml_with_cluster_lines():
    records = parse_kickstart(XML_RECORD + TASK + "\n" + XML_RECORD + SUMMARY + "\n")
    assert [r.kind for r in records] == ["invocation", "task", "invocation", "clustered"]


def test_parse_kickstart_never_raises(monkeypatch):
    def boom(*args):
        raise RuntimeError("bug")

    monkeypatch.setattr(ks, "parse_yaml_file", boom)
    monkeypatch.setattr(ks, "extract_invocation", boom)
    assert parse_kickstart(YAML_RECORD) == []


def test_the_yaml_value_caches_keep_little_of_many_records():
    """Records of distinct values (one job's file names, times, ids each) leave the loader's
    caches no larger than what a record's repeats need: the memory a replay keeps does not
    grow with its job count (issue 30: 429 B a record with 65,536 entries a cache)."""
    import gc
    import tracemalloc

    from monitord.core.readers.kickstart import yaml_load

    n = 30_000
    docs = [f"host-{i}: exec-{i}.0\nfile_{i}.txt: {i}-x\n" for i in range(n)]
    for doc in docs[:100]:  # the caches' own first growth
        yaml_load.load_yaml(doc)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for doc in docs[100:]:
            loaded = yaml_load.load_yaml(doc)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(loaded) == 2  # the documents were loaded, their values cached
    assert kept / n < 100, kept / n
