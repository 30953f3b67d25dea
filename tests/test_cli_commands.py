"""The command line a newcomer meets: `monitord --help` lists the commands, `--version`, a help
text on every option, and the progress display on a terminal (through a pseudo-terminal), absent
without one or with -q."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import types
from importlib.metadata import version
from pathlib import Path

import pytest

from monitord import cli
from monitord.tools.synthetic import generate

MONITORD = [sys.executable, "-m", "monitord.cli"]
PEGASUS_MONITORD = [
    sys.executable,
    "-c",
    "import sys; from monitord.cli import pegasus_main; sys.exit(pegasus_main())",
]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def run(cmd: list[str], tmp_path: Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(tmp_path)}
    return subprocess.run(
        cmd, cwd=cwd or tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def run_in_pty(cmd: list[str], cwd: Path, home: Path) -> tuple[int, str]:
    """Run ``cmd`` with a pseudo-terminal as stdin/stdout/stderr; (exit status, output)."""
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(cwd)
        os.environ["HOME"] = str(home)
        os.execv(cmd[0], cmd)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    out = b""
    while True:
        ready, _, _ = select.select([fd], [], [], 120)
        if not ready:
            os.kill(pid, 9)
            break
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        out += data
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), ANSI.sub("", out.decode("utf-8", "replace"))


@pytest.fixture
def workflow(tmp_path: Path) -> Path:
    return generate(tmp_path / "run", 300, retry_fraction=0.05, seed=7, name="pty").dagman_out


@pytest.mark.quick
def test_help_lists_every_command(tmp_path: Path) -> None:
    proc = run([*MONITORD, "--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name, command in cli.COMMANDS.items():
        assert re.search(rf"^\s+{name}\s+\S", proc.stdout, re.M), name
        assert command.summary.split()[0] in proc.stdout
    assert "monitord [pegasus-monitord options] <wf>.dag.dagman.out" in proc.stdout
    bare = run(MONITORD, tmp_path)
    assert bare.returncode == 2 and "replay" in bare.stderr and not bare.stdout


@pytest.mark.quick
def test_version_on_both_commands(tmp_path: Path) -> None:
    ours = version("monitord")
    proc = run([*MONITORD, "--version"], tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == f"monitord {ours}"
    proc = run([*PEGASUS_MONITORD, "--version"], tmp_path)
    assert proc.returncode == 0 and ours in proc.stdout and "pegasus-monitord" in proc.stdout
    proc = run([*MONITORD, "replay", "--version"], tmp_path)
    assert proc.returncode == 0 and ours in proc.stdout


def options_without_help(help_text: str) -> list[str]:
    """Option lines of argparse help with nothing after the flags and no continuation line."""
    lines = help_text.splitlines()
    bare = []
    for i, line in enumerate(lines):
        m = re.match(r"^  (-\S.*?)(?:\s{2,}(\S.*))?$", line)
        if not m or m.group(2):
            continue
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if not re.match(r"^\s{6,}\S", following):
            bare.append(m.group(1))
    return bare


@pytest.mark.quick
@pytest.mark.parametrize(
    "argv", [["replay"], ["follow"], ["attach"], ["serve"], ["status"], ["play"], ["demo"], []]
)
def test_every_option_has_a_help_text(argv: list[str], capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        if argv:
            cli.main([*argv, "--help"])
        else:
            cli.pegasus_main(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "--" in text
    assert options_without_help(text) == []
    assert options_without_help("options:\n  --db-stats\n  -v, --verbose  more\n") == ["--db-stats"]


@pytest.mark.quick
def test_pegasus_monitord_keeps_the_reference_options(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        cli.pegasus_main(["--help"])
    text = capsys.readouterr().out
    assert "-r, --replay" in text and "--quiet" not in text and "usage: pegasus-monitord" in text
    with pytest.raises(SystemExit):
        cli.main(["replay", "--help"])
    text = capsys.readouterr().out
    assert "--quiet" in text and "--replay" not in text


@pytest.mark.quick
def test_plugins_command(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "sinks.plugins.listing", None)  # import fails
    assert cli.main(["plugins"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("monitord plugins: error:")
    seen: list[list[str]] = []

    def listing_main(argv: list[str]) -> int:
        seen.append(argv)
        return 3

    fake = types.ModuleType("sinks.plugins.listing")
    fake.main = listing_main  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sinks.plugins.listing", fake)
    assert cli.main(["plugins", "--json"]) == 3 and seen == [["--json"]]


def test_progress_on_a_terminal(workflow: Path, tmp_path: Path) -> None:
    cmd = [*MONITORD, "replay", "--no-dashboard", workflow.name]
    status, out = run_in_pty(cmd, workflow.parent, tmp_path)
    assert status == 0, out
    assert re.search(r"replaying .*\d+%.* lines/s .* jobs done .*ETA", out), out[-2000:]
    summary = [line for line in out.splitlines() if line.startswith("monitord: replayed")]
    assert len(summary) == 1, out[-2000:]
    assert re.search(
        r"1 workflow in [\d.]+ s: 300 jobs done, \d+ job instances, \d+ events", summary[0]
    )
    assert "Traceback" not in out


def test_quiet_on_a_terminal(workflow: Path, tmp_path: Path) -> None:
    cmd = [*MONITORD, "replay", "-q", "--no-dashboard", workflow.name]
    status, out = run_in_pty(cmd, workflow.parent, tmp_path)
    assert status == 0, out
    assert "lines/s" not in out and "monitord: replayed" not in out


def test_no_progress_without_a_terminal(workflow: Path, tmp_path: Path) -> None:
    proc = run([*MONITORD, "--no-dashboard", "-r", workflow.name], tmp_path, cwd=workflow.parent)
    assert proc.returncode == 0, proc.stderr
    assert "lines/s" not in proc.stderr and "\x1b[" not in proc.stderr
    summary = [line for line in proc.stderr.splitlines() if line.startswith("monitord: ")]
    assert len(summary) == 1 and "300 jobs" in summary[0]
    # pegasus-monitord shows nothing beyond the reference: no summary either.
    again = run(
        [*PEGASUS_MONITORD, "--no-dashboard", "-r", workflow.name], tmp_path, cwd=workflow.parent
    )
    assert again.returncode == 0, again.stderr
    assert "monitord: replayed" not in again.stderr
