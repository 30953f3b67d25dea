"""The notification clients against local servers: an SMTP sink and an HTTP server in threads.

The workflow summary comes from the reference's database of the ``nested_subworkflows`` case,
whose first sub-workflow (inner_x.000) failed: keg_ID0000001 failed twice (exit code 1),
keg_ID0000002 never ran, create_dir succeeded; DAGMan exited 1.
"""

from __future__ import annotations

import email
import json
import os
import shutil
import socketserver
import subprocess
import sys
import threading
from collections.abc import Iterator
from email.message import Message
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from notifications.clients.summary import read_summary
from tests.conftest import PROJECT

CASE_DB = PROJECT / "tests" / "data" / "cases" / "nested_subworkflows" / "expected" / "stampede.db"
ORIG = "/home/tester/submit/nested_subworkflows/run0001"
INNER0 = "1021c859-3f7e-4d21-b8a8-ea647dc05476"


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    copy = tmp_path / "copy.stampede.db"
    shutil.copyfile(CASE_DB, copy)
    return f"sqlite:///{copy}"


def _job_env(**extra: str) -> dict[str, str]:
    """What the daemon gives a job notification of inner_x.000's failed keg_ID0000001."""
    sub = f"{ORIG}/00/00/inner_x.000"
    return {
        "PEGASUS_EVENT": "on_error",
        "PEGASUS_EVENT_TIMESTAMP": "1674749496.0",
        "PEGASUS_EVENT_TIMESTAMP_ISO": "2023-01-26T08:11:36-0800",
        "PEGASUS_SUBMIT_DIR": sub,
        "PEGASUS_JOBID": "keg_ID0000001",
        "PEGASUS_WFID": "inner-0",
        "PEGASUS_STDOUT": f"{sub}/00/00/keg_ID0000001.out.001",
        "PEGASUS_STDERR": f"{sub}/00/00/keg_ID0000001.err.001",
        "PEGASUS_STATUS": "1",
        **extra,
    }


