"""Configuration errors name the file, the line and the key (pydantic validation, our words)."""

from __future__ import annotations

from pathlib import Path

import pytest

from monitord.service.config import ConfigError, load_config

BAD = """\
# a comment
[service]
socket = "/run/x.sock"

[[watch]]
root = "/a"

[[watch]]
root = "/b"
{second_watch}

[limits]
{limits}
"""


@pytest.mark.parametrize(
    ("second_watch", "limits", "expected"),
    [
        ("depth = 3", "", ":10: [[watch]] #2 depth: unknown key"),
        ("", "sink_threads = 0", ":13: [limits] sink_threads: must be between 1 and 256, not 0"),
        ("", "poll_seconds = 0.01", ":13: [limits] poll_seconds: must be >= 0.05"),
        ("", 'worker_threads = "8"', ":13: [limits] worker_threads: must be an integer, not '8'"),
        ('pattern = "a/b"', "", ":10: [[watch]] #2 pattern: must be a file-name pattern"),
    ],
)
def test_errors_name_the_line(
    tmp_path: Path, second_watch: str, limits: str, expected: str
) -> None:
    path = tmp_path / "svc.toml"
    path.write_text(BAD.format(second_watch=second_watch, limits=limits))
    with pytest.raises(ConfigError) as err:
        load_config(str(path))
    assert str(err.value).startswith(f"{path}{expected}")


def test_unknown_section_and_missing_root_lines(tmp_path: Path) -> None:
    path = tmp_path / "svc.toml"
    path.write_text('[http]\nlisten = ""\n\n[servce]\nx = 1\n')
    with pytest.raises(ConfigError, match=r"svc.toml:4: \[servce\]: unknown section"):
        load_config(str(path))
    path.write_text('[[watch]]\npattern = "*.dagman.out"\n')
    with pytest.raises(ConfigError, match=r"svc.toml:1: \[\[watch\]\] #1 root: missing"):
        load_config(str(path))


def test_valid_values_are_converted(tmp_path: Path) -> None:
    path = tmp_path / "svc.toml"
    path.write_text(
        '[service]\nsocket = "~/m.sock"\n[defaults]\ndests = ["sqlite:///x"]\ndashboard_url = ""\n'
        '[limits]\npoll_seconds = 2\n[[watch]]\nroot = "/srv"\n'
    )
    cfg = load_config(str(path))
    assert cfg.socket == str(Path.home() / "m.sock")
    assert cfg.defaults.dests == ("sqlite:///x",) and cfg.defaults.dashboard_url is None
    assert cfg.limits.poll_seconds == 2.0 and isinstance(cfg.limits.poll_seconds, float)
    assert [w.root for w in cfg.watch] == ["/srv"] and cfg.watch[0].max_depth == 6
