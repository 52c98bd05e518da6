"""Stage 3 entry point: page data for every page, then the writer renders and swaps them in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..collect.traces import Collection
from ..collect.validation import CachedValidation
from . import status
from .incremental import build_incremental


@dataclass(frozen=True)
class BuildReport:
    pages: int
    generated: str
    problems: tuple[tuple[str, str], ...]  # (trace file, why) for runs whose page could not be made; the rest is built
    committed: bool  # False: --strict saw problems and left the previous site as it was


def build_site(collection: Collection, validations: dict[str, CachedValidation | None], data: Path, site: Path, *,
               strict: bool = False, upstream_problems: int = 0,
               progress: Callable[[int, int], None] | None = None) -> BuildReport:
    """Render the site into SITE and swap it in. With `strict`, any unreadable input (counted here, or
    by the caller in `upstream_problems`) or left-out page leaves the previous SITE exactly as it was.

    The build itself streams from DATA (`incremental`): worker processes read each run again, so
    `collection` and `validations` only count problems here; pass what `collect(data)` returned."""
    failed = upstream_problems + len(collection.errors) + sum(len(r.attachment_errors) for r in collection.runs)
    built = build_incremental(data, site, strict=strict, upstream_problems=failed)
    return BuildReport(built.pages, status.generated_at(), tuple(built.page_problems), built.committed)
