"""monitord: an asyncio reimplementation of Pegasus's pegasus-monitord.

Importing structlog imports rich, and through it pygments and attrs, to render tracebacks
(~0.1 s of CPU at every start of a command, 90 modules).  Our logs never ask for that: the
``mask_passwords`` processor (``monitord/system/logs.py``) turns every exception into masked
plain text first.  So structlog is imported here, first, with rich hidden; the progress display
imports rich itself when it runs (``tests/test_cli_startup.py``).  The cyclic collector is
paused meanwhile, as for every start-up import (``monitord/system/collector.py``).
"""

import sys

from monitord.system.collector import Paused

if "structlog" not in sys.modules and "rich" not in sys.modules:
    sys.modules["rich"] = None  # type: ignore[assignment]  # an ImportError for structlog
    try:
        with Paused():
            import structlog  # noqa: F401
    finally:
        del sys.modules["rich"]
