"""Blocks inside handle_event while its gate file exists (forever without a gate)."""

import os
import threading
import time

from .record import Journal


class BlockingPlugin:
    def start(self, props, restart=False):
        prefix = "pegasus.monitord.plugins.blocker."
        self.journal = Journal(props.property(prefix + "output"))
        self.gate = props.property(prefix + "gate")
        self.journal.write(hook="start", restart=restart)

    def handle_event(self, event, kw):
        if not self.gate:
            threading.Event().wait()  # never returns
        while os.path.exists(self.gate):
            time.sleep(0.05)
        self.journal.write(hook="event", event=event, kw=kw)

    def stop(self):
        self.journal.write(hook="stop")
        self.journal.close()
