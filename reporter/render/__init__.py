"""Stage 3, render: turn collected runs and validation results into a static site.

`site` assembles page data and writes the site; `text` makes untrusted text safe HTML; `charts` builds
plotly figures; `leaderboard` and `evolution` compute cross-run and per-run views.
"""

from __future__ import annotations

from typing import Any

# Imported on first use, so `incremental` can find an up-to-date site without loading plotly or pydantic.
_API = {"SiteBuilder": "site", "build_site": "site"}
__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    if name in _API:
        from importlib import import_module
        return getattr(import_module(f".{_API[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
