"""The marker file a build leaves in SITE, read back by the next build and by publish.

Render writes it and publish reads it, so its spelling lives below both.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from . import __version__
from .gitread import source_commit

MARKER = ".reporter-site"
SOURCE_PREFIX = "source: "


def marker_text(data: Path, inputs: Iterable[str] = ()) -> str:
    """What the build writes into SITE/.reporter-site: the version and the commit DATA was at (`gitread`), read
    without running git there; `inputs` are the files the build read, relative to DATA."""
    return f"reporter {__version__}\n{SOURCE_PREFIX}{source_commit(data, inputs)}\n"
