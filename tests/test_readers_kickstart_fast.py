"""The kickstart record extractor gives exactly what the generic path gives.

``parse_kickstart`` (record extractor first) is compared with
``parse_kickstart_generic`` (load every record, then map it) on the corpus, on
generated workflows, on crafted records the extractor must accept or must
leave to the generic path, and on random mutations of real records.
"""

from __future__ import annotations

import math
import random
import re
import time
from pathlib import Path

import pytest

from monitord.core.readers.kickstart import (
    fast,
    parse_kickstart,
    parse_kickstart_extracting,
    parse_kickstart_generic,
)
from monitord.core.readers.kickstart.fast import extract_invocation
from monitord.tools.synthetic import generate

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def _same(a, b) -> bool:
    """Deep equality that also compares types (1 != True, 1.0 != 1), key order and NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def _records(text: str) -> list[tuple[str, dict]]:
    return [(r.kind, r.data) for r in parse_kickstart_extracting(text)]


def _generic(text: str) -> list[tuple[str, dict]]:
    return [(r.kind, r.data) for r in parse_kickstart_generic(text)]


def assert_same_as_generic(text: str) -> None:
    got, want = _records(text), _generic(text)
    assert _same(got, want), f"fast {got!r}\n!= generic {want!r}"


# --- real and generated files -------------------------------------------------------------


def test_every_corpus_out_file():
    files = sorted(CORPUS.glob("*/input/**/*.out*")) if CORPUS.is_dir() else []
    if not files:
        pytest.skip("corpus not available at ../shared/corpus")
    extracted = 0
    for path in files:
        text = path.read_text(errors="replace")
        assert_same_as_generic(text)
        extracted += extract_invocation(text) is not None
    # every single-record file takes the fast path, failed jobs included (environment
    # and limits after files); files with multipart blocks are split first
    assert extracted == sum(
        p.read_text().startswith("- invocation:") and "multipart" not in p.read_text()
        for p in files
    )


@pytest.mark.parametrize(
    ("jobs", "seed", "fail"),
    [(150, 1, 0.0), (150, 7, 0.1)],
)
def test_generated_workflow_out_files(tmp_path, jobs, seed, fail):
    generate(tmp_path, jobs, retry_fraction=0.1, fail_fraction=fail, seed=seed)
    files = sorted(tmp_path.rglob("*.out.*"))
    assert len(files) >= 100
    for path in files:
        text = path.read_text()
        assert extract_invocation(text) is not None, path.name  # the whole point
        assert_same_as_generic(text)


# --- crafted records --------------------------------------------------------------------

BASE = """\
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
    pid: 3180598
    usage:
      utime: 0.001
      stime: 0.004
      maxrss: 2980
    status:
      raw: 256
      regular_exitcode: 1
    executable:
      file_name: /usr/bin/ls
      mode: 0o100755
    argument_vector:
      - "-l"
      - "x y"
    procs:
  jobids:
    condor: 43.0
  cwd: /home/x/dir_1
  usage:
    utime: 0.017
  machine:
    page-size: 4096
    uname_system: linux
    uname_release: 4.18.0-425.10.1.el8_7.x86_64
    uname_machine: x86_64
    ram_total: 65653728
    cpu_count: 24
    cpu_speed: 2500
    cpu_vendor: GenuineIntel
    cpu_model: Intel(R) Xeon(R) CPU E5-2620 0 @ 2.00GHz
  files:
    "listing.txt":
      lfn: "listing.txt"
      size: 1779
      ctime: 2023-03-03T22:24:20-08:00
      user: mzalam
      output: True
      sha256: 891b2d4096cb77b3f99d029183053cacd5121c8c0a4902a5d06105b42d59236b
      checksum_timing: 0.026
    input.dat:
      lfn: "input.dat"
      size: 2097152
    stdin:
      size: 5
    stdout:
      size: 12
      data_truncated: false
      data: |
        hello world
          indented: yes
        # not a comment

    stderr:
      size: 0
    metadata:
      size: 9
