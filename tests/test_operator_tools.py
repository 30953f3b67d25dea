"""The operators' tools shipped in conf/: Prometheus alerting rules and a Grafana dashboard.

* ``promtool check rules`` accepts the rules (and refuses a broken copy: the check can fail),
  and ``promtool test rules`` (tests/data/prometheus) shows each alert fires when it should;
* every query of the dashboard and of the rules names only metrics a live ``monitord serve``
  exports on /metrics (``up`` aside, Prometheus's own);
* a real Prometheus (Debian's ``prometheus``) scrapes a running service whose PostgreSQL
  database goes away -- behind a TCP proxy the test cuts, the shared server itself keeps
  running -- and ``MonitordSinkDown`` and ``MonitordSpoolGrowing`` fire during the outage and
  clear after it (the rules' ``for:`` durations shortened to seconds, their expressions as
  shipped); the database then equals the reference's, row for row.

Without ``prometheus``/``promtool`` these tests skip, except in CI (CI=true) where they fail:
scripts/install-test-tools.sh installs them there.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy.engine import make_url

from tests.conftest import CORPUS, PROJECT, require_corpus
from tests.dbcopy import copy_to_sqlite
from tests.proxies import Proxy, free_port
from tests.servers import create_database, drop_database, missing, require_server
from tests.test_service import (
    attach,
    corpus_source,
    diff,
    finished,
    service_env,
    start_service,
    stop_service,
    wait_until,
    write_config,
)

RULES = PROJECT / "conf" / "prometheus" / "monitord-rules.yml"
RULES_TESTS = PROJECT / "tests" / "data" / "prometheus" / "monitord-rules-test.yml"
DASHBOARD = PROJECT / "conf" / "grafana" / "monitord-dashboard.json"
TEMPLATE = CORPUS / "process_wf_success" / "expected" / "stampede.db"
# the alerts a database outage raises within a test's time (the others need an hour, or a
# workflow or plugin in trouble): they fire during it and clear after
OUTAGE_ALERTS = ("MonitordSinkDown", "MonitordSpoolGrowing")
# PromQL words that are not metric names (functions are recognised by the "(" after them)
KEYWORDS = frozenset(
    {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right"}
    | {"bool", "offset", "inf", "nan"}
)


def need_tool(name: str) -> str:
    path = shutil.which(name)
    if path:
        return path
    reason = f"{name} not installed (Debian package `prometheus`; scripts/install-test-tools.sh)"
    missing(reason)


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (not its functions, labels or keywords)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # strings (label values, regexes)
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # range and subquery selectors
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    names = set()
    for m in re.finditer(r"(?<![\w.])[A-Za-z_:][A-Za-z0-9_:]*", text):  # not in 5m, 1e3
        if text[m.end() :].lstrip().startswith("(") or m.group() in KEYWORDS:
            continue
        names.add(m.group())
    return names


def exported_names(exposition: str) -> set[str]:
    """Metric names of a /metrics page, as PromQL sees them (a counter's with ``_total``)."""
    names = set()
    for name, kind in re.findall(r"^# TYPE (\S+) (\S+)$", exposition, re.M):
        names.add(name if kind != "counter" or name.endswith("_total") else name + "_total")
    return names


def dashboard_exprs() -> list[str]:
    doc = json.loads(DASHBOARD.read_text())
    panels = [p for p in doc["panels"] if p["type"] != "row"]
    assert panels, "the dashboard has no panels"
    exprs = []
    for panel in panels:
        targets = panel.get("targets") or []
        assert targets, f"panel {panel['title']!r} has no query"
        exprs += [t["expr"] for t in targets]
    for var in doc["templating"]["list"]:
        if var["type"] == "query":
            query = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
            exprs.append(re.sub(r"^label_values\((.*),\s*\w+\)$", r"\1", query))
    return exprs


def rule_exprs() -> dict[str, str]:
    doc = yaml.safe_load(RULES.read_text())
    return {r["alert"]: r["expr"] for g in doc["groups"] for r in g["rules"]}


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return bytes(resp.read())


# ------------------------------------------------------------------------------ static checks


def test_promtool_accepts_the_rules_and_refuses_a_broken_copy(tmp_path: Path) -> None:
    promtool = need_tool("promtool")
    got = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True, text=True)
    assert got.returncode == 0, got.stdout + got.stderr
    assert f"SUCCESS: {len(rule_exprs())} rules found" in got.stdout
    assert {"MonitordSinkDown", "MonitordSinkDisabled", "MonitordSpoolGrowing"} <= set(rule_exprs())
    assert {"MonitordUndeliveredTooOld", "MonitordWorkflowLagging", "MonitordPluginErrors"} <= set(
        rule_exprs()
    )
    broken = tmp_path / "rules.yml"
    broken.write_text(RULES.read_text().replace("monitord_sink_disabled > 0", "monitord_sink_disabled >", 1))  # fmt: skip
    got = subprocess.run([promtool, "check", "rules", str(broken)], capture_output=True, text=True)
    assert got.returncode != 0


