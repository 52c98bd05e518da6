"""`reporter build` from start to end: collect, re-validate when a GPU is here, render.

The CLI parses options and prints; this module runs the stages and gathers every file that could not
be used (a trace, an attachment, a cache entry) into one list of `Problem`s for the build summary.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import Problem, report
from .records import ValidationSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BuildSummary:
    runs: int
    unreadable: int
    pages: int
    flagged: int
    problems: tuple[Problem, ...]
    seconds: float
    site: Path

    def line(self) -> str:
        skipped = f", {len(self.problems)} file{'s' if len(self.problems) != 1 else ''} not used" if self.problems else ""
        return (f"read {self.runs} runs ({self.unreadable} unreadable), wrote {self.pages} pages to {self.site}, "
                f"flagged {self.flagged} recorded values{skipped}, in {self.seconds:.1f} s")


def build(data: Path, site: Path, settings: ValidationSettings, *, validate: bool = True, ncu: bool = False,
          progress: bool = False) -> BuildSummary:
    """Build SITE from DATA; the problems are logged (as warnings) and returned in the summary."""
    from .collect import collect
    from .render import build_site
    from .validate import cached_lookup, gpu_available, validate_runs

    started = time.monotonic()
    collection = collect(data)
    problems = [e.problem("trace") for e in collection.errors]
    problems += [e.problem("attachment") for r in collection.runs for e in r.attachment_errors]
    problems += [e.problem("config") for e in (collection.reviews.errors if collection.reviews else [])]
    if validate and gpu_available():
        validate_runs(data, collection.runs, settings, ncu=ncu, progress=progress)
    elif validate:
        log.info("no CUDA device here: showing cached re-validation results (see `reporter validate`)")
    pages = build_site(collection, data, site, lambda r: cached_lookup(data, r, problems), progress=progress)
    report(problems)
    return BuildSummary(runs=len(collection.runs), unreadable=len(collection.errors), pages=pages,
                        flagged=sum(len(r.flags) for r in collection.runs), problems=tuple(sorted(set(problems))),
                        seconds=time.monotonic() - started, site=site)
