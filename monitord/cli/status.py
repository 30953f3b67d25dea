"""``monitord status``: the service's followed workflows as a pegasus-status-like table.

Reads ``/status.json`` of a running ``monitord serve`` (``--url``, or the ``[http] listen`` key
of its configuration file) and prints one row per workflow and a total row.  Errors end with one
line on stderr and status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import TextIO

from monitord.service.status import (
    JOB_COLUMNS,
    ServiceSnapshot,
    StatusFormatError,
    from_json,
)

DEFAULT_CONFIG = "/etc/monitord/service.toml"
DEFAULT_LISTEN = "127.0.0.1:9175"
TIMEOUT = 5.0


class StatusCliError(Exception):
    """Something the user must fix; the message is printed as is."""


def listen_from_config(path: str) -> str:
    """The ``[http] listen`` value of a service configuration (default 127.0.0.1:9175).

    Read here rather than through the service's validating loader: ``monitord status`` needs
    one key and should work with a configuration the running service accepted earlier.
    """
    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
    except OSError as exc:
        raise StatusCliError(f"cannot read {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise StatusCliError(f"{path}: not valid TOML: {exc}") from None
    section = doc.get("http", {})
    if not isinstance(section, dict):
        raise StatusCliError(f"{path}: [http] is not a table")
    listen = section.get("listen", DEFAULT_LISTEN)
    if not isinstance(listen, str):
        raise StatusCliError(f"{path}: http.listen must be a string like {DEFAULT_LISTEN!r}")
    if not listen:
        raise StatusCliError(f'{path}: the status endpoint is disabled ([http] listen = "")')
    return listen


def url_for_listen(listen: str) -> str:
    """``[HOST:]PORT`` -> the base URL; a wildcard host is reached through loopback."""
    from monitord.service.http import ListenError, parse_listen

    try:
        host, port = parse_listen(listen)
    except ListenError as exc:
        raise StatusCliError(f"http.listen: {exc}") from None
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def fetch_snapshot(base_url: str, timeout: float = TIMEOUT) -> ServiceSnapshot:
    url = base_url.rstrip("/") + "/status.json"
    if not url.startswith(("http://", "https://")):
        raise StatusCliError(f"{base_url}: not an http:// URL")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # http(s) only
            data = resp.read()
    except urllib.error.HTTPError as exc:
        raise StatusCliError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        reason = getattr(exc.reason, "strerror", None) or str(exc.reason)
        raise StatusCliError(f"cannot reach the monitord service at {url}: {reason}") from None
    except (OSError, ValueError) as exc:
        raise StatusCliError(f"cannot reach the monitord service at {url}: {exc}") from None
    try:
        return from_json(data)
    except StatusFormatError as exc:
        raise StatusCliError(f"{url}: unexpected answer: {exc}") from None


def _printable(text: str) -> str:
    """Names come from the file system: never let control characters reach the terminal."""
    return "".join(c if c.isprintable() else "?" for c in text)


def _dag_name(dagman_out: str) -> str:
    name = os.path.basename(dagman_out)
    return name[: -len(".dagman.out")] if name.endswith(".dagman.out") else name


def format_table(snapshot: ServiceSnapshot, *, long: bool = False) -> str:
    """pegasus-status's summary layout: counts per state, %DONE, STATE, DAGNAME; then a total."""
    headings = [*JOB_COLUMNS, "%DONE"]
    rows: list[tuple[list[str], list[str]]] = []
    total = dict.fromkeys(JOB_COLUMNS, 0)
    for w in snapshot.workflows:
        numbers = []
        for column in JOB_COLUMNS:
            n = int(w.jobs.get(column, 0))
            total[column] += n
            numbers.append(str(n))
        numbers.append(f"{w.percent_done:.1f}")
        text = [_printable(w.state), _printable(_dag_name(w.dagman_out))]
        if long:
            text += [_printable(w.wf_uuid), _printable(w.run_dir)]
        rows.append((numbers, text))
    all_nodes = sum(total.values())
    total_numbers = [str(total[c]) for c in JOB_COLUMNS]
    total_numbers.append(f"{100.0 * total['SUCCESS'] / all_nodes if all_nodes else 0.0:.1f}")
    count = len(snapshot.workflows)
    total_text = ["", f"TOTAL ({count} workflow{'' if count == 1 else 's'})"]
    text_headings = ["STATE", "DAGNAME"] + (["WF_UUID", "RUN_DIR"] if long else [])
    if long:
        total_text += ["", ""]
    widths = [len(h) for h in headings]
    text_widths = [len(h) for h in text_headings]
    for numbers, text in [*rows, (total_numbers, total_text)]:
        widths = [max(a, len(b)) for a, b in zip(widths, numbers, strict=True)]
        text_widths = [max(a, len(b)) for a, b in zip(text_widths, text, strict=True)]

    def line(numbers: list[str], text: list[str]) -> str:
        left = " ".join(v.rjust(w) for v, w in zip(numbers, widths, strict=True))
        right = " ".join(v.ljust(w) for v, w in zip(text, text_widths, strict=True))
        return f"{left} {right}".rstrip()

    out = [line(headings, text_headings)]
    out.extend(line(numbers, text) for numbers, text in rows)
    out.append(line(total_numbers, total_text))
    if snapshot.finished:
        out.append("")
        out.extend(_finished_table(snapshot, long=long))
    if snapshot.roots:
        out.append("")
        out.extend(_roots_table(snapshot))
    if snapshot.sinks:
        out.append("")
        out.append(
            "sinks: "
            + "; ".join(
                f"{_printable(s.name)} {s.state}"
                + (f" since {_utc(s.since)}" if s.since and not s.healthy else "")
                + f" queued={s.queued} spooled={s.spooled} failures={s.failures}"
                for s in snapshot.sinks
            )
        )
    out.append(
        f"notifications: {snapshot.notifications_running} running, "
        f"{snapshot.notifications_queued} queued"
    )
    return "\n".join(out) + "\n"


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


