"""The JSON-lines journal every test plugin appends to (one line per hook call)."""

import json


class Journal:
    def __init__(self, path):
        self.path = path
        self.fh = open(path, "a", encoding="utf-8") if path else None

    def write(self, **record):
        if self.fh is not None:
            self.fh.write(json.dumps(record, default=repr) + "\n")
            self.fh.flush()

    def close(self):
        if self.fh is not None:
            self.fh.close()
            self.fh = None
