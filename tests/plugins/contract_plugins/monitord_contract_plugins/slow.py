"""Takes ``delay`` seconds per event."""

import time

from .record import Journal


class SlowPlugin:
    def start(self, props, restart=False):
        prefix = "pegasus.monitord.plugins.slow."
        self.journal = Journal(props.property(prefix + "output"))
        self.delay = float(props.property(prefix + "delay") or "0.01")
        self.journal.write(hook="start", restart=restart)

    def handle_event(self, event, kw):
        time.sleep(self.delay)
        self.journal.write(hook="event", event=event, kw=kw)

    def stop(self):
        self.journal.write(hook="stop")
        self.journal.close()
