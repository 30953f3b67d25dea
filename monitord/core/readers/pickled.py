"""Parsed job files pickled as their fields: the ``--read-ahead`` worker sends ~60,000 of them
to the daemon in a 20,000-job replay (``monitord/daemon/readahead.py``).

A ``slots=True`` dataclass pickles as a state its ``__setstate__`` restores field by field in
Python: ~20 µs to load a :class:`~monitord.core.readers.subfile.SubmitInfo` in the daemon, the
replay's critical path.  Pickled as ``cls(*fields)`` it loads in ~6 µs (all three kinds of
result: 9.9 -> 5.9 µs each on average), the same object.
"""

from __future__ import annotations

import dataclasses
from operator import attrgetter
from typing import Any, TypeVar

T = TypeVar("T")


def by_fields(cls: type[T]) -> type[T]:
    """Class decorator (outside ``@dataclass``): pickle ``cls`` as ``cls(*its fields)``."""
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    if len(names) < 2:
        raise TypeError(f"{cls.__name__}: by_fields needs two fields or more")
    values = attrgetter(*names)

    def __reduce__(self: T) -> tuple[type[T], tuple[Any, ...]]:
        return cls, values(self)

    setattr(cls, "__reduce__", __reduce__)  # noqa: B010 (a method of the made class)
    return cls
