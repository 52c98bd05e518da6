"""A streaming, parallel, incremental build of the site.

1. Find the traces. A run whose input files (trace, attachments, cached validation results) match the
   previous build's status keeps its digest; the others are loaded by worker processes, which send
   back digests (≈1 KB each). The parent never holds a full trace.
2. Order the digests, and give each run page its context from other runs (previous and next run).
   A page is re-rendered when its inputs, its context or the global hash (templates, static files,
   settings, reporter version) changed; workers load those runs again and write their files.
3. When anything changed, listing pages and the run index are re-rendered from the digests.

The new site is built in a temporary folder seeded with hard links to the kept files of the previous
site, and swapped in whole. Every file written is a new inode, so the live site is never written through.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from typing import TYPE_CHECKING

from .. import __version__
from ..errors import CollectError
from ..names import unique_slugs
from . import parallel, status
from .assets import asset_dir

if TYPE_CHECKING:  # the modules below load plotly, pydantic and jinja2: imported where a page is made
    from jinja2 import Environment

    from . import site as old

MARKER = ".reporter-site"


@dataclass
class IncrementalReport:
    runs: int
    rendered: int  # run pages written in this build
    pages: int  # every page of the site
    errors: list[CollectError] = field(default_factory=list)
    config_errors: list[CollectError] = field(default_factory=list)  # DATA/reviews.toml
    digests: list[dict[str, Any]] = field(default_factory=list)
    up_to_date: bool = False


@lru_cache(maxsize=1)
def make_env() -> "Environment":
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    from . import text
    env = Environment(loader=FileSystemLoader(str(asset_dir("templates"))), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(num=text.num, ms=text.ms, speedup=text.speedup, markdown=text.markdown, code=text.code,
                       json_args=text.json_args)
    return env


def _lookup(data: Path, r: Any, problems: list[Any] | None = None) -> Any:
    from ..validate import cached_lookup
    return cached_lookup(data, r, problems)


@lru_cache(maxsize=1)
def _reviews(data: Path, content: str | None) -> Any:
    """DATA/reviews.toml, read once per process and content (its hash is part of the global hash)."""
    from ..collect.reviews import load_reviews
    return load_reviews(data)


def _validation_folder(data: Path, r: Any) -> list[Path]:
    from ..validate import cache as vcache
    fk, ref = r.trace.final_kernel, r.trace.reference_source
    return [vcache.entry_dir(data, vcache.content_key(fk.source, ref))] if fk and ref is not None else []


def _digest_job(item: tuple[str, str, str]) -> dict[str, Any]:
    """Worker: a run's digest and the signatures of its inputs (signed before reading, so a later edit shows)."""
    from ..collect.traces import load_run
    from . import pagemaker
    rel, run_id, slug = item
    data = Path(parallel.state()["data"])
    path = data / rel
    trace_sig = status.signature(path, None)
    try:
        r = load_run(data, path, run_id, slug, _reviews(data, parallel.state()["reviews"]))
    except CollectError as exc:
        return {"run_id": run_id, "error": [exc.path, exc.field, exc.message]}
    except Exception as exc:  # noqa: BLE001 - the guard: one file must never stop the others
        return {"run_id": run_id, "error": [str(path), "(internal)", f"reporter failed on this file ({type(exc).__name__}: "
                                            f"{str(exc)[:200]}); the run is skipped. Please report this as a bug."]}
    files = [r.trace_path.parent / a.path for a in r.trace.attachments]
    inputs, folders = status.inputs_of(data, files, _validation_folder(data, r), {})
    if trace_sig is not None:
        inputs[rel] = trace_sig
    problems = [e.problem("attachment") for e in r.attachment_errors]
    d = pagemaker.digest(r, _lookup(data, r, problems), data)
    d["problems"] = [[p.path, p.field, p.message, p.kind] for p in problems]
    return {"digest": d, "inputs": inputs, "folders": folders}


def _render_job(item: tuple[str, str, dict[str, Any]]) -> list[str]:
    """Worker: load one run again and write its page files into the new site; returns their paths."""
    from ..collect.traces import load_run
    from . import pagemaker
    from .highlight import HighlightCache
    rel, run_id, nav = item
    st = parallel.state()
    data, tmp = Path(st["data"]), Path(st["tmp"])
    r = load_run(data, data / rel, run_id, nav["slug"], _reviews(data, parallel.state()["reviews"]))
    files = pagemaker.run_files(r, _lookup(data, r), data, nav, make_env(), st["generated"], st["assets"],
                                HighlightCache(tmp / status.CACHE_DIR / "code"))
    for path, content in files.items():
        pagemaker.write_new(tmp, path, content)
    return sorted(files)


