"""What the OTLP sink declares (its factory and the sink itself carry the same)."""

from __future__ import annotations

from sinks.runtime.capabilities import Capabilities

#: a thread of its own; its open spans live in memory, so it cannot resume from a daemon's
#: snapshot: after a crash the daemon recovers from line 1 and the same ids are sent again
OTLP_CAPABILITIES = Capabilities()
