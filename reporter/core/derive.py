"""Pydantic models derived from the standard-library records of `schema`, so that each field is declared once.

The worker has no pydantic, so a record that both sides share is a stdlib dataclass (`schema`); the parent
reads and writes it as a pydantic model with the same fields: names, types, defaults and descriptions
(`schema.about`). `derived` makes that model at import. A type checker cannot see fields made at run time,
so `records` declares each derived model to it as a subclass of its dataclass (under `TYPE_CHECKING`): the
fields are then read-only attributes of the dataclass's own types, which is what the model holds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar, cast, get_type_hints

from pydantic import BaseModel, Field, create_model
from pydantic.fields import FieldInfo

M = TypeVar("M", bound=BaseModel)


def fields_of(record: type) -> dict[str, tuple[Any, FieldInfo]]:
    """Pydantic field definitions of a dataclass's fields, in their order."""
    hints = get_type_hints(record)
    out: dict[str, tuple[Any, FieldInfo]] = {}
    for f in dataclasses.fields(record):
        about = f.metadata.get("description")
        if f.default_factory is not dataclasses.MISSING:
            info: FieldInfo = Field(default_factory=f.default_factory, description=about)
        elif f.default is not dataclasses.MISSING:
            info = Field(f.default, description=about)
        else:
            info = Field(description=about)
        out[f.name] = (hints[f.name], info)
    return out


def layout(own: list[str], record: list[str], record_after: str | None, placed: Mapping[str, str]) -> list[str]:
    """The order a model lists its fields in: `own` as declared, the record's fields after `record_after`
    (first when None), and each field named in `placed` right after the field it names there."""
    unplaced = [n for n in own if n not in placed]
    cut = 0 if record_after is None else unplaced.index(record_after) + 1
    order = unplaced[:cut] + record + unplaced[cut:]
    for name in own:
        if name in placed:
            order.insert(order.index(placed[name]) + 1, name)
    return order


def derived(name: str, base: type[M], record: type, module: str, doc: str | None = None, own: type[BaseModel] | None = None,
            record_after: str | None = None, placed: Mapping[str, str] | None = None) -> type[M]:
    """A model `name` (in `module`, so it pickles) on `base`: the fields of `record`, plus the fields that
    `own` declares, laid out by `layout` (a field declared by both is an error: it must be declared once)."""
    mine = {n: (f.annotation, f) for n, f in (own.model_fields if own is not None else {}).items()}
    theirs = fields_of(record)
    if both := sorted(mine.keys() & theirs.keys()):
        raise TypeError(f"{name}: {both} declared by both {record.__name__} and {own.__name__ if own else '-'}")
    defs = {**mine, **theirs}
    order = layout(list(mine), list(theirs), record_after, placed or {})
    # Called through an untyped name so that pydantic's mypy plugin does not treat the call as a class
    # statement: some plugin releases turn `x = create_model(...)` into a new class named `x`, which then
    # no longer matches `type[M]`.
    build: Any = create_model
    return cast("type[M]", build(name, __base__=base, __module__=module, __doc__=doc, **{n: defs[n] for n in order}))
