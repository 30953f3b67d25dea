"""``--sql-process`` (issue 30): a replay's SQL destinations written by a child process.

The child is a sink of the one runtime (``sinks/runtime/process_sink.py``): its database is the
thread's, row for row (stampede-diff: the corpus and a generated workflow), also when the child
is killed in the middle (the delivery retries the batch in a new child: every row exactly once)
or in its first open (the retry rotates the file no second time);
a permanent error from the child stays permanent; the child shows no password in its title and
does not outlive a daemon killed with SIGKILL; the option is refused where it does not apply.
Without either option a replay chooses by the size of its dagman.out, the usable cores and the
load average (``monitord/daemon/outputs.py`` ``loader_in_process``).
The Ctrl-C/SIGTERM stop with it is in tests/test_replay_interrupt.py, its threads and process
in tests/test_architecture.py.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from monitord.core.events import StampedeEvent
from monitord.daemon.config import MonitorConfig
from monitord.daemon.outputs import PROCESS_FROM, loader_in_process
from monitord.tools.synthetic import generate
from sinks.runtime.base import SinkError
from sinks.runtime.process_sink import ProcessSink
from sinks.sql.sink import SQLSink, sqlite_file
from tests.conftest import CORPUS, CORPUS_TZ, replay_copy, require_corpus
from tests.replays import assert_same_rows, generated_and_replayed, replay, replayed
from tests.test_cli_commands import MONITORD, PEGASUS_MONITORD

SECRET = "Sq1Pr0cessS3cret"


def children_titled(word: str) -> dict[int, str]:
    """Every process whose command line (its title) holds ``word``: pid -> title."""
    found = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if title.startswith("monitord sink-") and word in title:
                found[int(pid)] = title
    return found


# ---------------------------------------------------------------- the crossing


@pytest.mark.quick
def test_the_crossing_gives_back_the_same_classes_values_and_order() -> None:
    from monitord.core.eventbase import UNSET, Fixed
    from monitord.core.events import InvStart, make_event
    from sinks.runtime.crossing import decode_events, encode_events

    fixed = Fixed(xwf_id="u", root_xwf_id="r", wf_ts=7, submit_dir="/s")
    events = [
        InvStart(xwf_id="u", job_id="j", job_inst_id=1, inv_id=2, fixed=fixed),  # ts UNSET
        make_event("xwf.start", {"xwf.id": "u", "ts": 1, "restart_count": 0}),  # wire order
        InvStart(xwf_id="u", job_id="j", job_inst_id=1, inv_id=3, ts=5).sent_last("job_id"),
        make_event("no.such.kind", {"b": 2, "a": 1}),  # generic
    ]
    back = decode_events(encode_events(events))
    assert [type(e) for e in back] == [type(e) for e in events]
    assert back == events
    assert [e.wire_items() for e in back] == [e.wire_items() for e in events]  # the order too
    first = back[0]
    assert isinstance(first, InvStart) and first.fixed == fixed
    assert first.ts is UNSET  # the one UNSET, not a copy


@pytest.mark.quick
def test_a_sink_that_reads_less_is_sent_less() -> None:
    """``Reads``: the kinds the sink writes nothing for stay behind; without ``wire`` the
    events come back with their fields, not their wire order (the SQL loader's view)."""
    from monitord.core.events import InvEnd, InvStart, make_event
    from sinks.runtime.capabilities import Reads
    from sinks.runtime.crossing import decode_events, encode_events, kept
    from sinks.sql.sink import SQL_READS

    reads = Reads(kinds=frozenset({InvEnd}))
    events = [
        InvStart(xwf_id="u", job_id="j", job_inst_id=1, inv_id=2),
        InvEnd(xwf_id="u", job_id="j", job_inst_id=1, inv_id=2, ts=5, exitcode=0).sent_last(
            "job_id"
        ),
        make_event(
            "job_inst.composite",
            {"xwf.id": "u", "job.id": "j", "job_inst.id": 1, "ts": 5, "js.id": 1, "status": 0},
        ),
    ]
    sent = kept(events, reads)
    assert sent == [events[1]]
    (back,) = decode_events(encode_events(sent, wire=False))
    assert back == events[1] and back._wire is None and back.extra == {}
    assert back.wire_items()[:2] == [("xwf.id", "u"), ("job.id", "j")]  # the kind's own order
    assert kept(events, None) is events
    assert [type(e) for e in kept(events, SQL_READS)] == [InvEnd]  # no rows for the others


# ---------------------------------------------------------------- the sink, in process


class Scripted:
    """A sink that fails as told (picklable: it crosses into the child)."""

    name = "scripted"

    def __init__(self, retryable: bool | None, destination: str = "scripted://x") -> None:
        self.retryable = retryable  # None: writes succeed
        self.destination = destination

    def open(self) -> None:
        pass

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        if self.retryable is not None:
            raise SinkError("scripted failure", retryable=self.retryable)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def _events() -> list[StampedeEvent]:
    from monitord.core.events import make_event

    return [make_event("xwf.start", {"xwf.id": "u", "ts": 1, "restart_count": 0})]


@pytest.mark.parametrize("retryable", [False, True])
def test_the_childs_error_keeps_its_kind(monkeypatch: pytest.MonkeyPatch, retryable: bool) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)  # the child imports tests.*
    sink = ProcessSink(Scripted(retryable))  # type: ignore[arg-type]
    sink.open()
    try:
        with pytest.raises(SinkError) as exc:
            sink.write_batch(_events())
        assert exc.value.retryable is retryable and "scripted failure" in str(exc.value)
        assert sink.children == 1  # an error is not a death: the same child goes on
    finally:
        sink.close()


