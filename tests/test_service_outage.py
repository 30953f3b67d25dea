"""The service loses nothing when its database server goes away for longer than any retry budget.

Five played workflows (corpus and generated) follow in one service, each writing to its own
database on one server (the real one ``scripts/services.sh`` runs).  The server is stopped a few
seconds into the run and kept down while the workflows go on (and some end); the delivery
backoff is capped at 0.5 s by a property, so every workflow's sink fails many more times in a
row than the old lanes' budget of 10 retries (~150 s of their backoff) -- the point of a
4-minute outage, in a fraction of the wall time.  Then:

* during the outage /healthz is 503 and names every database as down (since when), the
  workflows that ended show "delivering", not ended;
* after it, /healthz is 200 and every database equals the workflow's SQLite replay (the
  corpus reference, or a replay of the generated source): each row exactly once;
* a kill -9 of the service in the middle of the outage, restarted once the server is back,
  gives the same, and no workflow is re-read from line 1: the ones still running resume from
  their last snapshot (monitord/daemon/resume.py), the ones that had ended deliver their spool
  (the printed figure says how many dagman.out bytes were read again).
"""

from __future__ import annotations

import json
import random
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from sinks.amqp.event_filter import EventFilter
from tests.conftest import CORPUS, require_corpus
from tests.dbcopy import copy_to_sqlite
from tests.proxies import free_port
from tests.servers import create_database, drop_database, require_server, service
from tests.test_amqp_broker import (
    Endpoint,
    assert_messages_match,
    expected_events,
    message_ids_increase,
    new_endpoint,
)
from tests.test_service import (
    attach,
    corpus_source,
    diff,
    finished,
    generate_source,
    replay_all,
    service_env,
    start_service,
    stop_service,
    wait_until,
    write_config,
)

CORPUS_SAMPLES = ["process_wf_success", "hierarchical_wf_failure"]
TEMPLATE = CORPUS / "process_wf_success" / "expected" / "stampede.db"
RATE = 25.0  # dagman.out lines per second of each player
OUTAGE = 15.0  # seconds the server is down
OLD_RETRY_BUDGET = 10  # what the service's lanes tried before disabling a sink for good


def _plan(tmp: Path, kind: str) -> list[dict[str, Any]]:
    base = require_server(kind)
    rng = random.Random(11)
    items = []
    for i in range(5):
        expected: tuple[Path | None, Path]
        if i < len(CORPUS_SAMPLES):
            sample = CORPUS_SAMPLES[i]
            src = corpus_source(sample, tmp / "src" / f"c{i}")
            expected = (
                CORPUS / sample / "expected" / "stampede.db",
                CORPUS / sample / "expected" / "jobstate",
            )
        else:
            src = generate_source(tmp / "src" / f"g{i}", rng.randint(8, 16), seed=300 + i)
            expected = (None, src)
        name = f"{make_url(base).database}_out{i}"
        items.append(
            {"src": src, "dest": tmp / "runs" / f"run{i}", "expected": expected, "db": name,
             "url": create_database(base, name)}
        )  # fmt: skip
    return items


