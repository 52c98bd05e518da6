"""`reporter.load(DATA)`: the runs table, from the same digests the site is drawn from.

Each run's row is made once, with its digest, by the build's own reader (`render.plan.scan`), so the
notebook's table, the site's leaderboards and its `runs.csv` cannot disagree. Given a SITE built from
DATA, the digests of unchanged runs are read back from its status and their traces are not opened.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .core.errors import ReporterError


def load(data: str | Path, redact: bool = True, site: str | Path | None = None, jobs: int | None = None) -> pd.DataFrame:
    """Every readable run under `data` as one row, with the cached re-validation results committed beside
    it; with `redact`, secrets are redacted in both, as on the site. With `site` (a site built from
    `data`), runs unchanged since that build are not read again."""
    from .render import plan, status
    from .render.incremental import globals_of
    from .render.listings import runs_table
    root = Path(data)
    if not root.is_dir():
        raise ReporterError(f"{root}: not a folder of traces (expected DATA with trace.json files below it)")
    shared = globals_of(root, None, redact)[1]
    prev = status.BuildStatus.load(Path(site).absolute()) if site is not None else status.BuildStatus()
    if prev.sources != status.sources_hash(shared):
        prev = status.BuildStatus()  # built with other clearances, allow-list or redaction: its rows are not these
    found = plan.scan(root, prev, jobs, shared)
    return runs_table([r.digest for r in found.runs.values()])

