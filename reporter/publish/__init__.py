"""Stage 4, publish: put a built site on a gh-pages branch, or write a Pages workflow."""

from __future__ import annotations

from .pages import MARKER, check_site, publish_site, workflow_yaml

__all__ = ["MARKER", "check_site", "publish_site", "workflow_yaml"]
