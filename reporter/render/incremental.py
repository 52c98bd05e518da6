"""A streaming, parallel, incremental build of the site: plan, then write.

1. `plan`: find the traces; a run whose input files match the previous build's status keeps its digest
   (its trace is not opened), the others are read by worker processes, which send back typed digests.
   The parent never parses a trace. Each run page whose inputs, links or the global hash changed is
   rendered again.
2. `write`: workers render those run pages; every page above them comes from the digests (`listings`);
   the new site is swapped in whole.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core import sitefiles
from ..core.errors import CollectError
from . import pagemaker, plan, status
from .assets import asset_dir
from .write import IncrementalReport, Plan, failed, write

log = logging.getLogger(__name__)
__all__ = ["IncrementalReport", "build_incremental"]


def globals_of(data: Path, settings: dict[str, Any] | None, redact: bool) -> tuple[str, dict[str, Any]]:
    """The global hash (templates, static files, settings, clearances, allow-list) and the workers' state."""
    from ..collect.redact import ALLOW_FILE
    from ..collect.reviews import REVIEWS_FILE
    # Clearances and the redaction allow-list can change any run's page: their contents are global inputs.
    reviews, allow = ((status.signature(data / name, None, data) or [None] * 3)[2] for name in (REVIEWS_FILE, ALLOW_FILE))
    g = status.global_hash([asset_dir("templates"), asset_dir("static")],
                           {**(settings or {}), "reviews": reviews, "allow": allow, "redact": redact})
    # The project's default rule set (`[tool.reporter] rules`) judges every run whose trace names none.
    return g, {"data": str(data), "reviews": reviews, "redact": redact, "allow": allow, "rules": (settings or {}).get("rules")}


def _config_errors(data: Path, shared: dict[str, Any], run_ids: set[str]) -> tuple[list[CollectError], list[str]]:
    """Problems with DATA's configuration files and problem sets, and the problem sets' fingerprint."""
    from ..collect.problemset import fingerprint
    from ..collect.traces import unknown_clearances
    rv = pagemaker.reviews(data, shared["reviews"])
    sets, set_errors = fingerprint(data)  # the leaderboards' denominators
    found = (*rv.errors, *unknown_clearances(rv, run_ids), *pagemaker.redactor(data, shared["redact"], shared["allow"])[1],
             *set_errors)
    return [pagemaker.shown_error(e, shared) for e in found], sets


def build_incremental(data: Path, site: Path, jobs: int | None = None, settings: dict[str, Any] | None = None,
                      strict: bool = False, upstream_problems: int = 0, redact: bool = True,
                      progress: plan.Progress | None = None, options: dict[str, Any] | None = None) -> IncrementalReport:
    """Bring SITE up to date with DATA, re-rendering only what changed; see the module's docstring.
    With `strict`, any problem leaves the previous SITE exactly as it was. `options`: the audit rule and prices
    (`core.audit.PageOptions.to_json`), which only pages above the run pages read."""
    from .writer import SiteWriter
    site = site.absolute()
    g, shared = globals_of(data, settings, redact)
    generated = status.generated_at()
    # The new site's folder exists before any run is read: the worker that reads a changed run writes its
    # page files there at once (links to other pages as placeholders), so no trace is read twice.
    with SiteWriter(site, data, generated, pagemaker.shown_text(shared)) as writer:
        assert writer.tmp is not None
        prev = status.BuildStatus.load(site) if sitefiles.owned_files(site) is not None else status.BuildStatus()
        if prev.sources != status.sources_hash(shared):
            # Other clearances, allow-list or redaction: every kept digest (its suspect mark, its redacted text) is stale.
            prev = replace(prev, runs={})
        shared = {**shared, "tmp": str(writer.tmp), "generated": generated, "assets": writer.assets,
                  "nonce": secrets.token_hex(6), "options": options}
        found = plan.scan(data, prev, jobs, shared, progress)
        digests = sorted((r.digest for r in found.runs.values()), key=lambda d: d.order())
        urls = plan.urls_of(digests)
        keep, todo = plan.pages_to_render(site, found, digests, plan.navigation(digests, urls), g, prev)
        config_errors, sets = _config_errors(data, shared, set(found.runs))
        aggregates = status.context_hash([g, [d.to_json() for d in digests], [str(e) for e in found.errors + config_errors], sets,
                                          options])
        report = IncrementalReport(len(digests), len(todo), 0, tuple(found.errors), tuple(config_errors), tuple(digests))
        if (not todo and aggregates == prev.aggregates and set(found.runs) == set(prev.runs)
                and prev.tree == status.tree_hash(site)):
            # Nothing to write, so the site stays as it was: under --strict that is what a failure leaves too.
            log.debug("render: nothing changed since the last build; %s is up to date", site)
            return replace(report, up_to_date=True, committed=not (strict and failed(report, upstream_problems)))
        log.debug("render: %d run pages to render, %d kept; listing pages re-rendered, because %s", len(todo),
                  len(digests) - len(todo), "a run's digest, the run order or a global input changed" if aggregates != prev.aggregates
                  else "run pages changed" if todo else "the site's files differ from the last build's")
        return write(writer, data, report, found, Plan(keep, todo, urls, aggregates, g, prev), jobs, strict, upstream_problems,
                     shared, progress)
