"""The real Pegasus 5.1.3 readers of a Stampede DB print the same reports on ours as on the reference's.

For every corpus sample two copies of ``input/`` are made, each as ``<side>/run``:

* ``ref/run`` gets the reference's ``expected/stampede.db`` as ``<dag base>.stampede.db`` (the
  braindump's ``dag`` minus ``.dag``: the tools look for the DB there, relative to the submit
  directory they are given, never at the braindump's ``submit_dir``, which is from another
  machine), plus, in every directory where the reference wrote a ``jobstate.log`` (as listed in
  ``expected/jobstate/``), that ``jobstate.log`` and empty ``monitord.started``/``monitord.done``
  markers: pegasus-statistics refuses a submit directory without them ("Please run pegasus
  monitord in replay mode" / "pegasus-monitord still running"), and the reference writes them
  there (observed by running it as a black box);
* ``ours/run`` is replayed by our ``pegasus-monitord -r`` (TZ of the recording, scratch HOME).

``pegasus-statistics`` and ``pegasus-analyzer`` from the oracle venv (scripts/oracle-venv.sh, a
test oracle, never a project dependency) then run on both sides with the same relative
arguments (cwd ``<side>``, submit dir ``run``, ``-o <name>``), ``TZ=America/Los_Angeles`` and an
empty HOME per side (so the dashboard DB our replay writes cannot help our side). Compared: exit
status, stdout, stderr, and for pegasus-statistics the set of files it writes and each file's text.

Normalisation, applied identically to both sides' texts, and nothing else:

1. the ``asctime`` prefix of Python log records (``YYYY-MM-DD HH:MM:SS,mmm:`` at a line start,
   on stderr) becomes ``<time>:`` -- it is the wall clock of the tool's run;
2. the absolute path of the side's directory (``.../ref`` or ``.../ours``) becomes ``<side>``.
   With relative arguments the 5.1.3 tools print none, so this is a guard, not a need.

Everything else (epochs, dates in the TZ, durations, host names, states, counts, exit codes,
task stdout/stderr) must be byte-identical.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import CORPUS, CORPUS_TZ, corpus_samples, exact_case, require_corpus
from tests.oracle import Oracle, find_oracle

CASES = Path(__file__).resolve().parent / "data" / "cases"
# Corpus samples and the project's own generated cases (tests/data/cases), same layout; not
# the cases whose outputs differ from the reference's on purpose or end in a fatal error.
SAMPLES = (corpus_samples() or ["<corpus absent>"]) + sorted(
    f"case:{p.name}"
    for p in CASES.glob("*")
    if (p / "expected" / "stampede.db").exists() and exact_case(p)
)


def _sample_dir(sample: str) -> Path:
    if sample.startswith("case:"):
        return CASES / sample.removeprefix("case:")
    require_corpus()
    return CORPUS / sample


SIDES = ("ref", "ours")
LOG_TIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}:", re.MULTILINE)

STATISTICS_VARIANTS = {
    "text": ["-s", "all"],
    "csv-hourly": ["-s", "all", "-f", "csv", "-t", "hour"],
}
ANALYZER_VARIANTS = {
    "default": [],
    "recurse-pre-invocation": ["-p", "pre,invocation", "-r"],
    "traverse-all": ["-T", "-p", "pre,invocation"],
    "files-mode": ["-f"],  # reads jobstate.log instead of the DB
}


@dataclass(frozen=True)
class Output:
    returncode: int
    stdout: str
    stderr: str
    files: dict[str, str]


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    require_corpus()
    return find_oracle()


def _copy_input(sample: str, dest: Path) -> None:
    shutil.copytree(_sample_dir(sample) / "input", dest, symlinks=True)
    for path in (dest, *dest.rglob("*")):  # the corpus is read-only; the copies must not be
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o200)


def _dag_base(run: Path) -> str:
    dag = yaml.safe_load((run / "braindump.yml").read_text())["dag"]
    return dag.removesuffix(".dag")


def _build_reference_side(sample: str, run: Path) -> None:
    expected = _sample_dir(sample) / "expected"
    _copy_input(sample, run)
    shutil.copyfile(expected / "stampede.db", run / f"{_dag_base(run)}.stampede.db")
    for jobstate in (expected / "jobstate").rglob("jobstate.log"):
        where = run / jobstate.parent.relative_to(expected / "jobstate")
        shutil.copyfile(jobstate, where / "jobstate.log")
        for marker in ("monitord.started", "monitord.done"):
            (where / marker).touch()


def _our_monitord() -> list[str]:
    script = Path(sys.executable).with_name("pegasus-monitord")
    return [str(script)] if script.exists() else [sys.executable, "-m", "monitord.cli"]


def _build_our_side(sample: str, run: Path, home: Path) -> None:
    _copy_input(sample, run)
    home.mkdir()
    proc = subprocess.run(
        [*_our_monitord(), "-r", f"{_dag_base(run)}.dag.dagman.out"],
        cwd=run,
        env={**os.environ, "TZ": CORPUS_TZ, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]


@pytest.fixture(scope="module", params=SAMPLES)
def sides(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """``{"ref": dir, "ours": dir}``, each holding the submit directory as ``run``."""
    sample: str = request.param
    _sample_dir(sample)  # skips a corpus sample when the corpus is absent
    base = tmp_path_factory.mktemp(sample.replace(":", "-"))
    roots = {side: base / side for side in SIDES}
    _build_reference_side(sample, roots["ref"] / "run")
    _build_our_side(sample, roots["ours"] / "run", base / "replay-home")
    for root in roots.values():
        (root / "home").mkdir()
    return roots


def normalise(text: str, root: Path) -> str:
    return LOG_TIME.sub("<time>:", text).replace(str(root), "<side>")


def _run_tool(command: Sequence[str], root: Path, outdir: str | None) -> Output:
    proc = subprocess.run(
        command,
        cwd=root,
        env={**os.environ, "TZ": CORPUS_TZ, "HOME": str(root / "home")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    files: dict[str, str] = {}
    if outdir is not None and (root / outdir).is_dir():
        for path in sorted((root / outdir).rglob("*")):
            if path.is_file():
                files[str(path.relative_to(root))] = normalise(path.read_text(), root)
    return Output(
        proc.returncode, normalise(proc.stdout, root), normalise(proc.stderr, root), files
    )


def _run_both(
    sides: dict[str, Path], command: Sequence[str], outdir: str | None = None
) -> dict[str, Output]:
    with ThreadPoolExecutor(len(sides)) as pool:
        futures = {
            side: pool.submit(_run_tool, command, root, outdir) for side, root in sides.items()
        }
        return {side: future.result() for side, future in futures.items()}


def _assert_same(out: dict[str, Output]) -> None:
    ref, ours = out["ref"], out["ours"]
    assert sorted(ours.files) == sorted(ref.files)
    for name, text in ref.files.items():
        assert ours.files[name] == text, f"{name} differs"
    assert ours.stdout == ref.stdout
    assert ours.stderr == ref.stderr
    assert ours.returncode == ref.returncode


@pytest.mark.parametrize("variant", STATISTICS_VARIANTS)
def test_pegasus_statistics(oracle: Oracle, sides: dict[str, Path], variant: str) -> None:
    outdir = f"stats-{variant}"
    command = [
        *oracle.tool("pegasus-statistics"),
        *STATISTICS_VARIANTS[variant],
        "-o",
        outdir,
        "run",
    ]
    out = _run_both(sides, command, outdir)
    ref = out["ref"]
    # The tool exits 0 even when it refuses the directory ("Error: Please run pegasus monitord...").
    assert ref.returncode == 0 and "Error: " not in ref.stdout + ref.stderr, ref.stdout + ref.stderr
    assert any(Path(name).stem == "summary" for name in ref.files), sorted(ref.files)
    _assert_same(out)


@pytest.mark.parametrize("variant", ANALYZER_VARIANTS)
def test_pegasus_analyzer(oracle: Oracle, sides: dict[str, Path], variant: str) -> None:
    command = [*oracle.tool("pegasus-analyzer"), *ANALYZER_VARIANTS[variant], "run"]
    out = _run_both(sides, command)
    ref = out["ref"]
    assert "Total jobs" in ref.stdout and "Traceback" not in ref.stderr, ref.stdout + ref.stderr
    _assert_same(out)


def test_tools_ignore_the_service_marks_table(
    oracle: Oracle, sides: dict[str, Path], tmp_path: Path
) -> None:
    """A database the service writes holds ``monitord_delivery_marks`` while its workflow runs
    (sinks/sql/marks.py): pegasus-statistics and pegasus-analyzer read it as the reference's."""
    import sqlalchemy

    from sinks.sql.marks import ensure_marks_table, write_marks

    if not sides["ref"].parent.name.startswith(("process_wf_success", "hierarchical_wf_success")):
        pytest.skip("one flat and one hierarchical sample are enough")
    marked = tmp_path / "ours"
    shutil.copytree(sides["ours"], marked, symlinks=True)
    (db,) = (marked / "run").glob("*.stampede.db")
    engine = sqlalchemy.create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        ensure_marks_table(conn)
        write_marks(conn, "stream", {"some-wf-uuid": 42})
    engine.dispose()
    assert (
        "monitord_delivery_marks"
        in sqlalchemy.inspect(sqlalchemy.create_engine(f"sqlite:///{db}")).get_table_names()
    )
    both = {"ref": sides["ref"], "ours": marked}
    _assert_same(
        _run_both(both, [*oracle.tool("pegasus-statistics"), "-s", "all", "-o", "st", "run"], "st")
    )
    _assert_same(_run_both(both, [*oracle.tool("pegasus-analyzer"), "run"]))