def _run(
    module: str, args: list[str], env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PEGASUS_")}
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        env={**clean, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_summary_of_the_failed_sub_workflow(db_url: str) -> None:
    s = read_summary(db_url, submit_dir=f"{ORIG}/00/00/inner_x.000")
    assert (s.wf_uuid, s.state, s.status) == (INNER0, "Failure", 1)
    assert s.counts["SUCCESS"] == 1 and s.counts["FAILURE"] == 1 and s.counts["UNREADY"] == 1
    assert s.total == 3
    assert [(f.job, f.exitcode, f.attempts) for f in s.failed] == [("keg_ID0000001", 1, 2)]
    root = read_summary(db_url, wf_uuid="819cd437-007f-431c-a958-602b76b39d62")
    assert (root.state, root.status, root.counts["SUCCESS"], root.total) == ("Success", 0, 8, 8)
    assert root.subworkflows == 2
    with pytest.raises(LookupError):
        read_summary(db_url, wf_uuid="nope", submit_dir="/nowhere")


# ---------------------------------------------------------------------- SMTP
class _SMTPHandler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        server = self.server
        self.wfile.write(b"220 sink ESMTP\r\n")
        envelope: dict = {"rcpt": [], "data": b""}
        while True:
            line = self.rfile.readline()
            if not line:
                return
            verb = line.strip().split(b" ", 1)[0].upper()
            if verb in (b"EHLO", b"HELO"):
                self.wfile.write(b"250 sink\r\n")
            elif verb == b"MAIL":
                envelope["from"] = line.strip()[10:].decode()
                self.wfile.write(b"250 OK\r\n")
            elif verb == b"RCPT":
                envelope["rcpt"].append(line.strip()[8:].decode())
                self.wfile.write(b"250 OK\r\n")
            elif verb == b"DATA":
                self.wfile.write(b"354 go ahead\r\n")
                chunks = []
                while True:
                    data = self.rfile.readline()
                    if data in (b".\r\n", b""):
                        break
                    chunks.append(data[1:] if data.startswith(b"..") else data)
                envelope["data"] = b"".join(chunks)
                server.messages.append(envelope)  # type: ignore[attr-defined]
                self.wfile.write(b"250 queued\r\n")
            elif verb == b"QUIT":
                self.wfile.write(b"221 bye\r\n")
                return
            else:
                self.wfile.write(b"250 OK\r\n")


@pytest.fixture
def smtp_sink() -> Iterator[socketserver.ThreadingTCPServer]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _SMTPHandler)
    server.messages = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_email_client_sends_the_event_and_summary(tmp_path: Path, db_url: str, smtp_sink) -> None:
    port = smtp_sink.server_address[1]
    proc = _run(
        "notifications.clients.email",
        [
            "--to",
            "ops@example.org",
            "--to",
            "me@example.org",
            "--from",
            "monitord@example.org",
            "--smtp",
            f"127.0.0.1:{port}",
            "--db",
            db_url,
        ],
        _job_env(),
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    (envelope,) = smtp_sink.messages
    assert envelope["rcpt"] == ["<ops@example.org>", "<me@example.org>"]
    msg: Message = email.message_from_bytes(envelope["data"])
    assert msg["To"] == "ops@example.org, me@example.org"
    assert msg["Subject"] == "Pegasus notification: inner-0 keg_ID0000001 on_error (status 1)"
    payload = msg.get_payload(decode=True)
    assert isinstance(payload, bytes)
    body = payload.decode()
    assert "PEGASUS_STDERR : " + _job_env()["PEGASUS_STDERR"] in body
    assert f"Workflow  : inner ({INNER0})" in body
    assert "State     : Failure (DAGMan exit code 1)" in body
    assert "keg_ID0000001  exit code 1  attempts 2" in body


def test_email_client_without_database_still_sends_and_a_dead_server_fails_cleanly(
    tmp_path: Path, smtp_sink
) -> None:
    port = smtp_sink.server_address[1]
    ok = _run(
        "notifications.clients.email",
        ["--to", "a@b", "--smtp", f"127.0.0.1:{port}"],
        _job_env(),
        tmp_path,  # no braindump here: no database to be found
    )
    assert ok.returncode == 0, ok.stderr
    body = email.message_from_bytes(smtp_sink.messages[0]["data"]).get_payload(decode=True)
    assert b"Workflow summary unavailable: no database found" in body
    smtp_sink.shutdown()
    smtp_sink.server_close()
    bad = _run(
        "notifications.clients.email",
        ["--to", "a@b", "--smtp", f"127.0.0.1:{port}", "--no-summary", "--user", "u"],
        {**_job_env(), "MONITORD_SMTP_PASSWORD": "s3cret-pw"},
        tmp_path,
    )
    assert bad.returncode == 1
    assert bad.stderr.startswith("monitord-notify-email: error: ")
    assert "Traceback" not in bad.stderr and "s3cret-pw" not in bad.stderr


# ---------------------------------------------------------------------- webhook
@pytest.fixture
def http_sink() -> Iterator[HTTPServer]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            self.server.requests.append(  # type: ignore[attr-defined]
                (self.path, dict(self.headers), self.rfile.read(length))
            )
            code = 500 if self.path == "/broken" else 204
            self.send_response(code)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    server.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_webhook_client_posts_json(tmp_path: Path, db_url: str, http_sink) -> None:
    url = f"http://127.0.0.1:{http_sink.server_address[1]}/hook"
    proc = _run(
        "notifications.clients.webhook",
        [url, "--db", db_url, "--header", "X-Token: env:HOOK_TOKEN", "--timeout", "5"],
        {**_job_env(), "HOOK_TOKEN": "tok-123"},
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    ((path, headers, body),) = http_sink.requests
    assert path == "/hook"
    assert headers["Content-Type"] == "application/json" and headers["X-Token"] == "tok-123"
    doc = json.loads(body)
    assert doc["event"] == _job_env()
    assert doc["summary"]["wf_uuid"] == INNER0 and doc["summary"]["state"] == "Failure"
    assert doc["summary"]["counts"]["FAILURE"] == 1 and doc["summary"]["total"] == 3
    assert doc["summary_error"] is None


def test_webhook_client_reports_http_errors_in_one_line(tmp_path: Path, http_sink) -> None:
    base = f"http://127.0.0.1:{http_sink.server_address[1]}"
    proc = _run(
        "notifications.clients.webhook", [f"{base}/broken", "--no-summary"], _job_env(), tmp_path
    )
    assert proc.returncode == 1
    assert proc.stderr.strip() == "monitord-notify-webhook: error: HTTP 500 Internal Server Error"
    proc = _run("notifications.clients.webhook", ["ftp://x/y"], _job_env(), tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
