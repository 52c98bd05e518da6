"""Stage 3, render: turn collected runs and cached validation results into a static site.

Page data are pure functions returning typed records (`runpage`, `pages`, with `recorded`,
`revalidation`, `counters`, `summary`); `urls` says where each page lives; `writer` renders templates
and swaps the finished site in; `build` ties them together. `text` makes untrusted text safe HTML and
`charts` builds plotly figures.
"""

from __future__ import annotations

from .site import BuildReport, build_site

__all__ = ["BuildReport", "build_site"]
