"""What both clients share: the PEGASUS_* environment, finding the database, the summary."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any

from notifications.clients.summary import Summary, read_summary

ENV_PREFIX = "PEGASUS_"


def pegasus_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    env = os.environ if environ is None else environ
    return {key: value for key, value in sorted(env.items()) if key.startswith(ENV_PREFIX)}


def add_db_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        help="Stampede database URL (default: the workflow's own, found from the braindump "
        "of the current directory, which is the run dir when monitord runs the client)",
    )
    parser.add_argument("--no-summary", action="store_true", help="do not read the database")


def find_db_url(explicit: str | None, env: Mapping[str, str]) -> str | None:
    if explicit:
        return explicit
    if env.get("MONITORD_NOTIFY_DB"):
        return env["MONITORD_NOTIFY_DB"]
    from monitord.readers.braindump import BraindumpError, read_braindump

    for directory in (os.getcwd(), env.get("PEGASUS_SUBMIT_DIR")):
        if not directory or not os.path.isdir(directory):
            continue
        try:
            bd = read_braindump(directory)
        except BraindumpError:
            continue
        if bd.wf_uuid and bd.dag:
            from monitord.monitor import default_db_url

            return default_db_url(directory, bd)
    return None


def summary_for(
    args: argparse.Namespace, env: Mapping[str, str]
) -> tuple[Summary | None, str | None]:
    """(summary, None) or (None, why there is none); never raises."""
    if args.no_summary:
        return None, "not requested"
    url = find_db_url(args.db, env)
    if url is None:
        return None, "no database found"
    # For workflow events PEGASUS_JOBID is the workflow's uuid; for jobs, the submit dir says.
    wf_uuid = env.get("PEGASUS_JOBID") if "PEGASUS_STDERR" not in env else None
    try:
        return read_summary(url, wf_uuid=wf_uuid, submit_dir=env.get("PEGASUS_SUBMIT_DIR")), None
    except Exception as exc:  # the notification still goes out without it
        return None, f"{type(exc).__name__}: {exc}".splitlines()[0]


def subject_line(env: Mapping[str, str]) -> str:
    wfid = env.get("PEGASUS_WFID", "workflow")
    event = env.get("PEGASUS_EVENT", "event")
    job = env.get("PEGASUS_JOBID", "")
    status = env.get("PEGASUS_STATUS")
    tail = "" if status is None else f" (status {status})"
    return f"Pegasus notification: {wfid} {job} {event}{tail}".replace("  ", " ")


def payload(env: Mapping[str, str], summary: Summary | None, why: str | None) -> dict[str, Any]:
    return {
        "event": pegasus_env(env),
        "summary": summary.as_dict() if summary is not None else None,
        "summary_error": why if summary is None else None,
    }
