"""torch.profiler Chrome trace exports: the kernel launches and their CUDA time."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import CollectError, excerpt
from ..core.frozen import freeze
from ..core.safeio import parse_json, read_bounded


@dataclass(frozen=True)
class ProfilerSummary:
    """Kernel events from a torch.profiler Chrome trace (Memcpy/Memset counted apart)."""

    kernels: Sequence[tuple[str, float]]  # (name, duration µs) in trace order
    memcpy: int
    memset: int

    def __post_init__(self) -> None:
        freeze(self, ("kernels",))

    @property
    def launches(self) -> int:
        return len(self.kernels)

    @property
    def cuda_time_us(self) -> float:
        return math.fsum(d for _, d in self.kernels)


def _duration_us(path: Path, i: int, value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
        return float(value)
    raise CollectError(path, f"traceEvents[{i}].dur", f"{excerpt(str(value), 80)!r} is not a duration (a finite number ≥ 0 of µs)")


def parse_chrome_trace(path: Path, root: Path | None = None) -> ProfilerSummary:
    """Kernel events of a torch.profiler export; the file must resolve inside `root` (default: its own folder)."""
    doc: Any = parse_json(read_bounded(path, root or path.parent, "(file)", "MAX_ATTACHMENT_BYTES"), path, "traceEvents")
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise CollectError(path, "traceEvents", "missing or not a list")
    kernels, memcpy, memset = [], 0, 0
    for i, e in enumerate(events):
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = e.get("cat")
        if cat == "kernel":
            kernels.append((str(e.get("name", "")), _duration_us(path, i, e.get("dur", 0.0))))
        elif cat == "gpu_memcpy":
            memcpy += 1
        elif cat == "gpu_memset":
            memset += 1
    try:
        total = math.fsum(d for _, d in kernels)
    except OverflowError:
        total = math.inf
    if not math.isfinite(total):  # each duration is finite, their sum (the page's total CUDA time) must be too
        raise CollectError(path, "traceEvents[].dur", f"the {len(kernels)} kernels' durations add up past the largest "
                           "number a float holds: not a real profile; it is not read")
    return ProfilerSummary(kernels, memcpy, memset)
