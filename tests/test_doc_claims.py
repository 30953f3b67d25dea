"""What README.md and docs/*.md name is what the code has (issue 27: every claim checked).

Two kinds of name are checked mechanically, so a rename that leaves a page behind fails here:
every Prometheus series a page names is one the service's or the ingest's ``/metrics``
exposes (or a table the code creates, for the ``monitord_*`` tables); every ``--option`` a
page names is an option string of the project's code (the CLI's option table,
``add_argument``, the scripts); every ``MONITORD_*`` environment variable a page names is read
by the code, with the default the page states.
"""

from __future__ import annotations

import importlib
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
def _code_text() -> str:
    paths = [
        p
        for root in ("monitord", "sinks", "notifications", "scripts", "tests", "bench")
        for pattern in ("*.py", "*.sh")
        for p in (PROJECT / root).rglob(pattern)
        if p.name != Path(__file__).name
    ]
    return "\n".join(p.read_text(encoding="utf-8") for p in paths)


@cache
def _declared_options() -> set[str]:
    """Every ``"--option"`` string of the project's code and scripts: the CLI's option table
    (``_opt("--x", ...)``), ``add_argument``, the shell scripts' ``"--quick"``, and the
    command lines the tests run (which fail if the option is gone)."""
    return set(re.findall(r"""["'](--[a-z][a-z0-9-]+)["']""", _code_text())) | {"--help"}


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


_ENV = re.compile(r"`(MONITORD_[A-Z_]+)(?:=\w+)?`(?:[^.;`]{0,40}?default\s+(\d+))?")


def test_every_environment_variable_a_page_names_is_read_with_the_default_it_states() -> None:
    texts = [page.read_text(encoding="utf-8") for page in PAGES]
    named = {(m[0], m[1]) for text in texts for m in _ENV.findall(text)}
    assert {"MONITORD_TEST_WORKERS", "MONITORD_KILL_SEED"} <= {v for v, d in named if d}
    code = _code_text()
    every = {v for text in texts for v in re.findall(r"\bMONITORD_[A-Z_]+[A-Z]", text)}
    unread = sorted(var for var in every if not re.search(rf"\b{var}\b", code))
    assert not unread, f"environment variables the pages name that nothing reads: {unread}"
    wrong = sorted(
        f"{var} (default {default})"
        for var, default in named
        if default
        and not re.search(rf"""{var}["'], ["']?{default}\b|\${{{var}:-{default}}}""", code)
    )
    assert not wrong, f"defaults the pages state that the code does not use: {wrong}"


_FILE = re.compile(
    r"`((?:monitord|sinks|notifications|tests|scripts|bench|conf|systemd)/[\w./-]+)`"
)
_BESIDE = re.compile(r"`((?:monitord|sinks|notifications)/[\w/]+\.py)` `([\w.]+)`")


def _defines(text: str, name: str) -> bool:
    """``name`` is a class, function or assignment of ``text``."""
    return bool(
        re.search(rf"^\s*(?:class|def|async def) {name}\b|^\s*{name}\s*(?::[^=]*)?=", text, re.M)
    )


def test_every_project_file_a_page_names_exists() -> None:
    """Named from the project's top (``monitord/core/...``, not ``core/...``), and there."""
    named = {(page.name, path) for page in PAGES for path in _FILE.findall(page.read_text())}
    assert ("architecture.md", "monitord/daemon/monitor.py") in named
    missing = sorted((p, f) for p, f in named if not (PROJECT / f).exists())
    assert not missing, f"files the pages name that do not exist: {missing}"
    partial = {
        (page.name, path)
        for page in PAGES
        for path in re.findall(
            r"`((?:core|cli|daemon|runtime|readers)/[\w/]+\.py)`", page.read_text()
        )
    }
    assert not partial, f"files the pages name but not from the project's top: {partial}"


