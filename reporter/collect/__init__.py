"""Stage 1, collect: find traces under DATA and read them, with their attachments, into typed records.

`read` finds and parses trace files, `traces` adds what a run's page needs (flags, cheat scan, attachments); `ncu` parses Nsight Compute and torch.profiler exports; `kernelbench`
turns a KernelBench run folder into traces.
"""

from __future__ import annotations

from typing import Any

# Imported on first use: a rebuild that finds nothing changed reads no trace model it does not need.
_API = {"Collection": "traces", "ProfileSet": "traces", "RunRecord": "traces", "collect": "traces",
        "read_trace": "read", "find_traces": "read"}
__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    if name in _API:
        from importlib import import_module
        return getattr(import_module(f".{_API[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
