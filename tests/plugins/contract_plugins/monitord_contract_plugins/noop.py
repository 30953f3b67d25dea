"""Does nothing with each event (the benchmark's plugin)."""


class NoopPlugin:
    def start(self, props, restart=False):
        self.events = 0

    def handle_event(self, event, kw):
        self.events += 1