"""


def test_base_record_takes_the_fast_path_and_maps_like_the_spec():
    rec = extract_invocation(BASE)
    assert rec is not None
    assert rec["raw"] == 256 and rec["exitcode"] == 1
    assert rec["start"] == "2023-03-03T22:24:20.709-08:00"
    assert rec["cpu_model"] == "Intel(R) Xeon(R) CPU E5-2620 0 @ 2.00GHz"
    assert rec["stdout"] == "hello world\n  indented: yes\n# not a comment\n"
    assert rec["outputs"]["listing.txt"]["checksum.timing"] == "0.026"
    assert rec["tot_ip_size_mb"] == 2.0
    assert_same_as_generic(BASE)


def test_a_record_is_its_own_dict_though_its_runs_of_fields_are_converted_once():
    """Host, status and machine fields are converted once per distinct run (issue 30): a
    caller changing one record's dict must not change the next record's."""
    first = extract_invocation(BASE)
    assert first is not None
    for key in list(first):
        first[key] = "changed"
    second = extract_invocation(BASE)
    assert second is not None and _same(second, _generic(BASE)[0][1])
    assert second["hostname"] == "workflow.isi.edu" and second["cpu_count"] == 24


def test_record_cut_before_its_files_has_no_size_totals():
    """A record cut short (job killed while kickstart wrote it): no tot_*_size_mb, as the reference."""
    cut = BASE[: BASE.index("\n  files:") + 1]
    for rec in (extract_invocation(cut), parse_kickstart_generic(cut)[0].data):
        assert rec is not None
        assert "tot_ip_size_mb" not in rec and "tot_op_size_mb" not in rec
        assert rec["exitcode"] == 1


# (old, new) replacements of BASE the extractor handles itself
ACCEPTED = [
    ("  user: mzalam\n", "  user: 1234\n"),
    ("    cpu_model: Intel", "    cpu_name: Other\n    cpu_model: Intel"),
    ("    cpu_vendor: GenuineIntel\n", "    cpu_vendor: Genuine#Intel\n"),
    ("      regular_exitcode: 1\n", "      signalled_signal: 9\n      signalled_name: KILL\n"),
    ("      regular_exitcode: 1\n", "      regular_exitcode: 1\n      corefile: core.1\n"),
    ("      size: 1779\n", "      size: 0o17\n"),
    ("      size: 1779\n", "      size: not-a-number\n"),
    ("      size: 1779\n", "      size: 1_779\n      size: 12.5\n"),  # last one wins
    ("      size: 2097152\n", "      size: 00123\n"),
    ("      output: True\n", "      output: false\n"),
    ("      output: True\n", "      output: null\n"),
    ("      output: True\n", "      output: yes\n"),
    ("      checksum_timing: 0.026\n", ""),
    ("      sha256: 891b", "      sha256: 1234"),
    ("    input.dat:\n", "    1.0:\n"),  # a float file name
    ("    input.dat:\n", '    "listing.txt":\n'),  # the same file twice: the last wins
    # file names the extractor takes as written only when no resolver applies: the others
    # resolve first, so two spellings of one key are one entry, the last one's fields
    ("    input.dat:\n", "    1.00:\n      size: 4\n    1.0:\n"),
    ("    input.dat:\n", "    yes:\n      size: 4\n    True:\n"),
    ("    input.dat:\n", '    input.dat:\n      size: 4\n    "input.dat":\n'),
    ("    stdout:\n", '    "stdout":\n'),  # quoted, still the stream
    ("    stdin:\n      size: 5\n", "    stdin: 5\n"),
    ("    input.dat:\n      lfn", "    other: 7\n    input.dat:\n      lfn"),
    ("    input.dat:\n      lfn", "    other:\n      - a\n    input.dat:\n      lfn"),
    ("    input.dat:\n      lfn", "    other:\n    input.dat:\n      lfn"),
    ("      data: |\n", "      data: |-\n"),
    ("      data: |\n", "      data: |+\n"),
    ("        hello world\n", "        hello world\n\n   \n        more\n"),
    ("        # not a comment\n\n", "        # not a comment\n          \n"),
    (
        "      data: |\n        hello world\n          indented: yes\n        # not a comment\n",
        '      data: "x: y"\n',
    ),
    (
        "      data_truncated: false\n",
        "      nested:\n        deeper:\n          - 1\n        key: |\n          text\n",
    ),
    ("  hostname: workflow.isi.edu\n", "  hostname: -odd\n"),
    ("  hostname: workflow.isi.edu\n", "  hostname: a:b:c\n"),
    ("  hostname: workflow.isi.edu\n", '  hostname: "quoted host"   \n'),
    ('  derivation: "ID0000001"\n', '  derivation: "ID 1: #x"   \n'),
    ('  derivation: "ID0000001"\n', '  derivation: ""\n'),
    ('  derivation: "ID0000001"\n', '  derivation: "null"\n'),
    ('  derivation: "ID0000001"\n', "  derivation: 0x12\n"),
    ("  hostname: workflow.isi.edu\n", "  hostname: trailing   \n"),
    ("  hostname: workflow.isi.edu\n", "  hostname: 2023-01-01 10:00:00\n"),
    ("  hostname: workflow.isi.edu\n", "  hostname: ~\n"),
    ("  hostname: workflow.isi.edu\n", "  hostname: 0x1F\n"),
    ("  hostname: workflow.isi.edu\n", "  hostname: .inf\n"),
    ("  hostname: workflow.isi.edu\n", "  hostname: 1:30\n"),
    ("  hostname: workflow.isi.edu\n", "  hostname: 3.0.1\n"),
    ("  hostname: workflow.isi.edu\n", "  hostname: 2023-01-01x\n"),
    ("    duration: 0.005\n", "    duration: 1e3\n"),
    ("    duration: 0.005\n", "    duration: 007.5\n"),
    ("  jobids:\n    condor: 43.0\n", "\n\n  jobids:\n\n    condor: 43.0\n\n"),
    ("  mainjob:\n", "  mainjob:\n    other: |\n      text\n"),
    ("  files:\n", "  files:\n\n"),
    ("  files:\n" + BASE.split("  files:\n")[1], ""),  # no files at all
    ("  files:\n" + BASE.split("  files:\n")[1], "  files:\n"),
    ("  mainjob:\n", "  mainjob:\n    usage:\n      utime: 9\n"),  # usage twice: generic
    # failed jobs: more top-level keys after files
    ("    metadata:\n      size: 9\n", "    metadata:\n      size: 9\n  env:\n    A: b c\n"),
    ("    metadata:\n      size: 9\n", "    metadata:\n      size: 9\n\n  limits: 4\n  x:\n"),
]


@pytest.mark.parametrize(("old", "new"), ACCEPTED)
def test_accepted_variants(old, new):
    assert old in BASE
    text = BASE.replace(old, new, 1)
    assert_same_as_generic(text)


def test_accepted_variants_mostly_take_the_fast_path():
    fast = sum(extract_invocation(BASE.replace(old, new, 1)) is not None for old, new in ACCEPTED)
    assert fast >= len(ACCEPTED) - 3


# (old, new) replacements the extractor must leave to the generic path
FALLBACK = [
    ("  user: mzalam\n", "  user: [a, b]\n"),  # flow collection
    ("  user: mzalam\n", "  user: {a: 1}\n"),
    ("  user: mzalam\n", "  user: &x mzalam\n  group: *x\n"),  # anchor / alias
    ("  user: mzalam\n", "  user: !!str 12\n"),  # tag
    ("  user: mzalam\n", "  user: mzalam # comment\n"),
    ("  user: mzalam\n", "  user: 'single'\n"),
    ("  user: mzalam\n", '  user: "esc\\tape"\n'),
    ("  user: mzalam\n", "  user: >\n    folded\n"),
    ("  user: mzalam\n", "  user: |\n    literal\n"),
    ("  user: mzalam\n", "  user:\n"),  # null, in another form than "key: scalar"
    ("  user: mzalam\n", "  user: a: b\n"),  # bad YAML: the generic path logs and gives {}
    ("  user: mzalam\n", "  user: mzalam\n  user: again\n"),  # mapped key twice
    ("  user: mzalam\n", '  "user": quoted\n'),
    ("  user: mzalam\n", "  user:\tmzalam\n"),
    ("  user: mzalam\n", "  user: mz\x01alam\n"),
    ("  user: mzalam\n", "  user: mzalam\r\n"),
    ("  user: mzalam\n", "  user: m\u2028z\n"),
    ("  user: mzalam\n", "  user: <<\n"),
    ("  user: mzalam\n", "  user: =\n"),
    ("  user: mzalam\n", "  user: plain\n    continued\n"),
    ("  user: mzalam\n", "   user: mzalam\n"),  # odd indentation
    ("  user: mzalam\n", "  - user\n"),
    ("  umask: 0o0022\n", "  umask: 0o0022\n---\n"),
    ("  mainjob:\n", "  mainjob:\n    start: again\n"),
    ("  mainjob:\n", '  mainjob:\n    "start": quoted\n'),
    ("    pid: 3180598\n", "      pid: 3180598\n"),
    ('      - "-l"\n', '    - "-l"\n'),
    ('      - "-l"\n', "      - a: b\n"),
    ("  machine:\n", "  machine: none\n"),
    ("  machine:\n", "  machine:\n    - a\n  other:\n"),
    ("      size: 1779\n", "      size:\n        nested: 1\n"),
    ("      output: True\n", "      output:\n"),
    ("      data: |\n", "      data: x\n      data: |\n"),
    ("      data: |\n", "      data: >\n"),
    ("      data: |\n", "      data: |2\n"),
    ("        hello world\n", "          hello world\n        x\n"),
    ("    stdin:\n", "    stdin:\n    - item\n"),
    ('      lfn: "input.dat"\n', "      'lfn': x\n"),
    ('      lfn: "input.dat"\n', '      "size": 99\n'),
    ("  files:\n", "  files: []\n  other:\n"),
    ("    metadata:\n      size: 9\n", "    metadata:\n      size: 9\n  hostname: again\n"),
    ("    metadata:\n      size: 9\n", "    metadata:\n      size: 9\n  files:\n    x: 1\n"),
    ("    metadata:\n      size: 9\n", "    metadata:\n      size: 9\n  limits:\n    - x\n   y\n"),
    ("- invocation: True\n", "- invocation:\n"),
    ("- invocation: True\n", "- invocation: True # c\n"),
]


@pytest.mark.parametrize(("old", "new"), FALLBACK)
def test_fallback_variants(old, new):
    assert old in BASE
    text = BASE.replace(old, new, 1)
    assert extract_invocation(text) is None
    assert_same_as_generic(text)


def test_files_that_are_more_than_one_record_use_the_generic_split():
    cluster = (
        '[cluster-task id=1, start="2023-03-03T22:24:20.615-08:00", duration=0.521,'
        ' status=0, line=1, pid=7, app="/bin/x"]\n'
    )
    for text in (
        BASE + BASE,  # consecutive records load as one (observed with the reference)
        BASE + cluster + BASE.replace('"ls"', '"other"') + cluster,
        BASE + "EPILOGUE: not yaml\n",
        "junk\n" + BASE,
        BASE + "---------------pegasus-multipart\n- integrity_summary:\n    succeeded: 1\n",
        BASE.rstrip("\n"),  # no final line break
    ):
        assert extract_invocation(text) is None
        assert_same_as_generic(text)
    records = parse_kickstart(BASE + cluster + BASE + cluster)
    assert [r.kind for r in records] == ["invocation", "task", "invocation", "task"]


def test_a_process_first_records_skip_the_extractor_then_it_compiles(monkeypatch):
    """Start-up (issue 30): a small replay never compiles the extractor's patterns."""
    monkeypatch.setattr(fast, "_parsed", [0])
    fast._patterns.cache_clear()
    try:
        want = _generic(BASE)
        for _ in range(fast.WARM_UP):
            assert _same([(r.kind, r.data) for r in parse_kickstart(BASE)], want)
        assert fast._patterns.cache_info().currsize == 0  # the generic path so far
        assert _same([(r.kind, r.data) for r in parse_kickstart(BASE)], want)
        assert fast._patterns.cache_info().currsize == 1  # the extractor from then on
    finally:
        fast._patterns.cache_clear()


