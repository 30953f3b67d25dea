"""``monitord-notify-email``: mail a notification and the workflow's status summary.

Use from a ``.notify`` line, e.g.::

    WORKFLOW <uuid> at_end monitord-notify-email --to ops@example.org --smtp mail:25

The message carries the ``PEGASUS_*`` variables of the event and a
pegasus-status-like summary read from the workflow's Stampede database.  The
SMTP password, when needed, is read from the environment variable named by
``--password-env`` and never printed.  Exit status 0 when the message was
accepted, 1 (one line on stderr) otherwise.
"""

from __future__ import annotations

import argparse
import getpass
import os
import smtplib
import socket
import sys
from collections.abc import Sequence
from email.message import EmailMessage

from notifications.clients.common import (
    add_db_options,
    pegasus_env,
    subject_line,
    summary_for,
)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="monitord-notify-email", description="Send a monitord notification by email."
    )
    p.add_argument("--to", action="append", required=True, help="recipient (repeatable)")
    p.add_argument("--from", dest="sender", help="sender (default: <user>@<host>)")
    p.add_argument("--smtp", default="localhost:25", help="SMTP server host[:port]")
    p.add_argument("--starttls", action="store_true", help="upgrade the connection with STARTTLS")
    p.add_argument("--ssl", action="store_true", help="SMTP over TLS (port 465 style)")
    p.add_argument("--user", help="SMTP login user")
    p.add_argument(
        "--password-env",
        default="MONITORD_SMTP_PASSWORD",
        help="name of the environment variable holding the SMTP password",
    )
    p.add_argument("--timeout", type=float, default=30.0, help="SMTP timeout in seconds")
    add_db_options(p)
    return p


def build_message(args: argparse.Namespace, env: dict[str, str]) -> EmailMessage:
    summary, why = summary_for(args, env)
    lines = [f"{key} : {value}" for key, value in pegasus_env(env).items()]
    body = "Notification\n\n" + "\n".join(lines) + "\n\n"
    body += summary.text() if summary is not None else f"Workflow summary unavailable: {why}\n"
    msg = EmailMessage()
    msg["Subject"] = subject_line(env)
    msg["From"] = args.sender or f"{getpass.getuser()}@{socket.getfqdn()}"
    msg["To"] = ", ".join(args.to)
    msg.set_content(body)
    return msg


def _host_port(text: str, default_port: int) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        return text, default_port
    return host, int(port)


def send(args: argparse.Namespace, msg: EmailMessage, env: dict[str, str]) -> None:
    host, port = _host_port(args.smtp, 465 if args.ssl else 25)
    smtp_cls = smtplib.SMTP_SSL if args.ssl else smtplib.SMTP
    with smtp_cls(host, port, timeout=args.timeout) as smtp:
        if args.starttls:
            smtp.starttls()
        if args.user:
            smtp.login(args.user, env.get(args.password_env, ""))
        smtp.send_message(msg)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    env = dict(os.environ)
    try:
        msg = build_message(args, env)
        send(args, msg, env)
    except (OSError, smtplib.SMTPException) as exc:
        # Only the error class and text: never the password.
        print(f"monitord-notify-email: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
