"""A real tracing backend: ``monitord replay -d otlp+http://…`` of a corpus sample into Arize
Phoenix (``phoenix serve`` from its side venv, scripts/phoenix-venv.sh), then

- the spans read back through Phoenix's REST API are the golden trace (ids, names, parents,
  times, status, attributes, span events), and
- Phoenix's UI, in headless Chromium, draws the trace's waterfall: a row per span, under its
  parent, with a bar where the golden trace says the span started and ended; the screenshot
  of it is docs/img/trace-waterfall.png (``MONITORD_WRITE_SCREENSHOT=1`` rewrites it).

Phoenix takes the place of the project's own receiver (tests/test_otlp_e2e.py): a backend
that was not written to agree with the sink.  Skips without Phoenix outside CI; fails in CI.
"""

from __future__ import annotations

import json
import os
import struct
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cdp import Page, chromium_page
from tests.conftest import CORPUS, PROJECT, require_corpus
from tests.otlp_fixtures import golden
from tests.phoenix import Phoenix, find_phoenix
from tests.test_otlp_e2e import _run_dir, replay
from tests.test_otlp_golden import normalised
from tests.test_service_status_page import need_chromium

SAMPLE = "hierarchical_wf_success"
SCREENSHOT = PROJECT / "docs" / "img" / "trace-waterfall.png"
PNG = b"\x89PNG\r\n\x1a\n"
#: under load Phoenix stores a batch it has answered 200 to some seconds later
INGEST_TIMEOUT = 120.0
#: each row of the trace tree, in its order: its span's name, its depth in the tree, and its
#: bar's place in % of the trace's time
ROWS_JS = """
[...document.querySelectorAll('.span-node-wrap')].map(row => {
  const bar = row.querySelector('.timeline-bar__bar');
  return [
    row.querySelector('.span-node__heading').textContent,
    +row.style.getPropertyValue('--trace-tree-nesting-level'),
    +bar.dataset.startPercentage,
    +bar.dataset.endPercentage,
  ];
})
"""


