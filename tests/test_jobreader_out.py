"""A ``.out`` file's parse carries what the output parse takes from it whatever the job's state
(``monitord/core/jobreader.py``): made where the file is parsed, by the read-ahead worker in a
large replay, and taken as it is by the daemon's ``parse_job_output`` (issue 30)."""

from __future__ import annotations

import dataclasses

import pytest

from monitord.core.jobinstance import JobInstance
from monitord.core.jobout import parse_job_output
from monitord.core.jobout_events import JobFiles
from monitord.core.jobreader import ParsingReader, parse_out
from monitord.core.jobtext import stdout_text_from_records, stdout_text_without_kickstart
from monitord.core.timeparse import iso_to_epoch

pytestmark = pytest.mark.quick  # pure unit tests

RECORD = """- invocation: True
  version: 3.0
  start: {start}
  duration: 2.5
  transformation: "keg"
  resource: "local"
  hostname: h1
  mainjob:
    start: {start}
    duration: 2.5
    usage:
      utime: 1.0
      stime: 0.5
    status:
      raw: 0
      regular_exitcode: 0
    executable:
      file_name: /bin/keg
  files:
    stdout:
      data: |
        out of {n} with 'quotes' and %
    stderr:
      data: |
        @@@MONITORING_PAYLOAD - START@@@{{"monitoring_event": "x", "payload": [{{"a": {n}}}]}}@@@MONITORING_PAYLOAD - END@@@
"""


def test_the_stdout_text_payloads_and_starts_are_those_the_records_give() -> None:
    starts = ["2023-02-04T18:20:43.744-08:00", "2023-02-04T18:21:00-08:00"]
    task = '[cluster-task id=1, start="{}", duration=2.5, status=0, app="/bin/keg"]\n'
    text = "".join(task.format(s) + RECORD.format(start=s, n=n) for n, s in enumerate(starts))
    found = parse_out(text)
    assert [r.kind for r in found.records] == ["task", "invocation", "task", "invocation"]
    assert (found.stdout_text, found.payloads) == stdout_text_from_records(found.records)
    assert found.payloads and "%27quotes%27" in found.stdout_text
    assert found.starts == tuple(int(iso_to_epoch(s) or 0) for s in starts)


def test_without_records_the_text_is_the_files_own() -> None:
    text = "plain output @@@MONITORING_PAYLOAD - START@@@{}@@@MONITORING_PAYLOAD - END@@@ end\n"
    found = parse_out(text)
    assert found.records == [] and found.starts == ()
    assert (found.stdout_text, found.payloads) == stdout_text_without_kickstart(text)


class _Handed(ParsingReader):
    """A reader whose ``.out`` answer is changed after the parse: what the daemon takes."""

    def out_file(self, path: str):  # type: ignore[no-untyped-def]
        found = super().out_file(path)
        return found and dataclasses.replace(found, stdout_text="HANDED", starts=(7,))


def test_the_daemon_takes_them_as_handed_in() -> None:
    text = RECORD.format(start="2023-02-04T18:20:43-08:00", n=1)
    files = {"/run/job_1.out": text, "/run/job_1.err": ""}
    reader = _Handed(files.get)
    inst = JobInstance("job_1", 1, "/run")
    jf = JobFiles(files.get, "/run", "u", False, False, True, reader=reader)
    out = parse_job_output(inst, jf, 100.0)
    assert inst.stdout_text == "HANDED"
    inv_end = out.events[1]
    assert inv_end.name == "inv.end" and dict(inv_end.wire_items())["start_time"] == 7


@pytest.mark.parametrize("store", [True, False])
def test_without_records_the_payloads_count_only_when_the_text_is_kept(store: bool) -> None:
    item = '{"event": "check", "file_type": "input", "count": 1, "failed": 0, "duration": 0.5}'
    payload = f'{{"monitoring_event": "int.metric", "payload": [{item}]}}'
    text = f"@@@MONITORING_PAYLOAD - START@@@{payload}@@@MONITORING_PAYLOAD - END@@@\n"
    files = {"/run/job_1.out": text, "/run/job_1.err": ""}
    inst = JobInstance("job_1", 1, "/run")
    jf = JobFiles(files.get, "/run", "u", False, False, store)
    out = parse_job_output(inst, jf, 100.0)
    metrics = [e for e in out.events if e.name == "int.metric"]
    assert len(metrics) == (1 if store else 0)
    assert (inst.stdout_text is not None) is store