def test_each_alert_fires_when_it_should_and_only_then() -> None:
    """promtool's rule unit tests: synthetic series for every alert, and near misses."""
    promtool = need_tool("promtool")
    got = subprocess.run(
        [promtool, "test", "rules", RULES_TESTS.name],
        cwd=RULES_TESTS.parent,
        capture_output=True,
        text=True,
    )
    assert got.returncode == 0, got.stdout + got.stderr
    tested = set(re.findall(r"alertname: (\w+)", RULES_TESTS.read_text()))
    assert tested == set(rule_exprs()), "every alert has a unit test"


def test_metric_names_of_an_expression() -> None:
    expr = (
        'sum by (sink) (rate(monitord_a_total{instance=~"$i", x="y(z)"}[5m])) '
        "> 0 and on (sink) monitord_b unless time() - c_d offset 5m > bool 3600"
    )
    assert metric_names(expr) == {"monitord_a_total", "monitord_b", "c_d"}


def test_dashboard_and_rules_read_only_exported_metrics(tmp_path: Path) -> None:
    port = free_port()
    cfg = write_config(tmp_path, http_port=port)
    service = start_service(cfg, service_env(tmp_path, cfg), tmp_path / "service.log")
    pages: list[bytes] = []

    def scraped() -> bool:
        try:
            pages.append(_get(f"http://127.0.0.1:{port}/metrics"))
        except OSError:
            return False  # the endpoint starts after the socket
        return True

    try:
        wait_until(scraped, 30, "/metrics to answer")
        exported = exported_names(pages[-1].decode())
    finally:
        assert stop_service(service) == 0
    assert "monitord_sink_up" in exported and "monitord_plugin_errors_total" in exported
    used = {name for expr in dashboard_exprs() for name in metric_names(expr)}
    assert len(used) >= 15, used  # the parsing found the queries' metrics
    assert used - exported == set(), "the dashboard reads metrics monitord does not export"
    in_rules = {name for expr in rule_exprs().values() for name in metric_names(expr)}
    assert in_rules - exported == {"up"}, "the rules read metrics monitord does not export"


# ------------------------------------------------------------------- a real Prometheus server


