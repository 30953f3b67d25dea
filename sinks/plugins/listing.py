"""``monitord plugins``: the installed event plugins, which a workflow enables, their settings.

    monitord plugins [-Dkey=value ...] [--conf FILE] [--json] [SUBMIT_DIR | DAGMAN_OUT]

Properties are resolved as the daemon resolves them for that submit directory
(``--conf``, else the properties file its braindump names, else ``~/.pegasusrc``;
``-D`` on top), so "enabled" means: a daemon started there would run it.
Settings are the effective ones; a bad one shows the error naming its key.
Values of the plugin's own keys that look like secrets are masked.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from sinks.plugins.config import (
    SETTING_KEYS,
    PluginConfigError,
    enabled_names,
    is_true,
    parse_settings,
    prefix_of,
)
from sinks.plugins.contract import ENTRY_POINT_GROUP, installed_plugins

SECRET_WORDS = ("password", "passwd", "secret", "token", "key", "auth", "credential")
OUR_KEYS = frozenset(SETTING_KEYS)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="monitord plugins",
        usage="monitord plugins [-Dkey=value ...] [--conf FILE] [--json] [SUBMIT_DIR]",
        description="List the installed pegasus-monitord event plugins "
        f"(entry-point group {ENTRY_POINT_GROUP}), whether a workflow enables each, "
        "and their settings.",
    )
    p.add_argument(
        "submit_dir",
        nargs="?",
        help="a workflow's submit directory (or its .dag.dagman.out) whose properties to read",
    )
    p.add_argument("--conf", help="properties file (as the daemon's --conf)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    return p


def _mask(key: str, value: str) -> str:
    return "****" if any(word in key.lower() for word in SECRET_WORDS) else value


def describe(props: dict[str, str]) -> list[dict[str, Any]]:
    """One entry per installed or enabled plugin: where it comes from, enabled, settings."""
    installed = installed_plugins()
    enabled = set(enabled_names(props))
    out = []
    for name in sorted(set(installed) | enabled):
        entry = installed.get(name)
        item: dict[str, Any] = {
            "name": name,
            "installed": entry is not None,
            "target": entry.target if entry else None,
            "distribution": entry.distribution if entry else None,
            "version": entry.version if entry else None,
            "enabled": name in enabled,
        }
        prefix = prefix_of(name)
        item["configured"] = any(key.startswith(prefix) for key in props)
        if prefix + "enabled" in props and not is_true(props[prefix + "enabled"]):
            item["enabled_value"] = props[prefix + "enabled"]
        try:
            item["settings"] = parse_settings(name, props).as_dict()
        except PluginConfigError as exc:
            item["error"] = str(exc)
        if entry is not None:
            try:
                flt = getattr(entry.load(), "event_filter", None)
                item["class_event_filter"] = (
                    "all" if flt is None else flt if isinstance(flt, str) else list(flt)
                )
            except Exception as exc:  # noqa: BLE001 - a broken package is reported, not fatal
                item["error"] = f"cannot load {entry.target}: {exc!r}"
        item["own_properties"] = {
            key[len(prefix) :]: _mask(key, value)
            for key, value in sorted(props.items())
            if key.startswith(prefix) and key[len(prefix) :] not in OUR_KEYS
        }
        out.append(item)
    return out


def _print_text(items: list[dict[str, Any]], source: str) -> None:
    print(f"properties: {source}")
    if not items:
        print(f"no plugins installed (entry-point group {ENTRY_POINT_GROUP})")
        return
    for item in items:
        state = "enabled" if item["enabled"] else "disabled"
        if not item["installed"]:
            state += ", NOT INSTALLED"
        origin = f"{item['target']}" if item["installed"] else "-"
        if item.get("distribution"):
            origin += f" ({item['distribution']} {item['version']})"
        print(f"\n{item['name']}: {state}\n  from: {origin}")
        if "class_event_filter" in item:
            print(f"  plugin's event_filter: {item['class_event_filter']}")
        if "error" in item:
            print(f"  error: {item['error']}")
        if item["enabled"] or item["configured"]:
            for key, value in item.get("settings", {}).items():
                print(f"  {key}: {value}")
        for key, value in item["own_properties"].items():
            print(f"  {key} = {value}")


def main(argv: list[str]) -> int:
    from monitord.core.readers.workflow_properties import load_properties, split_properties

    cli_props, rest = split_properties(argv)
    args = _parser().parse_args(rest)
    run_dir = os.getcwd()
    if args.submit_dir:
        path = os.path.abspath(args.submit_dir)
        run_dir = os.path.dirname(path) if path.endswith(".dagman.out") else path
        if not os.path.isdir(run_dir):
            print(f"monitord plugins: error: {args.submit_dir}: no such directory", file=sys.stderr)
            return 1
    try:
        props = load_properties(args.conf, cli_props, run_dir)
    except Exception as exc:  # noqa: BLE001
        print(f"monitord plugins: error: cannot read properties: {exc}", file=sys.stderr)
        return 1
    items = describe(props)
    if args.json:
        print(json.dumps({"run_dir": run_dir, "plugins": items}, indent=1))
    else:
        source = args.conf or (f"as a daemon in {run_dir} reads them")
        _print_text(items, source)
    return 0
