"""reporter: turn LLM-agent CUDA-kernel runs into a static site people can trust.

For notebooks: ``reporter.load(DATA)`` (one row per run), ``reporter.load_turns(DATA)`` (one row per turn
and tool call) and ``reporter.aggregates`` (the site's leaderboards, grid and comparisons as group-bys).
They are imported on first use: the GPU worker imports ``reporter.validate.worker`` on machines without
pandas or pydantic, so importing this package must stay free of them.
"""

from __future__ import annotations

from typing import Any

from .core import __version__

__all__ = ["__version__", "aggregates", "frames", "load", "load_turns"]

_LAZY = {"load": "tables", "load_turns": "frames"}
_MODULES = ("aggregates", "frames")


def __getattr__(name: str) -> Any:
    from importlib import import_module
    if name in _MODULES:
        return import_module(f".{name}", __name__)
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
