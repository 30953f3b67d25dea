"""A small workflow's replay pays only for what it uses (issue 30: start-up counts, since
pegasus-run starts one daemon per workflow).

A 10-job replay into the default SQLite database runs in a fresh interpreter, through the
command line, and reports what it imported: none of the packages a replay into SQLite never
uses may be among them (each cost start-up CPU in some earlier version: rich through
structlog, the MySQL and PostgreSQL dialects through the schema's table options, the AMQP,
OTLP, HTTP and metrics libraries through the sinks and the service).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from monitord.tools.synthetic import generate

# a replay into SQLite needs none of these (module -> what pulled it in before)
UNUSED = {
    "rich": "structlog's traceback renderer (monitord/__init__.py hides it)",
    "pygments": "rich's tracebacks",
    "attr": "rich.pretty, through structlog.tracebacks",
    "aio_pika": "the AMQP sink",
    "aiohttp": "the service's status page",
    "prometheus_client": "the service's metrics",
    "pydantic": "the service's configuration",
    "opentelemetry": "the OTLP sink",
}

REPLAY = r"""
import json, sys
from monitord.cli import main
status = main(["replay", "-q", "--no-dashboard", sys.argv[1]])
print(json.dumps({"status": status, "modules": sorted(sys.modules)}))
"""


def _replay_modules(tmp_path: Path) -> tuple[int, set[str]]:
    gen = generate(tmp_path / "wf", jobs=10, seed=1)
    env = {**os.environ, "HOME": str(tmp_path), "TZ": "UTC"}
    proc = subprocess.run(
        [sys.executable, "-c", REPLAY, str(gen.dagman_out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    return seen["status"], set(seen["modules"])


def test_a_small_replay_into_sqlite_imports_none_of_what_it_does_not_use(tmp_path: Path) -> None:
    status, modules = _replay_modules(tmp_path)
    assert status == 0
    assert "sqlalchemy" in modules and "structlog" in modules  # what it does use
    loaded = {m: why for m, why in UNUSED.items() if m in modules}
    assert not loaded, f"a replay into SQLite imported {loaded}"
