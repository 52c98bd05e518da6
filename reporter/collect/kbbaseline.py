"""KernelBench baseline files (``results/timing/<hardware>/baseline_time_torch.json``): reference times
per (level, problem file) and the machine folder they were taken on, so a baseline from another GPU is
flagged by the importer, never silently compared."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import CollectError, ReporterError
from ..core.safeio import parse_json, read_bounded


@dataclass(frozen=True)
class Baseline:
    """A KernelBench baseline file: reference times (ms) per (level, problem file), and where they were taken."""

    label: str
    times: dict[tuple[int, str], dict[str, Any]]

    def entry(self, level: int, problem: str | None) -> dict[str, Any] | None:
        return self.times.get((level, problem)) if problem else None


def read_baseline(path: Path) -> Baseline:
    """``{"level1": {"1_Square_matrix_multiplication_.py": {"mean": 0.392, "std": ..., "hardware": ...}}}``."""
    try:
        doc = parse_json(read_bounded(path, path.parent, "(file)", "MAX_TRACE_BYTES"), path)
    except CollectError as exc:
        raise ReporterError(f"not a readable baseline file: {exc}") from exc
    if not isinstance(doc, dict):
        raise ReporterError(f"{path}: a baseline file is an object {{level: {{problem file: {{mean, std}}}}}}")
    times: dict[tuple[int, str], dict[str, Any]] = {}
    for level_key, problems in doc.items():
        hit = re.fullmatch(r"level_?(\d+)", str(level_key))
        if hit is None or not isinstance(problems, dict):
            raise ReporterError(f"{path}: key {level_key!r}: expected level1, level2, ... holding problem files")
        for name, entry in problems.items():
            if not isinstance(entry, dict) or num(entry.get("mean")) is None:
                raise ReporterError(f"{path}: {level_key}.{name}.mean: expected a time in ms")
            times[(int(hit.group(1)), str(name))] = entry
    # KernelBench keeps one folder per machine: results/timing/<hardware>/baseline_time_torch.json
    return Baseline(f"{path.parent.name}/{path.name}", times)


def num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < float("inf") else None
