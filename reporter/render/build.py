"""Stage 3 entry point: page data for every page, then the writer renders and swaps them in."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..collect.traces import Collection, RunRecord
from ..collect.validation import CachedValidation
from .pages import Listed, listed, listing_pages
from .revalidation import validation_view
from .runpage import Page, run_page
from .summary import group_key, outcome, problem_key, run_summary
from .urls import Urls


@dataclass(frozen=True)
class BuildReport:
    pages: int
    generated: str
    problems: tuple[tuple[str, str], ...]  # (trace file, why) for runs whose page could not be made; the rest is built
    committed: bool  # False: --strict saw problems and left the previous site as it was


def generated_at() -> str:
    # SOURCE_DATE_EPOCH makes builds reproducible (golden tests); otherwise the real build time.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = datetime.fromtimestamp(int(epoch), UTC) if epoch else datetime.now(UTC)
    return when.strftime("%Y-%m-%d %H:%M:%S UTC")


def _order(r: RunRecord) -> tuple[object, ...]:
    run = r.trace.run
    return (group_key(r), run.model or "~", run.level or 99, run.problem_id or 10**6, r.run_id)


def site_urls(runs: list[RunRecord]) -> Urls:
    return Urls.build((r.run_id for r in runs), (group_key(r) for r in runs),
                      ((group_key(r), r.trace.run.model or "unknown") for r in runs),
                      (p for r in runs if (p := problem_key(r)) is not None))


def site_pages(collection: Collection,
               validations: dict[str, CachedValidation | None]) -> tuple[list[Page], list[tuple[str, str]]]:
    """Every page of the site in a stable order, and the runs left out. Pure: reads nothing, writes nothing."""
    runs = sorted(collection.runs, key=_order)
    urls = site_urls(runs)
    rows: dict[str, Listed] = {}
    outcomes = []
    pages: list[Page] = []
    problems: list[tuple[str, str]] = []
    def same(i: int, j: int) -> bool:
        # prev/next walk the runs of one model in one group, the order its model page lists them.
        return 0 <= j < len(runs) and (group_key(runs[j]), runs[j].trace.run.model) == (group_key(runs[i]), runs[i].trace.run.model)

    for i, r in enumerate(runs):
        cached = validations.get(r.run_id)
        t, run = r.trace, r.trace.run
        try:
            v = validation_view(t.final_kernel is not None, cached, t.metrics, run.recorded_verdict, run.precision,
                                run.recorded_gpu)
            page = run_page(r, cached, urls, urls.run(runs[i - 1].run_id) if same(i, i - 1) else None,
                            urls.run(runs[i + 1].run_id) if same(i, i + 1) else None)
            row, o = listed(r, run_summary(r, v), urls), outcome(r, v, urls.run(r.run_id))
        except Exception as exc:  # noqa: BLE001 - one run's bad data must not cost the rest of the site
            problems.append((str(r.trace_path), f"run page not built: {type(exc).__name__}: {exc}"))
            continue
        pages.append(page)
        rows[r.run_id] = row
        if o is not None:
            outcomes.append(o)
    kept = [r for r in runs if r.run_id in rows]
    return pages + listing_pages(kept, rows, outcomes, urls, collection.errors), problems


def downloads(collection: Collection) -> dict[str, str]:
    """The sources a run page offers for download, by site path."""
    urls = site_urls(collection.runs)
    out: dict[str, str] = {}
    for r in collection.runs:
        if r.trace.final_kernel:
            out[urls.download(r.run_id, "kernel")] = r.trace.final_kernel.source
        if r.trace.reference_source:
            out[urls.download(r.run_id, "reference")] = r.trace.reference_source
    return out


def build_site(collection: Collection, validations: dict[str, CachedValidation | None], data: Path, site: Path, *,
               strict: bool = False, upstream_problems: int = 0,
               progress: Callable[[int, int], None] | None = None) -> BuildReport:
    """Render the site into SITE and swap it in. With `strict`, any unreadable input (counted here, or
    by the caller in `upstream_problems`) or left-out page leaves the previous SITE exactly as it was.

    The build itself streams from DATA (`incremental`): worker processes read each run again, so
    `collection` and `validations` only count problems here; pass what `collect(data)` returned."""
    from .incremental import build_incremental
    failed = upstream_problems + len(collection.errors) + sum(len(r.attachment_errors) for r in collection.runs)
    built = build_incremental(data, site, strict=strict, upstream_problems=failed)
    return BuildReport(built.pages, generated_at(), tuple(built.page_problems), built.committed)
