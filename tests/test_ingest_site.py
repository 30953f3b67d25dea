"""Issue 20's site, end to end: 8 producers of every kind, one RabbitMQ, two ``monitord ingest``
processes, one central database (PostgreSQL, then MariaDB).

The producers, each with its own run directory, all at once, each given only the producer's
one setting (``pegasus.catalog.workflow.amqp.url`` + ``amqp.ingest = true`` in a properties
file passed with ``--conf``):

* 3 per-workflow ``pegasus-monitord -r`` replays (2 generated workflows, the hierarchical
  corpus sample: a root workflow and its sub-workflows in one stream);
* 2 per-workflow live ``pegasus-monitord -N`` daemons following workflows being played
  (``monitord.tools.player``: a generated workflow and a corpus sample);
* 1 ``monitord serve`` following 3 played workflows attached to it (``monitord attach``).

Then: every workflow's rows in the central database equal its own SQLite replay
(stampede-diff per root workflow; the file tables hold the union), every message was loaded
exactly once (no duplicate, no dead letter), the master tables list the 8 root workflows with
their states, and ``pegasus-statistics`` / ``pegasus-analyzer`` of the reference's venv print
the same for one workflow on the central database as on its own SQLite database.  Masked on
both sides, and nothing else: the tool's working directory, a database URL, the wall-clock
prefix of a log record; on MariaDB, decimals within 0.005 (its AVG() is a DECIMAL), and
pegasus-analyzer reads the central database's SQLite copy on MariaDB (it fails on any MariaDB
database), and both read it on PostgreSQL: the reference's venv has no PostgreSQL driver, and
with one (psycopg2) both tools fail on any PostgreSQL Stampede database, their own daemon's
too (``GroupingError: column "w.wf_id" must appear in the GROUP BY clause``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import aio_pika  # noqa: F401  (the harness needs it: skip cleanly without)
import pytest

from monitord.tools.player import Player
from sinks.amqp.stream import read_identity
from tests.conftest import CORPUS, copy_submit_dir, require_corpus
from tests.ingest_harness import (
    Broker,
    IngestProcess,
    assert_rows_match,
    wait_acked,
    wait_marks,
)
from tests.servers import require_server
from tests.test_service import attach, finished, start_service, stop_service, write_config
from tests.test_sql_servers import Generated, drop, fresh_db, replay_cmd, replay_env

JOBS = 15  # small generated workflows: the whole test stays within ~2 minutes per database
RATE = 2500.0  # played dagman.out lines per second


@dataclass
class Source:
    """One root workflow: where it comes from, how it is produced, what it must give."""

    name: str
    src: Path  # a finished submit directory
    how: str  # "replay" | "live" | "serve"
    wf_uuid: str = ""
    run: Path = Path()  # the producer's own run directory
    expected: Path = Path()  # its own SQLite replay


def _wf_uuid(submit: Path) -> str:
    for name in ("braindump.yml", "braindump.txt"):
        path = submit / name
        if path.exists():
            m = re.search(r"^wf_uuid[:\s]+\"?([0-9a-f-]{36})", path.read_text(), re.M)
            if m:
                return m.group(1)
    raise AssertionError(f"no wf_uuid in {submit}")


def _sources(base: Path) -> list[Source]:
    from tests.test_service import generate_source

    gen = [generate_source(base / f"src-gen{i}", JOBS, seed=2000 + i) for i in range(5)]
    corpus = {s: CORPUS / s / "input" for s in ("hierarchical_wf_success", "process_wf_success")}
    corpus["process_wf_failure"] = CORPUS / "process_wf_failure" / "input"
    made = [
        Source("gen0", gen[0], "replay"),
        Source("gen1", gen[1], "replay"),
        Source("hierarchical_wf_success", corpus["hierarchical_wf_success"], "replay"),
        Source("gen2", gen[2], "live"),
        Source("process_wf_success", corpus["process_wf_success"], "live"),
        Source("gen3", gen[3], "serve"),
        Source("gen4", gen[4], "serve"),
        Source("process_wf_failure", corpus["process_wf_failure"], "serve"),
    ]
    for s in made:
        s.wf_uuid = _wf_uuid(s.src)
    return made


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> list[Source]:
    """The 8 workflows and their own SQLite replays (made once for both databases)."""
    require_server("amqp")
    require_corpus()
    base = tmp_path_factory.mktemp("site")
    made = _sources(base)
    procs = []
    for s in made:
        run = base / "expected" / s.name
        out = copy_submit_dir(s.src, run / "run")
        s.expected = run / "expected.db"
        procs.append(
            subprocess.Popen(
                replay_cmd(out, "-d", f"sqlite:///{s.expected}"),
                cwd=out.parent,
                env=replay_env(base / "home"),
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
    return made


@pytest.fixture(params=["postgres", "mysql"])
def central(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    kind = request.param
    url = fresh_db(kind, f"ingest_site{os.getpid()}")  # other runs share the server
    yield kind, url
    drop(kind, url)


def _producer_props(tmp: Path, broker: Broker) -> Path:
    """The one setting of every producer (docs/ingest.md), as a site would write it."""
    props = tmp / "producer.properties"
    props.write_text(
        f"pegasus.catalog.workflow.amqp.url = {broker.url}\n"
        "pegasus.catalog.workflow.amqp.ingest = true\n"
        # a loaded test machine: give the spool time to reach the broker before exiting
        "pegasus.monitord.spool.drain_timeout = 600\n"
    )
    return props


def _dagman_out(s: Source) -> Path:
    """The root DAGMan output in the run directory (a player writes it after prepare())."""
    return s.run / next(s.src.glob("*.dag.dagman.out")).name


class Site:
    """The 8 producers of one run, started together."""

    def __init__(self, sources: list[Source], tmp: Path, props: Path) -> None:
        self.sources = sources
        self.tmp = tmp
        self.props = props
        self.daemons: list[tuple[str, subprocess.Popen[str]]] = []
        self.players: list[Player] = []
        self.service: subprocess.Popen[bytes] | None = None
        self.service_env: dict[str, str] = {}

    def _daemon(self, s: Source, *args: str) -> None:
        dagman_out = _dagman_out(s)
        cmd = [sys.executable, "-m", "monitord.cli", "--conf", str(self.props), "--no-dashboard"]
        self.daemons.append(
            (
                s.name,
                subprocess.Popen(
                    [*cmd, *args, dagman_out.name],
                    cwd=s.run,
                    env=replay_env(self.tmp / "home"),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                ),
            )
        )

    def _player(self, s: Source, seed: int) -> None:
        s.run.parent.mkdir(parents=True, exist_ok=True)
        player = Player(str(s.src), str(s.run), lines_per_second=RATE, seed=seed)
        player.prepare()
        self.players.append(player)

    def start(self) -> None:
        (self.tmp / "serve").mkdir()
        cfg = write_config(self.tmp / "serve")
        from tests.test_service import service_env

        self.service_env = service_env(self.tmp / "serve", cfg)
        self.service = start_service(cfg, self.service_env, self.tmp / "serve" / "service.log")
        for n, s in enumerate(self.sources):
            s.run = self.tmp / "producers" / s.name / "run"
            if s.how == "replay":
                copy_submit_dir(s.src, s.run)
                self._daemon(s, "-r")
            elif s.how == "live":
                self._player(s, n)
                self._daemon(s, "-N")
            else:
                self._player(s, n)
                done = attach(
                    _dagman_out(s), self.service_env, "--no-dashboard", "--conf", str(self.props)
                )
                assert done.returncode == 0, done.stderr
        for player in self.players:
            player.start()

    def finish(self) -> None:
        """Every producer done, its spool drained to the broker."""
        for player in self.players:
            player.join(300)
            assert not player.is_alive()
        for name, proc in self.daemons:
            _, err = proc.communicate(timeout=600)
            assert proc.returncode == 0, f"{name}: {err[-3000:]}"
            assert "events left in the spool" not in err, f"{name}: {err[-3000:]}"
        from tests.test_service import wait_until

        log = self.tmp / "serve" / "service.log"
        for s in self.sources:
            if s.how == "serve":
                wait_until(lambda r=s.run: finished(r), 300, f"{s.name} finished", log)
        assert self.service is not None
        assert stop_service(self.service) == 0, log.read_text()[-3000:]

    def stop(self) -> None:
        for player in self.players:
            player.stop.set()
        for _, proc in self.daemons:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        if self.service is not None and self.service.poll() is None:
            self.service.kill()
            self.service.wait()


def test_eight_producers_two_ingests_one_database(
    sources: list[Source], central: tuple[str, str], tmp_path: Path
) -> None:
    kind, url = central
    broker = Broker(require_server("amqp"))
    broker.declare_tap()
    # standby only after 20 s: both members own their partitions, even on a slow start
    procs = [IngestProcess(broker, url, tmp_path, f"{m}/2", standby_delay=20.0) for m in (1, 2)]
    site = Site(sources, tmp_path, _producer_props(tmp_path, broker))
    try:
        for p in procs:
            p.start()
        for p in procs:
            p.wait_healthy()  # the topology exists before any producer publishes
        site.start()
        site.finish()
        sent = broker.drain(broker.tap)
        producers = {read_identity(h).producer for _, h, _, _ in sent}
        assert len(producers) == len(sources), "one producer (spool) per run directory"
        wait_marks(url, sent)
        wait_acked(procs, len(sent))
        made = [Generated(Path(), s.wf_uuid, s.expected) for s in sources]
        # rows per root workflow, the file tables' union, master rows and states of all 8
        assert_rows_match(url, made, tmp_path)
        # exactly once: every message loaded by one process, none skipped or dead-lettered
        loaded = [p.metric("monitord_ingest_messages_total", outcome="loaded") for p in procs]
        assert sum(loaded) == len(sent), (loaded, len(sent))
        for outcome in ("duplicate", "dead"):
            assert (
                sum(p.metric("monitord_ingest_messages_total", outcome=outcome) for p in procs) == 0
            )
        used = {int(h["monitord-slot"]) % broker.partitions for _, h, _, _ in sent}
        assert [n > 0 for n in loaded] == [m in {u % 2 for u in used} for m in (0, 1)]
        password = urlsplit(broker.base).password or ""
        for p in procs:
            log = p.log.read_text()
            assert password not in log and "Traceback" not in log, log[-3000:]
        _same_reports(kind, url, next(s for s in sources if s.name == "gen2"), tmp_path)
        print(f"\n[site {kind}] {len(sent)} messages of {len(producers)} producers, {loaded}")
    finally:
        site.stop()
        for p in procs:
            p.stop()
        broker.delete()


# --------------------------------------------------------------------- the reference's tools


def _tool_url(kind: str, url: str, oracle_python: Path, tmp: Path) -> str:
    """The central database as the reference's tools open it (SQLAlchemy 1.3 of its venv)."""
    parts = urlsplit(url)
    if kind == "mysql":
        return url.replace(f"{parts.scheme}://", "mysql+pymysql://", 1)
    # PostgreSQL: the reference's venv has no driver for it, and its tools' queries fail on
    # PostgreSQL with one (GROUP BY); they read the central database's row-for-row copy
    # (tests/dbcopy.py, ids kept) that assert_rows_match made
    return f"sqlite:///{tmp / 'central.db'}"


