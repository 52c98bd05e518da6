"""Stage 2, validate: re-check submitted kernels on a GPU, one isolated process per kernel.

`runner` schedules the work and writes results; `worker` is the isolated child that executes trace
content (standard library and torch only); `cheats` reads sources for known cheats; `cache` stores
results by content under DATA/validation/.

This package's import must stay light: the worker is started as ``python -m reporter.validate.worker``
on GPU machines that have neither pydantic nor plotly, so nothing is imported here eagerly.
"""

from __future__ import annotations

from typing import Any

_API = {"validate_runs": "runner", "cached_lookup": "runner", "gpu_available": "machine", "torch_installed": "machine"}


def __getattr__(name: str) -> Any:
    if name in _API:
        from importlib import import_module
        return getattr(import_module(f".{_API[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
