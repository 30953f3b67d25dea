"""Where the default SQLite database goes (doc §7.1)."""

from __future__ import annotations

from pathlib import Path

from monitord.core.readers.braindump import parse_braindump_yml
from monitord.core.readers.default_db import default_db_url


def write_bd(d: Path, uuid: str, root: str, submit_dir: str) -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / "braindump.yml").write_text(
        f'wf_uuid: "{uuid}"\nroot_wf_uuid: "{root}"\ndag: "w-0.dag"\nsubmit_dir: "{submit_dir}"\n'
    )


def test_moved_directory_uses_run_dir(tmp_path: Path) -> None:
    run = tmp_path / "copy"
    write_bd(run, "a", "a", "/nonexistent/original")
    bd = parse_braindump_yml((run / "braindump.yml").read_text())
    assert default_db_url(str(run), bd) == f"sqlite:///{run}/w-0.stampede.db"


def test_a_copy_uses_its_own_dir_while_the_original_exists(tmp_path: Path) -> None:
    """Unlike the reference (docs/differences.md): the recorded ``submit_dir`` is ignored."""
    orig, copy = tmp_path / "orig", tmp_path / "copy"
    write_bd(orig, "a", "a", str(orig))
    write_bd(copy, "a", "a", str(orig))
    bd = parse_braindump_yml((copy / "braindump.yml").read_text())
    assert default_db_url(str(copy), bd) == f"sqlite:///{copy}/w-0.stampede.db"


def test_sub_workflow_walks_up_to_root(tmp_path: Path) -> None:
    root = tmp_path / "run"
    write_bd(root, "r", "r", "/gone")
    sub = root / "00" / "00" / "inner.000"
    write_bd(sub, "s", "r", "/gone/00/00/inner.000")
    bd = parse_braindump_yml((sub / "braindump.yml").read_text())
    assert default_db_url(str(sub), bd) == f"sqlite:///{root}/w-0.stampede.db"
