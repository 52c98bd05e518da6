"""Per-run work of a streaming build, done in worker processes: a run's digest, and its page files.

A digest is what listing pages need of a run (≈1 KB of JSON, kept in the build status); the page files
are the run page, its lazy chunk and text view, and the downloadable sources. Both are made from a run
the worker loads itself, so the parent never holds a trace.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from jinja2 import Environment

from ..collect.traces import RunRecord
from ..collect.validation import CachedValidation
from ..core.checks import Flag
from ..core.records import FinalKernel, RunInfo, Trace
from ..core.vocab import MISSING_KEY, Source, shown
from . import compare, lazy
from .findings import KERNEL_LINE
from .highlight import HighlightCache, numbered
from .revalidation import validation_view
from .runpage import group_label, run_page
from .search import IndexRow
from .summary import RunSummary, group_key, problem_key, run_summary, title
from .urls import Urls
from .writer import render_page


def order(d: dict[str, Any]) -> list[Any]:
    """The page order of a run (as `build._order`): group, model, level, problem, run id."""
    run = d["run"]
    # A group without a benchmark or configuration sorts after the named ones, as "unknown" did.
    return [[[part == MISSING_KEY, part] for part in d["key"]], run.get("model") or "~", run.get("level") or 99, run.get("problem_id") or 10**6, d["run_id"]]


def digest(r: RunRecord, cached: CachedValidation | None) -> dict[str, Any]:
    """What listing pages and the run index need of one run, as JSON."""
    t, run = r.trace, r.trace.run
    v = validation_view(t.final_kernel is not None, cached, t.metrics, run.recorded_verdict, run.precision)
    pkey = problem_key(r)
    return {"run_id": r.run_id, "path": r.trace_path.as_posix(), "slug": r.slug, "key": list(group_key(r)),
            "model": run.model or MISSING_KEY, "problem": list(pkey) if pkey else None, "title": title(r),
            "run": run.model_dump(mode="json", exclude_none=True), "flags": [dataclasses.asdict(f) for f in r.flags],
            "unknown": r.unknown, "summary": dataclasses.asdict(run_summary(r, v)),
            "kernels": " ".join(lazy.kernel_names(t.final_kernel.source if t.final_kernel else None)),
            "has_kernel": t.final_kernel is not None}


def stub(d: dict[str, Any], data: Path) -> RunRecord:
    """A RunRecord holding only what listing pages read (the run section, flags), rebuilt from a digest."""
    # Listing pages ask whether a kernel was submitted, never for its source: an empty stand-in says so.
    kernel = FinalKernel.model_construct(source="") if d["has_kernel"] else None
    trace = Trace.model_construct(schema_version=2, run=RunInfo.model_validate(d["run"]), turns=(), final_kernel=kernel,
                                  reference_source=None, attachments=())
    return RunRecord(d["run_id"], data / d["path"], trace, [Flag(**f) for f in d["flags"]], d["unknown"], slug=d["slug"])


def summary_of(d: dict[str, Any]) -> RunSummary:
    s = dict(d["summary"])
    s["runtime_flag"] = Flag(**s["runtime_flag"]) if s["runtime_flag"] else None
    s["verdict_source"] = Source(s["verdict_source"])
    return RunSummary(**s)


def index_row(d: dict[str, Any], urls: Urls) -> IndexRow:
    s, run = d["summary"], d["run"]
    return IndexRow(urls.run(d["run_id"]), d["title"], run.get("problem_file") or run.get("title") or d["run_id"],
                    shown(d["model"]), group_label(tuple(d["key"])), s["verdict"], s["verdict_source"], s["speedup_value"],
                    s["flags"], d["kernels"])


def run_files(r: RunRecord, cached: CachedValidation | None, urls: Urls, nav: dict[str, Any], env: Environment,
              generated: str, assets: dict[str, str], cache: HighlightCache) -> dict[str, str]:
    """The site files of one run page: page, lazy chunk, text view and downloads, by path in the site."""
    page = run_page(r, cached, urls, nav.get("prev"), nav.get("next"))
    fk, ref = r.trace.final_kernel, r.trace.reference_source
    base = urls.run(r.run_id).removesuffix(".html")
    final_html = numbered(cache.code(fk.source), KERNEL_LINE, page.context["kernel_marks"]) if fk else None
    page = page.with_context(chunk=f"{Path(base).name}.turns.js", text_view=f"{Path(base).name}.turns.txt",
                             final_html=final_html, reference_html=cache.code(ref) if ref else None)
    files = {page.path: render_page(env, page, assets, generated), f"{base}.turns.js": lazy.chunk_js(r.trace),
             f"{base}.turns.txt": lazy.text_view(r.trace, title(r))}
    if fk:
        files[urls.download(r.run_id, "kernel")] = fk.source
        files[urls.kernel_chunk(r.run_id)] = compare.kernel_chunk_js(urls.runs[r.run_id], fk.source)
    if ref:
        files[urls.download(r.run_id, "reference")] = ref
    return files