# --- random mutations ---------------------------------------------------------------------

_PIECES = [
    " ", "  ", "\n", "\n\n", ":", ": ", "-", "- ", "#", " #", '"', "'", "|", "|-", ">",
    "[", "]", "{", "}", ",", "&a", "*a", "!", "%", "@", "`", "?", "<<", "=", "\t", "\\",
    "~", "null", "true", "0x1", "1.5", "1:2", "2023-01-01", "\x00", "\r", "é", "\u2028",
]  # fmt: skip


def _mutate(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        line = lines[i]
        op = rng.randrange(6)
        if op == 0:  # insert a piece
            at = rng.randint(0, len(line))
            lines[i] = line[:at] + rng.choice(_PIECES) + line[at:]
        elif op == 1 and line:  # delete a character
            at = rng.randrange(len(line))
            lines[i] = line[:at] + line[at + 1 :]
        elif op == 2:  # re-indent
            lines[i] = " " * rng.randint(0, 9) + line.lstrip(" ")
        elif op == 3:  # duplicate a line somewhere else
            lines.insert(rng.randrange(len(lines) + 1), line)
        elif op == 4:  # drop a line
            del lines[i]
        else:  # replace the value of a key line
            key, sep, _ = line.partition(": ")
            if sep:
                lines[i] = key + sep + rng.choice(_PIECES + ["x", "12", "|", '"q"'])
        if not lines:
            lines = [""]
    return "\n".join(lines)


def test_random_mutations_agree_with_the_generic_path(tmp_path):
    generate(tmp_path, 40, retry_fraction=0.2, seed=11)
    bases = [BASE] + [p.read_text() for p in sorted(tmp_path.rglob("*.out.*"))[:12]]
    rng = random.Random(2024)
    fast = 0
    for _ in range(600):
        text = _mutate(rng, rng.choice(bases))
        fast += extract_invocation(text) is not None
        assert_same_as_generic(text)
    assert fast > 100  # harmless mutations stay on the fast path


def test_failing_input_costs_one_pass():
    # nested blocks, many blank lines and a bad last line: no backtracking blow-up
    deep = "".join(f"{'  ' * d}k{d}:\n" for d in range(1, 7))
    text = "- invocation: True\n" + (deep + "\n" * 50) * 200 + "  bad: [\n"
    began = time.perf_counter()
    assert extract_invocation(text) is None
    assert time.perf_counter() - began < 2.0


def test_text_shortcut_types_every_scalar_like_the_value_cache():
    # fast._text skips the value cache for strings as written (paths, checksums): for every
    # scalar the patterns accept it must give what cached_value gives, type included
    from monitord.core.readers.kickstart.yaml_load import cached_value

    rng = random.Random(30)
    pieces = ["0x", "0b", "0o", "0", "1", "9", "e", "E", "f", "a", "/", ".", "_", "-", "+", ":"]
    pieces += ["yes", "No", "off", "null", "~", "inf", ".nan", "2023-02-04", "T", " ", "'"]
    scalars = [f"{i:08x}" * 8 for i in range(200)] + ["0x" + "ab" * 31, "0b" + "01" * 31]
    scalars += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))) for _ in range(4000)]
    pattern = re.compile(fast._SCALAR)
    checked = 0
    for raw in scalars:
        if pattern.fullmatch(raw) is None:
            continue
        checked += 1
        assert _same(_outcome(fast._text, raw), _outcome(cached_value, raw)), raw
    assert checked > 1000


