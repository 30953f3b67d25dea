"""``monitord ingest --config FILE [--check] [--member N/M]`` (called from :func:`monitord.cli.main`)."""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from collections.abc import Sequence


def ingest_main(argv: Sequence[str]) -> int:
    from monitord.ingest.config import ConfigError, load_config
    from monitord.ingest.run import run_ingest
    from monitord.service.logs import configure_service_logging

    p = argparse.ArgumentParser(
        prog="monitord ingest",
        description="Load the Stampede events of every submit host from RabbitMQ into one "
        "central Stampede database, exactly once (docs/ingest.md).",
    )
    p.add_argument("--config", required=True, help="ingest configuration (TOML)")
    p.add_argument("--check", action="store_true", help="validate the configuration and exit")
    p.add_argument(
        "--member", help="N/M: this process is member N of M (overrides [ingest] member)"
    )
    args = p.parse_args(list(argv))
    try:
        cfg = load_config(args.config)
    except ConfigError as exc:
        print(f"monitord ingest: error: {exc}", file=sys.stderr)
        return 1
    if args.member is not None:
        m = re.fullmatch(r"([1-9][0-9]*)/([1-9][0-9]*)", args.member)
        if m is None or int(m.group(1)) > int(m.group(2)):
            print(f"monitord ingest: error: --member {args.member!r} is not N/M", file=sys.stderr)
            return 1
        cfg = dataclasses.replace(cfg, member=int(m.group(1)), members=int(m.group(2)))
    if args.check:
        print(f"{args.config}: OK")
        return 0
    configure_service_logging(cfg.log_format, cfg.log_level)
    try:
        return run_ingest(cfg)
    except KeyboardInterrupt:
        return 1
