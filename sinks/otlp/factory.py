"""The ``otlp`` sink factory (entry point in pyproject.toml): ``otlp+http://``,
``otlp+https://`` and ``otlp://`` (the endpoint from OpenTelemetry's environment variables).

Every daemon loads every factory (sinks/registry.py), so this module imports neither the sink
nor ``opentelemetry-proto``: ``check`` says how to install it when it is missing.
"""

from __future__ import annotations

from importlib.util import find_spec

from sinks.otlp.capabilities import OTLP_CAPABILITIES
from sinks.runtime.base import Sink, SinkError
from sinks.runtime.factory import SinkRequest

INSTALL_HINT = (
    "the otlp sink needs opentelemetry-proto: pip install 'monitord[otlp]'"
    " (or pip install opentelemetry-proto)"
)


class OTLPFactory:
    """An OpenTelemetry trace receiver (Collector, Jaeger, Tempo, ...) over OTLP/HTTP."""

    name = "otlp"
    schemes = ("otlp",)
    capabilities = OTLP_CAPABILITIES

    def check(self, request: SinkRequest) -> None:
        """opentelemetry-proto installed, and the URL and settings well-formed."""
        if find_spec("opentelemetry") is None or find_spec("opentelemetry.proto") is None:
            raise SinkError(INSTALL_HINT)
        from sinks.otlp.config import parse_otlp

        parse_otlp(request.dest, request.properties)

    def build(self, request: SinkRequest) -> Sink:
        from sinks.otlp.config import parse_otlp
        from sinks.otlp.sink import OTLPSink

        config = parse_otlp(request.dest, request.properties)
        return OTLPSink(config, run_dir=request.run_dir, restart=request.restart)


OTLP = OTLPFactory()
