"""Job instance events only (class filter), and a tick."""

from .record import Journal


class TickerPlugin:
    event_filter = "stampede.job_inst."

    def start(self, props, restart=False):
        cfg = props.propertyset("pegasus.monitord.plugins.ticker.", remove=True)
        self.journal = Journal(cfg.get("output"))
        self.journal.write(hook="start", restart=restart)

    def handle_event(self, event, kw):
        self.journal.write(hook="event", event=event, kw=kw)

    def tick(self):
        self.journal.write(hook="tick")

    def stop(self):
        self.journal.write(hook="stop")
        self.journal.close()
