"""Many live daemons, one dashboard (issue 21): 20 daemons follow 20 workflows being played.

Its own module (helpers in :mod:`tests.test_db_contention`) so that a parallel run gives it a
worker of its own.  ``MONITORD_CONTENTION_ROUNDS`` (default 5) sets the rounds.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from monitord.tools.player import Player
from monitord.tools.synthetic import generate
from tests.test_db_contention import (
    DASHBOARD_DAEMONS,
    JOBS,
    LIVE_RATE,
    ROUNDS,
    assert_clean,
    dashboard_rows,
    expected_dashboard,
    start_together,
)
from tests.test_sql_servers import replay_env


def test_live_daemons_share_one_dashboard(tmp_path: Path) -> None:
    """20 live daemons, started together, follow 20 workflows being played, with one HOME: the
    dashboard holds every workflow and state as each daemon's own workflow database has them."""
    started = time.perf_counter()
    for rnd in range(ROUNDS):
        home = tmp_path / f"home{rnd}"
        # fresh workflows every round
        sources = [
            generate(
                tmp_path / f"src{rnd}" / f"wf{i}", JOBS, seed=4200 + 100 * rnd + i, name=f"live{i}"
            )
            for i in range(DASHBOARD_DAEMONS)
        ]
        players = [
            Player(
                str(g.dagman_out.parent),
                str(tmp_path / f"run{rnd}" / f"wf{i}"),
                lines_per_second=LIVE_RATE,
            )
            for i, g in enumerate(sources)
        ]
        for player in players:
            player.prepare()
        runs = [(Path(p.dest), [g.dagman_out.name]) for p, g in zip(players, sources, strict=True)]
        released = threading.Event()
        threads = [threading.Thread(target=_play_at, args=(p, released)) for p in players]
        for thread in threads:
            thread.start()
        try:
            results = start_together(runs, replay_env(home), tmp_path / f"r{rnd}", released)
        finally:
            for player in players:
                player.stop.set()
            for thread in threads:
                thread.join(60)
        assert all(p.error is None for p in players), [p.error for p in players]
        dbs = [  # in the played copy the daemon followed (never the source: issue 29)
            (g.wf_uuid, Path(p.dest) / g.dagman_out.name.replace(".dag.dagman.out", ".stampede.db"))
            for p, g in zip(players, sources, strict=True)
        ]
        expected = expected_dashboard(dbs)
        got = dashboard_rows(home / ".pegasus" / "workflow.db")
        assert sorted(got) == sorted(expected), f"round {rnd}: {len(got)} of {len(expected)}"
        assert got == expected
        assert_clean(results)
    print(
        f"\nlive dashboard: {ROUNDS} rounds of {DASHBOARD_DAEMONS} live daemons started together "
        f"in {time.perf_counter() - started:.1f} s"
    )


def _play_at(player: Player, released: threading.Event) -> None:
    """Play once the daemons are released (the play and the daemons' opening overlap)."""
    while not released.wait(0.5):  # (a blocking wait: 20 threads polling shared the GIL)
        if player.stop.is_set():
            return
    try:
        player.run()
    except Exception as exc:  # reported by the test
        player.error = exc
