"""The command line's own checks: a first word that is no command, a destination that cannot
be used as written, an error nobody foresaw -- each ends in one line, never a traceback."""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Callable

from monitord.daemon.config import MonitorConfig
from monitord.system.secrets import mask_url_passwords as masked


def whole_number(low: int, high: int | None = None, why: str = "") -> Callable[[str], int]:
    """An argparse ``type`` for a whole number in ``low``..``high``, its errors in words."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(
                "must not be negative" if low == 0 else f"must be at least {low}"
            )
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:,}{why}")
        return value

    return parse


def not_a_command(word: str, commands: list[str]) -> str | None:
    """The error for a first word that is neither a command nor a dagman.out (None: it may be).

    ``monitord <options> <wf>.dag.dagman.out`` stays pegasus-monitord's form: a word that
    names an existing file or looks like one (a path, a ``.dagman.out``) is left to it.
    """
    if word.startswith("-") or "/" in word or word.endswith(".dagman.out"):
        return None
    if os.path.exists(word):
        return None
    close = difflib.get_close_matches(word, commands, n=1, cutoff=0.6)
    hint = f"did you mean `monitord {close[0]}`?" if close else "see `monitord --help`"
    return f"monitord: error: {word!r} is not a command ({', '.join(commands)}); {hint}"


def malformed_destination(config: MonitorConfig, run_dir: str) -> str | None:
    """Why one of the events destinations cannot be used as written (None: all can be tried).

    Each is resolved to its sink and built, not opened: an unknown scheme, a port that is not
    a number, an AMQP URL without a host are refused here, before any output is touched.
    A missing driver or a server that does not answer shows only when the sink opens.  A
    destination its factory takes as a recipe (a plain SQLite file: ``sinks/sql/recipe.py``)
    is one it builds, so it is not built here (the SQL sink would load SQLAlchemy).
    """
    from sinks.registry import SinkRequest, installed

    registry = installed()
    for dest in config.dests or []:
        if not dest:
            continue  # the default database, next to the workflow
        request = SinkRequest(
            dest,
            run_dir=run_dir,
            restart=True,
            encoding=config.encoding,
            properties=config.properties,
        )
        try:
            factory = registry.factory_for(dest)
            recipe = getattr(factory, "recipe", None)
            if recipe is None or recipe(request) is None:
                factory.build(request)
        except Exception as exc:  # noqa: BLE001 - whatever the sink objects to, said in one line
            return f"bad events destination {masked(dest)}: {masked(str(exc))}"
    return None


def unexpected(prog: str, exc: BaseException, verbose: int) -> int:
    """An error no check foresaw (an output that cannot be created, ...): one line on stderr."""
    if verbose >= 2:
        import traceback

        traceback.print_exc()
    print(f"{prog}: error: {masked(str(exc)) or type(exc).__name__}", file=sys.stderr)
    return 1
