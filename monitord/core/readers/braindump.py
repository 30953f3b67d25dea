"""The planner's braindump (``braindump.yml``, legacy ``braindump.txt``), spec 1.1.

Every key of the fixed set is always present on the result (None when the
file lacks it), so callers test values, never presence.  ``yes``/``no``/``on``
/``off`` and timestamps stay strings: only ``true``/``false`` are booleans,
unlike PyYAML's YAML 1.1 defaults.
"""

from __future__ import annotations

import calendar
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import PurePosixPath
from typing import Any

import structlog
import yaml

from monitord.core.bounded import make_room

log = structlog.get_logger(__name__)

YML_NAME = "braindump.yml"
TXT_NAME = "braindump.txt"

BRAINDUMP_KEYS = (
    "user",
    "grid_dn",
    "submit_hostname",
    "root_wf_uuid",
    "wf_uuid",
    "dax",
    "dax_label",
    "dax_index",
    "dax_version",
    "pegasus_wf_name",
    "timestamp",
    "basedir",
    "submit_dir",
    "planner",
    "planner_version",
    "planner_arguments",
    "pegasus_build",
    "jsd",
    "rundir",
    "bindir",
    "vogroup",
    "uses_pmc",
    "properties",
    "condor_log",
    "dag",
    "type",
    "notify",
    "script",
    "app",
)
PATH_KEYS = frozenset({"dax", "basedir", "submit_dir", "planner", "bindir"})


class BraindumpError(Exception):
    """The braindump is missing, unreadable or invalid; the message names the file."""


@dataclass
class Braindump:
    """All fixed keys (None when absent) plus legacy ``.txt`` and unknown ``.yml`` keys in ``extra``."""

    user: Any = None
    grid_dn: Any = None
    submit_hostname: Any = None
    root_wf_uuid: Any = None
    wf_uuid: Any = None
    dax: Any = None
    dax_label: Any = None
    dax_index: Any = None
    dax_version: Any = None
    pegasus_wf_name: Any = None
    timestamp: Any = None
    basedir: Any = None
    submit_dir: Any = None
    planner: Any = None
    planner_version: Any = None
    planner_arguments: Any = None
    pegasus_build: Any = None
    jsd: Any = None
    rundir: Any = None
    bindir: Any = None
    vogroup: Any = None
    uses_pmc: Any = None
    properties: Any = None
    condor_log: Any = None
    dag: Any = None
    type: Any = None
    notify: Any = None
    script: Any = None
    app: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        """A fixed key's value, else a legacy key from ``extra``, else ``default``."""
        if key in _FIELD_NAMES:
            value = getattr(self, key)
            return default if value is None else value
        return self.extra.get(key, default)

    def as_dict(self) -> dict[str, Any]:
        out = {key: getattr(self, key) for key in BRAINDUMP_KEYS}
        out.update(self.extra)
        return out

    # --- fallbacks of the key table in 1.1 --------------------------------
    @property
    def label(self) -> Any:
        return self.get("dax_label", self.extra.get("label"))

    @property
    def wf_timestamp(self) -> Any:
        return self.get("timestamp", self.extra.get("pegasus_wf_time"))

    @property
    def version(self) -> Any:
        return self.get("planner_version", self.extra.get("pegasus_version"))

    @property
    def submit_dir_or_run(self) -> Any:
        """``submit.dir``: braindump submit_dir, else the legacy ``run`` key."""
        return self.get("submit_dir", self.extra.get("run"))

    @property
    def orig_submit_dir(self) -> str | None:
        """The prefix stripped from submit-file paths: submit_dir, else dirname of jsd."""
        if self.submit_dir:
            return str(self.submit_dir)
        if self.jsd:
            return os.path.dirname(str(self.jsd))
        return None

    @property
    def argv(self) -> str | None:
        """``planner_arguments`` without surrounding quotes and blanks (wf.plan ``argv``)."""
        if self.planner_arguments is None:
            return None
        return str(self.planner_arguments).strip('" \t\r\n')

    @property
    def epoch(self) -> int | None:
        """The planning time as integer epoch, None when absent or not parseable."""
        stamp = self.wf_timestamp
        return planner_iso_epoch(stamp) if isinstance(stamp, str) else None

    @property
    def utc_offset(self) -> int | None:
        """The planner's UTC offset in seconds east (``-0800`` → -28800), None when unknown."""
        stamp = self.wf_timestamp
        return planner_iso_offset(stamp) if isinstance(stamp, str) else None


_FIELD_NAMES = frozenset(f.name for f in fields(Braindump) if f.name != "extra")


# ---------------------------------------------------------------- timestamps

# Observed on the reference: a zone is mandatory (``Z`` or ``+HH[:]MM``), the
# fraction is dropped (integer result), ``t``/``z`` may be lower case, and the
# date/time separator may be ``T`` or a space.  Anything else is "no time".
_PLANNER_ISO = re.compile(
    r"(\d{4})-?(\d{2})-?(\d{2})[Tt ](\d{2}):?(\d{2}):?(\d{2})(?:[.,]\d+)?"
    r"(?:([Zz])|([+-])(\d{2}):?(\d{2}))"
)


#: the epoch of each (date, time, zone) lately converted: a static.bp stamps its hundred
#: thousand records within a few seconds, differing only in the fraction the result drops
_EPOCHS: dict[tuple[str | None, ...], int | None] = {}
_EPOCHS_MAX = 1024


