"""Notifications while following a workflow live (doc §11), with real scripts.

The ``nested_subworkflows`` case (a root workflow whose ``pegasus-plan_inner_x`` job fails once and
is retried; its first sub-workflow fails, the second succeeds and runs a nested one) is followed
while its root dagman.out is written a few lines at a time.  Every workflow gets a ``.notify``
covering every entity and condition; each action runs a script that records its argv and
``PEGASUS_*`` environment.  The expected firings are written down from the case's known
outcomes (the dagman.out lines quoted next to them), following the rules of doc §11.2/§11.3.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from tests.conftest import CORPUS_TZ, PROJECT, copy_submit_dir

CASE = PROJECT / "tests" / "data" / "cases" / "nested_subworkflows" / "input"
ORIG = "/home/tester/submit/nested_subworkflows/run0001"
ROOT = "819cd437-007f-431c-a958-602b76b39d62"
INNER0 = "1021c859-3f7e-4d21-b8a8-ea647dc05476"
INNER1 = "e5560529-2888-4e07-b864-d80ce6f67581"
DEEP = "c04a720e-4476-4704-bbad-64d9562ef263"
CONDITIONS = ["never", "start", "on_error", "on_success", "at_end", "all"]

RECORDER = """\
import json, os, sys, uuid
env = {k: v for k, v in os.environ.items() if k.startswith("PEGASUS_")}
path = os.path.join(os.environ["REC_DIR"], uuid.uuid4().hex + ".json")
with open(path, "w") as fh:
    json.dump({"argv": sys.argv[1:], "env": env, "cwd": os.getcwd()}, fh)
