"""A ``--sql-process`` replay's daemon loads no SQLAlchemy: its SQL sink goes to the loader
child as a recipe (``sinks/sql/recipe.py``), built there; the rows are those of the sink built
in the daemon (bench/README.md, "Issue 30, thirteenth session: lazysql30k")."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from monitord.core.events import GenericEvent
from monitord.tools.synthetic import generate
from sinks.runtime.factory import SinkRequest
from sinks.sql.database import parse_url, safe_url
from sinks.sql.declared import SQL_READS
from sinks.sql.loader import DISPATCH
from sinks.sql.recipe import PLAIN_SQLITE, SQLRecipe, light_recipe
from tests.conftest import CORPUS_TZ

CHECKOUT = Path(__file__).resolve().parent.parent


def test_the_declared_reads_are_the_loaders() -> None:
    assert frozenset(DISPATCH) | {GenericEvent} == SQL_READS.kinds


@pytest.mark.parametrize(
    "path", ["/tmp/a b/c.db", "/tmp/run-1/x_y.stampede.db", "/a//b/../c", "/x/Z9"]
)
def test_a_plain_sqlite_url_is_shown_and_read_as_sqlalchemy_does(path: str) -> None:
    url = f"sqlite:///{path}"
    recipe = light_recipe(SinkRequest(url, run_dir=".", restart=False))
    assert recipe is not None
    assert recipe.display_url == safe_url(parse_url(url)) == url
    assert parse_url(url).database == path


@pytest.mark.parametrize(
    "dest",
    [
        "sqlite:///rel.db",
        "sqlite:////tmp/a+b.db",
        "sqlite:////tmp/x.db?mode=ro",
        "sqlite:///:memory:",
        "jdbc:sqlite:/tmp/x.db",
        "postgresql://u:secret@h/db",
    ],
)
def test_any_other_destination_is_built_and_checked_in_the_daemon(dest: str) -> None:
    assert PLAIN_SQLITE.fullmatch(dest) is None
    assert light_recipe(SinkRequest(dest, run_dir=".", restart=False)) is None


def test_an_endpoint_timeout_is_left_to_the_daemon() -> None:
    props = {"pegasus.catalog.workflow.timeout": "x"}  # its warning is the daemon's
    request = SinkRequest("sqlite:////tmp/w.db", run_dir=".", restart=False, properties=props)
    assert light_recipe(request) is None


def test_the_child_rotates_only_the_file_the_daemon_saw(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    db.write_bytes(b"")
    recipe = light_recipe(SinkRequest(f"sqlite:///{db}", run_dir=".", restart=True))
    assert isinstance(recipe, SQLRecipe) and recipe.unrotated is not None
    (tmp_path / "new").write_bytes(b"")
    (tmp_path / "new").replace(db)  # another file since (another inode): not the one to rotate
    sink = recipe.build()
    sink.open()
    sink.close()
    assert not list(tmp_path.glob("w.db.*"))


#: the program (``sys.argv``, settled and ended as the command is), telling on stderr whether
#: SQLAlchemy was ever imported in its process (it exits without returning here)
PROGRAM = """
import importlib.abc, sys

class _Tell(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "sqlalchemy":
            print("sqlalchemy imported", file=sys.stderr)
        return None

sys.meta_path.insert(0, _Tell())
sys.argv[1:] = {argv!r}
from monitord.cli import main
sys.exit(main())
"""


def _replay(run: Path, dest: str) -> bool:
    """A ``--sql-process`` replay of ``run`` into ``dest``, run as the program: whether its
    daemon loaded SQLAlchemy."""
    argv = ["replay", "-q", "--no-dashboard", "--sql-process", "--no-read-ahead", "-d", dest]
    code = PROGRAM.format(argv=[*argv, str(run)])
    env = {"TZ": CORPUS_TZ, "HOME": str(run.parent.parent), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=CHECKOUT, env=env
    )
    assert done.returncode == 0, done.stderr
    return "sqlalchemy imported" in done.stderr


def _rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(db) as conn:
        names = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        rows = {n: sorted(conn.execute(f'SELECT * FROM "{n}"'), key=repr) for n in names}
    rows["dbversion"] = [r[:-1] for r in rows["dbversion"]]  # its last column: when made
    return rows


def test_a_sql_process_replay_loads_no_sqlalchemy_and_writes_the_same_rows(
    tmp_path: Path,
) -> None:
    run = generate(tmp_path / "run", 30, seed=7, name="lazy").dagman_out
    light, built = tmp_path / "light.db", tmp_path / "built+daemon.db"  # '+': not plain
    assert not _replay(run, f"sqlite:///{light}")
    assert _replay(run, f"sqlite:///{built}")
    rows = _rows(light)
    assert sum(map(len, rows.values())) > 100
    assert rows == _rows(built)
