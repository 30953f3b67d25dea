"""``python -m tests.event_check ARGS``: the monitord CLI, every event it built checked against
the catalogue (core/catalogue.py) when it exits.

The differential and fuzz replays run monitord this way, so each generated or mutated workflow
also checks the values monitord emits: an attribute outside its kind's list, a value of a type
the catalogue does not name, a missing mandatory attribute or a kind outside the catalogue is
printed on stderr after :data:`MARKER` (the exit status is monitord's own).  Events are checked
at exit, not when built, because a builder may still add attributes to an event it holds
(``main.end``'s late attributes).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from monitord.core.catalogue import attr_errors
from monitord.core.events import EVENT_CLASSES, GenericEvent, StampedeEvent

MARKER = "catalogue violation: "
ROOT = Path(__file__).resolve().parents[1]


def wire(event: StampedeEvent) -> dict[str, Any]:
    """An event's attributes under their wire keys, in wire order (what a test compares)."""
    return dict(event.wire_items())


def command() -> list[str]:
    """The command that runs monitord under this check, from any working directory."""
    start = (
        f"import sys, runpy; sys.path.insert(0, {str(ROOT)!r}); "
        "runpy.run_module('tests.event_check', run_name='__main__')"
    )
    return [sys.executable, "-c", start]


def record(into: list[StampedeEvent]) -> Callable[[], None]:
    """Keep every event built in this process in ``into``; returns the undo."""
    classes: list[type[StampedeEvent]] = [*EVENT_CLASSES.values(), GenericEvent]
    inits = {cls: cls.__init__ for cls in classes}

    def recording(init: Callable[..., None]) -> Callable[..., None]:
        def built(self: StampedeEvent, *args: Any, **kwargs: Any) -> None:
            init(self, *args, **kwargs)
            into.append(self)

        return built

    # A decoded or relayed event is built by its class's from_wire, not its constructor, and
    # a hot producer's by its positional ``of``.
    decoders = {
        (cls, how): cls.__dict__[how]
        for cls in EVENT_CLASSES.values()
        for how in ("from_wire", "of")
    }

    def recording_decoder(decoder: Any) -> Any:
        def built(cls: type[StampedeEvent], *args: Any, **kwargs: Any) -> StampedeEvent:
            event: StampedeEvent = decoder.__func__(cls, *args, **kwargs)
            into.append(event)
            return event

        return classmethod(built)

    for cls, init in inits.items():
        cls.__init__ = recording(init)  # type: ignore[method-assign]
    for (cls, how), decoder in decoders.items():
        setattr(cls, how, recording_decoder(decoder))

    def undo() -> None:
        for cls, init in inits.items():
            cls.__init__ = init  # type: ignore[method-assign]
        for (cls, how), decoder in decoders.items():
            setattr(cls, how, decoder)

    return undo


def violations(events: Iterable[StampedeEvent]) -> Counter[str]:
    """Each distinct violation with how many events show it."""
    out: Counter[str] = Counter()
    for event in events:
        out.update(attr_errors(event.name, wire(event)))
    return out


def parse(stderr: str) -> list[str]:
    """The violations a run printed."""
    return [line.split(MARKER, 1)[1] for line in stderr.splitlines() if MARKER in line]


def main(argv: list[str] | None = None) -> int:
    from monitord.cli import main as cli_main

    events: list[StampedeEvent] = []
    undo = record(events)
    try:
        return cli_main(argv)
    finally:
        undo()
        for what, n in sorted(violations(events).items()):
            print(f"{MARKER}{what} (x{n})", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
