"""Written before ``restart`` existed: ``start(self, props=None)``, every event."""

from .record import Journal


class OldStylePlugin:
    def start(self, props=None):
        self.journal = Journal(props.property("pegasus.monitord.plugins.oldstyle.output"))
        self.journal.write(hook="start")

    def handle_event(self, event, kw):
        self.journal.write(hook="event", event=event, kw=kw)

    def stop(self):
        self.journal.write(hook="stop")
        self.journal.close()
