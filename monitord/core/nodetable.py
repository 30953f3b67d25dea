"""One table per ``.dag`` node: its shape until its first instance, then its latest instance.

The workflow kept two dicts keyed by node name to the end: the parsed ``.dag``'s
(``DagInfo.nodes``, name -> :class:`DagNode`) and ``Workflow.latest`` (name -> the node's
latest :class:`JobInstance` or its record, a ``bytes``).  At 100,000 jobs each is a
dict of 2^18 slots, 38 B a job (bench/README.md, "memory30l").  :class:`NodeTable` keeps one:
the ``.dag``'s own dict, whose entry for a node is its ``DagNode`` until the node's first
instance and the latest instance (or record) after.  What it adds is smaller than the dict it
saves:

* ``latest``'s order (the order of the nodes' first instances: monitord.info's counters, the
  snapshot's pieces), a list of the nodes' ``DagNode`` (~9 B a job), which also keeps each
  node's shape once its entry holds an instance;
* the nodes whose ``DagNode`` is asked for by name while their entry holds an instance (a live
  instance, a failed record a retry will follow) in a small side table (``_held``); a
  succeeded record's node is found again by one pass over the order, after which every node
  is held (a duplicated block of lines: rare, and no worse than the two dicts);
* the names a line gives that the ``.dag`` has not (``_extra``).

``Workflow.latest`` is the table; ``DagInfo.nodes`` its :class:`NodesView`.  Both pickle as the
plain dicts they replaced, so a crash-resume snapshot keeps its format.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from monitord.core.jobinstance import JobInstance, record_state
from monitord.core.readers.dagfile import DagNode

Latest = JobInstance | bytes  # a live instance or a finished one's record
# A record in one of these states is a node's end: no retry follows it, so its node is not held.
_DONE = frozenset(("JOB_SUCCESS", "POST_SCRIPT_SUCCESS"))


class NodeTable:
    """``Workflow.latest``: node name -> its latest instance or record, in the order of the
    nodes' first instances (a dict's interface); :meth:`node` gives a node's ``DagNode``."""

    __slots__ = ("_entries", "_order", "_extra", "_held", "_size", "_stale", "_evict", "nodes")

    def __init__(self, nodes: dict[str, DagNode] | None = None) -> None:
        self._entries: dict[str, Any] = {} if nodes is None else nodes  # taken over
        self._order: list[DagNode | str] = []  # a str: a name the .dag does not have
        self._extra: dict[str, Latest] = {}
        self._held: dict[str, DagNode] = {}
        self._size = 0
        self._stale = 0  # entries of _order deleted since it was last compacted
        self._evict = True  # False once a node had to be found by a pass over _order
        self.nodes = NodesView(self)

    # ------------------------------------------------------------------ the .dag's side
    def node(self, name: str) -> DagNode | None:
        """The node's ``.dag`` entry (None: not in the ``.dag``)."""
        found = self._entries.get(name)
        if found is None or type(found) is DagNode:
            return found
        held = self._held.get(name)
        return held if held is not None else self._find(name)

    def _find(self, name: str) -> DagNode | None:
        """A succeeded record's node, by one pass over the order; from then on every node is
        held (one pass, not one per later miss)."""
        self._held.update((x.name, x) for x in self._order if type(x) is DagNode)
        self._evict = False
        return self._held.get(name)

    def with_nodes(self) -> Iterator[tuple[str, DagNode | None, Latest]]:
        """(name, its ``DagNode`` or None, its latest) in ``latest``'s order, no node looked up
        by name (safe to run beside a feed in another thread: a list and dict lookups)."""
        entries, extra = self._entries, self._extra
        for x in self._order:
            if isinstance(x, str):
                value = extra.get(x)
                if value is not None:
                    yield x, None, value
            else:
                value = entries[x.name]
                if type(value) is not DagNode:
                    yield x.name, x, value

    def dag_nodes(self) -> Iterator[tuple[str, DagNode]]:
        """The ``.dag``'s (name, node) in its order, as parsed (a node holding an instance is
        found in a map of the order made for this pass)."""
        by_name: dict[str, DagNode] | None = None
        for name, found in self._entries.items():
            if type(found) is not DagNode:
                if by_name is None:
                    by_name = {x.name: x for x in self._order if type(x) is DagNode}
                found = by_name[name]
            yield name, found

    # ------------------------------------------------------------------ latest's side
    def get(self, name: str) -> Latest | None:
        found = self._entries.get(name)
        if found is None:
            return self._extra.get(name) if self._extra else None
        return None if type(found) is DagNode else found

    def __getitem__(self, name: str) -> Latest:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return type(name) is str and self.get(name) is not None

    def __setitem__(self, name: str, value: Latest) -> None:
        entries = self._entries
        found = entries.get(name)
        if found is None:
            extra = self._extra
            if name not in extra:
                self._added(name)
            extra[name] = value
            return
        node = None
        if type(found) is DagNode:
            self._added(found)
            node = found
        if self._evict and type(value) is bytes and record_state(value) in _DONE:
            self._held.pop(name, None)
        elif name not in self._held:
            self._held[name] = node if node is not None else self.node(name)  # type: ignore[assignment]
        entries[name] = value

    def _added(self, item: DagNode | str) -> None:
        if self._stale:
            self._compact()
        self._order.append(item)
        self._size += 1

    def _compact(self) -> None:
        """The order without the entries deleted from it (before one is added again: a node
        deleted and given a new instance goes to the end, as in a dict)."""
        entries, extra = self._entries, self._extra
        self._order = [
            x
            for x in self._order
            if (x in extra if isinstance(x, str) else type(entries[x.name]) is not DagNode)
        ]
        self._stale = 0

    def __delitem__(self, name: str) -> None:
        self.drop(name, None)

    def drop(self, name: str, node: DagNode | None) -> None:
        """``del table[name]``; ``node``, its ``DagNode`` when the caller has it (as
        :meth:`with_nodes` gives it), spares the look-up by name, which for a succeeded
        record's node would hold every node from then on (:meth:`_find`): a DAGMan restart
        drops every finished node."""
        found = self._entries.get(name)
        if found is None:
            del self._extra[name]
        elif type(found) is DagNode:
            raise KeyError(name)
        else:
            self._entries[name] = node if node is not None else self.node(name)
            self._held.pop(name, None)
        self._size -= 1
        self._stale += 1

    def __iter__(self) -> Iterator[str]:
        return (name for name, _, _ in self.with_nodes())

    def keys(self) -> Iterator[str]:
        return iter(self)

    def values(self) -> Iterator[Latest]:
        return (value for _, _, value in self.with_nodes())

    def items(self) -> Iterator[tuple[str, Latest]]:
        return ((name, value) for name, _, value in self.with_nodes())

    def __len__(self) -> int:
        return self._size

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NodeTable | dict):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"NodeTable({dict(self.items())!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the dict it replaced (a snapshot's format): Workflow.__setstate__ makes
        the table again."""
        return (dict, (), None, None, self.items())


class NodesView:
    """``DagInfo.nodes`` of a workflow's ``.dag`` (name -> :class:`DagNode`), read off its
    :class:`NodeTable`."""

    __slots__ = ("_table",)

    def __init__(self, table: NodeTable) -> None:
        self._table = table

    def get(self, name: str, default: Any = None) -> Any:
        node = self._table.node(name)
        return default if node is None else node

    def __getitem__(self, name: str) -> DagNode:
        node = self._table.node(name)
        if node is None:
            raise KeyError(name)
        return node

    def __contains__(self, name: object) -> bool:
        return name in self._table._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._table._entries)

    def __len__(self) -> int:
        return len(self._table._entries)

    def keys(self) -> Iterator[str]:
        return iter(self)

    def items(self) -> Iterator[tuple[str, DagNode]]:
        return self._table.dag_nodes()

    def values(self) -> Iterator[DagNode]:
        return (node for _, node in self._table.dag_nodes())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NodesView):
            other = dict(other.items())
        return isinstance(other, dict) and dict(self.items()) == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the ``.dag``'s dict as parsed (a snapshot's format)."""
        return (dict, (), None, None, self.items())
