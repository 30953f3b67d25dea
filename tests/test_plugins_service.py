"""Event plugins in service mode: per followed workflow, with that workflow's properties."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CORPUS, require_corpus
from tests.plugin_fixtures import (
    events_in,
    expected_events,
    install_plugin_packages,
    journal,
    payload_differences,
)
from tests.test_service import (
    attach,
    finished,
    service_env,
    start_service,
    stop_service,
    wait_until,
    write_config,
)


@pytest.fixture(scope="module", autouse=True)
def plugins_installed() -> None:
    install_plugin_packages()


def test_each_workflow_runs_the_plugins_its_properties_enable(tmp_path: Path) -> None:
    require_corpus()
    from monitord.core.readers.braindump import read_braindump
    from monitord.tools.player import Player

    cfg = write_config(tmp_path)
    env = service_env(tmp_path, cfg)
    # workflow -> (sample, plugin its properties enable, that plugin's filter)
    plan = {
        "a": ("process_wf_success", "oldstyle", None),
        "b": ("process_wf_failure", "ticker", ("stampede.job_inst.",)),
    }
    service = start_service(cfg, env, tmp_path / "service.log")
    try:
        players = []
        for key, (sample, plugin, _) in plan.items():
            dest = tmp_path / key / "run"
            dest.parent.mkdir(parents=True)
            player = Player(str(CORPUS / sample / "input"), str(dest), lines_per_second=400)
            player.prepare()
            props = dest / str(read_braindump(str(dest)).properties)
            with props.open("a", encoding="utf-8") as fh:
                fh.write(
                    f"\npegasus.monitord.plugins.{plugin}.enabled = true\n"
                    f"pegasus.monitord.plugins.{plugin}.output = {tmp_path / key}.jsonl\n"
                )
            name = next((CORPUS / sample / "input").glob("*.dag.dagman.out")).name
            attached = attach(dest / name, env, "--no-dashboard")
            assert attached.returncode == 0, attached.stderr
            players.append(player)
        for player in players:
            player.start()
        for player in players:
            player.join(120)
        for key in plan:
            run = tmp_path / key / "run"
            wait_until(lambda d=run: finished(d), 60, f"{run} to be finished")
    finally:
        assert stop_service(service) == 0
    for key, (sample, _, prefixes) in plan.items():
        records = journal(tmp_path / f"{key}.jsonl")
        assert records and records[0]["hook"] == "start" and records[-1]["hook"] == "stop"
        bp = CORPUS / sample / "expected" / "events.bp"
        assert payload_differences(events_in(records), expected_events(bp, prefixes)) == [], key