def test_a_dead_child_is_retryable_and_the_retry_opens_it_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    reopened: list[Scripted] = []

    def again(sink: Scripted) -> Scripted:
        reopened.append(sink)
        return sink

    sink = ProcessSink(Scripted(None), again=again)  # type: ignore[arg-type]
    sink.open()
    try:
        sink.write_batch(_events())
        assert sink.pid is not None
        os.kill(sink.pid, signal.SIGKILL)
        with pytest.raises(SinkError) as exc:
            sink.write_batch(_events())
        assert exc.value.retryable and "gone" in str(exc.value)
        sink.write_batch(_events())  # the delivery's retry: a new child
        assert sink.children == 2 and len(reopened) == 1
    finally:
        sink.close()


def test_the_child_has_one_route_to_its_sink(tmp_path: Path) -> None:
    """mend30m: whatever a SQL destination is in the daemon (its recipe, or the sink built
    there), the loader child is sent a recipe and builds its sink from it (``serve_sink``
    has no second route); a built sink is handed in as it is, and a new child after a death
    gets the reopened one either way."""
    from monitord.daemon.outputs import in_child_process
    from sinks.runtime.factory import SinkRequest
    from sinks.runtime.process_sink import Handed, recipe_of
    from sinks.sql.recipe import SQLRecipe

    built = SQLSink(f"sqlite:///{tmp_path}/w.db", restart=True)
    handed = recipe_of(built)
    assert isinstance(handed, Handed) and handed.build() is built and handed.name == "sql"
    recipe = SQLRecipe(
        SinkRequest(f"sqlite:///{tmp_path}/w.db", run_dir=str(tmp_path), restart=True), None
    )
    assert recipe_of(recipe) is recipe
    for sink in (built, recipe):
        child = in_child_process(sink)
        assert isinstance(child, ProcessSink)
        again = child._again(sink)  # type: ignore[misc]
        assert type(again) is type(sink) and again is not sink
    assert in_child_process(Scripted(None)).name == "scripted"  # type: ignore[arg-type]


class Recording(Scripted):
    """A sink that reads ``xwf.start`` events by field only, and notes each batch it gets."""

    def __init__(self, path: Path) -> None:
        from monitord.core.events import EVENT_CLASSES
        from sinks.runtime.capabilities import Reads

        super().__init__(None)
        self.path = path
        self.reads = Reads(kinds=frozenset({EVENT_CLASSES["xwf.start"]}))

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        with self.path.open("a") as out:
            out.write(repr([(e.name, e._wire) for e in events]) + "\n")