def test_every_name_written_beside_its_file_is_defined_there() -> None:
    named = {pair for page in PAGES for pair in _BESIDE.findall(page.read_text())}
    assert ("monitord/daemon/outputs.py", "helper_processes") in named
    wrong = sorted(
        (path, name)
        for path, name in named
        if not all(_defines((PROJECT / path).read_text(), part) for part in name.split("."))
    )
    assert not wrong, f"names the pages place in a file that does not define them: {wrong}"


def test_every_name_on_the_path_of_a_line_is_in_the_files_its_table_names() -> None:
    """docs/architecture.md's table of a line's steps: each class, function and constant a
    step names is defined in one of the files the table names (a rename fails here)."""
    rows = [x.split("|") for x in (PROJECT / "docs/architecture.md").read_text().splitlines()]
    steps = [row[3] + row[4] for row in rows if len(row) > 4 and row[1].strip().isdigit()]
    files = {f for step in steps for f in _FILE.findall(step) if f.endswith(".py")}
    text = "\n".join((PROJECT / f).read_text() for f in files)
    names = {n for step in steps for n in re.findall(r"`([A-Za-z_][\w.]*)`", step)} - {
        "asyncio.to_thread"
    }
    assert len(steps) == 7 and {"Monitor._feed", "classify_line", "BATCH"} <= names
    undefined = sorted(
        n for n in names if not all(re.search(rf"\b{p}\b", text) for p in n.split("."))
    )
    assert not undefined, f"names on the path of a line that its files do not have: {undefined}"


def test_every_module_the_table_of_layers_names_is_in_its_layer() -> None:
    """docs/architecture.md's layers: each module a layer's row names (``monitor``,
    ``spool/``, ...) is a module or package of that layer's packages."""
    rows = [x.split("|") for x in (PROJECT / "docs/architecture.md").read_text().splitlines()]
    layers = [row for row in rows if len(row) > 4 and re.fullmatch(r" \d [a-z, ]+ ", row[1])]
    assert len(layers) == 7
    wrong = []
    for row in layers:
        packages = [
            PROJECT / f"{top}{each}"
            for top, inner in re.findall(r"`([\w/]+/)\{?([\w,]*)\}?`", row[2])
            for each in inner.split(",")
        ]
        have = {
            p.stem
            for package in packages
            for p in package.rglob("*")
            if "__pycache__" not in p.parts
        }
        named = set(re.findall(r"`([a-z_]+)/?`", "|".join(row[3:])))
        wrong += sorted(f"{row[1].strip()}: {name}" for name in named - have - {"monitord"})
    assert not wrong, f"modules the table of layers names that its layer does not have: {wrong}"


def test_the_drop_in_takes_every_option_the_readme_says_it_takes() -> None:
    """README, "The drop-in": the reference's options and monitord's own it lists are
    ``pegasus-monitord``'s (``-D…`` properties are read before the options)."""
    from monitord.cli.options import build_parser

    text = (PROJECT / "README.md").read_text()
    listed = text[text.index("Every option of the reference") :].split("\n\n", 1)[0]
    named = set(re.findall(r"`(-[\w-]+)`", listed))
    assert {"-a", "--no-recursive", "--sql-process", "--no-read-ahead"} <= named
    shown = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", build_parser().format_help()))
    missing = sorted(named - shown)
    assert not missing, (
        f"options the README says pegasus-monitord takes that it does not: {missing}"
    )


