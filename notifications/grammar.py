"""The ``.notify`` file grammar (behaviour doc §11.1), sans I/O: text in, table + diagnostics out.

One definition per line::

    WORKFLOW|JOB|DAXJOB|DAGJOB <id> <condition> <action...>
    INVOCATION <job id> <task index> <condition> <action...>

The entity keyword is case-insensitive; blank lines and ``#`` comments are
skipped; the action keeps its inner spaces (it is split with shell-like
quoting only when it runs).  A malformed line is reported as a
:class:`Diagnostic` (file, line number, reason) and skipped; every other line
is kept.  Conditions are not validated by the reference: an unknown one is
kept (it then fires at job and invocation end, see ``matching``) and reported
as a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# What the planner writes (``never`` is accepted by the reference too).
CONDITIONS = frozenset({"never", "start", "on_error", "on_success", "at_end", "all"})
JOB_ENTITIES = frozenset({"JOB", "DAXJOB", "DAGJOB"})


@dataclass(frozen=True, slots=True)
class Action:
    """One ``<condition> <action>`` pair; several may exist for the same id and condition."""

    condition: str
    command: str


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A line the parser skipped (``kept`` False) or kept with a doubt (``kept`` True)."""

    path: str
    line_no: int
    message: str
    text: str
    kept: bool = False

    def __str__(self) -> str:
        return f"{self.path}:{self.line_no}: {self.message}: {self.text}"


@dataclass
class NotifyTable:
    """The definitions of one workflow, keyed as the matcher looks them up."""

    workflow: list[Action] = field(default_factory=list)
    jobs: dict[str, list[Action]] = field(default_factory=dict)
    invocations: dict[tuple[str, int], list[Action]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.workflow or self.jobs or self.invocations)

    def __len__(self) -> int:
        return (
            len(self.workflow)
            + sum(map(len, self.jobs.values()))
            + sum(map(len, self.invocations.values()))
        )


def parse_notify(
    text: str, *, wf_uuid: str, path: str = "<notify>"
) -> tuple[NotifyTable, list[Diagnostic]]:
    """Parse a whole ``.notify`` file for the workflow ``wf_uuid``."""
    table = NotifyTable()
    diags: list[Diagnostic] = []
    for line_no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parsed = _parse_line(line, wf_uuid)
        if isinstance(parsed, str):
            diags.append(Diagnostic(path, line_no, parsed, line))
            continue
        key, action = parsed
        if action.condition not in CONDITIONS:
            message = f"unknown condition {action.condition!r} (kept, as the reference does)"
            diags.append(Diagnostic(path, line_no, message, line, kept=True))
        if key is None:
            table.workflow.append(action)
        elif isinstance(key, tuple):
            table.invocations.setdefault(key, []).append(action)
        else:
            table.jobs.setdefault(key, []).append(action)
    return table, diags


def _parse_line(line: str, wf_uuid: str) -> tuple[str | tuple[str, int] | None, Action] | str:
    """(None for the workflow | node name | (node, task index), action), or why it is skipped."""
    entity = line.split(None, 1)[0].upper()
    if entity == "INVOCATION":
        parts = line.split(None, 4)
        if len(parts) != 5:
            return "INVOCATION needs <job id> <task index> <condition> <action>"
        _, job, index_text, condition, command = parts
        try:
            index = int(index_text)
        except ValueError:
            return f"task index {index_text!r} is not an integer"
        return (job, index), Action(condition, command)
    if entity != "WORKFLOW" and entity not in JOB_ENTITIES:
        return f"unknown entity {line.split(None, 1)[0]!r}"
    parts = line.split(None, 3)
    if len(parts) != 4:
        return f"{entity} needs <id> <condition> <action>"
    _, ident, condition, command = parts
    if entity == "WORKFLOW":
        if ident != wf_uuid:
            return f"workflow id {ident} is not this workflow's ({wf_uuid})"
        return None, Action(condition, command)
    return ident, Action(condition, command)
