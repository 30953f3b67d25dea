"""What README.md and docs/*.md name is what the code has (issue 27: every claim checked).

Two kinds of name are checked mechanically, so a rename that leaves a page behind fails here:
every Prometheus series a page names is one the service's or the ingest's ``/metrics``
exposes (or a table the code creates, for the ``monitord_*`` tables); every ``--option`` a
page names is an option some command of the project declares (``add_argument``, or the
shell scripts' own options).
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest
from prometheus_client import generate_latest

from monitord.ingest.metrics import IngestStats, registry
from monitord.service.metrics import render_metrics
from monitord.service.status import ServiceSnapshot
from tests.conftest import PROJECT

pytestmark = pytest.mark.quick

PAGES = [PROJECT / "README.md", *sorted((PROJECT / "docs").glob("*.md"))]
_SERIES = re.compile(r"`(monitord_\w+|_\w+)(?:\{[^`]*\})?`")
_OPTION = re.compile(r"(?:^|[\s`(\[])(--[a-z][a-z0-9-]+)")


def _paragraphs(page: Path) -> list[str]:
    return re.split(r"\n\s*\n", page.read_text(encoding="utf-8"))


def _named_series() -> dict[str, set[str]]:
    """Per series named on a page, the pages naming it; `_queued` after `monitord_sink_up` in
    a paragraph is `monitord_sink_queued` (the pages list a family's members so)."""
    out: dict[str, set[str]] = {}
    for page in PAGES:
        for para in _paragraphs(page):
            family = None
            for name in _SERIES.findall(para):
                if name.startswith("monitord_"):
                    family = re.match(r"monitord_[a-z]+_", name)
                    full = name
                elif family is not None:
                    full = family[0] + name[1:]
                else:
                    continue
                out.setdefault(full, set()).add(page.name)
    return out


def _exposed() -> set[str]:
    service = render_metrics(ServiceSnapshot(started_at=0.0))
    stats = IngestStats()
    stats.last_commit = 1.0
    ingest = generate_latest(registry(stats)).decode()
    return set(re.findall(r"^# TYPE (\S+)", service + ingest, re.M))


def _tables() -> set[str]:
    """``monitord_*`` names the code creates as tables (delivery marks, the ingest's marks)."""
    text = "\n".join(
        p.read_text(encoding="utf-8")
        for p in [*(PROJECT / "sinks" / "sql").glob("*.py"), PROJECT / "monitord/ingest/store.py"]
    )
    return set(re.findall(r"""["'](monitord_\w+)["']""", text))


def test_every_metric_a_page_names_is_exposed() -> None:
    named = _named_series()
    assert {"monitord_sink_up", "monitord_sink_queued", "monitord_ingest_batches_total"} <= set(
        named
    )  # the parse reads the lists as the pages write them
    known = _exposed() | _tables()
    missing = {name: sorted(pages) for name, pages in named.items() if name not in known}
    assert not missing, f"series the pages name that /metrics does not expose: {missing}"


@cache
def _declared_options() -> set[str]:
    """Every ``--option`` a call of the project declares (``add_argument("--x", ...)``, the
    CLI's option table ``_opt("--x", ...)``), and those the shell scripts compare an argument
    with (``"--quick"``)."""
    found: set[str] = set()
    for root in ("monitord", "sinks", "notifications", "bench", "tests", "scripts"):
        for path in (PROJECT / root).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call):
                    found.update(
                        a.value
                        for a in node.args
                        if isinstance(a, ast.Constant)
                        and isinstance(a.value, str)
                        and a.value.startswith("--")
                    )
    for script in (PROJECT / "scripts").glob("*.sh"):
        found.update(re.findall(r'"(--[a-z][a-z0-9-]+)"', script.read_text(encoding="utf-8")))
    return found | {"--help"}


def test_every_option_a_page_names_is_declared() -> None:
    named: dict[str, set[str]] = {}
    for page in PAGES:
        for line in page.read_text(encoding="utf-8").splitlines():
            if "-->" in line:  # an arrow of a diagram, not an option
                continue
            for option in _OPTION.findall(line):
                named.setdefault(option, set()).add(page.name)
    assert {"--no-dashboard", "--state-dir"} <= set(named)
    missing = {o: sorted(p) for o, p in named.items() if o not in _declared_options()}
    assert not missing, f"options the pages name that no command declares: {missing}"
