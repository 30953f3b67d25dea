"""The one warning a workflow's start-up gives when local time would shift its times."""

from __future__ import annotations

import structlog

from monitord.core.readers.braindump import Braindump
from monitord.system.zonecheck import format_offset, zone_mismatch

log = structlog.get_logger(__name__)


def warn_if_zone_differs(bd: Braindump, run_dir: str, *, adjust: float = 0.0) -> bool:
    """Warn (one line naming the ``TZ`` to use) when this process's local time zone at the
    planning date differs from the planner's; True when it warned.

    dagman.out times carry no offset: read in another zone, every stored time is off by the
    difference, and nothing else would say so.
    """
    epoch, recorded = bd.epoch, bd.utc_offset
    if epoch is None or recorded is None:
        return False
    mismatch = zone_mismatch(epoch, recorded, adjust=adjust)
    if mismatch is None:
        return False
    hours = (mismatch.recorded - mismatch.local + adjust) / 3600
    log.warning(
        f"local time zone ({format_offset(mismatch.local)}) differs from the planner's "
        f"({format_offset(mismatch.recorded)}, braindump timestamp {bd.wf_timestamp}): every "
        f"dagman.out time is stored {abs(hours):g} h "
        f"{'late' if hours > 0 else 'early'}; run it with {mismatch.fix}",
        run_dir=run_dir,
    )
    return True