#: the epoch by the first 19 characters of a ``YYYY-MM-DDTHH:MM:SS.<digits>Z`` stamp (the
#: static.bp form): with a ``.`` at 19 and the fraction's digits after it, the pattern can
#: only take those 19 characters as the date and time, so they alone decide the epoch
_Z_EPOCHS: dict[str, int | None] = {}


def planner_iso_epoch(text: str) -> int | None:
    """Integer epoch of a planner ISO stamp (``20230303T222333-0800``), else None.

    A static.bp's ~120,000 stamps differ mostly in their fraction: one seen before in the
    static.bp form is a slice, a dict lookup and an ``isdecimal`` (``\\d+``), not the regex.
    """
    zulu = text[-1:] == "Z" and text[19:20] == "." and text[20:-1].isdecimal()
    if zulu:
        try:
            return _Z_EPOCHS[text[:19]]
        except KeyError:
            pass
    m = _PLANNER_ISO.fullmatch(text)
    if m is None:
        return None
    key = m.groups()
    try:
        epoch = _EPOCHS[key]
    except KeyError:
        epoch = _epoch_of(key)
        make_room(_EPOCHS, _EPOCHS_MAX)
        _EPOCHS[key] = epoch
    if zulu:
        make_room(_Z_EPOCHS, _EPOCHS_MAX)
        _Z_EPOCHS[text[:19]] = epoch
    return epoch


def _epoch_of(groups: tuple[str | None, ...]) -> int | None:
    y, mo, d, h, mi, s = (int(g or 0) for g in groups[:6])
    if not (1 <= mo <= 12 and 1 <= d <= 31 and h < 24 and mi < 60 and s < 61):
        return None
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) - _offset(groups)


def planner_iso_offset(text: str) -> int | None:
    """The UTC offset (seconds east) of a planner ISO stamp, else None."""
    m = _PLANNER_ISO.fullmatch(text)
    return None if m is None or planner_iso_epoch(text) is None else _offset(m.groups())


def _offset(groups: tuple[str | None, ...]) -> int:
    if groups[6] is not None:
        return 0
    offset = int(groups[8] or 0) * 3600 + int(groups[9] or 0) * 60
    return offset if groups[7] == "+" else -offset


# ---------------------------------------------------------------- YAML


class _BraindumpLoader(yaml.SafeLoader):
    """SafeLoader whose booleans are only true/false and which has no timestamps."""


_DROPPED_TAGS = ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")
_BraindumpLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _DROPPED_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_BraindumpLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


def _normalise_path(value: Any) -> Any:
    if isinstance(value, str) and value:
        return str(PurePosixPath(value))
    return value


def parse_braindump_yml(text: str, *, source: str = YML_NAME) -> Braindump:
    """Parse braindump.yml text; a non-mapping raises BraindumpError, unknown keys go to ``extra``."""
    try:
        data = yaml.load(text, Loader=_BraindumpLoader)  # SafeLoader subclass
    except yaml.YAMLError as exc:
        raise BraindumpError(f"{source}: invalid YAML: {exc}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise BraindumpError(f"{source}: expected a mapping, got {type(data).__name__}")
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in data.items():
        if key in _FIELD_NAMES:
            values[key] = _normalise_path(value) if key in PATH_KEYS else value
        else:
            extra[str(key)] = value
    _warn_unknown(source, extra)
    return Braindump(**values, extra=extra)


# Unknown keys already warned about: a newer planner writes them in every braindump of a
# hierarchy (and the service reads many workflows), one warning per key is enough.
_WARNED_KEYS: set[str] = set()


def _warn_unknown(source: str, extra: dict[str, Any]) -> None:
    """Keys this version does not know (a newer planner's) are kept in ``extra``, warned once.

    The reference refuses the whole directory; a drop-in must survive a Pegasus upgrade.
    """
    new = sorted(k for k in extra if k not in _WARNED_KEYS)
    if new:
        _WARNED_KEYS.update(new)
        log.warning("braindump key(s) unknown to this version, ignored", file=source, keys=new)


def parse_braindump_txt(text: str, run_dir: str, *, source: str = TXT_NAME) -> Braindump:
    """Parse legacy ``key value`` lines; a ``run`` differing from ``run_dir`` is replaced."""
    values: dict[str, Any] = {}
    extra: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        key, _, value = line.partition(" ")
        value = value.strip()
        if key == "run" and value != run_dir and run_dir != ".":
            log.warning(
                "braindump run dir differs, using actual", file=source, run=value, actual=run_dir
            )
            value = run_dir
        if key in _FIELD_NAMES:
            values[key] = value
        else:
            extra[key] = value
    return Braindump(**values, extra=extra)


def read_braindump(run_dir: str) -> Braindump:
    """Read ``run_dir``'s braindump.yml, or braindump.txt when the .yml is absent."""
    yml = os.path.join(run_dir, YML_NAME)
    if os.path.exists(yml):
        return parse_braindump_yml(_read_text(yml), source=yml)
    txt = os.path.join(run_dir, TXT_NAME)
    if os.path.exists(txt):
        return parse_braindump_txt(_read_text(txt), run_dir, source=txt)
    raise BraindumpError(f"{yml}: no braindump file (neither {YML_NAME} nor {TXT_NAME})")


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise BraindumpError(f"{path}: cannot read braindump: {exc}") from exc