def _get(port: int, path: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _start(tmp: Path, items: list[dict[str, Any]]) -> tuple[Any, dict[str, str], Path, int, list]:
    from monitord.tools.player import Player

    port = free_port()
    cfg = write_config(tmp, http_port=port)
    text = cfg.read_text()
    # a workflow resumed after its DAGMan's exit line ends after a few idle passes: short ones
    cfg.write_text(text.replace("idle_check_seconds = 30", "idle_check_seconds = 2"))
    env = service_env(tmp, cfg)
    props = tmp / "fast-retries.properties"
    # test-only clock: the backoff is capped at 0.5 s, so the outage outlasts every old budget
    props.write_text("pegasus.monitord.spool.max_backoff=0.5\n")
    replays = replay_all([i["src"] for i in items if i["expected"][0] is None], env)
    _, err = replays.communicate(timeout=300)
    assert replays.returncode == 0, err[-3000:]
    log = tmp / "service.log"
    proc = start_service(cfg, env, log)
    players = []
    for n, item in enumerate(items):
        item["dest"].parent.mkdir(parents=True, exist_ok=True)
        player = Player(str(item["src"]), str(item["dest"]), lines_per_second=RATE, seed=n)
        player.prepare()
        item["dagman_out"] = item["dest"] / next(item["src"].glob("*.dag.dagman.out")).name
        players.append(player)
    for item in items:
        done = attach(
            item["dagman_out"], env, "--no-dashboard", "--conf", str(props), "-d", item["url"]
        )
        assert done.returncode == 0, done.stderr
    for player in players:
        player.start()
    return proc, env, log, port, players


def _db(name: str) -> str:
    """The database of a destination name (``sql:<password-free URL>``)."""
    return name.rsplit("/", 1)[-1] if name.startswith("sql:") else name


def _row_by_row(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Log records of batches a database rejected and took row by row, or of rows it rejected
    then (e.g. a batch redone after it had committed; issue 23)."""
    return [r for r in records if "row by row" in r["event"] or r["event"] == "rejected row"]


def _outage_seen(port: int, items: list[dict[str, Any]]) -> dict[str, Any]:
    """Wait until every database is reported down by /healthz, and its retries pass the old
    budget; returns what /healthz and /status.json said then."""
    dbs = {i["db"] for i in items}

    last: list[Any] = []

    def all_down_long() -> bool:
        code, health = _get(port, "/healthz")
        _, status = _get(port, "/status.json")
        last[:] = [code, health, status["sinks"]]
        down = {_db(s["name"]) for s in health.get("sinks", []) if s["state"] == "down"}
        retries = {_db(s["name"]): s["retries"] for s in status["sinks"]}
        return dbs <= down and all(retries.get(n, 0) > OLD_RETRY_BUDGET for n in dbs)

    try:
        wait_until(all_down_long, OUTAGE, "every database down, beyond the old retry budget")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\nwanted {sorted(dbs)}\nlast seen {last}") from None
    code, health = _get(port, "/healthz")
    _, status = _get(port, "/status.json")
    assert code == 503 and health["status"] == "failing"
    for sink in health["sinks"]:
        assert sink["since"] and sink["since"] <= time.time() and "***" in sink["name"]
    assert all(s["permanent_failures"] == 0 for s in status["sinks"])
    return {"health": health, "status": status}


def _all_ended(players: list, items: list[dict[str, Any]], port: int, log: Path) -> None:
    """Every player done, every workflow ended, and the service lists none (all delivered)."""
    for player in players:
        player.join(300)
    for item in items:
        wait_until(lambda d=item["dest"]: finished(d), 120, f"{item['dest']} to end", log)
    wait_until(lambda: not _get(port, "/status.json")[1]["workflows"], 120, "all delivered", log)


def _without_resume_marks(run: Path, tmp: Path) -> Path:
    """``run``'s jobstate.log without the MONITORD_STARTED/FINISHED pair a daemon resumed after
    the workflow's end appends (as every daemon start does, the reference's included)."""
    lines = (run / "jobstate.log").read_text().splitlines(keepends=True)
    if (
        len(lines) >= 2
        and "INTERNAL *** MONITORD_STARTED ***" in lines[-2]
        and "INTERNAL *** MONITORD_FINISHED" in lines[-1]
    ):
        lines = lines[:-2]
    out = tmp / f"{run.name}-jobstate"
    out.mkdir()
    (out / "jobstate.log").write_text("".join(lines))
    return out


def _check(items: list[dict[str, Any]], tmp: Path, resumed: frozenset[str] = frozenset()) -> int:
    rows = 0
    failures = []
    for item in items:
        expected_db, expected_js = item["expected"]
        if expected_db is None:
            expected_db = next(item["src"].glob("*.stampede.db"))
        copy = tmp / f"{item['db']}.db"
        rows += sum(copy_to_sqlite(item["url"], copy, TEMPLATE).values())
        got = diff(str(expected_db), str(copy))
        if got.returncode != 0:
            failures.append(f"{item['dest']}: database differs\n{got.stdout[-2000:]}")
        run = item["dest"]
        if str(item["dagman_out"]) in resumed:
            run = _without_resume_marks(run, tmp)
        got = diff("--jobstate", str(expected_js), str(run))
        if got.returncode != 0:
            failures.append(f"{item['dest']}: jobstate.log differs\n{got.stdout[-2000:]}")
    assert not failures, "\n".join(failures)[:8000]
    return rows


@pytest.fixture
def outage_items(tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    require_corpus()
    kind = request.param
    items = _plan(tmp_path, kind)
    try:
        yield kind, items
    finally:
        service("start", kind)  # whatever happened, leave the server up
        for item in items:
            drop_database(require_server(kind), item["db"])


@pytest.mark.parametrize("outage_items", ["postgres", "mysql"], indirect=True)
def test_server_outage_beyond_every_retry_budget_loses_nothing(
    outage_items: Any, tmp_path: Path
) -> None:
    kind, items = outage_items
    proc, _env, log, port, players = _start(tmp_path, items)
    try:
        time.sleep(3)
        service("stop", kind)
        down_at = time.monotonic()
        seen = _outage_seen(port, items)
        delivering: set[str] = set()

        def note_delivering() -> bool:
            _, status = _get(port, "/status.json")
            delivering.update(
                w["wf_uuid"] for w in status["workflows"] if w["state"] == "delivering"
            )
            return time.monotonic() - down_at > OUTAGE

        wait_until(note_delivering, OUTAGE + 10, "the outage to last")  # fmt: skip
        service("start", kind)
        back_at = time.monotonic()
        _all_ended(players, items, port, log)
        drained = time.monotonic() - back_at
        code, health = _get(port, "/healthz")
        assert code == 200 and health["status"] == "ok", health
    finally:
        assert stop_service(proc) == 0
    text = log.read_text()
    assert "Traceback" not in text
    assert "disabling it" not in text, "a sink was given up during the outage"
    records = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    downs = [r for r in records if r["event"].startswith("sink down")]
    backs = [r for r in records if r["event"] == "sink is back"]
    assert len(downs) == len(items) and len(backs) == len(items), (downs, backs)
    # every batch went in whole after the outage: none redone row by row, no row rejected
    assert not _row_by_row(records), _row_by_row(records)[:3]
    rows = _check(items, tmp_path)
    # the short workflows ended during the outage: shown as delivering, not as ended
    assert delivering, "no workflow was seen 'delivering'"
    retries = {s["name"]: s["retries"] for s in seen["status"]["sinks"]}
    print(
        f"\n{kind}: 5 workflows, server down {OUTAGE:.0f} s; retries per database when checked "
        f"{sorted(retries.values())} (old budget {OLD_RETRY_BUDGET}); workflows seen "
        f"'delivering' {len(delivering)}; drained and ended {drained:.1f} s after the server "
        f"was back; {sum(b['drained_events'] for b in backs)} events drained; {rows} rows equal "
        "to the replays"
    )


@pytest.mark.parametrize("outage_items", ["postgres"], indirect=True)
def test_kill_9_during_an_outage_then_restart(outage_items: Any, tmp_path: Path) -> None:
    kind, items = outage_items
    proc, env, log, port, players = _start(tmp_path, items)
    cfg = Path(env["MONITORD_SERVICE_CONFIG"])
    try:
        time.sleep(3)
        service("stop", kind)
        _outage_seen(port, items)

        def some_delivering() -> bool:
            _, status = _get(port, "/status.json")
            return any(w["state"] == "delivering" for w in status["workflows"])

        # killed once some workflows ended (their events spooled) and others still run
        wait_until(some_delivering, 60, "a workflow ended during the outage", log)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=60) == -signal.SIGKILL
        sizes = {str(p): p.stat().st_size for p in tmp_path.glob("runs/**/*.dagman.out")}
        spooled = sum(p.stat().st_size for p in tmp_path.glob("runs/*/monitord.spool/*/*.seg"))
        service("start", kind)
        mark = log.stat().st_size
        proc = start_service(cfg, env, log)
        _all_ended(players, items, port, log)
    finally:
        assert stop_service(proc) == 0
    after = log.read_bytes()[mark:].decode()
    assert "Traceback" not in after
    records = [json.loads(line) for line in after.splitlines() if line.startswith("{")]
    followed = [r for r in records if r["event"] == "following workflow"]
    assert len(followed) == len(items)
    assert not _row_by_row(records), _row_by_row(records)[:3]
    recovering = [r["dagman_out"] for r in followed if r.get("recovering")]
    assert not recovering, f"re-read from line 1 after the kill: {recovering}"
    snapshots = [r for r in records if r["event"] == "resuming from a snapshot, not from line 1"]
    assert snapshots, "no running workflow resumed from its snapshot"
    running = {r["dagman_out"] for r in snapshots}
    # bytes read again: everything after each snapshot's offsets, up to the kill
    at_kill = sum(
        size
        for path, size in sizes.items()
        if any(path.startswith(str(Path(d).parent) + "/") for d in running)
    )
    reread = at_kill - sum(r["resumed_at_bytes"] for r in snapshots)
    from_spool = [r for r in records if r["event"].startswith("delivering first the events")]
    assert from_spool, "no spool left by the killed service was delivered first"
    ended_before = frozenset(r["dagman_out"] for r in followed if not r.get("resumed"))
    rows = _check(items, tmp_path, ended_before)
    skipped = sum(r["events"] for r in records if r["event"].startswith("skipping events"))
    print(
        f"\nkill -9 during a {kind} outage ({spooled} bytes spooled then): {len(followed)} "
        f"workflows followed again, none from line 1: {len(snapshots)} still running resumed "
        f"from their snapshot (read again: {reread} of the {at_kill} dagman.out bytes they had "
        f"at the kill; {skipped} events produced again and skipped as already in the "
        f"database), {len(ended_before)} that had ended delivered their spool; "
        f"{len(from_spool)} spools delivered first; {rows} rows equal to the replays"
    )


AMQP_SAMPLES = [
    "process_wf_success",
    "process_wf_failure",
    "hierarchical_wf_failure",
    "hierarchical_wf_success",
    "process_wf_success",
]


@pytest.fixture
def broker_endpoints() -> Any:
    made: list[Endpoint] = []
    yield require_server("amqp"), made
    for ep in made:
        ep.delete()


def test_broker_outage_in_the_service_delivers_every_event_in_order(
    tmp_path: Path, broker_endpoints: Any
) -> None:
    """Five played workflows publishing through the service's one broker connection;
    RabbitMQ stopped for longer than the sinks' backoff: every event once, in order."""
    from monitord.tools.player import Player

    require_corpus()
    amqp_base, endpoints = broker_endpoints
    port = free_port()
    cfg = write_config(tmp_path, http_port=port)
    env = service_env(tmp_path, cfg)
    items: list[dict[str, Any]] = []
    for i, sample in enumerate(AMQP_SAMPLES):
        ep = new_endpoint(endpoints, amqp_base, f"svc{i}")
        props = tmp_path / f"amqp{i}.properties"
        props.write_text(
            f"pegasus.catalog.workflow.amqp.url={ep.url}\npegasus.catalog.workflow.amqp.events=*\n"
        )
        src = corpus_source(sample, tmp_path / "src" / f"a{i}")
        dest = tmp_path / "runs" / f"run{i}"
        dest.parent.mkdir(parents=True, exist_ok=True)
        player = Player(str(src), str(dest), lines_per_second=RATE, seed=i)
        player.prepare()
        dagman_out = dest / next(src.glob("*.dag.dagman.out")).name
        items.append({"sample": sample, "ep": ep, "props": props, "dest": dest,
                      "dagman_out": dagman_out, "player": player})  # fmt: skip
    log = tmp_path / "service.log"
    proc = start_service(cfg, env, log)
    try:
        for item in items:
            done = attach(item["dagman_out"], env, "--no-dashboard", "--conf", str(item["props"]))
            assert done.returncode == 0, done.stderr
        for item in items:
            item["player"].start()
        time.sleep(3)
        service("stop", "amqp")
        down_at = time.monotonic()

        def broker_down() -> bool:
            code, health = _get(port, "/healthz")
            return code == 503 and any(
                s["name"].startswith("amqp:") and s["state"] == "down" and s["since"]
                for s in health.get("sinks", [])
            )

        wait_until(broker_down, OUTAGE, "/healthz to name the broker as down", log)
        time.sleep(max(0.0, OUTAGE - (time.monotonic() - down_at)))
        service("start", "amqp")
        for item in items:
            item["player"].join(300)
        for item in items:
            wait_until(lambda d=item["dest"]: finished(d), 120, f"{item['dest']} to end", log)
        wait_until(lambda: not _get(port, "/status.json")[1]["workflows"], 120, "all sent", log)
        code, health = _get(port, "/healthz")
        assert code == 200, health
    finally:
        service("start", "amqp")
        assert stop_service(proc) == 0
    text = log.read_text()
    assert "Traceback" not in text and "AMQP broker unavailable" in text
    total = 0
    for item in items:
        expected = expected_events(item["sample"], EventFilter.from_property("*"))
        got = item["ep"].consume(len(expected), quiet=1.0)
        assert_messages_match(got, expected)
        assert message_ids_increase(got)
        total += len(got)
        got_db = diff(str(CORPUS / item["sample"] / "expected" / "stampede.db"),
                      str(next(item["dest"].glob("*.stampede.db"))))  # fmt: skip
        assert got_db.returncode == 0, got_db.stdout[-3000:]
    print(f"\namqp: 5 workflows, broker down {OUTAGE:.0f} s; {total} events, each once, in order")
