"""What the OTLP sink declares (its factory and the sink itself carry the same)."""

from __future__ import annotations

from sinks.runtime.capabilities import Capabilities

#: a thread of its own; it keeps delivery marks with its state file, so a daemon resumed from
#: a crash snapshot sends each span once (sinks/otlp/sink.py)
OTLP_CAPABILITIES = Capabilities(keeps_marks=True, resumes=True)