def test_the_child_gets_what_its_sink_reads(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from monitord.core.events import InvStart

    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    unread = InvStart(xwf_id="u", job_id="j", job_inst_id=1, inv_id=2)
    sink = ProcessSink(Recording(tmp_path / "got"))  # type: ignore[arg-type]
    sink.open()
    try:
        sink.write_batch([unread, *_events(), unread])
        sink.write_batch([unread])  # nothing it reads: nothing sent
    finally:
        sink.close()
    assert (tmp_path / "got").read_text().splitlines() == ["[('xwf.start', None)]"]


class DiesInItsFirstOpen(SQLSink):
    """The SQL sink of a replay whose first loader child dies once its open has rotated
    the file and made the new one (picklable: it crosses into the child)."""

    def open(self) -> None:
        super().open()
        died = Path(str(sqlite_file(self._url)) + ".died")
        if not died.exists():
            died.touch()
            os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.parametrize("earlier", [True, False], ids=["earlier-database", "no-database"])
def test_a_child_dead_in_its_first_open_rotates_the_file_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, earlier: bool
) -> None:
    """The delivery's retry of the first open opens the file the dead child made, it does not
    rotate that aside (a stray ``.001``, the earlier database's backup emptied)."""
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    db = tmp_path / "w.db"
    if earlier:
        with sqlite3.connect(db) as conn:
            conn.execute("CREATE TABLE earlier (run TEXT)")
            conn.execute("INSERT INTO earlier VALUES ('the earlier replay')")
        conn.close()
    sink = ProcessSink(DiesInItsFirstOpen(f"sqlite:///{db}", restart=True), again=SQLSink.reopening)
    with pytest.raises(SinkError) as exc:
        sink.open()
    assert exc.value.retryable and "gone" in str(exc.value)
    try:
        sink.open()  # the delivery's retry: a new child
        sink.write_batch(_events())
    finally:
        sink.close()
    assert sink.children == 2
    backups = sorted(p.name for p in tmp_path.glob("w.db.[0-9]*"))
    assert backups == (["w.db.000"] if earlier else [])
    if earlier:
        with sqlite3.connect(tmp_path / "w.db.000") as conn:
            assert conn.execute("SELECT run FROM earlier").fetchall() == [("the earlier replay",)]
        conn.close()
    with sqlite3.connect(db) as conn:  # the new database, made by the first child
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert "workflow" in tables and "earlier" not in tables


def test_the_childs_title_shows_no_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    url = f"postgresql://monitord:{SECRET}@db.example/stampede"
    sink = ProcessSink(Scripted(None, destination=url))  # type: ignore[arg-type]
    sink.open()
    try:
        title = Path(f"/proc/{sink.pid}/cmdline").read_bytes()
        deadline = time.monotonic() + 30
        while b"monitord sink-scripted" not in title and time.monotonic() < deadline:
            time.sleep(0.05)  # (set once the payload is read: it answered, so it is)
            title = Path(f"/proc/{sink.pid}/cmdline").read_bytes()
        assert b"monitord sink-scripted postgresql://monitord:***@db.example" in title
        assert SECRET.encode() not in title
    finally:
        sink.close()


# ---------------------------------------------------------------- the default: by size and cores

BIG = PROCESS_FROM
IDLE, BUSY = 1.5, 1.51  # 1-minute load averages on two cores: half a core idle, or not
CASES = [  # (replay, option, dagman.out size, usable cores, load) -> a child process?
    ((True, None, BIG, 2, IDLE), True),
    ((True, None, BIG - 1, 2, 0.0), False),  # below the size: the thread
    ((True, None, 4_458_727, 2, IDLE), True),  # 2,000 generated jobs (bench/README.md, small30g)
    ((True, None, BIG, 1, 0.0), False),  # one usable core: nothing to gain
    ((True, None, BIG, 2, BUSY), False),  # no core to spare
    ((True, False, BIG, 2, 0.0), False),  # --sql-thread
    ((True, True, 10, 1, 9.0), True),  # --sql-process, whatever the size, cores and load
    ((False, None, BIG, 2, 0.0), False),  # following, -N, the service: never
]


@pytest.mark.parametrize(("case", "child"), CASES)
def test_the_loader_runs_in_a_child_for_a_large_replay_with_a_spare_core(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: tuple[Any, ...], child: bool
) -> None:
    replay, option, size, cores, load = case
    out = tmp_path / "w.dag.dagman.out"
    with open(out, "wb") as fh:
        fh.truncate(size)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    cfg = MonitorConfig(str(out), replay=replay, sql_process=option)
    assert loader_in_process(cfg) is child


def test_the_pages_and_the_help_give_the_rules_size() -> None:
    """Every size in MiB README.md, docs/architecture.md and ``--help`` give is the rule's, but
    in a sentence that names another constant (the read-ahead's ``SPILL``: test_doc_claims)."""
    from monitord.cli.options import REPLAY, build_parser

    root = Path(__file__).resolve().parent.parent
    texts = [(root / p).read_text() for p in ("README.md", "docs/architecture.md")]
    texts.append(" ".join(build_parser("monitord replay", REPLAY).format_help().split()))
    other = re.compile(r"`(?!PROCESS_FROM`)[A-Z][A-Z_]+`")
    sizes = [
        [
            n
            for part in text.split(". ")
            if not other.search(part)
            for n in re.findall(r"(\d+) MiB", part)
        ]
        for text in texts
    ]
    assert all(sizes), sizes
    assert {int(n) for found in sizes for n in found} == {PROCESS_FROM >> 20}, sizes