def _navigation(digests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each run's links to the previous and next run of the same model in the same group."""
    nav: dict[str, dict[str, Any]] = {}
    for i, d in enumerate(digests):
        same = lambda j: 0 <= j < len(digests) and (digests[j]["key"], digests[j]["model"]) == (d["key"], d["model"])  # noqa: E731
        nav[d["run_id"]] = {"slug": d["slug"], "prev": digests[i - 1]["slug"] if same(i - 1) else None,
                            "next": digests[i + 1]["slug"] if same(i + 1) else None}
    return nav


def _scan(data: Path, prev: status.BuildStatus, jobs: int | None,
          reviews: str | None) -> tuple[dict[str, status.RunStatus], list[CollectError]]:
    """Every run's status: kept from the previous build when its inputs are unchanged, else from a worker."""
    from ..collect.traces import find_traces, run_ids
    runs: dict[str, status.RunStatus] = {}
    todo: list[tuple[str, str, str]] = []
    errors: list[CollectError] = []
    paths = find_traces(data, errors)
    ids = run_ids(data, paths)
    slugs = unique_slugs(ids.values())  # over every trace found, so a slug does not move when a trace breaks
    for path in paths:
        rel, run_id = path.relative_to(data).as_posix(), ids[path]
        old_run = prev.runs.get(run_id)
        if (old_run is not None and old_run.digest["path"] == rel and old_run.digest["slug"] == slugs[run_id]
                and status.unchanged(data, old_run)):
            runs[run_id] = old_run
        else:
            todo.append((rel, run_id, slugs[run_id]))
    for res in parallel.run_all(_digest_job, todo, {"data": str(data), "reviews": reviews}, jobs):
        if "error" in res:
            errors.append(CollectError(*res["error"]))
        else:
            d = res["digest"]
            runs[d["run_id"]] = status.RunStatus(res["inputs"], res["folders"], d)
    return runs, errors


def _seed(site: Path, tmp: Path, keep: list[str]) -> None:
    """Hard-link the previous site's kept files (and caches) into the new folder."""
    for rel in keep:
        src, dst = site / rel, tmp / rel
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.link(src, dst)
    cache = site / status.CACHE_DIR
    if cache.is_dir():
        for src in cache.rglob("*"):
            if src.is_file():
                dst = tmp / src.relative_to(site)
                dst.parent.mkdir(parents=True, exist_ok=True)
                os.link(src, dst)


def _swap(site: Path, tmp: Path) -> None:
    old_site = site.with_name(f".{site.name}.old")
    if old_site.exists():
        shutil.rmtree(old_site)
    if site.exists():
        site.rename(old_site)
    tmp.rename(site)
    shutil.rmtree(old_site, ignore_errors=True)


def _listing_builder(digests: list[dict[str, Any]], errors: list[CollectError], data: Path, generated: str) -> "old.SiteBuilder":
    """The listing pages' builder over stand-ins rebuilt from digests; run pages are the workers' job."""
    from . import pagemaker, site as old
    b = old.SiteBuilder.__new__(old.SiteBuilder)
    stubs = [pagemaker.stub(d, data) for d in digests]
    b.collection, b.data, b.generated, b.env, b.assets = old.Collection(stubs, errors), data, generated, make_env(), {}
    b.runs = stubs
    b.validations = {}
    b.summaries = {d["run_id"]: pagemaker.summary_of(d) for d in digests}
    b.outcomes = {d["run_id"]: o for d in digests if (o := pagemaker.outcome_of(d)) is not None}
    b._run_page = lambda *a, **k: None  # type: ignore[method-assign, assignment]
    return b


def _write_listings(b: "old.SiteBuilder", digests: list[dict[str, Any]], tmp: Path) -> int:
    from . import pagemaker, site as old
    from .search import index_js
    pages = [p for p in b.pages() if p is not None]
    pages.append(old.Page("search.html", "search.html", {"title": "All runs · search", "crumbs": [("all variants", "index.html")],
                                                          "runs": len(digests)}))
    b._render_all(tmp, pages)
    pagemaker.write_new(tmp, "search-index.js", index_js([pagemaker.index_row(d) for d in digests]))
    return len(pages)


def build_incremental(data: Path, site: Path, jobs: int | None = None, settings: dict[str, Any] | None = None) -> IncrementalReport:
    """Bring SITE up to date with DATA, re-rendering only what changed; see the module's docstring."""
    site = site.resolve()
    site.parent.mkdir(parents=True, exist_ok=True)
    prev = status.BuildStatus.load(site) if (site / MARKER).is_file() else status.BuildStatus()
    from ..collect.reviews import REVIEWS_FILE
    reviews = (status.signature(data / REVIEWS_FILE, None) or [None] * 3)[2]  # clearances can change any run's page
    g = status.global_hash([asset_dir("templates"), asset_dir("static")], {**(settings or {}), "reviews": reviews})
    runs, errors = _scan(data, prev, jobs, reviews)
    digests = sorted((r.digest for r in runs.values()), key=lambda d: d["order"])
    nav = _navigation(digests)
    todo: list[tuple[str, str, dict[str, Any]]] = []
    keep: list[str] = []
    for d in digests:
        rs = runs[d["run_id"]]
        key = status.context_hash([rs.inputs, g, nav[d["run_id"]], d["slug"]])
        if key == rs.page and rs.files and all((site / f).is_file() for f in rs.files):
            keep.extend(rs.files)
        else:
            rs.page = key
            todo.append((d["path"], d["run_id"], nav[d["run_id"]]))
    from ..collect.traces import unknown_clearances
    rv = _reviews(data, reviews)
    config_errors = list(rv.errors) + unknown_clearances(rv, set(runs))
    aggregates = status.context_hash([g, digests, [str(e) for e in errors + config_errors]])
    report = IncrementalReport(len(digests), len(todo), 0, errors, config_errors, digests)
    if not todo and aggregates == prev.aggregates and set(runs) == set(prev.runs):
        report.up_to_date = True
        return report
    tmp = Path(tempfile.mkdtemp(prefix=f".{site.name}.building-", dir=site.parent))
    try:
        from .site import _generated_at
        _seed(site, tmp, keep)
        generated = _generated_at()
        b = _listing_builder(digests, errors, data, generated)
        b._write_assets(tmp)
        shared = {"data": str(data), "tmp": str(tmp), "generated": generated, "assets": b.assets, "reviews": reviews}
        for item, files in zip(todo, parallel.run_all(_render_job, todo, shared, jobs)):
            runs[item[1]].files = files
        report.pages = _write_listings(b, digests, tmp) + len(digests)
        (tmp / ".nojekyll").write_text("", encoding="utf-8")
        (tmp / MARKER).write_text(f"reporter {__version__}\n", encoding="utf-8")
        status.BuildStatus(__version__, g, runs, aggregates).save(tmp)
        _swap(site, tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return report
