"""Reading the worker's records back from JSON, standard library only: the one decoder of every record in
`schema` (and of the validator's other stdlib records). Exact: an unknown or missing field, or a value of
another type, is a ValueError that names the field, never a record half-filled."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, fields, is_dataclass
from enum import Enum
from types import UnionType
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

R = TypeVar("R")


_HINTS: dict[type, dict[str, Any]] = {}  # each record's resolved annotations, worked out once


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = get_type_hints(cls)
    return _HINTS[cls]


def from_doc(cls: type[R], doc: Any, where: str = "") -> R:
    """The dataclass `cls` from a parsed JSON object."""
    name = where or cls.__name__
    if not isinstance(doc, dict):
        raise ValueError(f"{name}: a {cls.__name__} must be a JSON object")
    known = {f.name: f for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(doc) - set(known))
    missing = [n for n, f in known.items() if n not in doc and f.default is MISSING and f.default_factory is MISSING]
    if unknown or missing:
        raise ValueError(f"{name}: " + (f"{cls.__name__} has no field {unknown[0]!r}" if unknown else f"missing {missing[0]!r}"))
    hints = _hints(cls)
    return cls(**{k: _decode(hints[k], v, f"{name}.{k}") for k, v in doc.items()})


def _decode(tp: Any, value: Any, where: str) -> Any:
    """`value` as `tp`: the kinds these records use (dataclasses, enums, X | None, tuple[X, ...], mappings
    with string keys, scalars)."""
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, UnionType):
        if value is None and type(None) in args:
            return None
        (tp,) = [a for a in args if a is not type(None)]  # only `X | None` is used
        origin, args = get_origin(tp), get_args(tp)
    if is_dataclass(tp):
        return from_doc(tp, value, where)  # type: ignore[arg-type]
    if isinstance(tp, type) and issubclass(tp, Enum):
        if value not in {m.value for m in tp}:
            raise ValueError(f"{where}: {value!r} is not one of {[m.value for m in tp]}")
        return tp(value)
    if origin is tuple and isinstance(value, list):
        return tuple(_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
    if origin in (dict, Mapping) and isinstance(value, dict):
        return {k: _decode(args[1], v, f"{where}.{k}") for k, v in value.items()}
    if tp is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if tp in (int, str, bool) and isinstance(value, tp) and not (tp is int and isinstance(value, bool)):
        return value
    raise ValueError(f"{where}: expected {getattr(tp, '__name__', tp)}, got {type(value).__name__}")