# (page, what it says, the module and constant that decide it, the value that makes it true)
_FIGURES = [
    ("architecture.md", "reads dagman.out in 256 KiB chunks (`CHUNK`)", "monitord.daemon.chunks", "CHUNK", 256 << 10),
    ("architecture.md", "in batches of at most 5,000 (`BATCH`)", "monitord.daemon.plan_events", "BATCH", 5000),
    ("architecture.md", "every `CHUNK_PERIOD`, 0.1 s", "monitord.daemon.following", "CHUNK_PERIOD", 0.1),
    ("architecture.md", "`PUBLISH_PERIOD` (0.5 s;", "monitord.daemon.following", "PUBLISH_PERIOD", 0.5),
    ("architecture.md", "of 3 MiB or more, `PROCESS_FROM`", "monitord.daemon.outputs", "PROCESS_FROM", 3 << 20),
    ("README.md", "for 3 MiB of dagman.out or more", "monitord.daemon.outputs", "PROCESS_FROM", 3 << 20),
    ("architecture.md", "at least half a core below them, `SPARE`", "monitord.daemon.outputs", "SPARE", 0.5),
    ("architecture.md", "whose length stays within `SPILL` (96 MiB;", "monitord.daemon.outbox", "SPILL", 96 << 20),
    ("README.md", "with half a core to spare", "monitord.daemon.outputs", "SPARE", 0.5),
    ("architecture.md", "they run at niceness +5", "monitord.daemon.prestart", "HELPER_NICE", 5),
    ("architecture.md", "multi-row INSERTs of ≤ 64 rows", "sinks.sql.multirow", "ROWS", 64),
    ("architecture.md", "a minute or more before the replay began (`SETTLED_NS`", "monitord.daemon.readahead", "SETTLED_NS", 60 * 10**9),
    ("daemon-resume.md", "Notification scripts already queued get 10 s to run", "monitord.daemon.run", "NOTIFY_GRACE", 10.0),
    ("daemon-resume.md", "every 2 s at most (≤ 5 % of the daemon's CPU)", "monitord.daemon.resume", "MIN_INTERVAL", 2.0),
    ("daemon-resume.md", "every 2 s at most (≤ 5 % of the daemon's CPU)", "monitord.daemon.resume", "COST_FACTOR", 20.0),
    ("outages-and-resume.md", "Every 2 s at most (and never more often than 20 times the CPU", "monitord.daemon.resume", "MIN_INTERVAL", 2.0),
    ("outages-and-resume.md", "never more often than 20 times the CPU the last one took", "monitord.daemon.resume", "COST_FACTOR", 20.0),
    ("outages-and-resume.md", "(`pegasus.monitord.spool.max_backoff`, default 5 s)", "sinks.runtime.spool.batches", "DEFAULT_MAX_BACKOFF", 5.0),
    ("service.md", "request heads of at most 8 KiB lines", "monitord.service.http", "MAX_LINE", 8 << 10),
    ("service.md", "and 100 headers sent within 10 s", "monitord.service.http", "MAX_HEADERS", 100),
    ("service.md", "and 100 headers sent within 10 s", "monitord.service.http", "REQUEST_TIMEOUT", 10.0),
    ("service.md", "10 s, 64 connections at once", "monitord.service.http", "MAX_CONNECTIONS", 64),
    ("service.md", "(`--notifications-max`, default 10, 0 disables;", "monitord.daemon.config", "MonitorConfig.notifications_max", 10),
    ("service.md", "`[service] keep_finished_seconds` (default a day)", "monitord.service.config", "KEEP_FINISHED_SECONDS", 86400.0),
    ("plugins.md", "A checkpoint waits at most 0.5 s for a plugin", "sinks.plugins.host", "FLUSH_WAIT", 0.5),
    ("plugins.md", "logged at the 1st and every 1000th drop", "sinks.runtime.overflow", "DROP_LOG_EVERY", 1000),
    ("plugins.md", "from 0.5 s doubling to `pegasus.monitord.spool.max_backoff`, 5 s by default", "sinks.runtime.spool.batches", "DEFAULT_MAX_BACKOFF", 5.0),
    ("plugins.md", "which has no spool, to 30 s)", "sinks.runtime.delivery", "MEMORY_MAX_BACKOFF", 30.0),
    ("plugins.md", "from 0.5 s doubling", "sinks.runtime.delivery", "MEMORY_FIRST_BACKOFF", 0.5),
    ("differences.md", "waits for it, up to 60 s;", "sinks.sql.database", "SCHEMA_WAIT", 60.0),
    ("ingest.md", "each of the 64 slots is bound to one partition queue", "sinks.amqp.stream", "SLOTS", 64),
    ("ingest.md", "through database connection `p mod 4` (4 writers at most", "monitord.ingest.run", "DB_WRITERS", 4),
    ("ingest-sizing.md", "| 8 (default) |", "monitord.ingest.config", "_Amqp.partitions", 8),
    ("ingest-sizing.md", "| 64 (the maximum) |", "sinks.amqp.stream", "SLOTS", 64),
    ("testing.md", "CI makes 5 per case in `tests/test_daemon_resume.py`", "tests.kills", "KILLS_PER_PLAY", 5),
    ("daemon-resume.md", "SIGKILLs it at 5 seeded lines per case", "tests.kills", "KILLS_PER_PLAY", 5),
    ("README.md", "ends it quietly, status 141", "monitord.cli", "PIPE_CLOSED", 141),
    ("differences.md", "(`-d - | head`) gives 141", "monitord.cli", "PIPE_CLOSED", 141),
    ("README.md", "status 130 (143), one line saying what was written", "monitord.daemon.interrupt", "STATUSES", {130, 143}),
    ("architecture.md", "the command exits 130 (143)", "monitord.daemon.interrupt", "STATUSES", {130, 143}),
]  # fmt: skip


