"""What the OTLP sink declares (its factory and the sink itself carry the same)."""

from __future__ import annotations

from sinks.runtime.capabilities import Capabilities

#: in the service, one lane and one HTTP connection per endpoint for every workflow
#: (``shares_connection``); it keeps delivery marks with its state file, so a daemon resumed
#: from a crash snapshot sends each span once (sinks/otlp/sink.py)
OTLP_CAPABILITIES = Capabilities(shares_connection=True, keeps_marks=True, resumes=True)