def without_kind_and_links(trace: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The golden trace less what Phoenix does not keep (tests/phoenix.py ``canonical``)."""
    return [{k: v for k, v in span.items() if k not in ("kind", "links")} for span in trace]


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory):
    """Phoenix, started once for the module, with the sample's replay sent to it."""
    require_corpus()
    exe = find_phoenix()
    tmp = tmp_path_factory.mktemp("phoenix")
    server = Phoenix(exe, tmp / "phoenix")
    try:
        server.start()
        run = _run_dir(CORPUS / SAMPLE / "input", tmp)
        replay(run, server.otlp_url)
        yield server, run
    finally:
        server.stop()


def stored_spans(server: Phoenix, run: Path, count: int) -> list[dict[str, Any]]:
    """What Phoenix stored, once it holds ``count`` spans (it writes batches in the background)."""
    deadline = time.monotonic() + INGEST_TIMEOUT
    while True:
        got = normalised(server.spans(), run)
        if len(got) >= count or time.monotonic() > deadline:
            return got
        time.sleep(0.5)


def test_spans_read_back_from_phoenix_are_the_golden_trace(phoenix: tuple[Phoenix, Path]) -> None:
    server, run = phoenix
    want = golden(SAMPLE)
    assert not any(span["links"] for span in want), "this sample's links would go unchecked"
    want = without_kind_and_links(want)
    got = stored_spans(server, run, len(want))
    assert [s["span_id"] for s in got] == [s["span_id"] for s in want]
    for g, w in zip(got, want, strict=True):
        assert g == w, f"span {w['name']} {w['span_id']} differs in Phoenix"


Bar = tuple[str, str | None, float, float]


def _bars_of(trace: list[dict[str, Any]]) -> list[Bar]:
    """Each span's name, its parent's name, and where its bar should be, in % of the trace's
    time (Phoenix's waterfall spans the root span)."""
    start = min(s["start_ns"] for s in trace)
    length = max(s["end_ns"] for s in trace) - start
    name_of = {s["span_id"]: s["name"] for s in trace}
    return sorted(
        (
            s["name"],
            name_of.get(s["parent_span_id"] or ""),
            100 * (s["start_ns"] - start) / length,
            100 * (s["end_ns"] - start) / length,
        )
        for s in trace
    )


def _bars_shown(rows: list[tuple[str, int, float, float]]) -> list[Bar]:
    """The rows of the tree as ``_bars_of`` gives spans: a row's parent is the row above it
    one level up."""
    above: list[str] = []
    out = []
    for name, level, start, end in rows:
        del above[level:]
        out.append((name, above[-1] if above else None, start, end))
        above.append(name)
    return sorted(out)


async def _frame_the_tree(page: Page) -> dict[str, float]:
    """Widen the trace drawer and its tree (the bars take a third of a tree wider than 800 px,
    and are hidden in one narrower than 500 px); the region to photograph."""

    def rect(selector: str) -> str:
        return f"JSON.stringify(document.querySelector({selector!r}).getBoundingClientRect())"

    handle = json.loads(await page.js(rect(".drawer__resize-handle")))
    mid = handle["top"] + handle["height"] / 2
    await page.drag(handle["left"] + handle["width"] / 2, mid, 1, mid)
    tree = json.loads(await page.js(rect("#trace-tree")))
    await page.drag(tree["right"] + 0.5, mid, 1230, mid)
    tree = json.loads(await page.js(rect("#trace-tree")))
    handle = json.loads(await page.js(rect(".drawer__resize-handle")))
    bottom = await page.js(
        "Math.max(...[...document.querySelectorAll('.span-node__heading')]"
        ".map(e => e.getBoundingClientRect().bottom))"
    )
    top = handle["top"]
    return {
        "x": handle["right"],
        "y": top,
        "width": tree["right"] - handle["right"],
        "height": min(bottom + 24, tree["bottom"]) - top,
        "tree_width": tree["width"],
        "unseen": max(0, bottom - tree["bottom"]),
    }


async def test_phoenix_ui_draws_the_trace_waterfall(
    phoenix: tuple[Phoenix, Path], tmp_path: Path
) -> None:
    need_chromium()
    server, run = phoenix
    want = golden(SAMPLE)
    assert len(stored_spans(server, run, len(want))) == len(want)
    trace_id = want[0]["trace_id"]
    async with chromium_page(tmp_path / "profile", 1600, 2200) as page:
        # the redirect finds the trace's project by its OpenTelemetry id
        await page.call("Page.navigate", url=f"{server.url}/redirects/traces/{trace_id}")
        bars = f"document.querySelectorAll('.timeline-bar__bar').length >= {len(want)}"
        await page.wait_for(bars, timeout=120)
        rows = _bars_shown([tuple(row) for row in await page.js(ROWS_JS)])
        region = await _frame_the_tree(page)
        tree_width, unseen = region.pop("tree_width"), region.pop("unseen")
        png = await page.screenshot(**region)
    expected = _bars_of(want)
    assert [row[:2] for row in rows] == [span[:2] for span in expected]  # names, parents
    for (name, _, start, end), (_, _, w_start, w_end) in zip(rows, expected, strict=True):
        assert abs(start - w_start) < 0.5 and abs(end - w_end) < 0.5, (name, start, end)
    assert tree_width > 500, f"the tree is {tree_width} px wide: Phoenix hides its bars"
    assert png.startswith(PNG)
    width, height = struct.unpack(">II", png[16:24])  # IHDR
    assert (width, height) == (round(region["width"]), round(region["height"]))
    assert unseen == 0, f"the last rows are {unseen} px below the tree's bottom"
    # a region of one colour compresses to a few KB; the rows, bars and text do not
    assert len(png) > 30_000, len(png)
    (tmp_path / "trace-waterfall.png").write_bytes(png)
    if os.environ.get("MONITORD_WRITE_SCREENSHOT") == "1":
        SCREENSHOT.write_bytes(png)


def test_docs_show_the_waterfall_screenshot() -> None:
    """docs/traces.md shows the screenshot the test above takes; a small PNG."""
    assert "(img/trace-waterfall.png)" in (PROJECT / "docs" / "traces.md").read_text()
    data = SCREENSHOT.read_bytes()
    assert data.startswith(PNG)
    assert 30_000 < len(data) < 300_000, len(data)
