"""What a user meets first (issue 22): exit codes that tell the truth, a terminal that stays
readable, errors that name what is wrong, and a ``monitord plugins`` free of the tests' plugins.

One test per row of the issue's table (the CLI's rows); each failed before the change.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from monitord import cli
from monitord.tools.synthetic import generate
from tests.conftest import CORPUS, CORPUS_TZ, require_corpus
from tests.dbcopy import copy_to_sqlite
from tests.plugin_fixtures import TEST_SITE, install_plugin_packages
from tests.proxies import Proxy
from tests.servers import create_database, drop_database, require_server
from tests.test_cli_commands import MONITORD, PEGASUS_MONITORD, run_in_pty
from tests.test_service import corpus_source, diff

SECRET = "s3cr3tpw"
# a stopping daemon tries a down database for 10 s by default; one is enough here
SHORT_DRAIN = "-Dpegasus.monitord.spool.drain_timeout=1"
SAMPLE = "process_wf_success"
LOG_LINE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z \[")


@pytest.fixture
def workflow(tmp_path: Path) -> Path:
    return generate(tmp_path / "run", 40, retry_fraction=0.1, seed=3, name="truth").dagman_out


def run(cmd: list[str], tmp_path: Path, cwd: Path, **kw: object) -> subprocess.CompletedProcess:
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(tmp_path)}  # corpus times are local
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=180, **kw
    )


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "error:" in line and not LOG_LINE.match(line)]


# ---------------------------------------------------------------- exit codes that tell the truth
@pytest.mark.parametrize(
    "url",
    [
        f"mysql://u:{SECRET}@127.0.0.1:1/stampede",  # nothing listening
        f"postgresql://u:{SECRET}@127.0.0.1:1/stampede",
    ],
)
@pytest.mark.parametrize("command", ["monitord replay", "pegasus-monitord -r"])
def test_a_replay_whose_database_gets_nothing_fails(
    workflow: Path, tmp_path: Path, url: str, command: str
) -> None:
    if command == "monitord replay":
        cmd = [*MONITORD, "replay", SHORT_DRAIN, "--no-dashboard", "-d", url, workflow.name]
    else:
        cmd = [*PEGASUS_MONITORD, SHORT_DRAIN, "--no-dashboard", "-r", "-d", url, workflow.name]
    proc = run(cmd, tmp_path, workflow.parent)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and SECRET not in proc.stderr
    errors = error_lines(proc.stderr)
    assert len(errors) == 1, proc.stderr[-3000:]
    line = errors[0]
    shown = url.replace(SECRET, "***").split("://", 1)[1]
    assert shown in line, line  # the destination, password masked
    spool = re.search(r"left in the spool (\S+);", line)
    assert spool and Path(spool.group(1)).is_dir(), line
    events = int(re.search(r"(\d+) events not delivered", line).group(1))  # type: ignore[union-attr]
    assert events > 0 and "rerun the replay" in line
    assert "written to" not in proc.stderr and "for the next run" not in proc.stderr


def test_one_good_destination_does_not_excuse_a_missing_one(workflow: Path, tmp_path: Path) -> None:
    """``monitord replay`` wants every destination; the drop-in, as the reference, is content
    with one (tests/test_endpoints.py), and fails only when the events reached none."""
    bp = tmp_path / "events.bp"
    url = f"mysql://u:{SECRET}@127.0.0.1:1/stampede"
    args = [SHORT_DRAIN, f"-Dpegasus.catalog.workflow.bp.url=file://{bp}", "--no-dashboard"]
    proc = run([*MONITORD, "replay", *args, "-d", url, workflow.name], tmp_path, workflow.parent)
    assert proc.returncode == 1 and SECRET not in proc.stderr
    [line] = error_lines(proc.stderr)
    assert "u:***@127.0.0.1:1/stampede" in line and "events.bp" not in line, line
    events = int(re.search(r"(\d+) events not delivered", line).group(1))  # type: ignore[union-attr]
    assert len([x for x in bp.read_text().splitlines() if x.strip()]) == events  # bp complete
    dropin = run(
        [*PEGASUS_MONITORD, *args, "-r", "-d", url, workflow.name], tmp_path, workflow.parent
    )
    assert dropin.returncode == 0, dropin.stderr[-3000:]


def test_rerunning_the_replay_as_told_delivers_every_event_once(tmp_path: Path) -> None:
    """The failing line's advice works: with the database back, the same command again leaves
    the reference's rows (the stale spool discarded, nothing written twice)."""
    require_corpus()
    base = require_server("postgres")
    db = f"{make_url(base).database}_rerun_{os.getpid()}"
    url = create_database(base, db)
    real = make_url(url)
    proxy = Proxy(real.host or "127.0.0.1", real.port or 5432)
    try:
        proxy.refuse()  # the server runs, this replay's way to it does not
        dest = real.set(port=proxy.port).render_as_string(hide_password=False)
        run_dir = corpus_source(SAMPLE, tmp_path / "run")
        out = next(run_dir.glob("*.dag.dagman.out"))
        cmd = [*MONITORD, "replay", SHORT_DRAIN, "--no-dashboard", "-d", dest, out.name]
        first = run(cmd, tmp_path, run_dir)
        assert first.returncode == 1, first.stderr[-3000:]
        [line] = error_lines(first.stderr)
        spool = re.search(r"left in the spool (\S+); rerun the replay", line)
        assert spool and Path(spool.group(1)).is_dir(), line
        proxy.restore()
        again = run(cmd, tmp_path, run_dir)
        assert again.returncode == 0 and not error_lines(again.stderr), again.stderr[-3000:]
        assert not Path(spool.group(1)).exists()
        copy = tmp_path / "copy.db"
        copy_to_sqlite(url, copy, CORPUS / SAMPLE / "expected" / "stampede.db")
    finally:
        proxy.close()
        drop_database(base, db)
    got = diff(str(CORPUS / SAMPLE / "expected" / "stampede.db"), str(copy))
    assert got.returncode == 0, f"the database differs from the reference's\n{got.stdout[-3000:]}"