#: what legitimately differs between the two databases' reports, masked on both sides
_MASKS = [
    (re.compile(r"(postgresql|mysql)\+\w+://\S+|sqlite:///\S+"), "<db-url>"),
    (re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}:", re.M), "<time>:"),
]


def _mask(text: str, root: Path) -> str:
    text = text.replace(str(root), "<root>")
    for pattern, repl in _MASKS:
        text = pattern.sub(repl, text)
    return text


Report = tuple[int, str, dict[str, str]]  # exit status, output, files


def _report(command: list[str], cwd: Path, outdir: str | None) -> Report:
    proc = subprocess.run(
        command,
        cwd=cwd,
        env=replay_env(cwd / "home"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    files = {}
    if outdir is not None:
        for path in sorted((cwd / outdir).rglob("*")):
            if path.is_file():
                files[str(path.relative_to(cwd / outdir))] = _mask(path.read_text(), cwd)
    return proc.returncode, _mask(proc.stdout + proc.stderr, cwd), files


_DECIMAL = re.compile(r"-?\d+\.\d+")


def _decimals_within(got: Report, want: Report, tolerance: float = 0.005) -> tuple[Report, Report]:
    """``got`` with each line that is ``want``'s line but for decimal numbers within
    ``tolerance`` (and the column padding around them) replaced by ``want``'s line."""

    def same(p: str, q: str) -> bool:
        if p == q:
            return True
        if not (_DECIMAL.fullmatch(p) and _DECIMAL.fullmatch(q)):
            return False
        return abs(float(p) - float(q)) <= tolerance

    def align(a: str, b: str) -> str:
        la, lb = a.splitlines(keepends=True), b.splitlines(keepends=True)
        if len(la) != len(lb):
            return a
        out = []
        for x, y in zip(la, lb, strict=True):
            tx, ty = x.split(), y.split()
            close = len(tx) == len(ty) and all(same(p, q) for p, q in zip(tx, ty, strict=True))
            out.append(y if close else x)
        return "".join(out)

    files = {k: align(v, want[2].get(k, "")) for k, v in got[2].items()}
    return (got[0], align(got[1], want[1]), files), want


def _same_reports(kind: str, url: str, source: Source, tmp: Path) -> None:
    """pegasus-statistics (every statistic) and pegasus-analyzer of the reference's venv, run on
    the workflow's submit directory of its own replay, once with that replay's SQLite database
    and once with the central database (``--conf`` naming ``pegasus.catalog.workflow.url``)."""
    from tests.oracle import find_oracle

    oracle = find_oracle()
    run = source.expected.parent / "run"
    side = tmp / "reports"
    side.mkdir()
    copy = f"sqlite:///{tmp / 'central.db'}"  # assert_rows_match's row-for-row copy (ids kept)
    central = _tool_url(kind, url, oracle.python, tmp)
    dbs = {
        "own": (f"sqlite:///{source.expected}",) * 2,
        # (statistics, analyzer): the reference's pegasus-analyzer fails on every MariaDB
        # Stampede database, ours or its own daemon's ("unsupported operand type(s) for *:
        # 'float' and 'decimal.Decimal'": PyMySQL gives SUM() as a Decimal), so on MariaDB it
        # reads the central database's copy
        "central": (central, copy if kind == "mysql" else central),
    }
    out = {}
    for name, (stats_db, analyzer_db) in dbs.items():
        cwd = side / name  # the same relative names on both sides
        cwd.mkdir()
        (cwd / "stats.properties").write_text(f"pegasus.catalog.workflow.url = {stats_db}\n")
        (cwd / "analyzer.properties").write_text(f"pegasus.catalog.workflow.url = {analyzer_db}\n")
        stats = [*oracle.tool("pegasus-statistics"), "--conf", "stats.properties", "-s", "all"]
        analyzer = [*oracle.tool("pegasus-analyzer"), "--conf", "analyzer.properties", str(run)]
        out[name] = (
            _report([*stats, "-o", "stats", str(run)], cwd, "stats"),
            _report(analyzer, cwd, None),
        )
    (own_stats, own_analyzer), (central_stats, central_analyzer) = out["own"], out["central"]
    assert own_stats[0] == 0 and "summary.txt" in own_stats[2], own_stats[1][-3000:]
    assert "Total jobs" in own_analyzer[1], own_analyzer[1][-3000:]
    if kind == "mysql":
        # MariaDB's AVG() of an integer column is a DECIMAL: the reference's tool turns the mean
        # of maxrss (KB) into MB differently than from SQLite's float AVG, so breakdown.txt's
        # "Mean (mem)" may differ in its third decimal; decimals are compared within 0.005
        central_stats, own_stats = _decimals_within(central_stats, own_stats)
    assert central_stats == own_stats
    assert central_analyzer == own_analyzer
    shutil.rmtree(side)