"""


def _notify_files(rec: str, hook: str = "") -> dict[str, str]:
    root = [f"WORKFLOW {ROOT} {c} {rec} wf-{c}" for c in CONDITIONS]
    root.append(f'workflow {ROOT} start {rec} quoted "two  words" \'it\'\'s\' "a\\"b"')
    root += [f"JOB findrange_ID0000001 {c} {rec} job-{c}" for c in CONDITIONS]
    root += [
        f"DAXJOB pegasus-plan_inner_x start {rec} daxjob-start",
        f"DAXJOB pegasus-plan_inner_x on_error {rec} daxjob-on_error",
        f"DAGJOB pegasus-plan_inner_x on_success {rec} dagjob-on_success",
        f"INVOCATION pegasus-plan_inner_x 1 all {rec} plan-inv",
        f"INVOCATION analyze_ID0000002 2 all {rec} no-such-task",
        f"JOB no_such_node all {rec} no-such-node",
        f"WORKFLOW {INNER0} all {rec} other-workflow",
        "JOB too_few_fields start",
        f"BOGUS x start {rec} bogus-entity",
    ]
    root += [f"INVOCATION analyze_ID0000002 1 {c} {rec} inv-{c}" for c in CONDITIONS]
    if hook:  # the webhook client, finding the database from the run dir it runs in
        root.append(
            f"WORKFLOW {ROOT} at_end {sys.executable} -m notifications.clients.webhook {hook}"
        )
    return {
        "root-0.notify": "# written by the test\n\n" + "\n".join(root) + "\n",
        "00/00/inner_x.000/inner-0.notify": "\n".join(
            [
                f"WORKFLOW {INNER0} on_error {rec} in0-on_error",
                f"WORKFLOW {INNER0} on_success {rec} in0-on_success",
                f"JOB keg_ID0000001 all {rec} in0-keg-all",
                f"INVOCATION keg_ID0000001 1 on_error {rec} in0-inv-on_error",
                f"INVOCATION keg_ID0000001 1 on_success {rec} in0-inv-on_success",
            ]
        ),
        "00/00/inner_x.001/inner-0.notify": "\n".join(
            [
                f"WORKFLOW {INNER1} all {rec} in1-all",
                f"JOB keg_ID0000002 on_success {rec} in1-keg2-on_success",
                f"JOB keg_ID0000002 on_error {rec} in1-keg2-on_error",
            ]
        ),
        "00/00/inner_x.001/00/00/deep_y.000/deep-0.notify": "\n".join(
            [
                f"WORKFLOW {DEEP} at_end {rec} deep-at_end",
                f"WORKFLOW {DEEP} start {rec} deep-start",
                f"JOB keg_ID0000001 start {rec} deep-keg-start",
            ]
        ),
    }


def _ts(text: str) -> float:
    """A dagman.out time (local, here the corpus zone) as epoch seconds."""
    return float(time.mktime(time.strptime(text, "%m/%d/%y %H:%M:%S")))


def _common(event: str, when: str) -> dict[str, str]:
    ts = _ts(when)
    return {
        "PEGASUS_EVENT": event,
        "PEGASUS_EVENT_TIMESTAMP": str(ts),
        "PEGASUS_EVENT_TIMESTAMP_ISO": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(ts)),
    }


class Expect:
    def __init__(self, run: Path) -> None:
        self.run = run
        self.items: list[tuple[list[str], dict[str, str]]] = []

    def workflow(self, tag, event, when, uuid, sub, wfid, status=None, argv=None) -> None:
        env = _common(event, when)
        env["PEGASUS_SUBMIT_DIR"] = f"{ORIG}{sub}"
        dagman_out = {"": "root-0.dag.dagman.out"}.get(sub, "inner-0.dag.dagman.out")
        if "deep_y" in sub:
            dagman_out = "deep-0.dag.dagman.out"
        env["PEGASUS_STDOUT"] = f"{self.run}{sub}/{dagman_out}"
        env["PEGASUS_JOBID"] = uuid
        env["PEGASUS_WFID"] = wfid
        if status is not None:
            env["PEGASUS_STATUS"] = str(status)
        self.items.append((argv or [tag], env))

    def job(self, tag, event, when, job, sub, wfid, suffix="", status=None, inv=None) -> None:
        env = _common(event, when)
        env["PEGASUS_SUBMIT_DIR"] = f"{ORIG}{sub}"
        env["PEGASUS_JOBID"] = job
        if inv is not None:
            env["PEGASUS_INVID"] = str(inv)
        env["PEGASUS_WFID"] = wfid
        env["PEGASUS_STDOUT"] = f"{ORIG}{sub}/00/00/{job}.out{suffix}"
        env["PEGASUS_STDERR"] = f"{ORIG}{sub}/00/00/{job}.err{suffix}"
        if status is not None:
            env["PEGASUS_STATUS"] = str(status)
        self.items.append(([tag], env))


def _expected(run: Path) -> list[tuple[list[str], dict[str, str]]]:
    e = Expect(run)
    root = ("", "root-0")
    # Root DAGMan: "Parsing root-0.dag" 08:02:56; "EXITING WITH STATUS 0" 08:15:31.
    for tag in ("wf-start", "wf-all"):
        e.workflow(tag, "start", "01/26/23 08:02:56", ROOT, *root)
    e.workflow(
        "", "start", "01/26/23 08:02:56", ROOT, *root, argv=["quoted", "two  words", "its", 'a"b']
    )
    for tag, event in (
        ("wf-on_success", "on_success"),
        ("wf-at_end", "at_end"),
        ("wf-all", "at_end"),
    ):
        e.workflow(tag, event, "01/26/23 08:15:31", ROOT, *root, status=0)
    # findrange_ID0000001: ULOG_EXECUTE {08:04:05}; POST script succeeded 08:08:44 (.000).
    for tag in ("job-start", "job-all"):
        e.job(tag, "start", "01/26/23 08:04:05", "findrange_ID0000001", *root)
    for cond in ("never", "on_success", "at_end", "all"):
        event = "at_end" if cond == "all" else cond
        e.job(f"job-{cond}", event, "01/26/23 08:08:44", "findrange_ID0000001", *root, ".000", 0)
    # analyze_ID0000002: one kickstart record (raw 0); POST script succeeded 08:09:29.
    for cond in ("never", "start", "on_success", "at_end", "all"):
        event = "at_end" if cond == "all" else cond
        status = None if cond == "start" else 0
        e.job(
            f"inv-{cond}", event, "01/26/23 08:09:29", "analyze_ID0000002", *root, ".000", status, 1
        )
    # pegasus-plan_inner_x: EXECUTE {08:10:25}, failed with status 1, POST failed 08:11:46
    # (no .out: the invocation gets the job's exit code); retry EXECUTE {08:12:01}, POST ok 08:15:21.
    plan = "pegasus-plan_inner_x"
    e.job("daxjob-start", "start", "01/26/23 08:10:25", plan, *root)
    e.job("daxjob-on_error", "on_error", "01/26/23 08:11:46", plan, *root, ".000", 1)
    e.job("plan-inv", "at_end", "01/26/23 08:11:46", plan, *root, ".000", 1, 1)
    e.job("daxjob-start", "start", "01/26/23 08:12:01", plan, *root)
    e.job("dagjob-on_success", "on_success", "01/26/23 08:15:21", plan, *root, ".001", 0)
    e.job("plan-inv", "at_end", "01/26/23 08:15:21", plan, *root, ".001", 0, 1)
    # inner_x.000: keg_ID0000001 runs twice ({08:10:58}, {08:11:25}), fails (record raw 256),
    # POST failures 08:11:09 and 08:11:36; DAGMan exits 1 at 08:11:36.
    in0 = ("/00/00/inner_x.000", "inner-0")
    e.workflow("in0-on_error", "on_error", "01/26/23 08:11:36", INNER0, *in0, status=1)
    for when in ("08:10:58", "08:11:25"):
        e.job("in0-keg-all", "start", f"01/26/23 {when}", "keg_ID0000001", *in0)
    for when, n in (("08:11:09", ".000"), ("08:11:36", ".001")):
        e.job("in0-keg-all", "at_end", f"01/26/23 {when}", "keg_ID0000001", *in0, n, 1)
        e.job("in0-inv-on_error", "on_error", f"01/26/23 {when}", "keg_ID0000001", *in0, n, 1, 1)
    # inner_x.001: starts 08:12:04, keg_ID0000002 POST ok 08:13:37, DAGMan exits 0 at 08:15:11.
    in1 = ("/00/00/inner_x.001", "inner-0")
    e.workflow("in1-all", "start", "01/26/23 08:12:04", INNER1, *in1)
    e.workflow("in1-all", "at_end", "01/26/23 08:15:11", INNER1, *in1, status=0)
    e.job(
        "in1-keg2-on_success", "on_success", "01/26/23 08:13:37", "keg_ID0000002", *in1, ".000", 0
    )
    # deep_y.000: starts 08:13:50, keg_ID0000001 EXECUTE {08:14:19}, exits 0 at 08:14:56.
    deep = ("/00/00/inner_x.001/00/00/deep_y.000", "deep-0")
    e.workflow("deep-start", "start", "01/26/23 08:13:50", DEEP, *deep)
    e.workflow("deep-at_end", "at_end", "01/26/23 08:14:56", DEEP, *deep, status=0)
    e.job("deep-keg-start", "start", "01/26/23 08:14:19", "keg_ID0000001", *deep)
    return e.items


@pytest.fixture
def http_sink():
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            self.server.requests.append((self.path, body))  # type: ignore[attr-defined]
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    server.requests = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def _canon(items) -> list[str]:
    return sorted(json.dumps({"argv": a, "env": env}, sort_keys=True) for a, env in items)


def _prepare(tmp_path: Path, hook: str = "") -> tuple[Path, Path, Path]:
    run = tmp_path / "run"
    copy_submit_dir(CASE, run)
    rec_dir = tmp_path / "rec"
    rec_dir.mkdir()
    recorder = tmp_path / "recorder.py"
    recorder.write_text(RECORDER)
    rec = f"{sys.executable} {recorder}"
    for name, text in _notify_files(rec, hook).items():
        (run / name).write_text(text)
    return run, rec_dir, next(run.glob("*.dag.dagman.out"))


def _env(tmp_path: Path, rec_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "TZ": CORPUS_TZ,
        "HOME": str(tmp_path),
        "REC_DIR": str(rec_dir),
        "PYTHONPATH": str(PROJECT),
    }


def test_live_following_fires_every_entity_and_condition_as_specified(
    tmp_path: Path, corpus_tz, http_sink
) -> None:
    hook = f"http://127.0.0.1:{http_sink.server_address[1]}/hook"
    run, rec_dir, dagman_out = _prepare(tmp_path, hook)
    lines = dagman_out.read_text(encoding="utf-8").splitlines(keepends=True)
    dagman_out.write_text("".join(lines[:10]), encoding="utf-8")
    daemon = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "monitord.cli",
            "--no-dashboard",
            "--notifications-max",
            "4",
            dagman_out.name,
        ],
        cwd=run,
        env=_env(tmp_path, rec_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        time.sleep(0.5)
        with dagman_out.open("a", encoding="utf-8") as fh:
            for i in range(10, len(lines), 4):
                fh.write("".join(lines[i : i + 4]))
                fh.flush()
                time.sleep(0.005)
        out, _ = daemon.communicate(timeout=180)
    finally:
        if daemon.poll() is None:
            daemon.kill()
    assert daemon.returncode == 0, out[-3000:]
    records = [json.loads(p.read_text()) for p in rec_dir.glob("*.json")]
    assert {r["cwd"] for r in records} == {str(run)}  # scripts run in the top-level run dir
    expected = _expected(run)
    assert _canon((r["argv"], r["env"]) for r in records) == _canon(expected)
    # Malformed lines were reported with their file and line number, the rest kept.
    for n in (22, 23, 24):
        assert f"line={n} path={run}/root-0.notify" in out, out[-3000:]
    # One full record per finished script in the top-level notifications log.
    log_text = (run / "monitord-notifications.log").read_text()
    assert log_text.count("-" * 80 + "\n") == len(expected) + 1
    assert log_text.count("Notification status: 0\n") == len(expected) + 1
    # The webhook client got the workflow's end and found its database from the run dir.
    ((path, body),) = http_sink.requests
    doc = json.loads(body)
    assert path == "/hook" and doc["event"]["PEGASUS_EVENT"] == "at_end", doc
    assert doc["summary"]["wf_uuid"] == ROOT and doc["summary"]["total"] == 8, doc
    assert "Notification event : findrange_ID0000001 - on_success\n" in log_text


@pytest.mark.parametrize(
    "args", [["-r"], ["--no-notifications"], ["--notifications-max", "0"]], ids=str
)
def test_replay_and_disabled_notifications_run_nothing(tmp_path: Path, args: list[str]) -> None:
    run, rec_dir, dagman_out = _prepare(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "monitord.cli", "--no-dashboard", *args, dagman_out.name],
        cwd=run,
        env=_env(tmp_path, rec_dir),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (run / "monitord.info").exists()  # the workflow was processed
    assert list(rec_dir.iterdir()) == []
    assert not (run / "monitord-notifications.log").exists()


def test_notification_options_win_over_properties() -> None:
    from monitord.cli import build_parser, notification_settings

    parser = build_parser()
    plain = parser.parse_args(["x.dag.dagman.out"])
    assert notification_settings(plain, {}) == {
        "notifications": True,
        "notifications_max": 10,
        "notifications_timeout": 0.0,
    }
    props = {
        "pegasus.monitord.notifications": "False",
        "pegasus.monitord.notifications.max": "3",
        "pegasus.monitord.notifications.timeout": "30",
    }
    assert notification_settings(plain, props) == {
        "notifications": False,
        "notifications_max": 3,
        "notifications_timeout": 30.0,
    }
    args = parser.parse_args(
        ["--notifications-max", "5", "--notifications-timeout", "7", "x.dag.dagman.out"]
    )
    settings = notification_settings(args, props)
    assert (settings["notifications_max"], settings["notifications_timeout"]) == (5, 7.0)
    with pytest.raises(ValueError, match="notifications.max"):
        notification_settings(plain, {"pegasus.monitord.notifications.max": "-1"})
