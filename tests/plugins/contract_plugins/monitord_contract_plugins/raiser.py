"""Raises from handle_event (every other event), from tick and from stop."""

from .record import Journal


class RaisingPlugin:
    event_filter = ("stampede.job.", "stampede.xwf.")

    def start(self, props=None, **kwargs):
        self.journal = Journal(props.property("pegasus.monitord.plugins.raiser.output"))
        self.journal.write(hook="start", restart=kwargs.get("restart"))
        self.count = 0

    def handle_event(self, event, kw):
        self.journal.write(hook="event", event=event, kw=kw)
        self.count += 1
        if self.count % 2:
            raise RuntimeError("raiser: failing on purpose")

    def tick(self):
        raise RuntimeError("raiser: tick fails on purpose")

    def stop(self):
        self.journal.write(hook="stop")
        raise RuntimeError("raiser: stop fails on purpose")