def _prometheus(tmp: Path, target_port: int) -> tuple[subprocess.Popen[bytes], int]:
    """A Prometheus scraping 127.0.0.1:``target_port`` every second, with the shipped rules
    (their ``for:`` shortened to 2 s), evaluated every second."""
    rules = yaml.safe_load(RULES.read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            if "for" in rule:
                rule["for"] = "2s"
    (tmp / "rules.yml").write_text(yaml.safe_dump(rules))
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(tmp / "rules.yml")],
        "scrape_configs": [
            {"job_name": "monitord", "static_configs": [{"targets": [f"127.0.0.1:{target_port}"]}]}
        ],
    }
    (tmp / "prometheus.yml").write_text(yaml.safe_dump(config))
    port = free_port()
    log = (tmp / "prometheus.log").open("ab")
    proc = subprocess.Popen(
        [
            need_tool("prometheus"),
            f"--config.file={tmp / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=log,
    )
    log.close()
    deadline = time.time() + 60
    while time.time() < deadline:
        assert proc.poll() is None, (tmp / "prometheus.log").read_text()[-3000:]
        try:
            _get(f"http://127.0.0.1:{port}/-/ready")
            return proc, port
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("prometheus did not become ready\n" + (tmp / "prometheus.log").read_text())


def _alerts(port: int, name: str) -> list[dict[str, Any]]:
    doc = json.loads(_get(f"http://127.0.0.1:{port}/api/v1/alerts"))
    return [a for a in doc["data"]["alerts"] if a["labels"]["alertname"] == name]


def _query(port: int, promql: str) -> list[dict[str, Any]]:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    return list(json.loads(_get(url))["data"]["result"])


def test_prometheus_fires_sink_down_during_a_database_outage_and_clears_after(
    tmp_path: Path,
) -> None:
    require_corpus()
    need_tool("prometheus")
    base = require_server("postgres")
    db = f"{make_url(base).database}_prom_alerts"
    url = create_database(base, db)
    real = make_url(url)
    proxy = Proxy(real.host or "127.0.0.1", real.port or 5432)
    dest = real.set(port=proxy.port).render_as_string(hide_password=False)
    password = real.password or "no password"
    http_port = free_port()
    cfg = write_config(tmp_path, http_port=http_port)
    env = service_env(tmp_path, cfg)
    props = tmp_path / "fast-retries.properties"
    props.write_text("pegasus.monitord.spool.max_backoff=0.5\n")  # retries every 0.5 s at most
    run = corpus_source("process_wf_success", tmp_path / "run")
    dagman_out = next(run.glob("*.dag.dagman.out"))
    lines = dagman_out.read_text().splitlines(keepends=True)
    dagman_out.write_text("".join(lines[: len(lines) // 3]))
    log = tmp_path / "service.log"
    service = start_service(cfg, env, log)
    prometheus, prom_port = _prometheus(tmp_path, http_port)
    sink_up = f'monitord_sink_up{{sink=~".*{db}"}}'
    try:
        done = attach(dagman_out, env, "--no-dashboard", "--conf", str(props), "-d", dest)
        assert done.returncode == 0, done.stderr
        wait_until(lambda: [r["value"][1] for r in _query(prom_port, sink_up)] == ["1"], 60, "Prometheus to see the sink up", log)  # fmt: skip
        assert _alerts(prom_port, "MonitordSinkDown") == []
        # -- the outage: events to deliver, the database unreachable
        proxy.refuse()
        with dagman_out.open("a") as fh:
            fh.write("".join(lines[len(lines) // 3 : 2 * len(lines) // 3]))
        firing: dict[str, list[dict[str, Any]]] = {}

        def fires() -> bool:
            for name in OUTAGE_ALERTS:
                firing[name] = [a for a in _alerts(prom_port, name) if a["state"] == "firing"]
            return all(firing.values())

        wait_until(fires, 90, f"{' and '.join(OUTAGE_ALERTS)} to fire", log)
        for name in OUTAGE_ALERTS:
            (alert,) = firing[name]
            assert alert["labels"]["sink"].endswith(f"/{db}") and "***" in alert["labels"]["sink"]
            assert password not in json.dumps(alert)
            assert alert["labels"]["severity"] == "warning"
        assert [r["value"][1] for r in _query(prom_port, sink_up)] == ["0"]
        # -- the database back: delivered, and the alerts clear
        proxy.restore()
        wait_until(lambda: not any(_alerts(prom_port, name) for name in OUTAGE_ALERTS), 90, "the alerts to clear", log)  # fmt: skip
        assert [r["value"][1] for r in _query(prom_port, sink_up)] == ["1"]
        assert _query(prom_port, 'ALERTS{alertname=~"MonitordSinkDown|MonitordSpoolGrowing"}') == []
        with dagman_out.open("a") as fh:
            fh.write("".join(lines[2 * len(lines) // 3 :]))
        wait_until(lambda: finished(run), 120, "the workflow to end", log)
        wait_until(lambda: not json.loads(_get(f"http://127.0.0.1:{http_port}/status.json"))["workflows"], 60, "everything delivered", log)  # fmt: skip
    finally:
        prometheus.terminate()
        prometheus.wait(30)
        assert stop_service(service) == 0
        proxy.close()
    copy = tmp_path / "copy.db"
    copy_to_sqlite(url, copy, TEMPLATE)
    drop_database(base, db)
    got = diff(str(CORPUS / "process_wf_success" / "expected" / "stampede.db"), str(copy))
    assert got.returncode == 0, f"the database differs from the reference's\n{got.stdout[-3000:]}"