@pytest.mark.parametrize(("page", "says", "module", "name", "value"), _FIGURES, ids=lambda x: x)
def test_a_figure_a_page_states_is_the_codes(
    page: str, says: str, module: str, name: str, value: object
) -> None:
    text = " ".join(
        (PROJECT / "docs" / page if page != "README.md" else PROJECT / page).read_text().split()
    )
    assert says in text, f"{page} no longer says {says!r}"
    found: object = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    assert found == value, f"{page}: {says}"


# Each difference docs/differences.md lists (by its bold title's start), and the words of
# README's "Differences from the reference" that stand for it: damaged or unusual input is
# summed up in one sentence, each place where monitord does better internally has its own.
_INPUT = "Where the reference loses data on damaged or unusual input, monitord keeps it"
_README_DIFFERENCES = {
    "A job instance without its `.sub` file": _INPUT,
    "stderr of a job whose `.sub` is missing": _INPUT,
    "A duplicated block of dagman.out lines": _INPUT,
    "A byte that is not UTF-8": _INPUT,
    "A kickstart record cut short": _INPUT,
    "The properties file of a moved submit directory": _INPUT,
    "The default database of a copied submit directory": _INPUT,
    "A `braindump.yml` key this version does not know": _INPUT,
    "A crash of the service or of the live daemon": "goes on from a snapshot",
    "A clean stop of the live daemon": "A killed or stopped daemon",
    "Outages": "(the reference gives up and drops events)",
    "Many daemons on one database": "daemons can start together on one database",
    "Files shared by workflows": "shared file's row once, without a duplicate-key error",
    "Exit status": "The exit status says whether every destination holds every event",
    "Several `-d`": "each gets all",  # the README's replay section (an option, not an internal)
    "TLS to RabbitMQ": "verify the broker's certificate",
    "Events into a site database": "`monitord ingest`",  # the README's table of pages
}


def test_the_readme_names_every_difference_the_differences_page_lists() -> None:
    """A difference added to docs/differences.md fails here until it is mapped to what README's
    section says of it, and each mapped phrase is in the README (in its section, but for the
    two the README shows elsewhere)."""
    listed = re.findall(r"^- \*\*(.+?)\*\*", (PROJECT / "docs/differences.md").read_text(), re.M)
    unmapped = [t for t in listed if not any(t.startswith(k) for k in _README_DIFFERENCES)]
    assert not unmapped, f"differences README's section does not account for: {unmapped}"
    stale = [k for k in _README_DIFFERENCES if not any(t.startswith(k) for t in listed)]
    assert not stale, f"differences no longer on docs/differences.md: {stale}"
    readme = " ".join((PROJECT / "README.md").read_text().split())
    section = readme[readme.index("## Differences from the reference") :].split("## ", 2)[1]
    elsewhere = {"Several `-d`", "Events into a site database"}
    missing = [
        (title, words)
        for title, words in _README_DIFFERENCES.items()
        if words not in (readme if title in elsewhere else section)
    ]
    assert not missing, f"README does not say: {missing}"
