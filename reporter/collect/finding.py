"""Where the traces under DATA are and what each run is called; standard library only, so a rebuild
that finds nothing changed never imports the trace model."""

from __future__ import annotations

from collections import Counter
from pathlib import Path


def find_traces(data: Path) -> list[Path]:
    """Every `trace.json` or `*.trace.json` below `data`, in a stable order; caches are skipped."""
    found = [p for p in data.rglob("*.json") if p.name == "trace.json" or p.name.endswith(".trace.json")]
    return sorted(p for p in found if "validation" not in p.relative_to(data).parts[:1])


def run_ids(data: Path, paths: list[Path]) -> dict[Path, str]:
    """Each trace's id: its folder under DATA for `trace.json`, else its path without `.trace.json`.

    `a/trace.json` and `a.trace.json` would share the id `a`; then the `*.trace.json` file is known by its
    whole relative path (`a.trace.json`), which no folder id can equal.
    """
    ids: dict[Path, str] = {}
    for path in paths:
        rel = path.relative_to(data)
        if path.name == "trace.json":
            ids[path] = rel.parent.as_posix() if rel.parent.parts else "trace"
        else:
            ids[path] = rel.as_posix()[: -len(".trace.json")]
    taken = Counter(ids.values())
    for path, run_id in ids.items():
        if taken[run_id] > 1 and path.name != "trace.json":
            ids[path] = path.relative_to(data).as_posix()
    return ids
