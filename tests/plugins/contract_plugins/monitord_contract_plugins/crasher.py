"""Kills its own process (SIGSEGV) at its ``crash_at``-th event, once (a marker file remembers)."""

import os
import signal

from .record import Journal


class CrashingPlugin:
    def start(self, props, restart=False):
        prefix = "pegasus.monitord.plugins.crasher."
        self.journal = Journal(props.property(prefix + "output"))
        self.marker = props.property(prefix + "marker")
        self.crash_at = int(props.property(prefix + "crash_at") or "5")
        self.count = 0
        self.journal.write(hook="start", restart=restart, pid=os.getpid())

    def handle_event(self, event, kw):
        self.count += 1
        if self.count == self.crash_at and self.marker and not os.path.exists(self.marker):
            open(self.marker, "w").close()
            os.kill(os.getpid(), signal.SIGSEGV)
        self.journal.write(hook="event", event=event, kw=kw)

    def stop(self):
        self.journal.write(hook="stop")
        self.journal.close()
