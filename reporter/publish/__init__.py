"""Stage 4, publish: put a built site on a gh-pages branch, or write a Pages workflow."""

from __future__ import annotations

from ..core.marker import MARKER, marker_text
from .pages import Published, check_site, publish_site, workflow_yaml, write_workflow

__all__ = ["MARKER", "Published", "check_site", "marker_text", "publish_site", "workflow_yaml", "write_workflow"]
