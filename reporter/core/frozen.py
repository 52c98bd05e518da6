"""Deep freezing for frozen dataclasses: `@dataclass(frozen=True)` stops assignment, not `list.append`.

A record that crosses a stage boundary calls `freeze` from its `__post_init__`: its sequences become
tuples and its mappings read-only views, so a later stage can neither reassign nor edit what an earlier
one built. Standard library only. (A read-only view cannot be pickled: records that travel to another
process, like the validator's work items, stay plain and are read-only to the type checker only.)
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any


def freeze(record: Any, sequences: tuple[str, ...] = (), mappings: tuple[str, ...] = ()) -> None:
    """Replace the named fields of a frozen dataclass with a tuple / read-only copy of themselves."""
    for name in sequences:
        object.__setattr__(record, name, tuple(getattr(record, name)))
    for name in mappings:
        object.__setattr__(record, name, MappingProxyType(dict(getattr(record, name))))
