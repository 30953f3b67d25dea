"""``monitord-notify-webhook``: POST a notification as JSON to a URL.

Use from a ``.notify`` line, e.g.::

    JOB analyze_ID0000004 on_error monitord-notify-webhook https://hooks.example.org/x

Body: ``{"event": {PEGASUS_* variables}, "summary": {...} | null, "summary_error": ...}``
where the summary is the workflow's pegasus-status-like summary from its
Stampede database.  Extra headers with ``--header 'Name: value'`` (a value of
the form ``env:VAR`` is read from the environment, so tokens stay out of the
``.notify`` file and process titles).  Exit status 0 on a 2xx answer, 1 (one
line on stderr) otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence

from notifications.clients.common import add_db_options, payload, summary_for


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="monitord-notify-webhook", description="POST a monitord notification as JSON."
    )
    p.add_argument("url", help="http(s) URL to POST to")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds (default 10)")
    p.add_argument(
        "--header",
        action="append",
        default=[],
        help="extra header 'Name: value' (value 'env:VAR' reads $VAR); repeatable",
    )
    add_db_options(p)
    return p


def _headers(specs: list[str], env: dict[str, str]) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "User-Agent": "monitord-notify-webhook"}
    for spec in specs:
        name, sep, value = spec.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"bad --header {name.strip()!r}: expected 'Name: value'")
        value = value.strip()
        if value.startswith("env:"):
            value = env.get(value[4:], "")
        headers[name.strip()] = value
    return headers


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    env = dict(os.environ)
    if not args.url.startswith(("http://", "https://")):
        print("monitord-notify-webhook: error: the URL must be http(s)", file=sys.stderr)
        return 1
    try:
        headers = _headers(args.header, env)
        summary, why = summary_for(args, env)
        body = json.dumps(payload(env, summary, why), default=str).encode("utf-8")
        request = urllib.request.Request(args.url, data=body, headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=args.timeout) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        print(f"monitord-notify-webhook: error: HTTP {exc.code} {exc.reason}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:
        print(f"monitord-notify-webhook: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    if not 200 <= status < 300:
        print(f"monitord-notify-webhook: error: HTTP {status}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
