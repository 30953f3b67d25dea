"""HTCondor job submit files (``.sub``), 5.1-branch rules of spec 1.5.

Keys are matched case-sensitively (the reference ignores ``ERROR = ...``),
except ``globusrsl``.  ``!!SITE!!`` is kept verbatim: the reference prints it
in jobstate.log and ``main.end``; ``SubmitInfo.site_known`` tells callers
that need the "unknown" reading.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

import structlog

from monitord.core.bounded import make_room
from monitord.core.readers.pickled import by_fields

log = structlog.get_logger(__name__)

UNKNOWN_SITE = "!!SITE!!"
# ``(maxwalltime=N)`` style RSL pairs; names compared without ``_``/``-``, lower case.
_RSL_PAIR = re.compile(r"\(\s*([^()=\s]+)\s*=\s*([^()]*?)\s*\)")
_RSL_TIME_KEYS = frozenset({"maxwalltime", "maxtime", "maxcputime"})
# classad name -> composite attribute carrying its raw text
REQUIREMENT_ATTRS = (
    ("pegasus_cores", "req_cpus"),
    ("pegasus_gpus", "req_gpus"),
    ("pegasus_memory_mb", "req_memory_mb"),
    ("pegasus_diskspace_mb", "req_diskspace_mb"),
)


@by_fields
@dataclass(slots=True)
class SubmitInfo:
    classads: dict[str, str] = field(default_factory=dict)
    site: str | None = None
    transformation: str | None = None
    dax_job_id: str | None = None
    cores: int | None = None
    job_class: int | None = None
    time_requirement_minutes: int | None = None
    executable: str | None = None
    arguments: str | None = None
    stdin: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    environment: dict[str, str] | None = None
    dagman_log: str | None = None

    @property
    def site_known(self) -> bool:
        return self.site is not None and self.site != UNKNOWN_SITE

    @property
    def time_requirement_seconds(self) -> int | None:
        m = self.time_requirement_minutes
        return None if m is None else m * 60

    @property
    def requirements(self) -> dict[str, str]:
        """``req_cpus`` & co. for the composite event: raw classad text, when present."""
        return {attr: self.classads[ad] for ad, attr in REQUIREMENT_ATTRS if ad in self.classads}


def _unquote(value: str) -> str:
    return value.replace('"', "")


def _normpath(path: str) -> str:
    """``os.path.normpath``, without its work for a path it would not change: one with no
    empty, ``.`` or ``..`` part (a planner's paths; ~5 per .sub, 1-2 us each otherwise)."""
    if path and "//" not in path and "/." not in path and path[0] != "." and path[-1] != "/":
        return path
    return os.path.normpath(path)


def _norm(value: str) -> str:
    value = _unquote(value.strip())
    return _normpath(value) if value else value


def max_rsl_minutes(rsl: str) -> int | None:
    """The largest integer among maxwalltime/maxtime/maxcputime in an RSL string."""
    best: int | None = None
    for name, value in _RSL_PAIR.findall(rsl):
        if name.lower().replace("_", "").replace("-", "") not in _RSL_TIME_KEYS:
            continue
        try:
            minutes = int(value.strip('"'))
        except ValueError:
            log.warning("non-integer RSL time value", key=name, value=value)
            continue
        if best is None or minutes > best:
            best = minutes
    return best


def parse_environment(value: str) -> dict[str, str]:
    """Condor ``environment``: new syntax (double-quoted, space separated) or ``;`` separated."""
    value = value.strip()
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        items = value[1:-1].split(" ")
    else:
        items = value.split(";")
    env: dict[str, str] = {}
    for item in items:
        eq, colon = item.find("="), item.find(":")
        cut = min(p for p in (eq, colon, len(item)) if p >= 0)
        if cut == len(item) or cut == 0:
            continue
        env[item[:cut].strip()] = item[cut + 1 :]
    return env


#: A classad's value as the last files had it: most repeat in every job of a workflow (its
#: uuids, version, name, time, site, transformation), so that a batch of the read-ahead
#: worker's results pickles each once and the daemon holds one copy.  Bounded (a job's own
#: ids are new in each file: :func:`~monitord.core.bounded.make_room`).
_VALUES: dict[str, str] = {}
_VALUES_MAX = 1024

#: the keys besides the classads that :func:`parse_submit_file` reads (``globusrsl``: any case)
_USED_KEYS = frozenset(("executable", "arguments", "input", "output", "error", "environment"))
_CLASSAD_PREFIXES = ("pegasus_", "+pegasus_")
#: What a line's key is to :func:`parse_submit_file`, by the key as the line has it (the
#: spaces around it included): a workflow's files share their ~45 keys, so that a line costs
#: one dict lookup before its value is looked at, not a strip and three tests.  Bounded.
_UNUSED, _USED, _CLASSAD, _RSL = range(4)
_KEYS: dict[str, tuple[int, str]] = {}
_KEYS_MAX = 4096


def _key_kind(raw_key: str) -> tuple[int, str]:
    """What ``raw_key`` is (kept in :data:`_KEYS`): a key read (its name), a classad (its
    name, interned: a batch of the read-ahead worker's results pickles each once), the
    ``globusrsl`` (any case), or none of them."""
    key = raw_key.strip()
    found = (_UNUSED, key)
    if key in _USED_KEYS:
        found = (_USED, key)
    elif "pegasus_" in key and key.startswith(_CLASSAD_PREFIXES):
        found = (_CLASSAD, sys.intern(key.lstrip("+")))
    elif len(key) == 9 and key.lower() == "globusrsl":
        found = (_RSL, key)
    make_room(_KEYS, _KEYS_MAX)
    _KEYS[raw_key] = found
    return found


def parse_submit_file(text: str, *, job_name: str, orig_submit_dir: str | None) -> SubmitInfo:
    """Extract what monitord uses from one submit file's text.

    Most of a file's ~40 lines are keys monitord does not read: a line costs a partition and
    a lookup of its key (:func:`_key_kind`) before its value is looked at.  A comment or an
    empty key matches no key, so it needs no test of its own.
    """
    info = SubmitInfo()
    classads = info.classads
    make_room(_VALUES, _VALUES_MAX)
    share = _VALUES.setdefault
    kinds = _KEYS.get
    for raw in text.splitlines():
        key, sep, value = raw.partition("=")
        if not sep:
            continue
        kind, name = kinds(key) or _key_kind(key)
        if not kind:
            continue
        value = value.strip()
        if kind == _CLASSAD:
            classads[name] = share(value, value)
        elif kind == _USED:
            _read_key(info, name, value, job_name)
        else:
            minutes = max_rsl_minutes(value)
            if minutes is not None:
                info.time_requirement_minutes = minutes
    _apply_classads(info, job_name)
    if info.site is not None:
        info.site = share(info.site, info.site)
    if info.transformation is not None:
        info.transformation = share(info.transformation, info.transformation)
    if orig_submit_dir:
        prefix = orig_submit_dir.rstrip("/") + "/"
        info.stdin = _strip_prefix(info.stdin, prefix)
        info.stdout = _strip_prefix(info.stdout, prefix)
        info.stderr = _strip_prefix(info.stderr, prefix)
    return info


def _read_key(info: SubmitInfo, key: str, value: str, job_name: str) -> None:
    """One of :data:`_USED_KEYS` into ``info``."""
    if key == "executable":
        info.executable = _unquote(value)
    elif key == "arguments":
        end = value.rfind('"')
        if value.startswith('"') and end > 0:
            info.arguments = value[1:end]
    elif key == "input":
        info.stdin = _norm(value)
    elif key == "output":
        info.stdout = _norm(value)
    elif key == "error":
        info.stderr = _norm(value)
    elif job_name.startswith("pegasus-plan") or job_name.startswith("subdax_"):  # environment
        info.environment = parse_environment(value)
        info.dagman_log = info.environment.get("_CONDOR_DAGMAN_LOG")


def _strip_prefix(path: str | None, prefix: str) -> str | None:
    if not path or prefix not in path:
        return path
    return _normpath(path.replace(prefix, "", 1))


def _apply_classads(info: SubmitInfo, job_name: str) -> None:
    ads = info.classads
    if "pegasus_site" in ads:
        info.site = _unquote(ads["pegasus_site"])
    if "pegasus_wf_xformation" in ads:
        info.transformation = _unquote(ads["pegasus_wf_xformation"])
    if "pegasus_wf_dax_job_id" in ads:
        dax_job_id = _unquote(ads["pegasus_wf_dax_job_id"])
        info.dax_job_id = None if dax_job_id == "null" else dax_job_id
    if "pegasus_cores" in ads:
        try:
            info.cores = int(ads["pegasus_cores"])
        except ValueError:
            log.warning("pegasus_cores is not an integer", job=job_name, value=ads["pegasus_cores"])
    if "pegasus_job_class" in ads:
        try:
            info.job_class = int(_unquote(ads["pegasus_job_class"]))
        except ValueError:
            log.warning(
                "pegasus_job_class is not an integer", job=job_name, value=ads["pegasus_job_class"]
            )


def read_submit_file(path: str, *, job_name: str, orig_submit_dir: str | None) -> SubmitInfo | None:
    """Parse the submit file at ``path``; None (logged) when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        log.warning("cannot read submit file", path=path, job=job_name, error=str(exc))
        return None
    return parse_submit_file(text, job_name=job_name, orig_submit_dir=orig_submit_dir)
