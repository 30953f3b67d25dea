"""Event names and dotted wire keys are written only where the wire is: the catalogue, the
encoders and decoders, and the job state table (issue 27).  Everything else names a kind by
its class (``JobInstMainEnd``) and an attribute by its field (``job_inst_id``), so a typo
fails at import or construction instead of reading ``None`` in a sink."""

from __future__ import annotations

import ast
from pathlib import Path

from monitord.core.catalogue import CATALOGUE

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("monitord", "sinks", "notifications")

#: Where the wire's spellings belong, and why.
ALLOWED = {
    "monitord/core/catalogue.py": "the catalogue: every kind and attribute",
    "monitord/core/event_classes.py": "the classes generated from the catalogue",
    "monitord/core/jobmachine.py": "the job state table: each state's events, by name",
    "monitord/core/jobout.py": "kickstart payloads name their monitoring_event 'int.metric'",
    "monitord/core/readers/integrity.py": "the same payload field, read from the file",
    "monitord/tools/synthetic/job_outputs.py": "the generator writes those payloads",
    "monitord/examples/plugins/job_summary/monitord_job_summary/__init__.py": (
        "a plugin sees stampede.* names (the plugin contract is the wire's)"
    ),
}

#: Consumers not yet reading fields (reading wire keys); remove a file once it does.
PENDING: set[str] = set()

#: A word spelt like a wire key that is not one, in the one file that writes it.
HOMONYMS = {
    ("sinks/otlp/model.py", "pegasus.version"): "the span attribute of docs/traces.md",
}

WORDS = (
    {spec.name for spec in CATALOGUE}
    | {spec.wire_name for spec in CATALOGUE}
    | {key for spec in CATALOGUE for key in spec.attrs if "." in key}
)


def literals(source: str) -> set[str]:
    """The event names and dotted wire keys written as string literals in ``source``."""
    return {
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in WORDS
    }


def files_with_literals() -> dict[str, set[str]]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "build" in path.relative_to(ROOT).parts:
                continue  # a copy pip left beside a package's source (the example plugin's)
            words = literals(path.read_text(encoding="utf-8"))
            if words:
                found[str(path.relative_to(ROOT))] = words
    return found


def test_the_scan_sees_a_wire_key_and_an_event_name() -> None:
    source = 'x = ev.attrs["job_inst.id"]\nif ev.name == "job_inst.main.end": pass\n'
    assert literals(source) == {"job_inst.id", "job_inst.main.end"}
    assert literals("x = ev.job_inst_id\nif type(ev) is JobInstMainEnd: pass\n") == set()


def test_no_event_name_or_wire_key_outside_the_catalogue_encoders_and_job_table() -> None:
    found = files_with_literals()
    stray = {
        path: sorted(w for w in words if (path, w) not in HOMONYMS)
        for path, words in found.items()
        if path not in ALLOWED
    }
    stray = {path: words for path, words in stray.items() if words}
    assert set(stray) == PENDING, stray
    assert {path for path, _ in HOMONYMS} <= set(found)  # each homonym still written there


def test_the_allowed_files_still_need_their_exception() -> None:
    found = files_with_literals()
    assert set(ALLOWED) <= set(found), set(ALLOWED) - set(found)
