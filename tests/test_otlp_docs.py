"""docs/traces.md says what the sink sends: checked against the model and the golden traces."""

from __future__ import annotations

import json
import re

from sinks import registry
from sinks.otlp.model import LIFECYCLE, SEMCONV_VERSION
from sinks.otlp.state import state_file_name
from tests.conftest import PROJECT
from tests.otlp_fixtures import GOLDEN

DOC = (PROJECT / "docs" / "traces.md").read_text()
NAME = re.compile(r"`((?:cicd|pegasus|error)\.[a-z_.]+)`")


def _golden_spans() -> list[dict]:
    return [span for path in sorted(GOLDEN.glob("*.json")) for span in json.loads(path.read_text())]


def test_every_attribute_sent_is_documented_and_every_one_documented_is_sent() -> None:
    sent = set()
    for span in _golden_spans():
        sent |= set(span["attributes"])
        for event in span["events"]:
            sent |= set(event["attributes"])
        for link in span["links"]:
            sent |= set(link["attributes"])
    documented = {n.rstrip(".") for n in NAME.findall(DOC)}
    documented = {n for n in documented if not n.endswith(("task.run", "pipeline"))}
    assert sent - documented == set(), "attributes sent but not in docs/traces.md"
    assert documented - sent == set(), "attributes in docs/traces.md no golden trace has"


def test_span_event_names_and_semconv_version_are_the_models() -> None:
    assert f"semantic conventions {SEMCONV_VERSION}" in DOC
    for name in {n for n in LIFECYCLE.values() if n}:
        stem = name.split(".")[0]
        assert stem in DOC, name
    sent = {e["name"] for span in _golden_spans() for e in span["events"]}
    assert {"held", "released", "evicted", "aborted", "pre_script.end"} <= sent


def test_the_examples_name_the_otlp_sink() -> None:
    reg = registry.Registry.discover()
    readme = (PROJECT / "README.md").read_text()
    for text in (DOC, readme):
        for url in set(re.findall(r"-d (otlp[a-z+]*://\S*)", text)):
            assert reg.factory_for(url).name == "otlp", url
    assert state_file_name("http://x:4318/v1/traces").startswith("monitord.otlp.")
    assert "monitord.otlp.<key>.json" in DOC
