"""Every (sub-)workflow one Monitor drives, and the queue of those not followed yet."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from monitord.daemon.tracked import Tracked


@dataclass
class Registry:
    """What the Monitor, its follow loop and its snapshots share about the workflows.

    Written by worker threads (start-up, sub-workflows found while a chunk is fed) and read
    by the event loop: ``wake`` (set by the running follow loop) tells it new work is queued.
    """

    root_uuid: str | None = None
    tracked: list[Tracked] = field(default_factory=list)  # every (sub-)workflow, the root first
    pending: deque[Tracked] = field(default_factory=deque)  # not followed (or replayed) yet
    done: list[Tracked] = field(default_factory=list)  # ended (or stopped)
    seen_dagman_outs: set[str] = field(default_factory=set)
    seen_dirs: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # dir -> uuids
    wake: Callable[[], None] | None = None

    def queue(self, tracked: Tracked) -> None:
        """``tracked`` waits to be followed; a running follow loop takes it up at once."""
        self.pending.append(tracked)
        if self.wake is not None:
            self.wake()

    @property
    def root(self) -> Tracked | None:
        return self.tracked[0] if self.tracked else None

    def root_finished(self) -> bool:
        """The root workflow was ended in order (nothing is left to resume)."""
        root = self.root
        return root is not None and root.wf is not None and root.wf.finished
