"""Per-run work of a streaming build, done in worker processes: a run's digest, and its page files.

A digest is what listing pages need of a run (≈1 KB of JSON, kept in the build status); the page files
are the run page, its lazy chunk and text view, and the downloadable sources. Both are made from a run
the worker loads itself, so the parent never holds a trace.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from jinja2 import Environment

from ..checks import Flag
from ..collect.traces import RunRecord, Trace
from ..records import FinalKernel, RunInfo, ValidationResult
from . import lazy
from . import leaderboard as lb
from . import site as old
from .highlight import HighlightCache
from .search import IndexRow

Found = tuple[ValidationResult, Path] | None


def _builder(records: list[RunRecord], data: Path, found: dict[str, Found], env: Environment,
             generated: str, assets: dict[str, str]) -> old.SiteBuilder:
    """A SiteBuilder over some runs, without re-reading anything or re-making its template environment."""
    b = old.SiteBuilder.__new__(old.SiteBuilder)
    b.collection, b.data, b.generated, b.env, b.assets = old.Collection(records, []), data, generated, env, assets
    b.runs = records
    b.validations = {r.run_id: old.validation_view(r, found.get(r.run_id), data) for r in records}
    b.summaries = {r.run_id: old.run_summary(r, b.validations[r.run_id]) for r in records}
    b.outcomes = {r.run_id: o for r in records
                  if (o := old.outcome(r, b.validations[r.run_id], b.run_path(r))) is not None}
    return b


def digest(r: RunRecord, found: Found, data: Path) -> dict[str, Any]:
    """What listing pages and the run index need of one run, as JSON."""
    b = _builder([r], data, {r.run_id: found}, Environment(), "", {})
    run = r.trace.run
    s, o = b.summaries[r.run_id], b.outcomes.get(r.run_id)
    fk = r.trace.final_kernel
    return {"run_id": r.run_id, "path": r.trace_path.relative_to(data).as_posix(), "slug": r.slug,
            "order": list(old.SiteBuilder._sort_key(r)), "key": list(b.variant_key(r)), "model": run.model or "unknown",
            "title": old._title(r), "run": run.model_dump(mode="json", exclude_none=True),
            "flags": [dataclasses.asdict(f) for f in r.flags], "unknown": r.unknown,
            "summary": dataclasses.asdict(s), "outcome": dataclasses.asdict(o) if o else None,
            "kernels": " ".join(lazy.kernel_names(fk.source if fk else None)), "has_kernel": fk is not None,
            "has_reference": r.trace.reference_source is not None}


def stub(d: dict[str, Any], data: Path) -> RunRecord:
    """A RunRecord that holds only what listing pages read (the run section, flags), rebuilt from a digest."""
    # Listing pages ask whether a kernel was submitted, never for its source: an empty stand-in says so.
    kernel = FinalKernel.model_construct(source="") if d["has_kernel"] else None
    trace = Trace.model_construct(run=RunInfo.model_validate(d["run"]), turns=[], final_kernel=kernel,
                                  reference_source=None, attachments=[])
    return RunRecord(d["run_id"], data / d["path"], trace, [Flag(**f) for f in d["flags"]], d["unknown"], slug=d["slug"])


def summary_of(d: dict[str, Any]) -> old.RunSummary:
    s = dict(d["summary"])
    s["runtime_flag"] = Flag(**s["runtime_flag"]) if s["runtime_flag"] else None
    return old.RunSummary(**s)


def outcome_of(d: dict[str, Any]) -> lb.Outcome | None:
    o = d["outcome"]
    if o is None:
        return None
    return lb.Outcome(**{**o, "group": tuple(o["group"]), "problem": tuple(o["problem"])})


def index_row(d: dict[str, Any]) -> IndexRow:
    s, run = d["summary"], d["run"]
    return IndexRow(f"runs/{d['slug']}.html", d["title"], run.get("problem_file") or run.get("title") or d["run_id"],
                    d["model"], old._shown(tuple(d["key"])), s["verdict"], s["verdict_source"], s["speedup_value"],
                    s["flags"], d["kernels"])


def run_files(r: RunRecord, found: Found, data: Path, nav: dict[str, Any], env: Environment, generated: str,
              assets: dict[str, str], cache: HighlightCache) -> dict[str, str]:
    """The site files of one run page: page, lazy chunk, text view and downloads, by path in the site."""
    b = _builder([r], data, {r.run_id: found}, env, generated, assets)
    key, model = b.variant_key(r), r.trace.run.model or "unknown"
    near = {k: SimpleNamespace(slug=v) if v else None for k, v in (("prev", nav.get("prev")), ("next", nav.get("next")))}
    page = b._run_page(r, key, model, near["prev"], near["next"])  # type: ignore[arg-type]
    fk = r.trace.final_kernel
    page.context.update(chunk=lazy.chunk_name(r.slug, "turns.js"), text_view=lazy.chunk_name(r.slug, "turns.txt"),
                        final_html=cache.code(fk.source) if fk else None,
                        reference_html=cache.code(r.trace.reference_source) if r.trace.reference_source else None)
    ctx = {"rel": "../", "generated": generated, "version": old.__version__, "assets": assets, **page.context}
    files = {page.path: env.get_template(page.template).render(ctx),
             f"runs/{lazy.chunk_name(r.slug, 'turns.js')}": lazy.chunk_js(r.trace),
             f"runs/{lazy.chunk_name(r.slug, 'turns.txt')}": lazy.text_view(r.trace, old._title(r))}
    if fk:
        files[f"runs/{r.slug}.kernel.py"] = fk.source
    if r.trace.reference_source:
        files[f"runs/{r.slug}.reference.py"] = r.trace.reference_source
    return files


def write_new(root: Path, rel: str, content: str) -> None:
    """Write a file as a new inode: the folder is seeded with hard links to the live site, never written through."""
    out = root / rel
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.unlink(out)
    except FileNotFoundError:
        pass
    out.write_text(content, encoding="utf-8")
