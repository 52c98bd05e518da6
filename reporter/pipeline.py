"""`reporter build` from start to end: collect, re-validate when a GPU is here, render.

The CLI parses options and prints; this module runs the stages and gathers every file that could not
be used (a trace, an attachment, a cache entry) into one list of `Problem`s for the build summary.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .collect.redact import RedactionReport
from .errors import Problem, report
from .records import ValidationResult, ValidationSettings

if TYPE_CHECKING:
    from .collect import RunRecord

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
          progress: bool = False, redact: bool = True) -> BuildSummary:
    """Build SITE from DATA; the problems are logged (as warnings) and returned in the summary.

    With `redact` every published text (trace fields, downloads, cached validation logs and findings) has
    its secrets replaced; the validator still gets the original sources.
    """
    from .collect import collect
    from .render import build_site
    from .validate import cached_lookup, gpu_available, validate_runs

    started = time.monotonic()
    collection = collect(data, redact=redact)
    problems = [e.problem("trace") for e in collection.errors]
    problems += [e.problem("config") for e in collection.config_errors]
    problems += [e.problem("attachment") for r in collection.runs for e in r.attachment_errors]
    problems += [e.problem("config") for e in (collection.reviews.errors if collection.reviews else [])]
    if validate and gpu_available():
        validate_runs(data, collection.runs, settings, ncu=ncu, progress=progress)
    elif validate:
        log.info("no CUDA device here: showing cached re-validation results (see `reporter validate`)")

    def lookup(r: RunRecord) -> tuple[ValidationResult, Path] | None:
        found = cached_lookup(data, r, problems)
        if found is None or collection.redactor is None:
            return found
        counts: Counter[str] = Counter(r.redactions)
        published = collection.redactor.result(found[0], counts)
        r.redactions = dict(sorted(counts.items()))
        return published, found[1]

    pages = build_site(collection, data, site, lookup, progress=progress)
    report(problems)
    return BuildSummary(runs=len(collection.runs), unreadable=len(collection.errors), pages=pages,
                        flagged=sum(len(r.flags) for r in collection.runs), problems=tuple(sorted(set(problems))),
                        seconds=time.monotonic() - started, site=site, redaction=collection.redaction)
