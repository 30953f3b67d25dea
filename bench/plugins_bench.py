#!/usr/bin/env python3
"""Replay cost of event plugins: the same synthetic workflow with 0 and with N no-op plugins.

Uses replay_bench's generator and launcher (fresh copy per replay, same seed,
per-run peak RSS and CPU) and runs the two configurations alternately for
``--rounds`` rounds, so the shared machine's noise hits both alike.  The no-op
plugins (``noop``, ``noop2``, ``noop3`` of tests/plugins/contract_plugins, which
this script pip-installs where the tests do, not into the venv) take every event under the default policy (spool),
so the figure includes each plugin's runtime thread (which calls its hooks) and the
payload built per event per plugin.

    python bench/plugins_bench.py                 # 2000 jobs, 3 plugins, 3 rounds
    python bench/plugins_bench.py --jobs 5000 --plugins 3 --rounds 2 --policy drop-newest
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from replay_bench import Side, check_counts, default_ours_cmd, replay  # noqa: E402

from tests.plugin_fixtures import CONTRACT_PLUGINS, install_plugin_packages  # noqa: E402

NOOPS = ("noop", "noop2", "noop3")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=2000)
    p.add_argument("--plugins", type=int, default=3, choices=range(1, len(NOOPS) + 1))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--policy", default="spool", help="overflow_policy of the plugins")
    p.add_argument("--isolation", default="thread", help="thread or process")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    args.retry_fraction, args.name, args.events, args.timeout = 0.05, "synthetic", False, 600
    install_plugin_packages(CONTRACT_PLUGINS)  # and on PYTHONPATH for the daemons started here
    base = default_ours_cmd()
    with_plugins = list(base)
    for name in NOOPS[: args.plugins]:
        prefix = f"-Dpegasus.monitord.plugins.{name}."
        with_plugins[1:1] = [
            f"{prefix}enabled=true",
            f"{prefix}overflow_policy={args.policy}",
            f"{prefix}isolation={args.isolation}",
        ]
    configs = {"0 plugins": base, f"{args.plugins} no-op plugins": with_plugins}
    walls: dict[str, list[float]] = {k: [] for k in configs}
    cpus: dict[str, list[float]] = {k: [] for k in configs}
    rss: dict[str, list[float]] = {k: [] for k in configs}
    bad = []
    with tempfile.TemporaryDirectory(prefix="plugins-bench-") as tmp:
        for rnd in range(args.rounds):
            for label, cmd in configs.items():
                run, gen = replay(Side("ours", cmd), args, args.jobs, Path(tmp) / f"r{rnd}", False)
                walls[label].append(run.wall_s)
                cpus[label].append(run.cpu_s)
                rss[label].append(run.peak_rss_mb)
                bad += [f"{label}: exit {run.rc}"] if run.rc else []
                bad += [f"{label}: {d}" for d in check_counts(run, gen)]
                print(f"  round {rnd + 1} {label}: {run.wall_s:.2f} s", file=sys.stderr)
    print(
        f"{args.jobs} jobs ({gen.expected.job_instances} instances), "
        f"policy {args.policy}, isolation {args.isolation}, {args.rounds} rounds"
    )
    print(
        f"{'config':<18} {'wall s (median)':>16} {'min':>7} {'max':>7} {'cpu s':>7} {'peak MB':>8}"
    )
    for label in configs:
        w = walls[label]
        print(
            f"{label:<18} {statistics.median(w):>16.2f} {min(w):>7.2f} {max(w):>7.2f} "
            f"{statistics.median(cpus[label]):>7.2f} {statistics.median(rss[label]):>8.1f}"
        )
    for note in bad:
        print(f"note: {note}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
