"""Two workflows that register the same files, replayed one after the other into one database.

    .venv/bin/python bench/shared_files_bench.py --url postgresql://USER:PW@HOST/DB [--jobs 300]
        [--seed 1] [--code DIR]

Both are generated side by side (one parent directory: their register jobs name the same PFNs;
distinct seeds: distinct uuids), into a scratch database ``<DB>_shared_bench`` created on the
server of ``--url`` (and dropped at the end).  Printed: each replay's wall time, and the lines of
the second one's log that say a batch fell back to row-by-row writes or a row was rejected
(issue 23: the second workflow's ``rc_pfn`` rows exist already).  ``--code DIR`` runs the
replays with another checkout of the project first on ``PYTHONPATH`` (e.g. ``git archive main``
unpacked into DIR) to compare with it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import text
from sqlalchemy.engine import make_url

from monitord.tools.synthetic import generate
from sinks.sql.database import make_engine, parse_url, safe_url


def _admin(url: str, sql: str) -> None:
    engine = make_engine(parse_url(url), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text(sql))
    finally:
        engine.dispose()


def _scratch(url: str) -> str:
    base = make_url(url)
    name = f"{base.database}_shared_bench"
    quoted = f"`{name}`" if base.drivername.startswith("mysql") else f'"{name}"'
    _admin(url, f"DROP DATABASE IF EXISTS {quoted}")
    _admin(url, f"CREATE DATABASE {quoted}")
    return base.set(database=name).render_as_string(hide_password=False)


def _drop(url: str, scratch: str) -> None:
    name = make_url(scratch).database
    quoted = f"`{name}`" if make_url(url).drivername.startswith("mysql") else f'"{name}"'
    _admin(url, f"DROP DATABASE IF EXISTS {quoted}")


def _replay(dagman_out: Path, url: str, env: dict[str, str]) -> tuple[float, str]:
    cmd = [sys.executable, "-m", "monitord.cli", "--no-dashboard", "-d", url, "-r"]
    started = time.perf_counter()
    proc = subprocess.run(
        [*cmd, dagman_out.name],
        cwd=dagman_out.parent,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(
            f"replay of {dagman_out} failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
        )
    return elapsed, proc.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("MONITORD_TEST_POSTGRES_URL"))
    parser.add_argument("--jobs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--code", type=Path, help="a checkout to run the replays with")
    args = parser.parse_args()
    if not args.url:
        parser.error("--url (or MONITORD_TEST_POSTGRES_URL) is required")
    scratch = _scratch(args.url)
    try:
        with tempfile.TemporaryDirectory(prefix="shared-bench-") as tmp:
            base = Path(tmp)
            made = [
                generate(base / "src" / f"wf{i}", args.jobs, seed=args.seed + i, name=f"wf{i}")
                for i in range(2)
            ]
            home = base / "home"
            home.mkdir()
            env = {**os.environ, "TZ": "America/Los_Angeles", "HOME": str(home)}
            if args.code is not None:
                env["PYTHONPATH"] = str(args.code.resolve())
            times = []
            for g in made:
                elapsed, err = _replay(g.dagman_out, scratch, env)
                times.append(elapsed)
            lines = err.splitlines()
            fallbacks = sum("row by row" in line for line in lines)
            rejected = sum("rejected row" in line for line in lines)
            errors = sum("[error" in line for line in lines)
    finally:
        _drop(args.url, scratch)
    code = args.code or Path(__file__).resolve().parents[1]
    print(f"code: {code}; database: {safe_url(scratch)}; {args.jobs} jobs per workflow")
    print(f"first replay  (new files):      {times[0]:7.2f} s")
    print(f"second replay (files existing): {times[1]:7.2f} s")
    print(
        f"second replay's log: {fallbacks} row-by-row fallback lines, {rejected} "
        f"'rejected row' lines, {errors} error lines"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