@pytest.mark.parametrize(
    ("dest", "why"),
    [
        (f"mysql://u:{SECRET}@db.example:port/stampede", "invalid literal"),
        (f"nosuchscheme://u:{SECRET}@host/x", "no sink for nosuchscheme://"),
        ("amqp://", "no host"),
    ],
)
def test_a_malformed_url_is_refused_before_anything_runs(
    workflow: Path, tmp_path: Path, dest: str, why: str
) -> None:
    proc = run([*MONITORD, "replay", "-d", dest, workflow.name], tmp_path, workflow.parent)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert SECRET not in proc.stderr
    assert proc.stderr.splitlines() == error_lines(proc.stderr), proc.stderr  # that line only
    assert len(error_lines(proc.stderr)) == 1 and why in proc.stderr
    assert not (workflow.parent / "jobstate.log").exists()  # nothing ran


@pytest.mark.parametrize("content", ["", "".join(f"garbage {i} ~~~\n" for i in range(200))])
def test_an_input_without_dagman_lines_fails(workflow: Path, tmp_path: Path, content: str) -> None:
    workflow.write_text(content)
    proc = run([*MONITORD, "replay", "--no-dashboard", workflow.name], tmp_path, workflow.parent)
    assert proc.returncode != 0, proc.stderr
    errors = error_lines(proc.stderr)
    assert len(errors) == 1 and "nothing to replay" in errors[0], proc.stderr
    assert ("is empty" if not content else "200 lines, none of them DAGMan's") in errors[0]


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """No traceback nor error line, but no claim that every event was stored either (issue
    29): status 141 (128 + SIGPIPE, what a shell shows for a tool the signal ended; before,
    0) and a summary naming what the reader did not take."""
    big = generate(tmp_path / "run", 300, seed=5, name="pipe").dagman_out
    env = {**os.environ, "HOME": str(tmp_path)}
    cmd = [*MONITORD, "replay", "--no-dashboard", "-d", "-", "-e", "json", big.name]
    with subprocess.Popen(
        cmd, cwd=big.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        head = [json.loads(proc.stdout.readline()) for _ in range(3)]  # `| head -3`
        proc.stdout.close()
        err = proc.stderr.read().decode()
        status = proc.wait(timeout=180)
    assert len(head) == 3
    assert status == 141, err
    assert "Broken pipe" not in err and "error" not in err.lower() and "Traceback" not in err
    [line] = [x for x in err.splitlines() if x.startswith("monitord: replayed")]
    unread = re.search(
        r"stored in 0 of 1 destination \(not in stdout: its reader closed it, "
        r"(\d+) events not written\)",
        line,
    )
    assert unread and int(unread.group(1)) > 0, line


# ---------------------------------------------------------------- a terminal that stays readable
def test_log_lines_go_above_the_bar_which_counts_as_the_summary(
    workflow: Path, tmp_path: Path
) -> None:
    # with the dashboard: its database is created while the bar is shown, which logs
    status, out = run_in_pty([*MONITORD, "replay", workflow.name], workflow.parent, tmp_path)
    assert status == 0, out
    logged = list(LOG_LINE.finditer(out))
    assert logged, out[-3000:]
    for match in logged:  # each log line starts a line of its own, never inside the bar's
        assert match.start() == 0 or out[match.start() - 1] in "\r\n", out[-3000:]
    bars = re.findall(r"(\d[\d,]*) jobs done \d", out)
    summary = re.search(r"monitord: replayed 1 workflow in [\d.]+ s: (\d+) jobs done", out)
    assert bars and summary, out[-3000:]
    assert int(bars[-1].replace(",", "")) == int(summary.group(1)) == 40, out[-3000:]


def test_quiet_prints_nothing_but_errors(workflow: Path, tmp_path: Path) -> None:
    proc = run([*MONITORD, "replay", "-q", workflow.name], tmp_path, workflow.parent)
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout == "", proc.stderr
    bad = run(
        [*MONITORD, "replay", SHORT_DRAIN, "-q", "-d", "mysql://u:p@127.0.0.1:1/x", workflow.name],
        tmp_path,
        workflow.parent,
    )
    assert bad.returncode != 0
    assert all("error" in line for line in bad.stderr.splitlines()), bad.stderr  # errors only


@pytest.mark.quick
def test_an_unknown_command_suggests_the_closest(capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["stauts"]) == 2
    err = capsys.readouterr().err
    assert "'stauts' is not a command" in err and "did you mean `monitord status`?" in err
    assert "DAGMan output" not in err


def test_no_traceback_for_an_output_that_cannot_be_created(workflow: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for args in (
        ["replay", "-j", str(blocker / "jobstate.log"), workflow.name],
        ["demo", "--dir", str(blocker / "demo")],
    ):
        proc = run([*MONITORD, *args], tmp_path, workflow.parent)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        [line] = error_lines(proc.stderr)
        assert str(blocker) in line, line


@pytest.mark.parametrize("jobs", ["0", "-3", "many", "100000000000"])
def test_no_traceback_for_a_bad_demo_argument(tmp_path: Path, jobs: str) -> None:
    proc = run(
        [*MONITORD, "demo", "--jobs", jobs, "--dir", str(tmp_path / "d")], tmp_path, tmp_path
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "argument --jobs" in proc.stderr.splitlines()[-1]


@pytest.mark.parametrize("value", ["abc", "-1"])
def test_a_bad_number_is_named_in_words(workflow: Path, tmp_path: Path, value: str) -> None:
    cmd = [*MONITORD, "replay", "--notifications-timeout", value, workflow.name]
    proc = run(cmd, tmp_path, workflow.parent)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert "argument --notifications-timeout: " in last and "_" not in last.split(": ", 2)[2]


# ---------------------------------------------------------------- attach names what is wrong
def test_attach_errors_name_the_socket_and_the_file(workflow: Path, tmp_path: Path) -> None:
    from tests.test_service import write_config

    cfg = write_config(tmp_path)
    sock = tmp_path / "monitord.sock"
    proc = run(
        [*MONITORD, "attach", "--config", str(cfg), workflow.name], tmp_path, workflow.parent
    )
    assert proc.returncode != 0
    assert error_lines(proc.stderr) == [
        f"monitord attach: error: no monitord service answers on {sock} (configured in {cfg})"
    ], proc.stderr
    missing = tmp_path / "absent.toml"
    proc = run(
        [*MONITORD, "attach", "--config", str(missing), workflow.name], tmp_path, workflow.parent
    )
    [line] = error_lines(proc.stderr)
    assert line.startswith("monitord attach: error:") and str(missing) in line
    gone = "nowhere/gone.dag.dagman.out"  # (a dagman.out in a directory may come later)
    proc = run([*MONITORD, "attach", gone], tmp_path, workflow.parent)
    assert error_lines(proc.stderr) == [
        f"monitord attach: error: {gone}: no such directory {workflow.parent / 'nowhere'}"
    ]


@pytest.mark.quick
def test_attach_serve_and_status_name_the_service_configuration_alike() -> None:
    for command in ("attach", "serve", "status"):
        parser = cli.build_parser("monitord attach", cli.ATTACH) if command == "attach" else None
        text = parser.format_help() if parser else _help_of(command)
        assert "--config" in text and "--service-config" not in text, command


def _help_of(command: str) -> str:
    proc = subprocess.run([*MONITORD, command, "--help"], capture_output=True, text=True)
    return proc.stdout


# ---------------------------------------------------------------- the tests' plugins stay theirs
def test_the_fixture_plugins_are_not_in_the_users_environment(tmp_path: Path) -> None:
    install_plugin_packages()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # as the user runs it
    env["HOME"] = str(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "monitord.cli", "plugins", "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    listed = {p["distribution"] for p in json.loads(proc.stdout)["plugins"]}
    assert listed <= {"monitord-job-summary"}, listed  # the example at most, never a fixture
    assert (TEST_SITE / "monitord_contract_plugins").is_dir()  # they went to the tests' site
