"""Stage 1, collect: find traces under DATA and read them, with their attachments, into typed records.

`traces` reads the trace format; `ncu` parses Nsight Compute and torch.profiler exports; `kernelbench`
turns a KernelBench run folder into traces.
"""

from __future__ import annotations

from .traces import Collection, ProfileSet, RunRecord, collect, find_traces, read_trace

__all__ = ["Collection", "ProfileSet", "RunRecord", "collect", "find_traces", "read_trace"]
