"""The set of followed workflows, persisted in the state directory.

After a restart (or ``kill -9``) the service follows every workflow listed here
again; each one resumes from its own checkpoints (``monitord.recover`` /
``monitord.info`` in its submit directory), which is what makes the resumed
outputs equal to a replay.  The file is rewritten whole and renamed into place,
so a crash leaves either the old or the new list, never half of one.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

import orjson
import structlog

from monitord.system.atomic import replace_file

log = structlog.get_logger(__name__)

FILE_NAME = "followed.json"
VERSION = 1


@dataclass(frozen=True)
class Entry:
    dagman_out: str
    config: dict[str, Any]
    source: str
    uid: int


@dataclass(frozen=True)
class Ended:
    """A workflow that ended lately: listed in the status, and a re-attach gets its outcome.

    (The fields after ``at`` came later: a file written before them still loads.)
    """

    dagman_out: str
    exit_code: int
    size: int
    mtime_ns: int
    at: float
    wf_uuid: str = ""
    outcome: str = ""
    events: int = 0
    dagman_exit: int | None = None


class FollowedStore:
    def __init__(self, state_dir: str) -> None:
        self.state_dir = state_dir
        self.path = os.path.join(state_dir, FILE_NAME)

    def prepare(self) -> None:
        os.makedirs(self.state_dir, mode=0o750, exist_ok=True)

    def load(self) -> tuple[list[Entry], list[Ended]]:
        try:
            with open(self.path, "rb") as fh:
                doc = orjson.loads(fh.read())
        except FileNotFoundError:
            return [], []
        except (OSError, orjson.JSONDecodeError) as exc:
            log.error(
                "cannot read the followed-workflows file; starting empty",
                path=self.path,
                error=str(exc),
            )
            return [], []
        ended = []
        for item in doc.get("ended", []) if isinstance(doc, dict) else []:
            try:
                ended.append(Ended(**item))
            except TypeError as exc:
                log.error("skipping a bad ended-workflow entry", error=str(exc))
        entries = []
        for item in doc.get("workflows", []) if isinstance(doc, dict) else []:
            try:
                entries.append(
                    Entry(
                        str(item["dagman_out"]),
                        dict(item["config"]),
                        str(item["source"]),
                        int(item["uid"]),
                    )
                )
            except (KeyError, TypeError, ValueError) as exc:
                log.error("skipping a bad followed-workflow entry", error=str(exc))
        return entries, ended

    def save(self, entries: list[Entry], ended: list[Ended] | None = None) -> None:
        doc = {
            "version": VERSION,
            "workflows": [
                {"dagman_out": e.dagman_out, "config": e.config, "source": e.source, "uid": e.uid}
                for e in entries
            ],
            "ended": [dataclasses.asdict(e) for e in ended or []],
        }
        replace_file(self.path, orjson.dumps(doc, option=orjson.OPT_INDENT_2), prefix=".followed.")