def test_the_thread_option_is_parsed_into_the_config() -> None:
    """``--sql-thread`` / ``--sql-process`` / neither: False / True / None (the rule), and a
    followed workflow's config says thread whatever the option."""
    from monitord.cli.options import REPLAY, build_parser
    from monitord.daemon.config import Options, monitor_config

    got = []
    for argv in (["--sql-thread"], ["--sql-process"], []):
        args = build_parser("monitord replay", REPLAY).parse_args([*argv, "x.dagman.out"])
        got.append(monitor_config(Options.from_args(args), {}).sql_process)
    assert got == [False, True, None]
    assert monitor_config(Options(dagman_out="x.dagman.out"), {}).sql_process is False


# ---------------------------------------------------------------- whole replays


def test_the_corpus_database_is_the_threads(tmp_path: Path) -> None:
    require_corpus()
    case = CORPUS / "process_wf_success"
    thread = replay_copy(case / "input", tmp_path / "thread", "--sql-thread")
    child = replay_copy(case / "input", tmp_path / "child", "--sql-process")
    (db,) = child.glob("*.stampede.db")
    assert_same_rows(case / "expected" / "stampede.db", db)
    assert_same_rows(next(thread.glob("*.stampede.db")), db)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A generated 300-job workflow and its database replayed by the thread."""
    return generated_and_replayed(tmp_path_factory.mktemp("gen"), "sqlp", 0.05, "--sql-thread")


def test_a_generated_workflows_database_is_the_threads(
    generated: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    out, expected, home = generated
    db = tmp_path / "child.db"
    replayed(out, db, home, "-q", "--sql-process")
    assert_same_rows(expected, db)


def test_a_child_killed_mid_replay_leaves_every_row_once(tmp_path: Path) -> None:
    """SIGKILL the loader child once it has committed a batch: the delivery retries the batch
    in hand in a new child, which neither rotates the file nor rewrites a committed row."""
    out = generate(tmp_path / "run", 1500, seed=31, retry_fraction=0.05, name="kill").dagman_out
    home = tmp_path / "home"
    home.mkdir()
    expected = tmp_path / "thread.db"
    replayed(out, expected, home, "-q", "--sql-thread")
    db = tmp_path / "killed.db"
    log = tmp_path / "stderr"
    with open(log, "w") as err:
        proc = replay(out, db, home, "--sql-process", "-v", stderr=err)
        killed = None
        deadline = time.monotonic() + 300
        while killed is None and proc.poll() is None and time.monotonic() < deadline:
            if "sink=sql written=" in log.read_text():  # a batch committed
                (killed,) = children_titled(f"monitord sink-sql sqlite:///{db}")
                os.kill(killed, signal.SIGKILL)
            time.sleep(0.01)
        proc.wait(timeout=600)
    text = log.read_text()
    assert killed is not None, "the replay ended before the child could be killed"
    assert proc.returncode == 0, text[-3000:]
    assert "sink process died; its batch is retried in a new one" in text, text[-3000:]
    assert text.count("sink process started") == 2, text[-3000:]
    assert_same_rows(expected, db)
    assert not list(tmp_path.glob("killed.db.*")), "the new child rotated the file again"


def test_a_daemon_killed_with_sigkill_leaves_no_child(
    generated: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    out, _, home = generated
    db = tmp_path / "orphan.db"
    proc = replay(out, db, home, "-q", "--sql-process")
    title = f"monitord sink-sql sqlite:///{db}"
    deadline = time.monotonic() + 300
    while not children_titled(title):
        assert proc.poll() is None and time.monotonic() < deadline, "no child started"
        time.sleep(0.01)
    proc.kill()
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 60  # the batch in hand, at most, then the closed pipe
    while children_titled(title) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert children_titled(title) == {}


@pytest.mark.parametrize("option", ["--sql-process", "--read-ahead"])
@pytest.mark.parametrize("argv", [[*MONITORD, "follow"], PEGASUS_MONITORD])
def test_the_option_is_refused_without_a_replay(
    tmp_path: Path, argv: list[str], option: str
) -> None:
    """The replay-only options (the SQL child, the read-ahead worker) refused in one line."""
    out = generate(tmp_path / "run", 2, seed=1, name="refused").dagman_out
    proc = subprocess.run(
        [*argv, option, str(out)],
        env={**os.environ, "HOME": str(tmp_path), "TZ": CORPUS_TZ},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().endswith(
        f"error: {option} applies to a replay only (-r, monitord replay)"
    ), proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