def _roots_table(snapshot: ServiceSnapshot) -> list[str]:
    """The ``[[watch]]`` roots: does each exist, how many workflows below it are followed."""
    headings = ["ROOT", "EXISTS", "WORKFLOWS"]
    rows = [
        [
            _printable(r.root),
            "yes" if r.exists else f"no ({_printable(r.problem or 'missing')}, waiting for it)",
            str(r.workflows),
        ]
        for r in snapshot.roots
    ]
    widths = [max(len(r[i]) for r in [headings, *rows]) for i in range(len(headings))]
    out = [f"watched roots ({len(rows)}):"]
    for r in [headings, *rows]:
        out.append(" ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
    return out


def _finished_table(snapshot: ServiceSnapshot, *, long: bool) -> list[str]:
    """The workflows that ended lately: when (UTC), how, how many events; most recent first."""
    headings = ["ENDED", "OUTCOME", "EVENTS", "DAGNAME"] + (["WF_UUID", "RUN_DIR"] if long else [])
    rows = [
        [
            _utc(f.ended_at),
            _printable(f.outcome),
            str(f.events_total),
            _printable(_dag_name(f.dagman_out)),
        ]
        + ([_printable(f.wf_uuid), _printable(f.run_dir)] if long else [])
        for f in snapshot.finished
    ]
    widths = [max(len(r[i]) for r in [headings, *rows]) for i in range(len(headings))]
    count = len(rows)
    out = [f"finished ({count} workflow{'' if count == 1 else 's'}):"]
    for r in [headings, *rows]:
        cells = [
            v.rjust(w) if i == 2 else v.ljust(w)
            for i, (v, w) in enumerate(zip(r, widths, strict=True))
        ]
        out.append(" ".join(cells).rstrip())
    return out


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="monitord status",
        description="Show the workflows a running monitord service follows, with job counts.",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--config",
        help="the service's configuration file (its [http] listen key; default "
        f"$MONITORD_SERVICE_CONFIG or {DEFAULT_CONFIG})",
    )
    where.add_argument("--url", help=f"the status endpoint (default http://{DEFAULT_LISTEN})")
    p.add_argument("-l", "--long", action="store_true", help="also show wf_uuid and run dir")
    p.add_argument("--json", action="store_true", help="print the raw status.json")
    p.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds (default %(default)s)")
    return p


def base_url(args: argparse.Namespace) -> str:
    if args.url:
        return str(args.url)
    from monitord.service.config import configured_path

    path = configured_path(args.config)  # found as serve and attach find it
    return url_for_listen(listen_from_config(path) if path else DEFAULT_LISTEN)


def main(argv: Sequence[str], out: TextIO | None = None) -> int:
    args = build_parser().parse_args(list(argv))
    stdout = out if out is not None else sys.stdout
    try:
        snapshot = fetch_snapshot(base_url(args), timeout=args.timeout)
    except StatusCliError as exc:
        print(f"monitord status: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        from monitord.service.status import to_json

        stdout.write(to_json(snapshot).decode() + "\n")
    else:
        stdout.write(format_table(snapshot, long=args.long))
    return 0
