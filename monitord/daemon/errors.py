"""The one error that ends the daemon: a line for the operator and an exit code."""

from __future__ import annotations


class MonitordError(Exception):
    """A condition that ends the daemon with one clear error line and ``exit_code``."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code
