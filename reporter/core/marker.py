"""The marker file a build leaves in SITE, read back by the next build and by publish.

Render writes it and publish reads it, so its spelling lives below both.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from . import __version__

MARKER = ".reporter-site"
SOURCE_PREFIX = "source: "


def git_or_none(repo: Path, *args: str) -> str | None:
    """`git -C repo ARGS`'s output, or None when git fails or prints nothing."""
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    return (proc.stdout.strip() or None) if proc.returncode == 0 else None


def source_commit(folder: Path) -> str:
    """The commit `folder` is checked out at, `+changes` when it differs from it; for the site's marker."""
    head = git_or_none(folder, "rev-parse", "--short=12", "HEAD")
    if head is None:
        return "an uncommitted tree"
    dirty = git_or_none(folder, "status", "--porcelain", "--untracked-files=normal", "--", ".")
    return head + ("+changes" if dirty else "")


def marker_text(data: Path) -> str:
    """What the build writes into SITE/.reporter-site: the version and the commit DATA was at."""
    return f"reporter {__version__}\n{SOURCE_PREFIX}{source_commit(data)}\n"
