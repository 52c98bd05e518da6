"""Stage 3, render: turn collected runs and validation results into a static site.

`site` assembles page data and writes the site; `text` makes untrusted text safe HTML; `charts` builds
plotly figures; `leaderboard` and `evolution` compute cross-run and per-run views.
"""

from __future__ import annotations

from .site import SiteBuilder, build_site

__all__ = ["SiteBuilder", "build_site"]
