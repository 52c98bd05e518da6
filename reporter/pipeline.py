"""`reporter build` from start to end: collect, re-validate when a GPU is here, render.

The CLI parses options and prints; this module runs the stages and gathers every file that could not
be used (a trace, an attachment, a cache entry) into one list of `Problem`s for the build summary.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .collect.redact import RedactionReport
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
    committed: bool = True  # False: --strict saw problems and left the previous site as it was
    redaction: RedactionReport | None = None  # None: built with --no-redact

    def redaction_line(self) -> str:
        """What was redacted, by kind (never the secrets), or that nothing was because redaction was off."""
        if self.redaction is None:
            return "secrets NOT redacted (--no-redact): keep this site private"
        return self.redaction.line()

    def line(self) -> str:
        skipped = f", {len(self.problems)} file{'s' if len(self.problems) != 1 else ''} not used" if self.problems else ""
        return (f"read {self.runs} runs ({self.unreadable} unreadable), wrote {self.pages} pages to {self.site}, "
                f"flagged {self.flagged} recorded values{skipped}, in {self.seconds:.1f} s")


def build(data: Path, site: Path, settings: ValidationSettings, *, validate: bool = True, ncu: bool = False,
          strict: bool = False, progress: Callable[[int, int], None] | None = None, redact: bool = True) -> BuildSummary:
    """Build SITE from DATA; the problems are logged (as warnings) and returned in the summary. With
    `strict`, any problem leaves the previous SITE as it was (`committed` is then False). With `redact`
    every published text (trace fields, downloads, cached validation logs and findings) has its secrets
    replaced; the validator still gets the original sources."""
    from .collect import collect
    from .collect.validation import load_validations
    from .render import build_site
    from .render.writer import check_target
    from .validate import gpu_available, validate_runs

    started = time.monotonic()
    check_target(site, data)  # before any slow work: a folder we may not replace is refused at once
    collection = collect(data, redact=redact)
    problems = [e.problem("trace") for e in collection.errors]
    problems += [e.problem("config") for e in collection.config_errors]
    problems += [e.problem("attachment") for r in collection.runs for e in r.attachment_errors]
    problems += [e.problem("config") for e in (collection.reviews.errors if collection.reviews else [])]
    if validate and gpu_available():
        validate_runs(data, collection.runs, settings, ncu=ncu, progress=progress is not None)
    elif validate:
        log.info("no CUDA device here: showing cached re-validation results (see `reporter validate`)")
    validations, cache_problems = load_validations(data, collection.runs, collection.redactor)
    problems += cache_problems
    result = build_site(collection, validations, data, site, strict=strict, upstream_problems=len(problems),
                        progress=progress)
    problems += [Problem(path, "(page)", message, "trace") for path, message in result.problems]
    report(problems)
    return BuildSummary(runs=len(collection.runs), unreadable=len(collection.errors), pages=result.pages,
                        flagged=sum(len(r.flags) for r in collection.runs), problems=tuple(sorted(set(problems))),
                        seconds=time.monotonic() - started, site=site, committed=result.committed,
                        redaction=collection.redaction)
