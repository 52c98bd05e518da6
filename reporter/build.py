"""`reporter build` from start to end: collect, re-validate when a GPU is here, render.

The CLI parses options and prints; this module runs the stages and gathers every file that could not
be used (a trace, an attachment, a cache entry) into one list of `Problem`s for the build summary.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path

from .collect.redact import RedactionReport
from .core.audit import DEFAULT_OPTIONS, PageOptions
from .core.errors import ConfigError, Problem, report
from .core.records import ValidationSettings
from .progress import ProgressFn

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
    up_to_date: bool = False  # nothing changed since the last build, so nothing was written
    not_written: int = 0  # run pages that could not be made: their runs are left out of the site, listed on its index

    def redaction_line(self) -> str:
        """What was redacted, by kind (never the secrets), or that nothing was because redaction was off."""
        if self.redaction is None:
            return "secrets NOT redacted (--no-redact): keep this site private"
        return self.redaction.line()

    def line(self) -> str:
        if self.up_to_date:
            return (f"{self.site} is up to date: read {self.runs} runs ({self.unreadable} unreadable), nothing changed "
                    f"since the last build, in {self.seconds:.1f} s")
        skipped = f", {len(self.problems)} file{'s' if len(self.problems) != 1 else ''} not used" if self.problems else ""
        lost = f", {self.not_written} run page{'s' if self.not_written != 1 else ''} NOT written" if self.not_written else ""
        return (f"read {self.runs} runs ({self.unreadable} unreadable), wrote {self.pages} pages to {self.site}{lost}, "
                f"flagged {self.flagged} recorded values{skipped}, in {self.seconds:.1f} s")


def build(data: Path, site: Path, settings: ValidationSettings, *, validate: bool = True, ncu: bool = False,
          strict: bool = False, progress: ProgressFn | None = None, redact: bool = True,
          jobs: int | None = None, options: PageOptions = DEFAULT_OPTIONS, default_rules: str | None = None) -> BuildSummary:
    """Build SITE from DATA; the problems are logged (as warnings) and returned in the summary. With
    `strict`, any problem leaves the previous SITE as it was (`committed` is then False). With `redact`
    every published text (trace fields, downloads, cached validation logs and findings) has its secrets
    replaced; the validator still gets the original sources. `default_rules` judges runs whose trace names no rule
    set (`[tool.reporter] rules`).

    The build streams: worker processes read the runs, and a rebuild re-renders only what changed
    (`render.incremental`). Validating on a GPU needs every run at once, so that step reads them all."""
    from .collect.redact import RedactionReport
    from .render.incremental import build_incremental
    from .render.writer import check_target
    from .validate import gpu_available

    started = time.monotonic()
    check_target(site, data)  # before any slow work: a folder we may not replace is refused at once
    _has_traces(data)
    if validate and gpu_available():
        from .collect import collect
        from .validate import validate_runs
        from .validate.work import count_missing
        log.debug("validate: a CUDA device is here, so kernels without a cached result are re-validated first")
        runs = collect(data, redact=redact, default_rules=default_rules).runs
        log.info("%s", count_missing(data, runs))  # each run's hardware floor, as `reporter validate` counts it
        validate_runs(data, runs, settings, ncu=ncu, progress=progress is not None)
    elif validate:
        log.info("no CUDA device here: showing cached re-validation results (see `reporter validate`)")
    else:
        log.debug("validate: skipped (--no-validate); cached re-validation results are shown")
    built = build_incremental(data, site, jobs, {**settings.model_dump(mode="json"), "redact": redact, "rules": default_rules},
                              strict=strict, redact=redact, progress=progress, options=options.to_json())
    problems = [e.problem("trace") for e in built.errors] + [e.problem("config") for e in built.config_errors]
    # A run's problems name its files relative to DATA, as its page shows them; the terminal gets the whole path.
    problems += [replace(p, path=str(data / p.path)) if not os.path.isabs(p.path) else p for d in built.digests for p in d.problem_list()]
    problems += [Problem(str(data / path), "(page)", message, "trace") for path, message in built.page_problems]
    report(problems)
    redaction = RedactionReport({d.run_id: dict(d.redactions) for d in built.digests}) if redact else None
    return BuildSummary(runs=len(built.digests), unreadable=len(built.errors), pages=built.pages,
                        flagged=sum(len(d.flags) for d in built.digests), problems=tuple(sorted(set(problems))),
                        seconds=time.monotonic() - started, site=site, committed=built.committed, redaction=redaction,
                        up_to_date=built.up_to_date, not_written=len(built.page_problems))


def _has_traces(data: Path) -> None:
    """Refuse, with what to do instead, a DATA that holds no trace: an empty folder, or KernelBench's own output."""
    from .collect.kbimport import problems_near
    from .collect.kernelbench import run_dirs_below
    from .collect.read import find_traces
    if find_traces(data):
        return
    kb = run_dirs_below(data)
    if kb:
        names = ", ".join(p.relative_to(data).as_posix() or "." for p in kb[:3]) + (", ..." if len(kb) > 3 else "")
        roots = " ".join(dict.fromkeys(str(p if p == data else p.parent) for p in kb))  # run folders, or runs/ roots
        found = problems_near(data)
        problems = (os.path.relpath(found) if found.is_relative_to(Path.cwd()) else str(found)) if found \
            else "PATH/TO/KernelBench/KernelBench"
        where = "found beside it" if found else "in a KernelBench checkout, KernelBench/KernelBench"
        raise ConfigError(
            f"{data} holds KernelBench run folders ({names}), not traces: convert them first, then build the result:\n"
            f"  reporter import kernelbench {roots} --problems {problems} --out data/\n"
            f"  reporter build data/ site/\n"
            f"(--problems is KernelBench's folder of problem files, the one holding level1/, level2/, ... ({where}); "
            "see docs/your-own-runs.md)")
    what = "is empty" if not any(data.iterdir()) else "holds no trace.json or *.trace.json"
    raise ConfigError(f"{data} {what}: nothing to build. Put one folder per run there, each with a trace.json "
                      "(docs/trace-format.md), or import KernelBench runs with `reporter import kernelbench`.")