def _outcome(convert, raw):
    """The value, or the exception's type (an exception sends the record to the generic path)."""
    try:
        return convert(raw)
    except Exception as exc:
        return type(exc)


def test_the_stat_keys_shortcut_leaves_the_files_entries_language_unchanged(tmp_path):
    """The files entries matched with and without the stat-keys alternative (issue 30):
    the same entries, captures and spans, on real records and on random mutations."""
    generate(tmp_path, 40, retry_fraction=0.2, fail_fraction=0.1, seed=5)
    bases = [BASE] + [p.read_text() for p in sorted(tmp_path.rglob("*.out.*"))[:12]]
    with_stat, without = fast._compile_file_entry(), fast._compile_file_entry(stat_first=False)
    rng = random.Random(30)
    texts = bases + [_mutate(rng, rng.choice(bases)) for _ in range(1500)]
    files_at = 0
    for text in texts:
        start = text.find("\n  files:\n")
        if start < 0:
            continue
        files_at += 1
        assert with_stat.findall(text, start + 10) == without.findall(text, start + 10)
    assert files_at > 1000


def _cut_in_files(text: str) -> str:
    return text[: text.index("\n    stdout:\n") + 30]


@pytest.mark.parametrize(
    "make",
    [
        lambda t: t[: len(t) // 2],  # cut mid-record (a killed job), mid-line
        lambda t: t[: t.rindex("\n", 0, len(t) // 2) + 1],  # cut at a line's end
        _cut_in_files,  # cut inside the files entries
        lambda t: t.replace("hello world", "h\xe9llo \x80 world"),  # non-ASCII in stdout data
        lambda t: t.replace("  user: mzalam\n", "  user: mz\ufffdlam\n"),  # a replaced byte
        lambda t: t.replace("regular_exitcode: 1", "regular_exitcode: 137"),  # a failed job
        lambda t: t.replace(
            "    stderr:\n      size: 0\n", "    stderr:\n      data: |\n        oops\n"
        ),
        lambda t: t + t.replace('"ls"', '"ls2"'),  # two records in one file
    ],
)
def test_edge_cases_agree_with_the_generic_path_bytes_included(make):
    """The edge cases of issue 30's brief, and a file read as the worker reads it (UTF-8 with
    replacement): the extractor's records are the generic path's."""
    text = make(BASE)
    assert_same_as_generic(text)
    raw = text.encode("utf-8").replace(b"mzalam", b"mz\xffal\xc3am")  # not UTF-8
    assert_same_as_generic(raw.decode("utf-8", errors="replace"))


def test_the_common_entry_shape_matches_as_the_general_entry_pattern(tmp_path, monkeypatch):
    """Wherever the common-shape pattern matches a files entry and no line at the entries'
    indent follows (as when its matches tile the section: an entry's header follows), the
    general entry pattern matches the same span with the same groups (issue 30); and
    ``_entries``, which takes the first's findall when it tiles the section, gives what the
    general pattern alone gives.  Real records, generated ones and random mutations of them."""
    generate(tmp_path, 40, retry_fraction=0.2, fail_fraction=0.1, seed=5)
    bases = [BASE] + [p.read_text() for p in sorted(tmp_path.rglob("*.out.*"))[:12]]
    patterns, general = fast._patterns(), fast._general()
    general_only = patterns._replace(common_entries=general.file_entries)
    rng = random.Random(31)
    texts = bases + [_mutate(rng, rng.choice(bases)) for _ in range(1500)]
    common = tiled = 0
    for text in texts:
        start = text.find("\n  files:\n")
        if start < 0:
            continue
        for found in patterns.common_entries.finditer(text, start + 10):
            if text.startswith(" " * 6, found.end()):
                continue  # a line the general pattern may take into this entry
            common += 1
            same = general.file_entries.match(text, found.start())
            assert same is not None, text[found.start() : found.end()]
            assert (same.span(), same.groups()) == (found.span(), found.groups())
        entries = fast._entries(text, start + 10, len(text))
        tiled += entries is not None
        with monkeypatch.context() as patch:
            patch.setattr(fast, "_patterns", lambda: general_only)
            assert entries == fast._entries(text, start + 10, len(text))
    assert common > 5000
    assert tiled > 500


def test_the_common_record_shape_matches_as_the_record_pattern(tmp_path):
    """Wherever the common-shape record pattern matches, the record pattern matches with the
    same captures and the same files section (issue 30): real, generated, mutated records."""
    generate(tmp_path, 40, retry_fraction=0.2, fail_fraction=0.1, seed=6)
    bases = [BASE] + [p.read_text() for p in sorted(tmp_path.rglob("*.out.*"))[:12]]
    patterns = fast._patterns()
    record, captured = fast._record_pattern()
    rng = random.Random(32)
    texts = bases + [_mutate(rng, rng.choice(bases)) for _ in range(1500)]
    common = 0
    for text in texts:
        found = patterns.common_record.fullmatch(text)
        if found is None:
            continue
        common += 1
        general = record.fullmatch(text)
        assert general is not None, text
        assert found.group(*patterns.common_captured) == general.group(*captured)
        assert found.span(fast.FILES) == general.span(fast.FILES)
    assert common > 500


def test_the_record_pattern_is_compiled_only_for_a_record_the_common_shape_does_not_take(
    tmp_path: Path,
) -> None:
    """The general record pattern (~26 ms to compile) is compiled on the first record the
    common shape does not take, not before: a run whose records all have it (a large replay's
    read-ahead worker) never pays it; such a record is still extracted as before."""
    generate(tmp_path, 10, seed=6)
    common = fast._patterns().common_record.fullmatch
    texts = [t for p in sorted(tmp_path.rglob("*.out*")) if common(t := p.read_text())]
    assert len(texts) >= 10
    fast._record_pattern.cache_clear()
    for text in texts:
        assert extract_invocation(text) is not None
    assert fast._record_pattern.cache_info().currsize == 0
    other = BASE.replace("  hostname:", "  unknown_key: 1\n  hostname:", 1)
    assert common(other) is None
    assert_same_as_generic(other)
    assert extract_invocation(other) is not None
    assert fast._record_pattern.cache_info().currsize == 1


def test_the_general_files_patterns_are_compiled_only_for_a_section_the_common_shape_does_not_tile(
    tmp_path: Path,
) -> None:
    """The general files entry and tail patterns (~10 ms to compile) are compiled on the first
    files section the common entries do not tile, not before (a large generated workflow's
    read-ahead worker never needs them); such a section is still extracted as before."""
    generate(tmp_path, 10, seed=7)
    texts = [p.read_text() for p in sorted(tmp_path.rglob("*.out.*"))]
    assert len(texts) >= 10
    fast._general.cache_clear()
    for text in texts:
        assert extract_invocation(text) is not None
    assert fast._general.cache_info().currsize == 0
    # BASE's entries lack the stat lines kickstart writes (file_name, mode, ...): not common
    assert_same_as_generic(BASE)
    assert extract_invocation(BASE) is not None
    assert fast._general.cache_info().currsize == 1
