"""The HTML status page rendered by a real browser: Debian's headless Chromium.

The page is served with workflows a third of the way in; by the time its inline script fetches
status.json the workflows have been fed to the end.  The DOM Chromium dumps must hold the final
counts, so the script ran (under the page's Content-Security-Policy) and rebuilt the rows.
"""

from __future__ import annotations

import asyncio
import calendar
import os
import re
import shutil
import time
from html.parser import HTMLParser

import pytest

from monitord.service.http import start_http
from monitord.service.jobcounts import job_counts, percent_done
from monitord.service.status import JOB_COLUMNS, ServiceSnapshot, WatchedRootStatus
from sinks.runtime.health import SinkHealth
from tests.status_fixtures import (
    CorpusStatusSource,
    FedWorkflow,
    RootRows,
    corpus_dagman_outs,
    fed_workflow,
    need_corpus,
)

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
HOSTILE = "<img src=x onerror=\"document.title='owned'\">&amp;"


def need_chromium() -> None:
    if os.path.exists(CHROMIUM):
        return
    reason = "chromium not installed (Debian package `chromium`; scripts/install-test-tools.sh)"
    if os.environ.get("CI") == "true":
        pytest.fail(reason + " but CI=true: the status page must be checked in CI")
    pytest.skip(reason)


class ProgressingSource(CorpusStatusSource):
    """First snapshot: workflows part-way; from the second on, every line has been fed."""

    def __init__(self, fed: list[FedWorkflow], rest: list[list[str]]) -> None:
        super().__init__(fed, [SinkHealth(HOSTILE, queued=2, spooled=1)])
        self.rest = rest

    def snapshot(self) -> ServiceSnapshot:
        if self.calls == 1:
            for f, lines in zip(self.fed, self.rest, strict=True):
                for line in lines:
                    f.feed(line)
        snap = super().snapshot()
        # a watched root's count is the number of snapshots taken: the page's script shows its own
        snap.roots = [
            WatchedRootStatus(HOSTILE, True, self.calls),
            WatchedRootStatus("/data/later", False, 0, "does not exist"),
        ]
        return snap


class RowReader(HTMLParser):
    """Rows of the workflows table (``data-wf-uuid`` -> cell texts) and a few marked elements."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, list[str]] = {}
        self.text_of: dict[str, str] = {}
        self.body_attrs: dict[str, str | None] = {}
        self.titles: dict[str, str | None] = {}
        self.tags: set[str] = set()
        self.texts: list[str] = []
        self._row: str | None = None
        self._cell: list[str] | None = None
        self._id: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        if tag == "body":
            self.body_attrs = a
        if tag == "tr" and a.get("data-wf-uuid"):
            self._row = a["data-wf-uuid"]
            self.titles[self._row] = a.get("title")
            self.rows[self._row] = []
        elif tag == "td" and self._row is not None:
            self._cell = []
        if a.get("id") in ("updated", "notifications"):
            self._id = a["id"]
            self.text_of[self._id] = ""

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None and self._row is not None:
            self.rows[self._row].append("".join(self._cell))
            self._cell = None
        elif tag == "tr":
            self._row = None
        elif tag in ("span", "p"):
            self._id = None

    def handle_data(self, data):
        self.texts.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._id is not None:
            self.text_of[self._id] += data


async def render_dom(url: str, profile: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=3000",
        "--dump-dom",
        url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "HOME": profile},
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout=90)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode == 0, err.decode(errors="replace")[-2000:]
    return out.decode()


async def test_status_page_in_headless_chromium(tmp_path, corpus_tz):
    need_corpus()
    need_chromium()
    fed, rest = [], []
    for path in corpus_dagman_outs():
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        cut = len(lines) // 3
        fed.append(fed_workflow(path, lines=cut))
        rest.append(lines[cut:])
    source = ProgressingSource(fed, rest)
    early = {f.wf.uuid: job_counts(f.wf) for f in fed}
    # A hostile directory name must come out as text, not markup.
    fed[0].wf.run_dir = fed[0].wf.run_dir + "/<img src=x>"
    srv = await start_http(source, "127.0.0.1:0")
    port = srv.sockets[0].getsockname()[1]
    try:
        dom = await render_dom(f"http://127.0.0.1:{port}/status", str(tmp_path / "profile"))
    finally:
        srv.close()
        await srv.wait_closed()
    assert source.calls >= 2, "the page's script never fetched status.json"
    reader = RowReader()
    reader.feed(dom)
    assert reader.body_attrs.get("data-refreshes") not in (None, "0"), dom[-3000:]
    # the script's clock in UTC as the server's times, not in the browser's zone (the corpus's)
    m = re.fullmatch(r"updated (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC", reader.text_of["updated"])
    assert m, reader.text_of
    assert abs(calendar.timegm(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")) - time.time()) < 600
    assert "All times are UTC." in " ".join(" ".join(reader.texts).split())
    assert reader.text_of["notifications"] == "1 running, 2 queued"
    assert set(reader.rows) == {f.wf.uuid for f in fed}
    changed = 0
    for f in fed:
        counts = job_counts(f.wf)
        cells = reader.rows[f.wf.uuid]
        shown = dict(zip(JOB_COLUMNS, (int(c) for c in cells[: len(JOB_COLUMNS)]), strict=True))
        assert shown == counts
        assert cells[len(JOB_COLUMNS)] == f"{percent_done(counts):.1f}"
        assert cells[len(JOB_COLUMNS) + 1] in ("success", "failure")
        assert cells[len(JOB_COLUMNS) + 2] == f.dagman_out.name.removesuffix(".dagman.out")
        changed += counts != early[f.wf.uuid]
    assert changed, "the workflows did not progress between the page and status.json"
    assert "img" not in reader.tags
    assert HOSTILE in reader.texts  # the sink's name, shown as text
    assert reader.titles[fed[0].wf.uuid] == fed[0].wf.run_dir
    roots = RootRows()
    roots.feed(dom)
    assert roots.rows == [
        [HOSTILE, "yes", str(source.calls)],
        ["/data/later", "no (does not exist, waiting for it)", "0"],
    ], roots.rows
